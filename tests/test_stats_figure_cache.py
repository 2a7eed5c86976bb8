"""The statistics page's figure cache (warehouse/stats_page.py render_figures): a figure whose
tables are unchanged is read back, not drawn; one whose table changed is drawn again; the page's
bytes are those of an uncached render."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa

from test_release_stats import release, stats  # noqa: F401  (module fixtures: a small release's statistics)
from warehouse import stats_page
from warehouse.stats_page import FIGURES, render_stats_page

REPO = Path(__file__).resolve().parent.parent


def test_cached_figures_give_the_same_page_and_only_changed_ones_are_drawn(stats, tmp_path, monkeypatch):
    cache = tmp_path / "figures"
    plain = render_stats_page(stats, tmp_path / "plain.html", title="cinesub", version="1")
    first = render_stats_page(stats, tmp_path / "first.html", title="cinesub", version="1", cache_dir=cache)
    drawn_figures = [k for k, (_, section, _, _) in FIGURES.items() if section in stats]
    assert len(list(cache.glob("*.svg"))) == len(drawn_figures)
    assert first.read_bytes() == plain.read_bytes()

    drawn: list[str] = []
    real = stats_page.svg_figure
    monkeypatch.setattr(stats_page, "svg_figure", lambda fig, key, alt: drawn.append(key) or real(fig, key, alt))
    again = render_stats_page(stats, tmp_path / "again.html", title="cinesub", version="1", cache_dir=cache)
    assert drawn == [] and again.read_bytes() == plain.read_bytes()

    years = stats["years"].to_pylist()
    years[0] = {**years[0], "films": years[0]["films"] + 5}
    changed = {**stats, "years": pa.Table.from_pylist(years, schema=stats["years"].schema)}
    page = render_stats_page(changed, tmp_path / "changed.html", title="cinesub", version="1", cache_dir=cache)
    assert drawn == ["fig-years"]
    assert page.read_bytes() == render_stats_page(changed, tmp_path / "changed-plain.html", title="cinesub",
                                                  version="1").read_bytes()


def test_a_drawer_reads_only_the_tables_it_declares(stats):
    for key, (draw, section, _, reads) in FIGURES.items():
        if section in stats:
            draw({name: stats[name] for name in reads if name in stats})  # a KeyError names a missing declaration


def test_a_page_of_cached_figures_does_not_import_matplotlib(stats, tmp_path):
    cache = tmp_path / "figures"
    render_stats_page(stats, tmp_path / "warm.html", title="cinesub", version="1", cache_dir=cache)
    from warehouse.stats import write_stats

    files = write_stats(stats, tmp_path / "rel")
    code = ("import sys, pyarrow.parquet as pq; from pathlib import Path\n"
            "from warehouse.stats_page import render_stats_page\n"
            f"order = {list(stats)!r}\n"
            "d = Path(sys.argv[1]); st = {n: pq.read_table(d / f'{n}.parquet') for n in order}\n"
            "render_stats_page(st, sys.argv[2], title='cinesub', version='1', cache_dir=Path(sys.argv[3]))\n"
            "print('matplotlib' in sys.modules)\n")
    out = tmp_path / "cold.html"
    proc = subprocess.run([sys.executable, "-c", code, str(files["stats/core.parquet"].parent), str(out), str(cache)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "False"
    assert out.read_bytes() == (tmp_path / "warm.html").read_bytes()


def test_known_token_counts_are_used_and_nothing_else_is_tokenised(release, monkeypatch):
    """warehouse/tokens.py count_track_tokens(known=...): the release's statistics reuse the
    cohort stage's counts (keyed by the sha256 of the counted text) and tokenise only the rest."""
    import hashlib
    import json

    import polars as pl

    from warehouse import tokens

    entries = release["tables"]["entries"]
    fresh = dict(tokens.count_track_tokens(entries).rows())
    df = pl.from_arrow(entries).sort(["track_id", "start_ms", "index"], maintain_order=True)
    sha = {}
    for part in df.partition_by("track_id", maintain_order=True):
        text = json.dumps([{"index": i, "timeframe": t, "content": c} for i, t, c in
                           zip(part["index"], part["timeframe"], part["content"])], ensure_ascii=False)
        sha[part["track_id"][0]] = hashlib.sha256(text.encode()).hexdigest()
    assert set(sha) == set(fresh)
    marked = {sha[t]: 10_000_000 + n for t, n in fresh.items()}  # not real counts: they can only be read back
    monkeypatch.setattr(tokens, "load_encoding", lambda *a, **k: (_ for _ in ()).throw(AssertionError("loaded")))
    assert dict(tokens.count_track_tokens(entries, known=marked).rows()) == {t: 10_000_000 + n for t, n in fresh.items()}
    monkeypatch.undo()
    one = sorted(fresh)[0]
    partial = dict(tokens.count_track_tokens(entries, known={sha[one]: 7}).rows())
    assert partial == {t: 7 if sha[t] == sha[one] else n for t, n in fresh.items()}  # same text, same count
    assert list(partial.values()).count(7) < len(partial)
