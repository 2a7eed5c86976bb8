"""The public-domain Hollywood report: ``CINESUB_HOME/reports/hollywood.html`` (SPEC B1, B2).

One self-contained HTML page (inline CSS, no script, no outside resource; every value escaped;
rendered from warehouse/templates/pd_report.html.j2)
for curators: the collection with each film's evidence (rank, year, gross, verdict, copyright
status with the rule that decided it and its evidence, the renewal search and match, the Internet Archive item and sound), the
audit of every ranked film against the three criteria (the copyright evidence lists the film's
source works — AFI "based on" — so a film excluded through a renewed novel shows it), the verdict
of every ranked film (included / excluded / needs_review, status, rule, evidence; the films
waiting for review listed on their own, never dropped), the yearly
top-N per year, the evaluation of each extractor (means with 95% bootstrap intervals, per issue),
the exclusion counts by reason,
the page-filter, extraction and CCE parse failures by reason, the CCE cross-check of the OCR
parser against Gemini (per page, disagreements listed), and the curator review queues (aliases,
copyright matches) with counts.

:func:`collect_report_data` reads the Hollywood state DB; :func:`render_report` is pure (data →
HTML); :func:`write_report` writes the file atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb

from warehouse.render import render

def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def collect_report_data(con: duckdb.DuckDBPyConnection, summary: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the report shows, from the Hollywood state DB."""
    return {
        "summary": dict(summary),
        "collection": _rows(con, "SELECT * FROM pd_collection ORDER BY year, rank, key"),
        "candidates": _rows(con, "SELECT * FROM pd_collection_candidates ORDER BY year, rank, key"),
        "audit": _rows(con, "SELECT * FROM pd_collection_audit ORDER BY year, key, criterion"),
        "top": _rows(con, """SELECT t.year, t.rank, t.key, t.key_kind, coalesce(c.title, t.key) AS title,
                                    t.box_office, t.n_weeks, t.n_tuples
                             FROM pd_top100 t LEFT JOIN pd_catalog_films c ON c.imdb = t.key
                             ORDER BY t.year, t.rank"""),
        "evaluation": _rows(con, "SELECT * FROM pd_evaluation ORDER BY extractor, scope DESC, issue, metric"),
        "excluded": _rows(con, "SELECT reason, count(*) AS n FROM pd_excluded GROUP BY 1 ORDER BY 2 DESC, 1"),
        "unknown_cities": _rows(con, "SELECT * FROM pd_unknown_cities ORDER BY n_tuples DESC, city"),
        "filter": _rows(con, "SELECT keep, reason, count(*) AS n FROM pd_page_filter GROUP BY 1, 2 ORDER BY 1 DESC, 3 DESC"),
        "extract_errors": _rows(con, """SELECT extractor, reason, count(*) AS n FROM pd_extract_errors
                                        GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2"""),
        "crosscheck": _rows(con, """SELECT status, count(*) AS pages, sum(n_primary) AS n_primary,
                                           sum(n_secondary) AS n_secondary, sum(n_agree) AS n_agree
                                    FROM pd_crosscheck GROUP BY 1 ORDER BY 1"""),
        "unparsed": _rows(con, "SELECT kind, reason, count(*) AS n FROM pd_unparsed GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2"),
        "cce_crosscheck": _rows(con, """SELECT item_id, page, kind, model, n_ocr, n_gemini, matched, ocr_only,
                                               gemini_only, renewal_differs, agree
                                        FROM pd_cce_crosscheck ORDER BY item_id, page"""),
        "cce_extractors": _rows(con, """SELECT 'registration' AS kind, extractor, count(*) AS n FROM pd_registrations
                                        GROUP BY 2
                                        UNION ALL
                                        SELECT 'renewal', extractor, count(*) FROM pd_renewals GROUP BY 2
                                        ORDER BY 1, 2"""),
        "alias_queue": _rows(con, """SELECT year, alias, n, imdb, title, score, reason, runner_up FROM pd_aliases
                                     WHERE decision = 'review' ORDER BY year, n DESC, alias"""),
        "aliases": _rows(con, "SELECT decision, count(*) AS n FROM pd_aliases GROUP BY 1 ORDER BY 1"),
        "match_queue": _rows(con, """SELECT reg_id, reg_date, title, renewal_id, n_candidates, candidates, reasons
                                     FROM pd_matches WHERE decision = 'matched_fuzzy_review' ORDER BY reg_date, reg_id"""),
        "statuses": _rows(con, "SELECT status, count(*) AS n FROM pd_status GROUP BY 1 ORDER BY 1"),
    }


def _candidates_text(raw: str | None) -> str:
    try:
        cands = json.loads(raw or "[]")
    except ValueError:
        return raw or ""
    return "; ".join(f"{c.get('renewal_id')} (orig {c.get('orig_reg_id')} {c.get('orig_date')}, "
                     f"“{c.get('title')}”, score {c.get('score')})" for c in cands)


def render_report(data: Mapping[str, Any]) -> str:
    """The HTML page for :func:`collect_report_data`'s dict (pure; warehouse/templates/pd_report.html.j2)."""
    s = data.get("summary", {})
    audit: dict[tuple[Any, Any], dict[str, tuple[bool, str]]] = {}
    for a in data.get("audit", []):
        audit.setdefault((a["year"], a["key"]), {})[a["criterion"]] = (a["passed"], a["evidence"])
    candidates, verdicts, review = [], [], []
    for c in data.get("candidates", []):
        crit = audit.get((c["year"], c["key"]), {})
        copyright_, sound = crit.get("copyright", (None, "")), crit.get("ia_sound", (None, ""))
        candidates.append([c["year"], c["rank"], c["title"], c["key"], copyright_[0], copyright_[1], sound[0],
                           sound[1], c["included"], c["exclusion_reasons"] or None])
        # the verdict of every ranked film: included | excluded | needs_review, the copyright
        # status and the rule that decided it, and the evidence used (never dropped)
        v = verdict_row(c, copyright_[1], sound[1])
        verdicts.append(v)
        if c.get("verdict") == "needs_review":
            review.append(v)
    verdict_of = {(c["year"], c["key"]): c for c in data.get("candidates", [])}
    top = data.get("top", [])
    ev = data.get("evaluation", [])
    per_issue: dict[tuple[str, str], dict[str, Any]] = {}
    for e in ev:
        if e["scope"] == "issue":
            per_issue.setdefault((e["extractor"], e["issue"]), {"n_gold": e["n_gold"], "n_pred": e["n_pred"]})[
                e["metric"]] = e["value"]
    pages = data.get("cce_crosscheck", [])
    bad = [c for c in pages if not c["agree"]]
    return render(
        "pd_report.html.j2", s=s, release=s.get("release") or {},
        collection=[[c["title"], c["year"], c["rank"], c["box_office"],
                     f"{c['reg_id']} ({c['reg_date']})" if c["reg_id"] else "none linked",
                     (verdict_of.get((c["year"], c["key"])) or {}).get("verdict", "included"), c["status"], c["rule"],
                     audit.get((c["year"], c["key"]), {}).get("copyright", (None, c["status_reason"]))[1]
                     or c["status_reason"],
                     c["n_renewals_searched"], c["renewal_id"] or "none", c["ia_item"], c["sound"]]
                    for c in data.get("collection", [])],
        candidates=candidates, verdicts=verdicts, review=review,
        top=[(year, [[t["rank"], t["title"], t["key"], t["key_kind"], t["box_office"], t["n_weeks"], t["n_tuples"]]
                     for t in top if t["year"] == year]) for year in sorted({t["year"] for t in top})],
        means=[[e["extractor"], e["model"], e["metric"], e["value"],
                None if e["ci_low"] is None else f"{e['ci_low']:.3f}–{e['ci_high']:.3f}", e["n_issues"],
                e["n_gold"], e["n_pred"], e["reason"]] for e in ev if e["scope"] == "mean"],
        per_issue=[[k[0], k[1], v["n_gold"], v["n_pred"], v.get("spearman"), v.get("movie_f1"), v.get("tuple_f1")]
                   for k, v in sorted(per_issue.items())],
        excluded=[[e["reason"], e["n"]] for e in data.get("excluded", [])],
        unknown_cities=[[u["city"], u["n_tuples"], u["n_last_week"]] for u in data.get("unknown_cities", [])],
        alias_queue=[[a["year"], a["alias"], a["n"], a["imdb"], a["title"], a["score"], a["reason"], a["runner_up"]]
                     for a in data.get("alias_queue", [])],
        aliases=[[a["decision"], a["n"]] for a in data.get("aliases", [])],
        match_queue=[[m["reg_id"], m["reg_date"], m["title"], m["renewal_id"], m["n_candidates"],
                      _candidates_text(m["candidates"]), m["reasons"]] for m in data.get("match_queue", [])],
        statuses=[[x["status"], x["n"]] for x in data.get("statuses", [])],
        page_filter=[[f["keep"], f["reason"], f["n"]] for f in data.get("filter", [])],
        extract_errors=[[x["extractor"], x["reason"], x["n"]] for x in data.get("extract_errors", [])],
        crosscheck=[[c["status"], c["pages"], c["n_primary"], c["n_secondary"], c["n_agree"]]
                    for c in data.get("crosscheck", [])],
        unparsed=[[u["kind"], u["reason"], u["n"]] for u in data.get("unparsed", [])],
        # the CCE cross-check: who read the records of the release (OCR-text parser on text pages,
        # Gemini on pages without a text layer, the CPRS export), per text page the agreement of the
        # OCR parser with Gemini, and every disagreement with the keys each side alone read
        cce_extractors=[[x["kind"], x["extractor"], x["n"]] for x in data.get("cce_extractors", [])],
        cce_pages=[[c["item_id"], c["page"], c["kind"], c["model"], c["n_ocr"], c["n_gemini"], c["matched"],
                    c["agree"]] for c in pages],
        cce_bad=[[c["item_id"], c["page"], _keys(c["ocr_only"]), _keys(c["gemini_only"]), _keys(c["renewal_differs"])]
                 for c in bad],
    )


def verdict_row(c: Mapping[str, Any], copyright_evidence: str | None, ia_evidence: str | None) -> list[Any]:
    """One row of the report's verdict table for a ``pd_collection_candidates`` row: year, rank,
    title, key, verdict, copyright status (public_domain / likely_public_domain / protected /
    needs_review; a film with no registration linked has none: ``none (<link reason>)``), the
    rule that decided it (R1_release_date, R2_not_renewed, R5_source_work_unknown, …), the
    evidence used (copyright, then IA sound) and the reasons (review reasons of a needs_review
    film, else the exclusion reasons)."""
    status = c.get("status") or f"none ({c.get('link_reason') or 'no_registration'})"
    evidence = "; ".join(e for e in (copyright_evidence or c.get("status_reason"), ia_evidence) if e) or None
    reasons = (c.get("review_reasons") if c.get("verdict") == "needs_review" else c.get("exclusion_reasons")) or None
    return [c["year"], c["rank"], c["title"], c["key"], c.get("verdict"), status, c.get("rule"), evidence, reasons]


def _keys(values: Sequence[str] | None) -> str | None:
    return "; ".join(values) if values else None


def write_report(state_db: Path, out_path: Path, summary: Mapping[str, Any]) -> Path:
    """Render the report from the state DB and write it atomically; returns its path."""
    with duckdb.connect(str(state_db), read_only=True) as con:
        page = render_report(collect_report_data(con, summary))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out_path.parent, prefix=".tmp-report-")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(page)
    os.replace(tmp, out_path)
    return out_path
