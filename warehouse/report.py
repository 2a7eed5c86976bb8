"""The flagged-track report of a build: ``CINESUB_HOME/reports/<run_id>/flagged-tracks.html``.

One self-contained HTML page for curators (docs/review.md), rendered from
warehouse/templates/flagged_tracks.html.j2: no network at all — the CSS, the small table-filter
script and every plot (inline SVG, warehouse/report_plots.py) are in the file, and a
Content-Security-Policy forbids fetching anything. Contents:

* summary figures of the build and the curator queue;
* flags by layer and language (table and stacked bars);
* the funnel (table and bars);
* coverage span vs runtime of every processed track (scatter with the threshold lines);
* timelines of the tracks flagged on timing layers, with the evidence drawn on them (the gaps of
  ``macro_interval``, the long blocks of ``block_lifespan``, the late start of ``delayed_onset``,
  the uncovered end of ``runtime_coverage``, the backwards blocks of ``chronology``);
* every flagged or rejected candidate with layer, value, threshold, detail, the decision in
  force and what the recovery chain selected instead;
* the entity-link review queue, the decision history and the sanitization actions.

The same rows feed the Prefect table artifact ``flagged-tracks``; a markdown summary goes to the
artifact ``build-summary`` (flows/build.py). Data come from sql/review.sql and sql/report.sql.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from cinesub.state import render_sql, sql_text
from warehouse.render import render as render_template
from warehouse.report_plots import (  # noqa: F401  (fmt_ms, svg_timeline: part of this module's interface)
    fmt_ms,
    svg_coverage,
    svg_funnel,
    svg_layer_language,
    svg_timeline,
)

REPORT_NAME = "flagged-tracks.html"
#: keys of the Prefect artifacts (lowercase letters, digits, dashes)
TABLE_ARTIFACT_KEY = "flagged-tracks"
MARKDOWN_ARTIFACT_KEY = "build-summary"
#: at most this many timelines are drawn (all flags stay in the tables)
MAX_TIMELINES = 150
#: at most this many rows in the Prefect table artifact
MAX_ARTIFACT_ROWS = 5000

UNITS = {"chronology": "ms", "block_lifespan": "min", "delayed_onset": "min", "runtime_coverage": "ratio",
         "macro_interval": "min", "language_mismatch": "share", "index_duplicate": "count", "span_ratio": "ratio", "token_ratio": "ratio",
         "entry_ratio": "ratio", "span_vs_english": "ratio"}


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def fmt_value(value: Any, layer: str | None = None) -> str:
    if value is None:
        return ""
    v = float(value)
    unit = UNITS.get(layer or "", "")
    text = f"{v:.4g}"
    return f"{text} {unit}".strip()


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------
def collect(con: duckdb.DuckDBPyConnection, summary: dict[str, Any], processing_version: str) -> dict[str, Any]:
    """Everything the report shows, from the state DB."""
    con.execute(sql_text("link_decisions.sql"))
    con.execute(render_sql("review.sql", processing_version=processing_version))
    con.execute(sql_text("report.sql"))
    flags = _rows(con, "SELECT * FROM report_flags")
    coverage_k = _rows(con, """
        SELECT s.dimension, s.k, s.attributes AS search_attributes, s.films AS search_films, s.score AS search_score,
               p.attributes AS prefix_attributes, p.films AS prefix_films, p.score AS prefix_score
        FROM coverage s JOIN coverage p ON p.dimension = s.dimension AND p.k = s.k AND p.method = 'prefix'
        WHERE s.method = 'search' ORDER BY s.dimension, s.k""")
    queue = _rows(con, "SELECT * FROM review_queue ORDER BY imdb_id, language, rank NULLS LAST, file_id")
    counts = _rows(con, """
        SELECT count(*) AS tracks,
               count(*) FILTER (WHERE track_status = 'flagged') AS flagged,
               count(*) FILTER (WHERE track_status = 'rejected') AS rejected,
               count(*) FILTER (WHERE selected AND selection_status = 'flagged') AS selected_flagged,
               count(*) FILTER (WHERE selected AND selection_status = 'retained') AS retained
        FROM review_all_tracks""")[0]
    counts.update(_rows(con, """
        SELECT count(*) FILTER (WHERE status = 'excluded') AS excluded,
               count(*) FILTER (WHERE status = 'missing') AS missing
        FROM selections""")[0])
    counts["decisions"] = con.execute("SELECT count(*) FROM decisions").fetchall()[0][0]
    counts["open_link_reviews"] = con.execute(
        "SELECT count(*) FROM link_reviews WHERE decision IS NULL").fetchall()[0][0]
    layer_language = _rows(con, "SELECT * FROM report_layer_language")
    coverage = _rows(con, "SELECT * FROM report_coverage")
    timeline_rows = _rows(con, "SELECT * FROM report_timeline_tracks")
    timelines: list[dict[str, Any]] = []
    by_track: dict[str, dict[str, Any]] = {}
    for r in timeline_rows:
        t = by_track.get(r["track_id"])
        if t is None:
            if len(by_track) >= MAX_TIMELINES:
                continue
            t = dict(r, flags=[])
            by_track[r["track_id"]] = t
            timelines.append(t)
        t["flags"].append({"layer": r["layer"], "detail": r["detail"],
                           "evidence": json.loads(r["evidence"]) if r["evidence"] else {}})
    for t in timelines:
        t["entries"] = con.execute(
            'SELECT "index", start_ms, end_ms FROM entries WHERE track_id = ? ORDER BY position',
            [t["track_id"]]).fetchall()
    links = _rows(con, "SELECT * FROM review_link_queue ORDER BY decision = 'open' DESC, kim_id")
    history = _rows(con, "SELECT * FROM review_decision_history ORDER BY decided_at, decision_id")
    sanitization = _rows(con, "SELECT * FROM report_sanitization")
    return {
        "summary": summary,
        "flags": flags,
        "queue": queue,
        "counts": counts,
        "layer_language": layer_language,
        "coverage": coverage,
        "coverage_k": coverage_k,
        "timelines": timelines,
        "timelines_total": len({r["track_id"] for r in timeline_rows}),
        "links": links,
        "history": history,
        "sanitization": sanitization,
        "safety": _rows(con, """
            SELECT imdb_id, category, subtitle_count, kim_count, difference, large,
                   CAST(sample_evidence_indices AS VARCHAR) AS evidence
            FROM safety_discrepancies
            ORDER BY large DESC, abs(difference) DESC NULLS LAST, imdb_id, category"""),
    }


def artifact_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of the ``flagged-tracks`` table artifact: one per flag on a current track."""
    out = []
    for f in data["flags"][:MAX_ARTIFACT_ROWS]:
        out.append({
            "film": f["imdb_id"], "title": f["title"] or "", "language": f["language"],
            "rank": f["rank"], "file_id": f["file_id"], "track": f["track_id"][:12],
            "status": f["track_status"], "layer": f["layer"], "severity": f["severity"],
            "value": None if f["value"] is None else round(float(f["value"]), 4),
            "threshold": None if f["threshold"] is None else round(float(f["threshold"]), 4),
            "detail": (f["detail"] or "")[:200], "decision": f["decision"] or "",
            "selected_instead": f["selected_instead"],
        })
    return out


def markdown_summary(data: dict[str, Any], report_path: Path) -> str:
    """The ``build-summary`` markdown artifact."""
    s = data["summary"]
    c = data["counts"]
    rel = s.get("release", {})
    lines = [
        f"# cinesub build {s.get('run_id')}",
        "",
        f"Release **{rel.get('version')}** at `{rel.get('path')}`"
        + (f" (new, {rel.get('change')})" if rel.get("new") else " (unchanged)"),
        "",
        f"Films {s.get('films')} · tracks {s.get('tracks')} · entries {s.get('entries')}",
        "",
        f"Flagged-track report: [{report_path.name}]({report_path.as_uri()}) (`{report_path}`)",
        "",
        f"Curator queue: {c['flagged']} flagged and {c['rejected']} rejected tracks; "
        f"{c['selected_flagged']} film-languages wait on a flagged track, {c['retained']} retained, "
        f"{c['excluded']} excluded; {c['decisions']} decisions recorded; "
        f"{c['open_link_reviews']} open entity-link reviews.",
        "",
        "## Flags by layer",
        "",
        "| layer | all candidates | selected cohort tracks |",
        "|---|---:|---:|",
    ]
    for layer, n in (s.get("flags_by_layer") or {}).items():
        lines.append(f"| {layer} | {n} | {(s.get('flags_on_selected_tracks') or {}).get(layer, 0)} |")
    lines += ["", "## Funnel", "", "| gate | kept | dropped | reasons |", "|---|---:|---:|---|"]
    for g in s.get("funnel") or []:
        reasons = ", ".join(f"{k} {v}" for k, v in (g.get("reasons") or {}).items())
        lines.append(f"| {g['gate_no']} {g['gate']} | {g['kept']} | {g['dropped']} | {reasons} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# HTML (warehouse/templates/flagged_tracks.html.j2)
# --------------------------------------------------------------------------------------------
def render(data: dict[str, Any], thresholds: Any, languages: list[str]) -> str:
    """The report page for :func:`collect`'s data (pure)."""
    s = data["summary"]
    c = data["counts"]
    rel = s.get("release") or {}
    cards = [
        ("release", f"{rel.get('version')}" + (" (new)" if rel.get("new") else "")),
        ("cohort films", s.get("films")), ("selected tracks", s.get("tracks")),
        ("processed tracks", c["tracks"]), ("flagged tracks", c["flagged"]), ("rejected tracks", c["rejected"]),
        ("waiting on a flagged track", c["selected_flagged"]), ("retained", c["retained"]),
        ("excluded", c["excluded"]), ("decisions", c["decisions"]),
        ("open link reviews", c["open_link_reviews"]),
    ]
    ll = data["layer_language"]
    per = {(r["layer"], r["language"]): r for r in ll}
    layer_rows = []
    for layer in sorted({r["layer"] for r in ll}):
        cells = [(per[(layer, lg)]["n"], per[(layer, lg)]["n_selected"]) if (layer, lg) in per else (None, None)
                 for lg in languages]
        layer_rows.append({"layer": layer, "cells": cells, "total": sum(n or 0 for n, _ in cells)})
    funnel = s.get("funnel") or []
    timelines = [dict(t, svg=svg_timeline(t)) for t in data["timelines"]]
    return render_template(
        "flagged_tracks.html.j2", s=s, rel=rel, cards=cards, languages=list(languages),
        plot_layers=svg_layer_language(ll, languages), layer_rows=layer_rows,
        plot_funnel=svg_funnel(funnel),
        funnel=[{"gate_no": g["gate_no"], "gate": g["gate"], "kept": g["kept"], "dropped": g["dropped"],
                 "reasons": ", ".join(f"{k} {v}" for k, v in (g.get("reasons") or {}).items())} for g in funnel],
        coverage_k=data.get("coverage_k", []),
        plot_coverage=svg_coverage(data["coverage"], thresholds.span_ratio_min, thresholds.runtime_coverage_min_ratio),
        span_ratio_min=f"{thresholds.span_ratio_min:g}", coverage_min=f"{thresholds.runtime_coverage_min_ratio:.3g}",
        timelines=timelines, more_timelines=max(data["timelines_total"] - len(timelines), 0),
        flags=data["flags"], fmt_value=fmt_value, links=data["links"], history=data["history"],
        safety=data.get("safety", []), sanitization=data["sanitization"])


def write_report(state_db: Path, reports_dir: Path, run_id: str, summary: dict[str, Any], thresholds: Any,
                 languages: list[str], processing_version: str) -> dict[str, Any]:
    """Write the report of ``run_id`` atomically; return its path, counts and artifact contents."""
    from cinesub.state import connect

    with connect(state_db) as con:
        data = collect(con, summary, processing_version)
    page = render(data, thresholds, list(languages))
    target_dir = reports_dir / run_id
    target_dir.mkdir(parents=True, exist_ok=True)
    path = target_dir / REPORT_NAME
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(path)
    return {
        "path": str(path),
        "flags": len(data["flags"]),
        "flagged_tracks": data["counts"]["flagged"],
        "rejected_tracks": data["counts"]["rejected"],
        "table": artifact_rows(data),
        "markdown": markdown_summary(data, path),
    }
