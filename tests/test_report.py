"""The flagged-track report of a build: written under CINESUB_HOME/reports/<run_id>/, linked from
the summary, self-contained, rendered by headless Chromium (Debian's /usr/bin/chromium driven by
Playwright) without console errors or network requests, with the flagged layers, the funnel and
the gap evidence on the page; the Prefect artifacts ``build-summary`` and ``flagged-tracks``."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import duckdb
import pytest
from _browser import open_page
from _cli_runner import sample20_build

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture(scope="module")
def built():
    home, summary = sample20_build()
    with duckdb.connect(str(home / "state.duckdb"), read_only=True) as con:
        flags = [dict(zip(("track_id", "imdb_id", "language", "file_id", "layer", "evidence"), r)) for r in con.execute(
            "SELECT track_id, imdb_id, language, file_id, layer, evidence FROM flags ORDER BY 1, 5").fetchall()]
    return home, summary, flags


@pytest.mark.slow
def test_report_linked_from_summary(built):
    from flows.build import format_summary

    home, summary, flags = built
    rep = summary["report"]
    path = Path(rep["path"])
    assert path == home / "reports" / summary["run_id"] / "flagged-tracks.html"
    assert path.is_file() and path.stat().st_size > 10_000
    assert rep["flags"] == len(flags) > 0
    assert rep["artifacts"] == ["build-summary", "flagged-tracks"], rep.get("artifacts_error")
    assert f"flagged-track report: {path}" in format_summary(summary)


@pytest.mark.slow
def test_report_is_self_contained(built):
    _, summary, _ = built
    page = Path(summary["report"]["path"]).read_text(encoding="utf-8")
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    # nothing to fetch: every src/href is inline data or an in-page anchor
    refs = re.findall(r"""\b(?:src|href)\s*=\s*["']([^"']*)["']""", page)
    assert all(r.startswith(("data:", "#")) for r in refs), refs
    assert not re.search(r"<(?:script|img|iframe|link)\b[^>]*\bsrc=", page.replace('href="data:,"', ""))
    style = "".join(re.findall(r"<style>(.*?)</style>", page, flags=re.S))
    assert style and "@import" not in style and "url(" not in style


@pytest.mark.slow
def test_report_renders_in_headless_chromium(built):
    home, summary, flags = built
    path = Path(summary["report"]["path"])
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "flagged-tracks.png"
    if shot.exists():
        shot.unlink()
    with open_page(path) as (page, log):
        text = page.inner_text("body")
        layers = sorted({f["layer"] for f in flags})
        layer_section = page.inner_text("#layers")
        candidates = page.inner_text("#candidates")
        for layer in layers:
            assert layer in layer_section, layer
            assert layer in candidates, layer
        funnel = page.inner_text("#funnel")
        for g in summary["funnel"]:
            assert g["gate"] in funnel
            assert re.search(rf"\b{g['kept']} kept", funnel), g
        # one row per flag in the candidates table; every flagged file id listed
        assert page.locator("#candidates-table tbody tr").count() == len(flags)
        for f in flags:
            assert f["file_id"] in candidates
        # plots: layer bars, funnel, coverage scatter and one timeline per timing-flagged track
        assert page.locator("svg.plot").count() >= 4
        assert page.locator("#coverage svg circle").count() > 10
        macro = [f for f in flags if f["layer"] == "macro_interval"]
        assert macro, "the sample world plants a macro_interval gap"
        for f in macro:
            tl = page.locator(f'.tl[data-track="{f["track_id"]}"]')
            assert tl.count() == 1
            gap = json.loads(f["evidence"])["gaps"][0]
            assert f"between #{gap['before']} and #{gap['after']}" in tl.inner_text()
            assert tl.locator("svg rect.ev").count() >= 1
        # the filter script works: typing a layer keeps only its rows
        page.fill("input.filter", "macro_interval")
        visible = page.locator("#candidates-table tbody tr:visible").count()
        assert visible == len(macro)
        assert page.inner_text("#candidates-table-count") == str(len(macro))
        page.fill("input.filter", "")
        assert "Entity-link review queue" in text
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(shot), full_page=True)
    log.assert_clean(path.as_uri())
    assert shot.stat().st_size > 20_000


def _table_rows(page, table_id: str) -> list[list[str]]:
    return page.eval_on_selector_all(
        f"#{table_id} tbody tr", "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent.trim()))")


def _visible(page, table_id: str) -> int:
    return page.locator(f"#{table_id} tbody tr:visible").count()


@pytest.mark.slow
def test_report_sanitization_section_and_column_filter(built):
    """The Sanitization section lists the sanitization log of the selected tracks (not the
    language-safety rows), and the candidates filter matches within the chosen column only."""
    home, summary, flags = built
    with duckdb.connect(str(home / "state.duckdb"), read_only=True) as con:
        log = [[lang, action, reasons, str(n)] for lang, action, reasons, n in con.execute(
            """SELECT l.language, l.action, l.reasons, count(*) FROM sanitization_log l
               JOIN selections s ON s.track_id = l.track_id GROUP BY ALL ORDER BY 1, 2, 3""").fetchall()]
    assert log, "the sample world plants boilerplate that sanitization removes"
    film = max({f["imdb_id"] for f in flags}, key=lambda i: sum(f["imdb_id"] == i for f in flags))
    layer = sorted({f["layer"] for f in flags})[0]
    path = Path(summary["report"]["path"])
    with open_page(path) as (page, plog):
        heads = page.eval_on_selector_all("#sanitization-table thead th", "hs => hs.map(h => h.textContent)")
        assert heads == ["language", "action", "reasons", "entries"]
        assert _table_rows(page, "sanitization-table") == log
        assert page.locator("#sanitization #safety-table").count() == 0

        total = len(flags)
        column = page.locator("#candidates-table-column")
        box = page.locator('input.filter[data-table="candidates-table"]')
        assert column.input_value() == "5"  # the layer column by default
        # an IMDb id is in the film column only: filtering the layer column for it keeps nothing
        box.fill(film)
        assert _visible(page, "candidates-table") == 0
        assert page.inner_text("#candidates-table-count") == "0"
        column.select_option(label="film")
        n_film = sum(film in f["imdb_id"] for f in flags)
        assert _visible(page, "candidates-table") == n_film < total
        rows = _table_rows(page, "candidates-table")
        shown = [r for r, vis in zip(rows, page.eval_on_selector_all(
            "#candidates-table tbody tr", "rs => rs.map(r => r.style.display !== 'none')")) if vis]
        assert all(film in r[0] for r in shown) and all(film not in r[5] for r in shown)
        # back on the layer column, a layer name keeps that layer's rows
        column.select_option(label="layer")
        box.fill(layer)
        assert _visible(page, "candidates-table") == sum(layer in f["layer"] for f in flags)
        box.fill("")
        assert _visible(page, "candidates-table") == total
        assert page.inner_text("#candidates-table-count") == str(total)
        # the language-safety table filters its film column the same way
        safety_box = page.locator('input.filter[data-table="safety-table"]')
        safety = _table_rows(page, "safety-table")
        if safety:
            safety_box.fill(safety[0][0])
            assert _visible(page, "safety-table") == sum(safety[0][0] in r[0] for r in safety)
    assert not plog.errors, plog.errors


@pytest.mark.slow
def test_prefect_artifacts(built):
    home, summary, flags = built
    db = home / "prefect" / "prefect.db"
    assert db.exists()
    with sqlite3.connect(db) as con:
        rows = {k: (t, d) for k, t, d in con.execute(
            "SELECT key, type, data FROM artifact WHERE key IN ('build-summary', 'flagged-tracks')").fetchall()}
    assert set(rows) == {"build-summary", "flagged-tracks"}
    assert rows["build-summary"][0] == "markdown"
    md = json.loads(rows["build-summary"][1])
    assert summary["report"]["path"] in md and summary["run_id"] in md
    assert rows["flagged-tracks"][0] == "table"
    table = json.loads(json.loads(rows["flagged-tracks"][1]))
    assert len(table) == len(flags)
    assert {r["layer"] for r in table} == {f["layer"] for f in flags}
    assert {"film", "language", "file_id", "layer", "value", "threshold", "detail", "selected_instead"} <= set(table[0])


def test_artifact_keys_are_valid():
    from warehouse.report import MARKDOWN_ARTIFACT_KEY, TABLE_ARTIFACT_KEY

    assert TABLE_ARTIFACT_KEY == "flagged-tracks"
    for key in (MARKDOWN_ARTIFACT_KEY, TABLE_ARTIFACT_KEY):
        assert re.fullmatch(r"[a-z0-9-]+", key)


def test_report_of_an_empty_state(tmp_path):
    """A build with nothing flagged still gets a valid report (no plots divide by zero)."""
    from cinesub.settings import load_settings
    from cinesub.state import init_state
    from warehouse.report import write_report

    settings = load_settings(None, tmp_path / "home")
    init_state(settings.state_db)
    summary = {"run_id": "r1", "home": str(settings.home), "release": {"version": None, "path": None, "new": False},
               "films": 0, "tracks": 0, "entries": 0, "flags_by_layer": {}, "flags_on_selected_tracks": {},
               "funnel": []}
    rep = write_report(settings.state_db, settings.reports_dir, "r1", summary, settings.thresholds,
                       list(settings.languages), "1")
    page = Path(rep["path"]).read_text(encoding="utf-8")
    assert rep["flags"] == 0 and rep["table"] == []
    assert "No flags in this build." in page and "No timing flags." in page
    assert page.rstrip().endswith("</html>")


def test_timeline_draws_gap_evidence():
    from warehouse.report import svg_timeline

    entries = [(1, 60_000, 62_000), (2, 70_000, 72_000), (3, 1_200_000, 1_202_000), (4, 1_300_000, 1_302_000)]
    track = {"imdb_id": "tt1", "language": "ro", "file_id": "9", "runtime_min": 30, "entries": entries,
             "flags": [{"layer": "macro_interval", "detail": "",
                        "evidence": {"gaps": [{"before": 2, "after": 3, "gap_start_ms": 72_000,
                                               "gap_ms": 1_128_000}]}}]}
    svg = svg_timeline(track)
    m = re.search(r'<rect x="([\d.]+)" y="\d+" width="([\d.]+)" height="\d+" class="ev">', svg)
    assert m, svg
    # the red span starts at 72 s and ends at 1200 s on a 1800 s axis 860 px wide from x = 10
    assert abs(float(m.group(1)) - (10 + 860 * 72 / 1800)) < 0.2
    assert abs(float(m.group(2)) - 860 * 1128 / 1800) < 0.2
    assert "gap 0:18:48 between #2 and #3" in svg
