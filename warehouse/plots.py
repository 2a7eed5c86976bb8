"""The one plotting helper of every figure the project draws (statistics page, reports).

matplotlib with the Agg backend and no pyplot state: a figure is a :class:`matplotlib.figure.Figure`
made by :func:`figure`, drawn by the caller, and written by :func:`write_figure` (a PNG or SVG
file, its path returned) or :func:`svg_figure` (an inline ``<svg>`` element for a page).

Text from the data is text (issue 14): every figure is drawn with ``text.parse_math`` and
``text.usetex`` off (:func:`rc`), so a label "Action $ Money $" or ``$\\frac$`` is drawn as written;
labels from data pass through :func:`plot_text` (control characters replaced, long labels
shortened). Output is reproducible: SVG ids are salted per figure (``svg.hashsalt``) and prefixed
with the figure's key (unique in a page; tags only, never a label's text), and no date is written.
"""

from __future__ import annotations

import functools
import io
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from warehouse.render import escape

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: longest label drawn in a plot (characters); the tables beside a plot carry the full text
MAX_PLOT_LABEL = 48
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufffe\uffff]")
_ID_RE = re.compile(r'\bid="([^"]+)"')
_URL_RE = re.compile(r"url\(#([^)]+)\)")
_HREF_RE = re.compile(r'href="#([^"]+)"')
_TAG_RE = re.compile(r"<[^>]*>")  # label text is escaped (&lt; &gt;), so this never enters one


#: the thread :func:`preload` started (None: none, or joined)
_PRELOAD: threading.Thread | None = None


def preload() -> None:
    """Import matplotlib and what :func:`figure` and :func:`svg_figure` need in a background
    thread: a release starts it once it knows its data changed, so the import (~0.5 s of Python)
    overlaps the DuckDB, Parquet and file work that follows, which runs without the GIL. Drawing
    waits for the thread first (:func:`mpl`); an import that fails there is raised by the
    drawing's own import. Nothing when matplotlib is already imported or a preload started."""
    global _PRELOAD
    if _PRELOAD is not None or _import_matplotlib.cache_info().currsize:
        return

    def run() -> None:
        try:
            _import_matplotlib()
            import matplotlib.backends.backend_svg  # noqa: F401
            import matplotlib.figure  # noqa: F401
        except Exception:  # raised again, where it matters, by the drawing's own import
            pass

    _PRELOAD = threading.Thread(target=run, name="matplotlib-preload", daemon=True)
    _PRELOAD.start()


def _join_preload() -> None:
    global _PRELOAD
    thread = _PRELOAD
    if thread is not None and thread is not threading.current_thread():
        thread.join()
        _PRELOAD = None


def mpl() -> Any:
    """matplotlib with the Agg backend, imported on first use (a release whose figures are all
    in the figure cache, warehouse/stats_page.py, never imports it); after the thread of
    :func:`preload`, when one was started."""
    _join_preload()
    return _import_matplotlib()


@functools.lru_cache(maxsize=None)
def _import_matplotlib() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.colors  # noqa: F401  (used as matplotlib.colors)

    return matplotlib


def rc_context(settings: dict[str, Any]) -> Any:
    return mpl().rc_context(settings)


def rc(key: str) -> dict[str, Any]:
    """matplotlib settings of one figure: fixed style, text kept as text, ids salted per figure."""
    return {"font.size": 9, "font.family": "DejaVu Sans", "svg.hashsalt": f"cinesub-stats-{key}",
            "svg.fonttype": "none", "axes.titlesize": 10,
            # text from the data is text: no mathtext ($...$), no LaTeX
            "text.parse_math": False, "text.usetex": False}


def plot_text(value: Any) -> str:
    """A value from the data as a plot label: plain text (drawn with math parsing off), one line,
    no control characters, at most :data:`MAX_PLOT_LABEL` characters."""
    text = "(none)" if value is None else str(value)
    text = _CONTROL_RE.sub("\ufffd", text.replace("\r\n", " ").replace("\n", " ").replace("\t", " "))
    text = "".join(ch for ch in text if not 0xD800 <= ord(ch) <= 0xDFFF) or "(empty)"
    return text if len(text) <= MAX_PLOT_LABEL else text[: MAX_PLOT_LABEL - 1] + "…"


def figure(width: float, height: float) -> Figure:
    mpl()  # (waits for the preload)
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100)


def style(ax: Any) -> None:
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.tick_params(labelsize=8)


def axes(width: float, height: float, *, empty: str | None = None) -> tuple[Figure, Any]:
    """A figure with one styled axes; with ``empty`` ("films", …) the axes says "no <empty>"."""
    fig = figure(width, height)
    ax = fig.add_subplot()
    style(ax)
    if empty is not None:
        ax.text(0.5, 0.5, f"no {empty}", ha="center", va="center", transform=ax.transAxes, color="#777")
        ax.set_xticks([])
        ax.set_yticks([])
    return fig, ax


def _prefix_ids(tag: str, key: str) -> str:
    tag = _ID_RE.sub(lambda m: f'id="{key}-{m.group(1)}"', tag)
    tag = _URL_RE.sub(lambda m: f"url(#{key}-{m.group(1)})", tag)
    return _HREF_RE.sub(lambda m: f'href="#{key}-{m.group(1)}"', tag)


def svg_figure(fig: Figure, key: str, alt: str) -> str:
    """The figure as an inline ``<svg>`` element: no XML prolog or metadata, ids prefixed with
    ``key``, a ``<title>`` and an ``aria-label`` carrying ``alt``."""
    buf = io.StringIO()
    with rc_context(rc(key)):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = _TAG_RE.sub(lambda m: _prefix_ids(m.group(0), key), svg)  # tags only: never a label's text
    svg = svg.replace("<svg ", f'<svg class="plot" role="img" aria-label="{escape(alt)}" ', 1)
    head_end = svg.index(">") + 1
    return svg[:head_end] + f"\n <title>{escape(alt)}</title>" + svg[head_end:].rstrip() + "\n"


def write_figure(fig: Figure, path: str | Path, key: str = "figure") -> Path:
    """Write ``fig`` to ``path`` (PNG or SVG by its suffix; no date in the file) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = path.suffix.lstrip(".").lower()
    meta = {"Date": None, "Creator": None} if fmt == "svg" else {"Software": None}
    with rc_context(rc(key)):
        fig.savefig(path, format=fmt, metadata=meta, bbox_inches="tight")
    return path
