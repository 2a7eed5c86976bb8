"""The plots of the flagged-track report (warehouse/report.py), drawn as inline SVG: flags per
layer and language, the funnel, coverage span against runtime, and one timeline per timing-flagged
track with the flag evidence on it. Each function computes the shapes (plain data: tag,
attributes, tooltip, text) and warehouse/templates/plot.svg.j2 writes them, every text escaped;
an empty plot is "" (the page says why). Small, exact vector plots with per-shape tooltips, which
is why these are drawn here rather than with matplotlib (warehouse/plots.py)."""

from __future__ import annotations

import math
from typing import Any

from markupsafe import Markup

from warehouse.render import render

LANG_COLORS = {"en": "#4e79a7", "ar": "#f28e2b", "id": "#59a14f", "fa": "#e15759", "ro": "#b07aa1", "vi": "#76b7b2"}
STATUS_COLORS = {"ok": "#59a14f", "retained": "#4e79a7", "flagged": "#f28e2b", "rejected": "#e15759"}


def fmt_ms(ms: Any) -> str:
    if ms is None:
        return "?"
    ms = int(ms)
    sign = "-" if ms < 0 else ""
    s = abs(ms) // 1000
    return f"{sign}{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def el(tag: str, *, title: Any = None, text: Any = None, **attrs: Any) -> dict[str, Any]:
    """One SVG element: attribute names with ``_`` for ``-`` (``class_`` for ``class``)."""
    return {"tag": tag, "title": title, "text": text,
            "attrs": [(k.rstrip("_").replace("_", "-"), v) for k, v in attrs.items()]}


def _svg(width: Any, height: Any, body: list[dict[str, Any]], label: str) -> Markup:
    return Markup(render("plot.svg.j2", width=width, height=height, body=body, label=label))


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if v <= m * exp:
            return m * exp
    return 10 * exp


def _f(v: float) -> str:
    return f"{v:.1f}"


def svg_layer_language(rows: list[dict[str, Any]], languages: list[str]) -> Markup | str:
    """Stacked horizontal bars: flags per layer, one segment per language ("" without flags)."""
    layers = sorted({r["layer"] for r in rows})
    if not layers:
        return ""
    per = {(r["layer"], r["language"]): r["n"] for r in rows}
    totals = {layer: sum(per.get((layer, lg), 0) for lg in languages) for layer in layers}
    vmax = _nice_max(max(totals.values()))
    left, bar_w, row_h = 150, 560, 24
    height = 40 + row_h * len(layers) + 30
    body = []
    for i, layer in enumerate(layers):
        y = 30 + i * row_h
        body.append(el("text", text=layer, x=left - 8, y=y + 15, text_anchor="end", class_="lbl"))
        x = left
        for lg in languages:
            n = per.get((layer, lg), 0)
            if not n:
                continue
            w = bar_w * n / vmax
            body.append(el("rect", title=f"{layer} · {lg}: {n}", x=_f(x), y=y + 3, width=_f(w), height=row_h - 6,
                           fill=LANG_COLORS.get(lg, "#999")))
            x += w
        body.append(el("text", text=totals[layer], x=_f(x + 6), y=y + 15, class_="num"))
    axis_y = 30 + row_h * len(layers) + 4
    for k in range(5):
        v = vmax * k / 4
        x = left + bar_w * k / 4
        body.append(el("line", x1=_f(x), y1=26, x2=_f(x), y2=axis_y, class_="grid"))
        body.append(el("text", text=f"{v:g}", x=_f(x), y=axis_y + 14, text_anchor="middle", class_="tick"))
    lx = left
    for lg in languages:
        body.append(el("rect", x=lx, y=6, width=12, height=12, fill=LANG_COLORS.get(lg, "#999")))
        body.append(el("text", text=lg, x=lx + 16, y=16, class_="tick"))
        lx += 60
    return _svg(left + bar_w + 60, height, body, "flags by layer and language")


def svg_funnel(funnel: list[dict[str, Any]]) -> Markup | str:
    """Horizontal bars: films kept after each gate, dropped count annotated ("" without a funnel)."""
    if not funnel:
        return ""
    vmax = max(max(g["kept"] + g["dropped"] for g in funnel), 1)
    left, bar_w, row_h = 190, 480, 26
    body = []
    for i, g in enumerate(funnel):
        y = 10 + i * row_h
        wk = bar_w * g["kept"] / vmax
        wd = bar_w * g["dropped"] / vmax
        body.append(el("text", text=f"{g['gate_no']} {g['gate']}", x=left - 8, y=y + 16, text_anchor="end",
                       class_="lbl"))
        body.append(el("rect", title=f"kept {g['kept']}", x=left, y=y + 3, width=_f(wk), height=row_h - 6,
                       fill="#4e79a7"))
        if wd:
            body.append(el("rect", title=f"dropped {g['dropped']}", x=_f(left + wk), y=y + 3, width=_f(wd),
                           height=row_h - 6, fill="#e15759", opacity="0.45"))
        body.append(el("text", text=f"{g['kept']} kept" + (f", {g['dropped']} dropped" if g["dropped"] else ""),
                       x=_f(left + wk + wd + 6), y=y + 16, class_="num"))
    return _svg(left + bar_w + 150, 20 + row_h * len(funnel), body, "funnel: films kept per gate")


def svg_coverage(points: list[dict[str, Any]], span_ratio_min: float, coverage_min: float) -> Markup | str:
    """Scatter: coverage span (last end - first start) against the runtime, per track ("" when no
    track has a known runtime)."""
    pts = [p for p in points if p["runtime_min"]]
    if not pts:
        return ""
    rmax = _nice_max(max(max(p["runtime_min"] for p in pts), max(p["last_end_ms"] / 60000 for p in pts)))
    left, top, w, h = 60, 20, 560, 360

    def sx(v: float) -> float:
        return left + w * v / rmax

    def sy(v: float) -> float:
        return top + h - h * v / rmax

    body = [el("rect", x=left, y=top, width=w, height=h, class_="frame")]
    for k in range(6):
        v = rmax * k / 5
        body += [el("line", x1=_f(sx(v)), y1=top, x2=_f(sx(v)), y2=top + h, class_="grid"),
                 el("text", text=f"{v:g}", x=_f(sx(v)), y=top + h + 16, text_anchor="middle", class_="tick"),
                 el("line", x1=left, y1=_f(sy(v)), x2=left + w, y2=_f(sy(v)), class_="grid"),
                 el("text", text=f"{v:g}", x=left - 6, y=_f(sy(v) + 4), text_anchor="end", class_="tick")]
    for ratio, label, cls in ((1.0, "span = runtime", "ref"),
                              (span_ratio_min, f"span_ratio {span_ratio_min:g}", "thr"),
                              (coverage_min, f"runtime_coverage {coverage_min:.3g}", "thr2")):
        body += [el("line", x1=_f(sx(0)), y1=_f(sy(0)), x2=_f(sx(rmax)), y2=_f(sy(rmax * ratio)), class_=cls),
                 el("text", text=label, x=_f(sx(rmax) - 4), y=_f(sy(rmax * ratio) - 4), text_anchor="end",
                    class_="tick")]
    for p in pts:
        span = max(p["last_end_ms"] - p["first_start_ms"], 0) / 60000
        color = STATUS_COLORS.get(p["track_status"], "#999")
        layers = ", ".join(p["layers"] or []) or "no flags"
        title = (f"{p['imdb_id']} {p['language']} file {p['file_id']} ({p['track_status']}"
                 f"{', selected' if p['selected'] else ''}): span {span:.1f} min of {p['runtime_min']} min; {layers}")
        body.append(el("circle", title=title, cx=_f(sx(p["runtime_min"])), cy=_f(sy(span)), r="3.5", stroke=color,
                       fill=color if p["selected"] else "none", stroke_width="1.5"))
    body.append(el("text", text="runtime (min)", x=left + w / 2, y=top + h + 34, text_anchor="middle", class_="lbl"))
    body.append(el("text", text="coverage span (min)", x=14, y=top + h / 2, text_anchor="middle", class_="lbl",
                   transform=f"rotate(-90 14 {top + h / 2})"))
    lx = left + 10
    for status, color in STATUS_COLORS.items():
        body += [el("circle", cx=lx, cy=top + 12, r=4, fill=color),
                 el("text", text=status, x=lx + 8, y=top + 16, class_="tick")]
        lx += 80
    body.append(el("text", text="filled = selected", x=lx, y=top + 16, class_="tick"))
    return _svg(left + w + 20, top + h + 44, body, "coverage span vs runtime per track")


def _evidence_spans(f: dict[str, Any], by_index: dict[int, tuple[int, int]], end_ms: int) -> list[tuple[int, int, str]]:
    """(start ms, end ms, label) of what a timing flag's evidence points at."""
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
    return spans


def svg_timeline(t: dict[str, Any]) -> Markup:
    """One track on a time axis: entry density per minute, the runtime, and the flag evidence."""
    entries = t["entries"]
    runtime_ms = (t["runtime_min"] or 0) * 60000
    end_ms = max([runtime_ms] + [int(x[2]) for x in entries] + [1])
    left, w, top, h = 10, 860, 18, 40

    def sx(ms: float) -> float:
        return left + w * max(ms, 0) / end_ms

    n_bins = max(1, math.ceil(end_ms / 60000))
    bins = [0] * n_bins
    for _, start, _end in entries:
        bins[min(max(int(start) // 60000, 0), n_bins - 1)] += 1
    bmax = max(bins) or 1
    body = [el("rect", x=left, y=top, width=w, height=h, class_="frame")]
    bw = w * 60000 / end_ms
    for i, n in enumerate(bins):
        if n:
            bh = h * n / bmax
            body.append(el("rect", title=f"minute {i}: {n} entries", x=_f(left + i * bw), y=_f(top + h - bh),
                           width=_f(max(bw - 0.5, 0.5)), height=_f(bh), fill="#9fb7d3"))
    if runtime_ms:
        body += [el("line", x1=_f(sx(runtime_ms)), y1=top - 6, x2=_f(sx(runtime_ms)), y2=top + h + 4, class_="runtime"),
                 el("text", text=f"runtime {t['runtime_min']} min", x=_f(sx(runtime_ms) - 3), y=top - 8,
                    text_anchor="end", class_="tick")]
    by_index = {int(x[0]): (int(x[1]), int(x[2])) for x in entries}
    marks = []
    for f in t["flags"]:
        for s, en, label in _evidence_spans(f, by_index, end_ms):
            x0, x1 = sx(s), sx(en)
            body.append(el("rect", title=f"{f['layer']}: {label}", x=_f(x0), y=top - 2, width=_f(max(x1 - x0, 2)),
                           height=h + 4, class_="ev"))
            marks.append((x0, f"{f['layer']}: {label}"))
    for k, (x, label) in enumerate(marks[:4]):
        body.append(el("text", text=label, x=_f(min(x, left + w - 300)), y=top + h + 16 + 13 * k, class_="evl"))
    for k in range(0, n_bins + 1, 10 if n_bins <= 200 else 30):
        x = left + k * bw
        if x <= left + w:
            body.append(el("line", x1=_f(x), y1=top + h, x2=_f(x), y2=top + h + 3, class_="axis"))
    height = top + h + 20 + 13 * min(len(marks), 4)
    return _svg(left + w + 10, height, body, f"timeline of {t['imdb_id']} {t['language']} file {t['file_id']}")
