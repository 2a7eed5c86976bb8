"""What a 1 % rebuild's release stage no longer redoes (issue 18 point 4b, docs/rebuilds.md "The
release stage after a few tracks changed"), and that its files stay those of an uncached release:

* ``films.jsonl`` is written from the entity cache's bytes (never decoded and encoded again) and
  its manifest sha256 and size are taken as it is written — they must be the file's;
* the gate cache keys a line given as bytes as the same line given as text;
* a figure reads only the columns of ``core`` it draws (``FIGURE_COLUMNS``): a change in another
  column of it (the entry count, which every changed track changes) draws only the figures that
  read it; each drawer works with exactly its declared columns;
* matplotlib imported beforehand in a thread (``warehouse.plots.preload``) draws the same SVG."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from test_release_stats import release, stats  # noqa: F401  (module fixtures: a small release's statistics)

from warehouse import stats_page
from warehouse.gate_cache import EntityGateCache
from warehouse.publish import file_sha256
from warehouse.stats_page import FIGURE_COLUMNS, FIGURES, figure_tables, render_stats_page

REPO = Path(__file__).resolve().parent.parent


def test_the_gate_cache_keys_bytes_as_the_text(tmp_path):
    class Gate:
        def entity_settings(self) -> str:
            return "settings"

    cache = EntityGateCache(Gate(), tmp_path)
    line = json.dumps({"id": 1, "title": "Şahin — دروغ"}, ensure_ascii=False)
    assert cache.path(line) == cache.path(line.encode("utf-8"))
    assert cache.path(line, "ab" * 32) == cache.path(line.encode("utf-8"), "ab" * 32)


def test_each_drawer_draws_from_its_declared_columns(stats):
    for key, (draw, section, _, _) in FIGURES.items():
        if section in stats:
            inputs = figure_tables(key, stats)
            for name, cols in FIGURE_COLUMNS.get(key, {}).items():
                assert inputs[name].column_names == list(cols)
            draw(inputs)  # a KeyError names a column missing from FIGURE_COLUMNS


def test_a_change_in_an_undrawn_column_of_core_draws_only_the_figures_that_read_it(stats, tmp_path, monkeypatch):
    cache = tmp_path / "figures"
    render_stats_page(stats, tmp_path / "first.html", title="cinesub", version="1", cache_dir=cache)
    core = stats["core"].to_pylist()
    core[0] = {**core[0], "entries": core[0]["entries"] + 7, "tracks": core[0]["tracks"] + 1}
    changed = {**stats, "core": pa.Table.from_pylist(core, schema=stats["core"].schema)}
    drawn: list[str] = []
    real = stats_page.svg_figure
    monkeypatch.setattr(stats_page, "svg_figure", lambda fig, key, alt: drawn.append(key) or real(fig, key, alt))
    page = render_stats_page(changed, tmp_path / "changed.html", title="cinesub", version="1", cache_dir=cache)
    assert drawn == []  # fig-genres and fig-runtimes read core's films and runtimes only
    plain = render_stats_page(changed, tmp_path / "plain.html", title="cinesub", version="1")
    assert page.read_bytes() == plain.read_bytes()
    drawn.clear()
    core[0] = {**core[0], "runtime_max": (core[0]["runtime_max"] or 0) + 1}
    again = {**stats, "core": pa.Table.from_pylist(core, schema=stats["core"].schema)}
    render_stats_page(again, tmp_path / "again.html", title="cinesub", version="1", cache_dir=cache)
    assert drawn == ["fig-runtimes"]


def test_a_preloaded_matplotlib_draws_the_same_page(stats, tmp_path):
    from warehouse.stats import write_stats

    files = write_stats(stats, tmp_path / "rel")
    code = ("import sys, pyarrow.parquet as pq; from pathlib import Path\n"
            "from warehouse import plots\n"
            "from warehouse.stats_page import render_stats_page\n"
            "if sys.argv[3] == 'preload':\n"
            "    plots.preload(); assert plots._PRELOAD is not None\n"
            f"order = {list(stats)!r}\n"
            "d = Path(sys.argv[1]); st = {n: pq.read_table(d / f'{n}.parquet') for n in order}\n"
            "render_stats_page(st, sys.argv[2], title='cinesub', version='1')\n"
            "assert plots._PRELOAD is None\n")
    pages = []
    for mode in ("preload", "plain"):
        out = tmp_path / f"{mode}.html"
        proc = subprocess.run([sys.executable, "-c", code, str(files["stats/core.parquet"].parent), str(out), mode],
                              cwd=REPO, capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stderr[-3000:]
        pages.append(out.read_bytes())
    assert pages[0] == pages[1]


@pytest.mark.slow
def test_the_manifest_names_the_files_as_written_cache_off_cold_and_warm(tmp_path):
    """A real 20-film release published with the caches off, cold and warm: every file's sha256
    and size in the manifest are the file's own (films.jsonl's are taken while it is written),
    and the files are the same in the three."""
    import duckdb
    from _cli_runner import sample20_build

    from cinesub.settings import load_settings
    from warehouse.release import publish, read_selection

    home, _ = sample20_build()
    settings = load_settings(None, home)
    state_db = tmp_path / "state.duckdb"
    shutil.copy(home / "state.duckdb", state_db)
    caches = tmp_path / "cache"
    seen = []
    with duckdb.connect(str(state_db)) as con:
        for name, cached in (("off", False), ("cold", True), ("warm", True)):
            r = publish(con, tmp_path / name, config_hash="x", inputs={},
                        countries=read_selection(con, "countries", tuple(settings.countries)),
                        languages=read_selection(con, "languages", tuple(settings.languages)),
                        release_settings=settings.release, thresholds=settings.thresholds,
                        reports_dir=tmp_path / "reports",
                        figure_cache=caches / "figures" if cached else None,
                        gate_cache=caches / "gate" if cached else None,
                        entity_cache=caches / "entities" if cached else None)
            rel = Path(r["path"])
            files = json.loads((rel / "manifest.json").read_text())["files"]
            for f, meta in files.items():
                assert meta["sha256"] == file_sha256(rel / f) and meta["size"] == (rel / f).stat().st_size, f
            assert files["films.jsonl"]["rows"] == len((rel / "films.jsonl").read_bytes().splitlines())
            seen.append({f: m["sha256"] for f, m in files.items() if f != "cinesub.duckdb"})
    assert seen[0] == seen[1] == seen[2]
