"""The release statistics page: ``statistics.html``, one self-contained HTML file.

Renders the tables of :func:`warehouse.stats.compute_stats` (SPEC A11, paper Tables 8–14) as HTML
tables and draws the paper's Figure 7/8 panels as inline SVG with matplotlib (Agg, no pyplot
state): input tokens per language, age-suitability labels, national rating minimum ages, genre
frequencies, language-safety counts, release years and runtimes. Every figure has a caption and
alt text (an SVG ``<title>`` plus ``role="img"``/``aria-label``).

Offline and reproducible: no script at all, CSS inline, a Content-Security-Policy that forbids
fetching anything; matplotlib's SVG ids are salted per figure (``svg.hashsalt``) and the file
carries no date (``metadata={'Date': None}``), ids are prefixed per figure so they stay unique in
the page — the same statistics give the same bytes.

Free text never becomes markup (issue 14): every figure is drawn with ``text.parse_math`` and
``text.usetex`` off, so a genre "Action $ Money $" or ``$\\frac$`` is drawn as written (mathtext
would garble the first and raise on the second); labels from data pass through :func:`plot_text`
(control characters replaced, long labels shortened — the tables beside the plots hold the full
text) and are placed by position, never as matplotlib categories; in the HTML every value is
escaped, and the SVG id rewriting touches tags only, never the text of a label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import hashlib
import os
from typing import TYPE_CHECKING

import pyarrow as pa

from cinesub.settings import LANGUAGE_NAMES
from warehouse.plots import MAX_PLOT_LABEL, plot_text, rc, rc_context, svg_figure  # noqa: F401  (MAX_PLOT_LABEL: the page's contract)
from warehouse.plots import axes, mpl
from warehouse.render import markup, render

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PAGE_NAME = "statistics.html"
LANG_COLORS = {"en": "#4e79a7", "ar": "#f28e2b", "id": "#59a14f", "fa": "#e15759", "ro": "#b07aa1", "vi": "#76b7b2"}
CATEGORY_LABELS = {
    "strongProfanity": "Strong profanity",
    "crudeBodilyLanguage": "Crude bodily language",
    "mildObscenity": "Mild obscenity",
    "religiousProfanityAndExclamation": "Religious profanity/exclamation",
}
FIELD_LABELS = {"plot": "Plot", "synopsis": "Synopsis", "storyline": "Storyline", "keyMessage": "Key message"}
#: Genres drawn in the genre plot (all are in the table).
MAX_GENRES_PLOTTED = 20

#: Integer columns printed without thousands separators.
PLAIN_INT_COLUMNS = frozenset({"year", "year_min", "year_max", "minimum_age"})
#: Section order, heading and caption of each statistics table (name → (heading, caption)).
SECTIONS: dict[str, tuple[str, str]] = {
    "core": ("Core statistics", "Core dataset statistics (paper Table 8)."),
    "input_size": ("Subtitle input size by language",
                   "Input tokens of the prompt-formatted subtitle track (paper Table 9). Ratios compare each track "
                   "with the English track of the same film; the median is taken over films."),
    "reference_length": ("Reference output length",
                         "Length of the narrative task references in words, i.e. whitespace-separated tokens "
                         "(paper Table 10)."),
    "language_content": ("Subtitle-grounded language content",
                         "Occurrences and evidence lines per category, over the English subtitle track "
                         "(paper Table 11)."),
    "duration_audit": ("Subtitle-duration coverage audit",
                       "Span/runtime, interval density/runtime and ratios against English per language (paper "
                       "Table 12). Token ratio: o200k_base tokens of the prompt-formatted track, the audit's "
                       "count; low counts use the audit thresholds (see Definitions)."),
    "genres": ("Genres", "Films per genre label (paper Table 13)."),
    "age_suitability": ("Age suitability", "Films per Common Sense age-suitability label (paper Table 14)."),
    "ratings": ("National motion-picture ratings", "Films per country, rating label and minimum age."),
    "years": ("Release years", "Films per release year."),
    "runtimes": ("Runtimes", "Films per runtime in minutes."),
    "input_tokens": ("Input tokens per track", "Entries and input tokens of every subtitle track."),
    "definitions": ("Definitions", "How the numbers above are computed."),
}
#: Tables long enough to sit in a collapsed <details> element.
COLLAPSED = {"input_tokens", "ratings", "runtimes"}

def fmt(value: Any, col: str = "") -> str:
    """A cell value: thousands separators (not for years and ages); floats with at most 4
    decimals, trailing zeros cut."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value) if col in PLAIN_INT_COLUMNS else f"{value:,}"
    if isinstance(value, float):
        text = f"{value:,.4f}".rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text
    return str(value)


def lang_label(code: str) -> str:
    return f"{LANGUAGE_NAMES.get(code, code)} ({code})"


def _cell(col: str, value: Any) -> tuple[str, bool]:
    """(text, numeric) of one table cell."""
    if col == "language" and isinstance(value, str):
        value = lang_label(value)
    elif col == "category" and isinstance(value, str):
        value = CATEGORY_LABELS.get(value, value)
    elif col == "field" and isinstance(value, str):
        value = FIELD_LABELS.get(value, value)
    return fmt(value, col), isinstance(value, (int, float)) and not isinstance(value, bool)


def table_view(name: str, table: pa.Table, caption: str) -> dict[str, Any]:
    """A statistics table as the template shows it (the one-row core table transposed to
    statistic/value: rows [(column, cell)]): {name, caption, core, columns, rows [[(text, numeric)]]}.
    The human labels of columns and core statistics are the template's."""
    rows = table.to_pylist()
    if name == "core":
        row = rows[0] if rows else {}
        return {"name": name, "caption": caption, "core": True, "columns": [],
                "rows": [(c, _cell(c, row.get(c))) for c in table.column_names]}
    return {"name": name, "caption": caption, "core": False, "columns": list(table.column_names),
            "rows": [[_cell(c, r[c]) for c in table.column_names] for r in rows]}


# --------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------
def encoding_name(stats: Mapping[str, pa.Table]) -> str:
    """The tokenizer encoding named in the ``definitions`` table (the default when absent)."""
    if "definitions" in stats:
        for row in stats["definitions"].to_pylist():
            if row["name"] == "encoding":
                return str(row["value"])
    return "o200k_base"


def fig_input_tokens(stats: Mapping[str, pa.Table]) -> tuple[Figure, str]:
    size = stats["input_size"].to_pylist()
    per_track = stats["input_tokens"].to_pylist() if "input_tokens" in stats else []
    langs = [r["language"] for r in size]
    data = [[t["input_tokens"] / 1000 for t in per_track if t["language"] == lang and t["input_tokens"] is not None]
            for lang in langs]
    fig, ax = axes(6.4, 3.2, empty=None if any(data) else "tracks")
    if any(data):
        pos = list(range(1, len(langs) + 1))
        drawn = [(p, d, lang) for p, d, lang in zip(pos, data, langs) if d]
        bp = ax.boxplot([d for _, d, _ in drawn], positions=[p for p, _, _ in drawn], orientation="horizontal", widths=0.55,
                        patch_artist=True, showfliers=True, medianprops={"color": "#1d2430"},
                        flierprops={"markersize": 3})
        for patch, (_, _, lang) in zip(bp["boxes"], drawn):
            patch.set_facecolor(LANG_COLORS.get(lang, "#9aa5b1"))
            patch.set_alpha(0.75)
        means = [(r["mean_tokens"] or 0) / 1000 for r in size]
        ax.scatter([m for m, d in zip(means, data) if d], [p for p, d in zip(pos, data) if d], marker="D", s=16,
                   color="#ffffff", edgecolor="#1d2430", zorder=3, label="mean")
        ax.set_yticks(pos)
        ax.set_yticklabels([plot_text(lang_label(lang)) for lang in langs])
        ax.invert_yaxis()
        ax.set_xlabel(f"Input subtitle length (thousand {encoding_name(stats)} tokens)")
        ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    alt = f"Box plot of {encoding_name(stats)} input tokens per subtitle track by language. Medians: " + "; ".join(
        f"{lang_label(r['language'])} {fmt(r['median_tokens'])}" for r in size) + "."
    return fig, alt


def fig_age_suitability(stats: Mapping[str, pa.Table]) -> tuple[Figure, str]:
    rows = sorted(stats["age_suitability"].to_pylist(),
                  key=lambda r: (r["minimum_age"] is None, r["minimum_age"] or 0, str(r["label"])))
    fig, ax = axes(5.2, 3.0, empty=None if rows else "age-suitability labels")
    if rows:
        pos = list(range(len(rows)))
        ax.bar(pos, [r["films"] for r in rows], color="#4e79a7")
        ax.set_xticks(pos, [plot_text(r["label"]) for r in rows])
        ax.set_ylabel("Films")
        ax.set_xlabel("Common Sense age-suitability label")
        ax.tick_params(axis="x", labelrotation=45)
    alt = "Bar chart of films per age-suitability label: " + "; ".join(
        f"{r['label']} {r['films']}" for r in rows) + "."
    return fig, alt


def fig_ratings(stats: Mapping[str, pa.Table]) -> tuple[Figure, str]:
    rows = stats["ratings"].to_pylist()
    countries = sorted({r["country"] for r in rows}, key=lambda c: (c is None, str(c)))
    ages = sorted({r["minimum_age"] for r in rows if r["minimum_age"] is not None})
    fig, ax = axes(7.0, 3.6, empty=None if rows else "ratings")
    if not rows:
        return fig, "No national ratings."
    totals = {c: sum(r["films"] for r in rows if r["country"] == c) for c in countries}
    cmap = mpl().colormaps["viridis_r"]
    norm = mpl().colors.Normalize(vmin=min(ages) if ages else 0, vmax=max(ages) if ages else 1)
    left = {c: 0.0 for c in countries}
    for age in ages:
        widths = [sum(r["films"] for r in rows if r["country"] == c and r["minimum_age"] == age) / (totals[c] or 1)
                  for c in countries]
        ax.barh(list(range(len(countries))), widths, left=[left[c] for c in countries], color=cmap(norm(age)),
                label=f"{age}+", edgecolor="white", linewidth=0.4)
        for c, w in zip(countries, widths):
            left[c] += w
    ax.set_yticks(list(range(len(countries))), [plot_text(c) for c in countries])
    ax.set_xlim(0, 1)
    ax.invert_yaxis()
    ax.set_xlabel("Proportion of films")
    ax.legend(title="Minimum age", fontsize=7, title_fontsize=8, ncol=1, frameon=False,
              loc="upper left", bbox_to_anchor=(1.01, 1.0))
    alt = ("Stacked bars of the share of films per minimum age for each rating country (" + ", ".join(map(str, countries))
           + "); minimum ages " + ", ".join(f"{a}+" for a in ages) + ".")
    return fig, alt


def fig_genres(stats: Mapping[str, pa.Table]) -> tuple[Figure, str]:
    rows = stats["genres"].to_pylist()[:MAX_GENRES_PLOTTED]
    films = stats["core"].to_pylist()[0]["films"] if stats["core"].num_rows else 0
    fig, ax = axes(5.6, max(2.4, 0.22 * len(rows) + 0.8), empty=None if rows else "genres")
    if rows:
        pos = list(range(len(rows)))
        ax.barh(pos, [r["films"] for r in rows], color="#59a14f")
        ax.set_yticks(pos, [plot_text(r["genre"]) for r in rows])
        ax.invert_yaxis()
        ax.set_xlabel("Films" + (f" (of {films:,})" if films else ""))
    alt = "Horizontal bars of films per genre, most frequent first: " + "; ".join(
        f"{r['genre']} {r['films']}" for r in rows) + "."
    return fig, alt


def fig_language_content(stats: Mapping[str, pa.Table]) -> tuple[Figure, str]:
    rows = stats["language_content"].to_pylist()
    labels = [CATEGORY_LABELS.get(r["category"], r["category"]) for r in rows]
    fig, ax = axes(6.0, 2.8, empty=None if rows else "categories")
    if rows:
        y = list(range(len(rows)))
        ax.barh([v - 0.2 for v in y], [r["occurrence_count"] for r in rows], height=0.38, color="#e15759",
                label="occurrences")
        ax.barh([v + 0.2 for v in y], [r["evidence_line_count"] for r in rows], height=0.38, color="#f1a7a9",
                label="evidence lines")
        ax.set_yticks(y)
        ax.set_yticklabels([plot_text(lab) for lab in labels])
        ax.invert_yaxis()
        ax.set_xlabel("Count (English subtitle track)")
        ax.legend(fontsize=8, frameon=False, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2)
    alt = "Grouped bars of language-safety occurrences and evidence lines per category: " + "; ".join(
        f"{lab} {r['occurrence_count']} occurrences, {r['evidence_line_count']} lines" for lab, r in zip(labels, rows)) + "."
    return fig, alt


def _histogram(rows: list[dict[str, Any]], key: str, width: int, color: str, xlabel: str,
               median: float | None) -> Figure:
    values = [r[key] for r in rows]
    fig, ax = axes(5.2, 2.8, empty=None if values else "films")
    if not values:
        return fig
    lo = (min(values) // width) * width
    hi = (max(values) // width + 1) * width
    bins = list(range(int(lo), int(hi) + 1, width))
    ax.hist(values, bins=bins, weights=[r["films"] for r in rows], color=color, edgecolor="white")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("Films")
    if median is not None:
        ax.axvline(median, color="#1d2430", linestyle="--", linewidth=1, label=f"median {fmt(median)}")
        ax.legend(fontsize=8, frameon=False, loc="lower right", bbox_to_anchor=(1.0, 1.0))
    return fig


def fig_years(stats: Mapping[str, pa.Table]) -> tuple[Figure, str]:
    rows = stats["years"].to_pylist()
    fig = _histogram(rows, "year", 5, "#76b7b2", "Release year (5-year bins)", None)
    span = f"{rows[0]['year']}–{rows[-1]['year']}" if rows else "none"
    return fig, f"Histogram of films per release year in 5-year bins; years {span}."


def fig_runtimes(stats: Mapping[str, pa.Table]) -> tuple[Figure, str]:
    rows = stats["runtimes"].to_pylist()
    core = stats["core"].to_pylist()[0] if stats["core"].num_rows else {}
    median = core.get("runtime_median")
    fig = _histogram(rows, "runtime_min", 10, "#b07aa1", "Runtime (minutes, 10-minute bins)", median)
    return fig, (f"Histogram of film runtimes in 10-minute bins; median {fmt(median)} minutes, "
                 f"max {fmt(core.get('runtime_max'))} minutes.")


#: Figures: key → (drawer, section it belongs to, caption, the statistics tables it draws). A
#: drawer is handed only its tables (another one is a KeyError), so the list is the figure's
#: whole input: the key of its cached SVG (:func:`render_figures`).
FIGURES: dict[str, tuple[Any, str, str, tuple[str, ...]]] = {
    "fig-input-tokens": (fig_input_tokens, "input_size",
                         "Figure 1. Subtitle input length by language: tokens of the prompt-formatted track "
                         "(box: quartiles, whiskers 1.5 IQR, diamond: mean).",
                         ("input_size", "input_tokens", "definitions")),
    "fig-language-content": (fig_language_content, "language_content",
                             "Figure 2. Subtitle-grounded language-safety counts and evidence lines per category.",
                             ("language_content",)),
    "fig-genres": (fig_genres, "genres",
                   f"Figure 3. Genre frequencies (the {MAX_GENRES_PLOTTED} most frequent labels).", ("genres", "core")),
    "fig-age-suitability": (fig_age_suitability, "age_suitability",
                            "Figure 4. Common Sense age-suitability label distribution.", ("age_suitability",)),
    "fig-ratings": (fig_ratings, "ratings",
                    "Figure 5. National motion-picture ratings: share of films per minimum age in each country.",
                    ("ratings",)),
    "fig-years": (fig_years, "years", "Figure 6. Release-year coverage.", ("years",)),
    "fig-runtimes": (fig_runtimes, "runtimes", "Figure 7. Runtime coverage (dashed line: median).",
                     ("runtimes", "core")),
}


#: Figures that read only some columns of a table they declare: figure key → {table: columns}.
#: The drawer is handed just these columns (another one is a KeyError), and only they key its
#: cached SVG, so a figure is not drawn again when another column of the table changed (``core``
#: counts the entries, which every changed track changes; the genre and runtime plots read only
#: its film count and runtimes).
FIGURE_COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    "fig-genres": {"core": ("films",)},
    "fig-runtimes": {"core": ("runtime_median", "runtime_max")},
}


def figure_tables(key: str, stats: Mapping[str, pa.Table]) -> dict[str, pa.Table]:
    """The inputs of the figure ``key``: the tables :data:`FIGURES` declares for it (those
    present in ``stats``), cut to the columns of :data:`FIGURE_COLUMNS`."""
    cols = FIGURE_COLUMNS.get(key, {})
    return {name: stats[name].select(list(cols[name])) if name in cols else stats[name]
            for name in FIGURES[key][3] if name in stats}


def _code_digest() -> str:
    """What the figures' pixels depend on besides their tables: this module, warehouse/plots.py
    and the matplotlib version."""
    from importlib.metadata import version

    from cinesub.digests import files_digest

    return files_digest([__file__, os.path.join(os.path.dirname(__file__), "plots.py")], version("matplotlib"))


def _figure_digest(code: str, key: str, tables: Mapping[str, pa.Table]) -> str:
    h = hashlib.sha256(f"{code}\0{key}\0".encode())
    for name in sorted(tables):
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, tables[name].schema) as writer:
            writer.write_table(tables[name].combine_chunks())
        h.update(name.encode() + b"\0" + hashlib.sha256(sink.getvalue().to_pybytes()).digest())
    return h.hexdigest()


def render_figures(stats: Mapping[str, pa.Table], cache_dir: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """Section name → the figures drawn for it: {key, svg (inline markup), caption}.

    With ``cache_dir``, a figure whose tables, code and matplotlib version equal an earlier
    one's is read from ``cache_dir/<sha256>.svg`` instead of drawn (the same inputs give the same
    bytes, module docstring), so a rebuild redraws only the figures whose data changed."""
    out: dict[str, list[dict[str, Any]]] = {}
    code = _code_digest() if cache_dir is not None else ""
    for key, (draw, section, caption, _reads) in FIGURES.items():
        if section not in stats:
            continue
        tables = figure_tables(key, stats)
        cached = cache_dir / f"{_figure_digest(code, key, tables)}.svg" if cache_dir is not None else None
        svg = cached.read_text(encoding="utf-8") if cached is not None and cached.is_file() else None
        if svg is None:
            with rc_context(rc(key)):
                fig, alt = draw(tables)
                svg = svg_figure(fig, key, alt)
            if cached is not None:
                from cinesub.tmpfiles import write_text_atomic

                write_text_atomic(cached, svg)
        out.setdefault(section, []).append({"key": key, "svg": markup(svg), "caption": caption})
    return out


def render_html(stats: Mapping[str, pa.Table], *, title: str, version: str, cache_dir: Path | None = None) -> str:
    """The page's HTML text (deterministic for the same statistics; warehouse/templates/statistics.html.j2);
    ``cache_dir``: the figure cache (:func:`render_figures`)."""
    figures = render_figures(stats, cache_dir)
    names = [n for n in SECTIONS if n in stats] + sorted(n for n in stats if n not in SECTIONS)
    tok = ""
    if "definitions" in stats:
        tok = {r["name"]: r["value"] for r in stats["definitions"].to_pylist()}.get("tokenizer", "")
    sections = []
    for name in names:
        heading, caption = SECTIONS.get(name, (name, name))
        sections.append({"name": name, "heading": heading, "table": table_view(name, stats[name], caption),
                         "collapsed": name in COLLAPSED, "n_rows": f"{stats[name].num_rows:,}",
                         "figures": figures.get(name, [])})
    return render("statistics.html.j2", title=title, version=version, tokenizer=tok, sections=sections)


def render_stats_page(stats: Mapping[str, pa.Table], out_path: str | Path, *, title: str, version: str,
                      cache_dir: Path | None = None) -> Path:
    """Write the statistics page to ``out_path`` (parents created) and return its path;
    ``cache_dir``: the figure cache (:func:`render_figures`)."""
    path = Path(out_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(stats, title=title, version=version, cache_dir=cache_dir), encoding="utf-8")
    return path


__all__: Sequence[str] = ("render_stats_page", "render_html", "svg_figure", "PAGE_NAME")
