"""The flagged-track report of a build: ``CINESUB_HOME/reports/<run_id>/flagged-tracks.html``.

One self-contained HTML page for curators (docs/review.md): no network at all — the CSS, the
small table-filter script and every plot (inline SVG drawn here) are in the file, and a
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

import html
import json
import math
from pathlib import Path
from typing import Any

import duckdb

from cinesub.state import render_sql, sql_text

REPORT_NAME = "flagged-tracks.html"
#: keys of the Prefect artifacts (lowercase letters, digits, dashes)
TABLE_ARTIFACT_KEY = "flagged-tracks"
MARKDOWN_ARTIFACT_KEY = "build-summary"
#: at most this many timelines are drawn (all flags stay in the tables)
MAX_TIMELINES = 150
#: at most this many rows in the Prefect table artifact
MAX_ARTIFACT_ROWS = 5000

LANG_COLORS = {"en": "#4e79a7", "ar": "#f28e2b", "id": "#59a14f", "fa": "#e15759", "ro": "#b07aa1", "vi": "#76b7b2"}
STATUS_COLORS = {"ok": "#59a14f", "retained": "#4e79a7", "flagged": "#f28e2b", "rejected": "#e15759"}
UNITS = {"chronology": "ms", "block_lifespan": "min", "delayed_onset": "min", "runtime_coverage": "ratio",
         "macro_interval": "min", "language_mismatch": "share", "index_duplicate": "count", "span_ratio": "ratio", "token_ratio": "ratio",
         "entry_ratio": "ratio", "span_vs_english": "ratio"}


def e(value: Any) -> str:
    """HTML-escaped text of a value (None → empty)."""
    return "" if value is None else html.escape(str(value), quote=True)


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def fmt_ms(ms: Any) -> str:
    if ms is None:
        return "?"
    ms = int(ms)
    sign = "-" if ms < 0 else ""
    s = abs(ms) // 1000
    return f"{sign}{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


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
# SVG plots
# --------------------------------------------------------------------------------------------
def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{e(label)}">'
            f"<title>{e(label)}</title>{''.join(body)}</svg>")


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if v <= m * exp:
            return m * exp
    return 10 * exp


def svg_layer_language(rows: list[dict[str, Any]], languages: list[str]) -> str:
    """Stacked horizontal bars: flags per layer, one segment per language."""
    layers = sorted({r["layer"] for r in rows})
    if not layers:
        return "<p>No flags in this build.</p>"
    per = {(r["layer"], r["language"]): r["n"] for r in rows}
    totals = {layer: sum(per.get((layer, lg), 0) for lg in languages) for layer in layers}
    vmax = _nice_max(max(totals.values()))
    left, bar_w, row_h = 150, 560, 24
    height = 40 + row_h * len(layers) + 30
    body = []
    for i, layer in enumerate(layers):
        y = 30 + i * row_h
        body.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end" class="lbl">{e(layer)}</text>')
        x = left
        for lg in languages:
            n = per.get((layer, lg), 0)
            if not n:
                continue
            w = bar_w * n / vmax
            body.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{row_h - 6}" '
                        f'fill="{LANG_COLORS.get(lg, "#999")}"><title>{e(layer)} · {e(lg)}: {n}</title></rect>')
            x += w
        body.append(f'<text x="{x + 6:.1f}" y="{y + 15}" class="num">{totals[layer]}</text>')
    axis_y = 30 + row_h * len(layers) + 4
    for k in range(5):
        v = vmax * k / 4
        x = left + bar_w * k / 4
        body.append(f'<line x1="{x:.1f}" y1="26" x2="{x:.1f}" y2="{axis_y}" class="grid"/>')
        body.append(f'<text x="{x:.1f}" y="{axis_y + 14}" text-anchor="middle" class="tick">{v:g}</text>')
    lx = left
    for lg in languages:
        body.append(f'<rect x="{lx}" y="6" width="12" height="12" fill="{LANG_COLORS.get(lg, "#999")}"/>'
                    f'<text x="{lx + 16}" y="16" class="tick">{e(lg)}</text>')
        lx += 60
    return _svg(left + bar_w + 60, height, body, "flags by layer and language")


def svg_funnel(funnel: list[dict[str, Any]]) -> str:
    """Horizontal bars: films kept after each gate, dropped count annotated."""
    if not funnel:
        return "<p>No funnel.</p>"
    vmax = max(max(g["kept"] + g["dropped"] for g in funnel), 1)
    left, bar_w, row_h = 190, 480, 26
    body = []
    for i, g in enumerate(funnel):
        y = 10 + i * row_h
        wk = bar_w * g["kept"] / vmax
        wd = bar_w * g["dropped"] / vmax
        body.append(f'<text x="{left - 8}" y="{y + 16}" text-anchor="end" class="lbl">'
                    f'{g["gate_no"]} {e(g["gate"])}</text>')
        body.append(f'<rect x="{left}" y="{y + 3}" width="{wk:.1f}" height="{row_h - 6}" fill="#4e79a7">'
                    f'<title>kept {g["kept"]}</title></rect>')
        if wd:
            body.append(f'<rect x="{left + wk:.1f}" y="{y + 3}" width="{wd:.1f}" height="{row_h - 6}" '
                        f'fill="#e15759" opacity="0.45"><title>dropped {g["dropped"]}</title></rect>')
        body.append(f'<text x="{left + wk + wd + 6:.1f}" y="{y + 16}" class="num">{g["kept"]} kept'
                    + (f', {g["dropped"]} dropped' if g["dropped"] else "") + "</text>")
    return _svg(left + bar_w + 150, 20 + row_h * len(funnel), body, "funnel: films kept per gate")


def svg_coverage(points: list[dict[str, Any]], span_ratio_min: float, coverage_min: float) -> str:
    """Scatter: coverage span (last end - first start) against the runtime, per track."""
    pts = [p for p in points if p["runtime_min"]]
    if not pts:
        return "<p>No track with a known runtime.</p>"
    rmax = _nice_max(max(max(p["runtime_min"] for p in pts), max(p["last_end_ms"] / 60000 for p in pts)))
    left, top, w, h = 60, 20, 560, 360
    sx = lambda v: left + w * v / rmax  # noqa: E731
    sy = lambda v: top + h - h * v / rmax  # noqa: E731
    body = [f'<rect x="{left}" y="{top}" width="{w}" height="{h}" class="frame"/>']
    for k in range(6):
        v = rmax * k / 5
        body.append(f'<line x1="{sx(v):.1f}" y1="{top}" x2="{sx(v):.1f}" y2="{top + h}" class="grid"/>'
                    f'<text x="{sx(v):.1f}" y="{top + h + 16}" text-anchor="middle" class="tick">{v:g}</text>')
        body.append(f'<line x1="{left}" y1="{sy(v):.1f}" x2="{left + w}" y2="{sy(v):.1f}" class="grid"/>'
                    f'<text x="{left - 6}" y="{sy(v) + 4:.1f}" text-anchor="end" class="tick">{v:g}</text>')
    for ratio, label, cls in ((1.0, "span = runtime", "ref"),
                              (span_ratio_min, f"span_ratio {span_ratio_min:g}", "thr"),
                              (coverage_min, f"runtime_coverage {coverage_min:.3g}", "thr2")):
        body.append(f'<line x1="{sx(0):.1f}" y1="{sy(0):.1f}" x2="{sx(rmax):.1f}" y2="{sy(rmax * ratio):.1f}" '
                    f'class="{cls}"/><text x="{sx(rmax) - 4:.1f}" y="{sy(rmax * ratio) - 4:.1f}" '
                    f'text-anchor="end" class="tick">{e(label)}</text>')
    for p in pts:
        span = max(p["last_end_ms"] - p["first_start_ms"], 0) / 60000
        color = STATUS_COLORS.get(p["track_status"], "#999")
        fill = color if p["selected"] else "none"
        layers = ", ".join(p["layers"] or []) or "no flags"
        body.append(f'<circle cx="{sx(p["runtime_min"]):.1f}" cy="{sy(span):.1f}" r="3.5" stroke="{color}" '
                    f'fill="{fill}" stroke-width="1.5"><title>{e(p["imdb_id"])} {e(p["language"])} file '
                    f'{e(p["file_id"])} ({e(p["track_status"])}{", selected" if p["selected"] else ""}): span '
                    f'{span:.1f} min of {p["runtime_min"]} min; {e(layers)}</title></circle>')
    body.append(f'<text x="{left + w / 2}" y="{top + h + 34}" text-anchor="middle" class="lbl">runtime (min)</text>')
    body.append(f'<text x="14" y="{top + h / 2}" text-anchor="middle" class="lbl" '
                f'transform="rotate(-90 14 {top + h / 2})">coverage span (min)</text>')
    lx = left + 10
    for status, color in STATUS_COLORS.items():
        body.append(f'<circle cx="{lx}" cy="{top + 12}" r="4" fill="{color}"/>'
                    f'<text x="{lx + 8}" y="{top + 16}" class="tick">{status}</text>')
        lx += 80
    body.append(f'<text x="{lx}" y="{top + 16}" class="tick">filled = selected</text>')
    return _svg(left + w + 20, top + h + 44, body, "coverage span vs runtime per track")


def svg_timeline(t: dict[str, Any]) -> str:
    """One track on a time axis: entry density per minute, the runtime, and the flag evidence."""
    entries = t["entries"]
    runtime_ms = (t["runtime_min"] or 0) * 60000
    end_ms = max([runtime_ms] + [int(x[2]) for x in entries] + [1])
    left, w, top, h = 10, 860, 18, 40
    sx = lambda ms: left + w * max(ms, 0) / end_ms  # noqa: E731
    n_bins = max(1, math.ceil(end_ms / 60000))
    bins = [0] * n_bins
    for _, start, _end in entries:
        b = min(max(int(start) // 60000, 0), n_bins - 1)
        bins[b] += 1
    bmax = max(bins) or 1
    body = [f'<rect x="{left}" y="{top}" width="{w}" height="{h}" class="frame"/>']
    bw = w * 60000 / end_ms
    for i, n in enumerate(bins):
        if n:
            bh = h * n / bmax
            body.append(f'<rect x="{left + i * bw:.1f}" y="{top + h - bh:.1f}" width="{max(bw - 0.5, 0.5):.1f}" '
                        f'height="{bh:.1f}" fill="#9fb7d3"><title>minute {i}: {n} entries</title></rect>')
    if runtime_ms:
        body.append(f'<line x1="{sx(runtime_ms):.1f}" y1="{top - 6}" x2="{sx(runtime_ms):.1f}" y2="{top + h + 4}" '
                    f'class="runtime"/><text x="{sx(runtime_ms) - 3:.1f}" y="{top - 8}" text-anchor="end" '
                    f'class="tick">runtime {t["runtime_min"]} min</text>')
    by_index = {int(x[0]): (int(x[1]), int(x[2])) for x in entries}
    marks = []
    for f in t["flags"]:
        ev = f["evidence"] or {}
        layer = f["layer"]
        spans: list[tuple[int, int, str]] = []
        if layer == "macro_interval":
            for g in ev.get("gaps", []):
                spans.append((g["gap_start_ms"], g["gap_start_ms"] + g["gap_ms"],
                              f"gap {fmt_ms(g['gap_ms'])} between #{g['before']} and #{g['after']}"))
        elif layer == "block_lifespan":
            for idx in ev.get("indices", []):
                if idx in by_index:
                    s, en = by_index[idx]
                    spans.append((s, en, f"block #{idx} lasts {fmt_ms(en - s)}"))
        elif layer == "delayed_onset":
            spans.append((0, ev.get("first_start_ms", 0), f"first subtitle at {fmt_ms(ev.get('first_start_ms'))}"))
        elif layer == "runtime_coverage":
            spans.append((ev.get("last_end_ms", 0), ev.get("runtime_ms", end_ms),
                          f"uncovered after {fmt_ms(ev.get('last_end_ms'))}"))
        elif layer == "chronology":
            for idx in ev.get("indices", []):
                if idx in by_index:
                    s, en = by_index[idx]
                    spans.append((min(s, en), max(s, en) + 20000, f"block #{idx} ends {s - en} ms before it starts"))
        for s, en, label in spans:
            x0, x1 = sx(s), sx(en)
            body.append(f'<rect x="{x0:.1f}" y="{top - 2}" width="{max(x1 - x0, 2):.1f}" height="{h + 4}" '
                        f'class="ev"><title>{e(layer)}: {e(label)}</title></rect>')
            marks.append((x0, f"{layer}: {label}"))
    for k, (x, label) in enumerate(marks[:4]):
        body.append(f'<text x="{min(x, left + w - 300):.1f}" y="{top + h + 16 + 13 * k}" class="evl">{e(label)}</text>')
    for k in range(0, n_bins + 1, 10 if n_bins <= 200 else 30):
        x = left + k * bw
        if x <= left + w:
            body.append(f'<line x1="{x:.1f}" y1="{top + h}" x2="{x:.1f}" y2="{top + h + 3}" class="axis"/>')
    height = top + h + 20 + 13 * min(len(marks), 4)
    label = f"timeline of {t['imdb_id']} {t['language']} file {t['file_id']}"
    return _svg(left + w + 10, height, body, label)


# --------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------
CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;background:#f7f8fa}
header{background:#1d2330;color:#fff;padding:16px 28px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#c9d1e0}main{padding:8px 28px 40px;max-width:1400px}
section{background:#fff;border:1px solid #dde2ea;border-radius:6px;padding:12px 18px;margin:16px 0}
h2{font-size:17px;margin:4px 0 10px}h3{font-size:14px;margin:14px 0 4px}
table{border-collapse:collapse;width:100%;font-size:12.5px}th,td{border-bottom:1px solid #e6e9ef;
padding:4px 6px;text-align:left;vertical-align:top}th{background:#eef1f6;cursor:pointer}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}code{font-size:12px}
.cards{display:flex;flex-wrap:wrap;gap:10px}.card{border:1px solid #dde2ea;border-radius:6px;padding:8px 14px;
min-width:120px}.card b{display:block;font-size:20px}.card span{color:#5b6578;font-size:12px}
.st-flagged{color:#b35c00;font-weight:600}.st-rejected{color:#c62828;font-weight:600}.st-ok{color:#2e7d32}
.st-retained{color:#1f5fa8;font-weight:600}.st-excluded{color:#6a1b9a;font-weight:600}
.sev-stop{color:#c62828}.sev-review{color:#b35c00}input.filter{margin:4px 0 8px;padding:4px 8px;width:320px}
svg.plot{max-width:100%;height:auto;display:block;margin:6px 0}svg .lbl{font-size:12px;fill:#1d2330}
svg .tick{font-size:10px;fill:#5b6578}svg .num{font-size:11px;fill:#1d2330}svg .grid{stroke:#e6e9ef}
svg .frame{fill:#fbfcfd;stroke:#c5ccd8}svg .ref{stroke:#5b6578;stroke-dasharray:2 3}
svg .thr{stroke:#e15759;stroke-dasharray:6 3}svg .thr2{stroke:#f28e2b;stroke-dasharray:6 3}
svg .runtime{stroke:#1d2330;stroke-width:1.5}svg .ev{fill:#e15759;opacity:.35;stroke:#c62828}
svg .evl{font-size:11px;fill:#c62828}svg .axis{stroke:#5b6578}.tl{margin:10px 0 14px}
.muted{color:#5b6578}.detail{max-width:460px}
"""

JS = """
// A filter box matches within one column, chosen beside it (never anywhere in the row): typing
// "runtime" with the column "layer" keeps the runtime_coverage rows, not every row whose detail
// mentions a runtime.
document.querySelectorAll('input.filter').forEach(function (box) {
  var table = document.getElementById(box.dataset.table);
  var column = document.getElementById(box.dataset.table + '-column');
  function apply() {
    var q = box.value.trim().toLowerCase();
    var idx = parseInt(column.value, 10);
    var shown = 0;
    table.querySelectorAll('tbody tr').forEach(function (tr) {
      var cell = tr.cells[idx];
      var hit = q === '' || (cell !== undefined && cell.textContent.toLowerCase().indexOf(q) >= 0);
      tr.style.display = hit ? '' : 'none';
      if (hit) { shown += 1; }
    });
    var count = document.getElementById(box.dataset.table + '-count');
    if (count) { count.textContent = shown; }
  }
  box.addEventListener('input', apply);
  column.addEventListener('change', apply);
});
document.querySelectorAll('table.sortable th').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var table = th.closest('table');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var dir = th.dataset.dir === 'asc' ? -1 : 1;
    th.dataset.dir = dir === 1 ? 'asc' : 'desc';
    var idx = th.cellIndex;
    rows.sort(function (a, b) {
      var x = a.cells[idx].textContent, y = b.cells[idx].textContent;
      var nx = parseFloat(x), ny = parseFloat(y);
      if (!isNaN(nx) && !isNaN(ny)) { return (nx - ny) * dir; }
      return x.localeCompare(y) * dir;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""


def _table(table_id: str, headers: list[str], rows: list[list[str]], num_cols: set[int] | None = None,
           filter_column: int | None = None) -> str:
    """A sortable table; with ``filter_column`` a filter box that matches within one column
    (``filter_column`` first, any other chosen in the select beside the box)."""
    num_cols = num_cols or set()
    out = []
    if filter_column is not None:
        options = "".join(f'<option value="{i}"{" selected" if i == filter_column else ""}>{e(h)}</option>'
                          for i, h in enumerate(headers))
        out.append(f'<select class="filter-column" id="{table_id}-column" aria-label="filter column">{options}'
                   f'</select> <input class="filter" type="search" placeholder="filter this column…" '
                   f'data-table="{table_id}" aria-label="filter"> <span class="muted">'
                   f'<span id="{table_id}-count">{len(rows)}</span> rows</span>')
    out.append(f'<table id="{table_id}" class="sortable"><thead><tr>')
    out += [f'<th{" class=num" if i in num_cols else ""}>{e(h)}</th>' for i, h in enumerate(headers)]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(f'<td{" class=num" if i in num_cols else ""}>{c}</td>'
                                    for i, c in enumerate(r)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _status(s: Any) -> str:
    return f'<span class="st-{e(s)}">{e(s)}</span>' if s else ""


def render(data: dict[str, Any], thresholds: Any, languages: list[str]) -> str:
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
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        '<link rel="icon" href="data:,">',
        f"<title>cinesub flagged tracks — run {e(s.get('run_id'))}</title><style>{CSS}</style></head><body>",
        f"<header><h1>Flagged tracks — build {e(s.get('run_id'))}</h1>"
        f"<p>release {e(rel.get('version'))} · <code>{e(rel.get('path'))}</code> · CINESUB_HOME "
        f"<code>{e(s.get('home'))}</code></p></header><main>",
        '<section id="summary"><h2>Summary</h2><div class="cards">'
        + "".join(f"<div class=card><b>{e(v)}</b><span>{e(k)}</span></div>" for k, v in cards)
        + "</div><p class=muted>Decide with <code>cinesub review decide TRACK --action "
          "retain|repair|replace|exclude --note TEXT</code>; the next build honours it (docs/review.md).</p></section>",
    ]
    # flags by layer and language
    ll = data["layer_language"]
    layers = sorted({r["layer"] for r in ll})
    per = {(r["layer"], r["language"]): r for r in ll}
    rows = []
    for layer in layers:
        cells = [f"<code>{e(layer)}</code>"]
        total = 0
        for lg in languages:
            r = per.get((layer, lg))
            total += r["n"] if r else 0
            cells.append("" if not r else f"{r['n']}" + (f" ({r['n_selected']} sel.)" if r["n_selected"] else ""))
        cells.append(str(total))
        rows.append(cells)
    parts.append('<section id="layers"><h2>Flags by layer and language</h2>'
                 + svg_layer_language(ll, languages)
                 + _table("layer-table", ["layer"] + languages + ["total"], rows,
                          num_cols=set(range(1, len(languages) + 2)))
                 + "<p class=muted>Counts of flags on processed candidate tracks of the current processing "
                   "version; “sel.” = on the track selected for its film-language.</p></section>")
    # funnel
    funnel = s.get("funnel") or []
    frows = [[f"{g['gate_no']}", e(g["gate"]), str(g["kept"]), str(g["dropped"]),
              e(", ".join(f"{k} {v}" for k, v in (g.get("reasons") or {}).items()))] for g in funnel]
    parts.append('<section id="funnel"><h2>Funnel</h2>' + svg_funnel(funnel)
                 + _table("funnel-table", ["gate", "name", "kept", "dropped", "reasons"], frows, num_cols={0, 2, 3})
                 + "</section>")
    # complete-coverage optimisation (SPEC A7): exact search beside the frequency prefix, per K
    krows = []
    for r in data.get("coverage_k", []):
        krows.append([e(r["dimension"]), str(r["k"]), e(r["search_attributes"] or "—"), str(r["search_films"] or 0),
                      str(r["search_score"] or 0), e(r["prefix_attributes"] or "—"), str(r["prefix_films"] or 0),
                      str(r["prefix_score"] or 0)])
    parts.append('<section id="coverage-k"><h2>Complete-coverage optimisation (per K)</h2>'
                 + _table("coverage-k-table", ["dimension", "K", "search set", "films", "score", "prefix set",
                                               "films", "score"], krows, num_cols={1, 3, 4, 6, 7})
                 + "</section>")
    # coverage
    parts.append('<section id="coverage"><h2>Coverage span vs runtime</h2>'
                 + svg_coverage(data["coverage"], thresholds.span_ratio_min, thresholds.runtime_coverage_min_ratio)
                 + "<p class=muted>One point per processed track with timing: x = the film's IMDb runtime, "
                   "y = last end − first start. Lines: span = runtime, the duration-audit "
                   f"<code>span_ratio</code> threshold ({thresholds.span_ratio_min:g} × runtime) and the "
                   f"<code>runtime_coverage</code> threshold ({thresholds.runtime_coverage_min_ratio:.3g} × runtime, "
                   "which applies to the last end).</p></section>")
    # timelines
    tl = data["timelines"]
    tl_parts = []
    for t in tl:
        head = (f"<h3>{e(t['imdb_id'])} {e(t['title'])} · {e(t['language'])} · file {e(t['file_id'])} · "
                f"{_status(t['track_status'])}{' · selected' if t['selected'] else ''}"
                f"{' · decision ' + e(t['decision']) if t['decision'] else ''} · "
                + ", ".join(f"<code>{e(f['layer'])}</code>" for f in t["flags"]) + "</h3>")
        details = "".join(f"<div class=muted>{e(f['layer'])}: {e(f['detail'])}</div>" for f in t["flags"])
        tl_parts.append(f'<div class="tl" data-track="{e(t["track_id"])}">{head}{svg_timeline(t)}{details}</div>')
    more = (f"<p class=muted>{data['timelines_total'] - len(tl)} more timing-flagged tracks are listed in the "
            "table below.</p>" if data["timelines_total"] > len(tl) else "")
    parts.append('<section id="timelines"><h2>Gap timelines and timing evidence</h2>'
                 "<p class=muted>Entries per minute (blue), the runtime (black line) and the evidence of each "
                 "timing flag (red): the gaps of <code>macro_interval</code>, the long blocks of "
                 "<code>block_lifespan</code>, the late start of <code>delayed_onset</code>, the uncovered end of "
                 "<code>runtime_coverage</code>, the backwards blocks of <code>chronology</code>.</p>"
                 + ("".join(tl_parts) or "<p>No timing flags.</p>") + more + "</section>")
    # candidates
    crow = []
    for f in data["flags"]:
        crow.append([
            f"<code>{e(f['imdb_id'])}</code> {e(f['title'])}", e(f["language"]), e(f["rank"]),
            f"{e(f['file_id'])}<br><code class=muted>{e(f['track_id'][:12])}</code>", _status(f["track_status"]),
            f"<code>{e(f['layer'])}</code>", f'<span class="sev-{e(f["severity"])}">{e(f["severity"])}</span>',
            e(fmt_value(f["value"], f["layer"])), e(fmt_value(f["threshold"], f["layer"])),
            f"<div class=detail>{e(f['detail'])}</div>",
            e(f"{f['decision']} by {f['decided_by']}" if f["decision"] else ""), e(f["selected_instead"]),
            e(f["film_status"]),
        ])
    parts.append('<section id="candidates"><h2>Flagged and rejected candidates</h2>'
                 + _table("candidates-table", ["film", "lang", "rank", "file / track", "status", "layer", "severity",
                                               "value", "threshold", "detail", "decision", "selected instead",
                                               "film status"], crow, num_cols={2, 7, 8}, filter_column=5)
                 + "</section>")
    # link reviews
    lrows = [[e(r["kim_id"]), e(f"{r['title'] or ''} ({r['year'] or '?'})"), e(r["kim_imdb_id"]),
              e(r["csm_imdb_id"]), e(r["reason"]), e(r["decision"]),
              e(f"{r['decided_by']} {str(r['decided_at'])[:19]}" if r["decided_by"] else ""), e(r["note"]),
              e(r["film_status"])] for r in data["links"]]
    parts.append('<section id="link-reviews"><h2>Entity-link review queue</h2>'
                 + (_table("links-table", ["KIM id", "film", "KIM IMDb", "CSM IMDb", "reason", "decision",
                                           "decided", "note", "film status"], lrows)
                    + "<p class=muted>Decide with <code>cinesub review decide-link KIM_ID --accept "
                      "kim|csm|reject --note TEXT</code>; the next build honours it (docs/review.md).</p>"
                    if lrows else "<p>No entity-link disagreements.</p>") + "</section>")
    # decisions
    hrows = [[e(str(r["decided_at"])[:19]), e(r["decided_by"]), f"<b>{e(r['action'])}</b>",
              f"<code>{e(r['imdb_id'])}</code> {e(r['title'])} {e(r['language'])}", e(r["file_id"]), e(r["note"]),
              "in force" if r["in_force"] else "superseded", _status(r["selection_status"])]
             for r in data["history"]]
    parts.append('<section id="decisions"><h2>Curator decisions</h2>'
                 + (_table("decisions-table", ["when (UTC)", "by", "action", "film-language", "file", "note", "state",
                                               "selection now"], hrows)
                    if hrows else "<p>No decisions recorded yet.</p>") + "</section>")
    # sanitization
    srows = [[e(r["language"]), e(r["action"]), e(r["reasons"]), str(r["n"])] for r in data["sanitization"]]
    safety_rows = [[e(r["imdb_id"]), e(r["category"]), str(r["subtitle_count"]),
              "—" if r["kim_count"] is None else str(r["kim_count"]),
              "—" if r["difference"] is None else f"{r['difference']:+d}", "yes" if r["large"] else "",
              e(r["evidence"])] for r in data.get("safety", [])]
    parts.append('<section id="safety-discrepancies"><h2>Language safety: subtitles vs Kids-in-Mind</h2>'
                 + _table("safety-table", ["film", "category", "subtitles", "KIM", "difference", "large",
                                           "sample evidence indices"], safety_rows, num_cols={2, 3, 4},
                          filter_column=0)
                 + "<p class=muted>Counts from the English track beside the KIM prose counts; never forced to "
                   "agree.</p></section>")
    parts.append('<section id="sanitization"><h2>Sanitization on selected tracks</h2>'
                 + (_table("sanitization-table", ["language", "action", "reasons", "entries"], srows, num_cols={3})
                    if srows else "<p>No sanitization actions.</p>") + "</section>")
    parts.append(f"</main><script>{JS}</script></body></html>\n")
    return "".join(parts)


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
