"""The public-domain Hollywood report: ``CINESUB_HOME/reports/hollywood.html`` (SPEC B1, B2).

One self-contained HTML page (inline CSS, no script, no outside resource; every value escaped)
for curators: the collection with each film's evidence (rank, year, gross, copyright status with
its rule and reasons, the renewal search and match, the Internet Archive item and sound), the
audit of every ranked film against the three criteria (the copyright evidence lists the film's
source works — AFI "based on" — so a film excluded through a renewed novel shows it), the yearly
top-N per year, the evaluation of each extractor (means with 95% bootstrap intervals, per issue),
the exclusion counts by reason,
the page-filter, extraction and CCE parse failures by reason, the CCE cross-check of the OCR
parser against Gemini (per page, disagreements listed), and the curator review queues (aliases,
copyright matches) with counts.

:func:`collect_report_data` reads the Hollywood state DB; :func:`render_report` is pure (data →
HTML); :func:`write_report` writes the file atomically.
"""

from __future__ import annotations

import html
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb

CSS = """body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}th,td{border:1px solid #ccc;padding:3px 6px;
text-align:left;vertical-align:top}th{background:#f3f3f3}td.num{text-align:right}.ok{color:#176317}
.no{color:#a31515}.muted{color:#777}h2{margin-top:1.6em;border-bottom:1px solid #ddd}code{font-size:12px}"""


def _e(value: Any) -> str:
    if value is None:
        return '<span class="muted">—</span>'
    if isinstance(value, bool):
        return '<span class="ok">yes</span>' if value else '<span class="no">no</span>'
    if isinstance(value, float):
        return html.escape(f"{value:,.3f}" if abs(value) < 10 else f"{value:,.0f}")
    return html.escape(str(value))


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], empty: str = "none") -> str:
    if not rows:
        return f'<p class="muted">{html.escape(empty)}</p>'
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for r in rows:
        cells = "".join(f'<td class="num">{_e(v)}</td>' if isinstance(v, (int, float)) and not isinstance(v, bool)
                        else f"<td>{_e(v)}</td>" for v in r)
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


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
    """The HTML page for :func:`collect_report_data`'s dict (pure)."""
    s = data.get("summary", {})
    rel = s.get("release") or {}
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>cinesub — public-domain Hollywood collection</title>", f"<style>{CSS}</style></head><body>",
           "<h1>Public-domain Hollywood collection</h1>",
           f"<p>Release <b>{_e(rel.get('version'))}</b> at <code>{_e(rel.get('path'))}</code>"
           f" ({'new, ' + _e(rel.get('change')) if rel.get('new') else 'unchanged'}); copyright status as of "
           f"<b>{_e(s.get('as_of'))}</b>; primary extractor <b>{_e(s.get('primary_extractor'))}</b>"
           + (f" (fallback: {_e(s.get('primary_fallback_reason'))})" if s.get("primary_fallback_reason") else "")
           + f"; run {_e(s.get('run_id'))}.</p>"]

    coll = data.get("collection", [])
    out.append(f"<h2>Collection ({len(coll)} films)</h2>")
    out.append("<p>Variety top-N of the year ∩ public domain or likely public domain ∩ sound film on the "
               "Internet Archive (SPEC B2).</p>")
    out.append(_table(
        ["title", "year", "rank", "box office ($)", "registration", "status", "rule / reasons", "renewals searched",
         "matched renewal", "IA item", "sound"],
        [[c["title"], c["year"], c["rank"], c["box_office"], f"{c['reg_id']} ({c['reg_date']})", c["status"],
          c["status_reason"], c["n_renewals_searched"], c["renewal_id"] or "none", c["ia_item"], c["sound"]]
         for c in coll], "no film passes all three criteria"))

    cands = data.get("candidates", [])
    out.append(f"<h2>Every ranked film against the criteria ({len(cands)})</h2>")
    audit: dict[tuple[Any, Any], dict[str, tuple[bool, str]]] = {}
    for a in data.get("audit", []):
        audit.setdefault((a["year"], a["key"]), {})[a["criterion"]] = (a["passed"], a["evidence"])
    rows = []
    for c in cands:
        crit = audit.get((c["year"], c["key"]), {})
        rows.append([c["year"], c["rank"], c["title"], c["key"], crit.get("copyright", (None, ""))[0],
                     crit.get("copyright", (None, ""))[1], crit.get("ia_sound", (None, ""))[0],
                     crit.get("ia_sound", (None, ""))[1], c["included"], c["exclusion_reasons"] or None])
    out.append(_table(["year", "rank", "title", "key", "copyright ok", "copyright evidence", "IA sound ok",
                       "IA evidence", "included", "excluded because"], rows))

    top = data.get("top", [])
    out.append("<h2>Yearly top-N</h2>")
    for year in sorted({t["year"] for t in top}):
        ys = [t for t in top if t["year"] == year]
        out.append(f"<h3>{_e(year)} ({len(ys)} films)</h3>")
        out.append(_table(["rank", "title", "key", "key kind", "box office ($)", "weeks", "tuples"],
                          [[t["rank"], t["title"], t["key"], t["key_kind"], t["box_office"], t["n_weeks"],
                            t["n_tuples"]] for t in ys]))
    if not top:
        out.append('<p class="muted">no ranking (no tuple counted)</p>')

    ev = data.get("evaluation", [])
    out.append("<h2>Extraction accuracy against gold pages</h2>")
    means = [e for e in ev if e["scope"] == "mean"]
    out.append(_table(["extractor", "model", "metric", "mean", "95% CI", "issues", "gold tuples", "pred tuples",
                       "left out"],
                      [[e["extractor"], e["model"], e["metric"], e["value"],
                        None if e["ci_low"] is None else f"{e['ci_low']:.3f}–{e['ci_high']:.3f}", e["n_issues"],
                        e["n_gold"], e["n_pred"], e["reason"]] for e in means], "no gold pages: not evaluated"))
    per_issue: dict[tuple[str, str], dict[str, Any]] = {}
    for e in ev:
        if e["scope"] == "issue":
            per_issue.setdefault((e["extractor"], e["issue"]), {"n_gold": e["n_gold"], "n_pred": e["n_pred"]})[
                e["metric"]] = e["value"]
    out.append(_table(["extractor", "issue", "gold", "pred", "spearman", "movie F1", "tuple F1"],
                      [[k[0], k[1], v["n_gold"], v["n_pred"], v.get("spearman"), v.get("movie_f1"),
                        v.get("tuple_f1")] for k, v in sorted(per_issue.items())], "no issue scored"))

    out.append("<h2>Tuples excluded from the ranking, by reason</h2>")
    out.append(_table(["reason", "tuples"], [[e["reason"], e["n"]] for e in data.get("excluded", [])]))
    out.append("<h3>Cities missing from the city map</h3>")
    out.append(_table(["city", "tuples", "last-week tuples"],
                      [[u["city"], u["n_tuples"], u["n_last_week"]] for u in data.get("unknown_cities", [])]))

    out.append("<h2>Review queues</h2>")
    aq, mq = data.get("alias_queue", []), data.get("match_queue", [])
    out.append(f"<h3>Aliases to confirm ({len(aq)})</h3>")
    out.append("<p>Decide with <code>cinesub hollywood review decide-alias YEAR ALIAS IMDB|none --by NAME</code>; "
               "the next build honours it.</p>")
    out.append(_table(["year", "alias", "seen", "suggested imdb", "title", "score", "reason", "runner-up"],
                      [[a["year"], a["alias"], a["n"], a["imdb"], a["title"], a["score"], a["reason"], a["runner_up"]]
                       for a in aq]))
    out.append(_table(["alias decision", "aliases"], [[a["decision"], a["n"]] for a in data.get("aliases", [])]))
    out.append(f"<h3>Copyright matches to review ({len(mq)})</h3>")
    out.append("<p>Decide with <code>cinesub hollywood review decide-match REG_ID REG_DATE --renewal RID|"
               "--not-renewed --by NAME</code>; until then the film is <i>needs_review</i> and not in the "
               "collection.</p>")
    out.append(_table(["registration", "date", "title", "best candidate", "candidates", "details", "reasons"],
                      [[m["reg_id"], m["reg_date"], m["title"], m["renewal_id"], m["n_candidates"],
                        _candidates_text(m["candidates"]), m["reasons"]] for m in mq]))
    out.append(_table(["status", "registrations"], [[x["status"], x["n"]] for x in data.get("statuses", [])]))

    out.append("<h2>What could not be read</h2>")
    out.append("<h3>Page filter</h3>")
    out.append(_table(["kept", "reason", "pages"], [[f["keep"], f["reason"], f["n"]] for f in data.get("filter", [])]))
    out.append("<h3>Extraction failures</h3>")
    out.append(_table(["extractor", "reason", "count"],
                      [[x["extractor"], x["reason"], x["n"]] for x in data.get("extract_errors", [])]))
    out.append("<h3>Cross-check of the primary extractor</h3>")
    out.append(_table(["status", "pages", "primary tuples", "cross-check tuples", "in common"],
                      [[c["status"], c["pages"], c["n_primary"], c["n_secondary"], c["n_agree"]]
                       for c in data.get("crosscheck", [])]))
    out.append("<h3>CCE entries not parsed</h3>")
    out.append(_table(["kind", "reason", "entries"], [[u["kind"], u["reason"], u["n"]] for u in data.get("unparsed", [])]))
    out += render_cce_crosscheck(data.get("cce_crosscheck", []), data.get("cce_extractors", []))
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _keys(values: Sequence[str] | None) -> str | None:
    return "; ".join(values) if values else None


def render_cce_crosscheck(pages: Sequence[Mapping[str, Any]], extractors: Sequence[Mapping[str, Any]]) -> list[str]:
    """The CCE cross-check section (pure): who read the records of the release (OCR-text parser on
    text pages, Gemini on pages without a text layer, the CPRS export), per text page the agreement
    of the OCR parser with Gemini, and every disagreement with the keys each side alone read."""
    bad = [c for c in pages if not c["agree"]]
    out = [f"<h3>CCE cross-check: OCR parser vs Gemini ({len(pages)} text pages, {len(bad)} disagree)</h3>",
           "<p>The OCR-text parser is the source of record for pages with a text layer; Gemini reads every "
           "page image, and its records are the extraction for pages without one. Records are compared by "
           "<code>kind|registration number|date</code> (film classes), renewals also by renewal number.</p>"]
    out.append(_table(["kind", "extractor", "records"], [[x["kind"], x["extractor"], x["n"]] for x in extractors]))
    out.append(_table(["volume", "page", "kind", "model", "OCR records", "Gemini records", "matched", "agree"],
                      [[c["item_id"], c["page"], c["kind"], c["model"], c["n_ocr"], c["n_gemini"], c["matched"],
                        c["agree"]] for c in pages], "Gemini did not read any text page"))
    out.append(f"<h4>Disagreements ({len(bad)})</h4>")
    out.append(_table(["volume", "page", "OCR only", "Gemini only", "renewal number differs"],
                      [[c["item_id"], c["page"], _keys(c["ocr_only"]), _keys(c["gemini_only"]),
                        _keys(c["renewal_differs"])] for c in bad], "none: every page agrees"))
    return out


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
