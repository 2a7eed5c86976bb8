"""The release stage in proportion to the change (issue 18 point 4, docs/rebuilds.md): film-entity
lines cached per film by the digest of the film's inputs (warehouse/entity_cache.py), and the
statistics' token counts keyed by the texts the entities already formatted.

A cached line must be the line a fresh build gives: every input of an entity changes its key,
other code or other cohort-wide values never reuse an entry, an unusable entry is a miss, and a
release is the same bytes with the cache cold, warm and off."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from test_task_references import COUNTRIES, state  # noqa: F401  (the small state DB fixture)

import warehouse.entity_cache as entity_cache
from warehouse.entities import entity_line, film_entities, film_entity_lines
from warehouse.entity_cache import EntityLineCache
from warehouse.release import build_tables

_made: list[EntityLineCache] = []


@pytest.fixture(autouse=True)
def _count_caches(monkeypatch):
    """Every EntityLineCache made in a test, for its hits and misses."""
    real = EntityLineCache.__init__

    def spy(self, *a, **kw):
        real(self, *a, **kw)
        _made.append(self)
    monkeypatch.setattr(EntityLineCache, "__init__", spy)
    _made.clear()
    yield


def _lines(con, cache_dir: Path | None) -> list[str]:
    return [e.line for e in film_entity_lines(con, build_tables(con), COUNTRIES, cache_dir)]


def _counts() -> tuple[int, int]:
    return _made[-1].hits, _made[-1].misses


def test_lines_equal_fresh_entities_off_cold_and_warm(state, tmp_path):
    tables = build_tables(state)
    fresh = [entity_line(e) for e in film_entities(state, tables, COUNTRIES)]
    assert len(fresh) == 3
    assert _lines(state, None) == fresh
    assert _lines(state, tmp_path) == fresh and _counts() == (0, 3)
    got = list(film_entity_lines(state, tables, COUNTRIES, tmp_path))
    assert [g.line for g in got] == fresh and _counts() == (3, 0)
    assert all(g.entity is None for g in got)  # the lines came from the cache
    for g, line in zip(got, fresh):  # the head: every field but the subtitles, as built
        assert g.head == {k: v for k, v in json.loads(line).items() if k != "subtitles"}


@pytest.mark.parametrize("sql,films", [
    ("UPDATE curation SET clean = 'A calmer storm.' WHERE imdb_id = 'tt0000001' AND field = 'plot'", 1),
    ("UPDATE films SET imdb = json_object('plot', 'Another debt.') WHERE imdb_id = 'tt0000002'", 1),
    ("UPDATE films SET title = 'Renamed' WHERE imdb_id = 'tt0000003'", 1),
    ("INSERT INTO task_gaps (imdb_id, field, status, reason, value) VALUES "
     "('tt0000002', 'genres', 'filled', 'source_missing', '[\"Crime\", \"Drama\"]')", 1),
    ("UPDATE task_fields SET kept = NOT kept WHERE field = 'storyline'", 3),  # cohort-wide
], ids=["curated", "source_record", "film_row", "filled_gap", "kept_fields"])
def test_every_input_of_an_entity_changes_its_key(state, tmp_path, sql, films):
    _lines(state, tmp_path)
    state.execute(sql)
    fresh = _lines(state, None)
    assert _lines(state, tmp_path) == fresh
    assert _counts() == (3 - films, films)


def test_other_countries_order_is_never_reused(state, tmp_path):
    tables = build_tables(state)
    list(film_entity_lines(state, tables, COUNTRIES, tmp_path))
    other = tuple(reversed(COUNTRIES))
    got = [e.line for e in film_entity_lines(state, tables, other, tmp_path)]
    assert _counts() == (0, 3)
    assert got == [entity_line(e) for e in film_entities(state, tables, other)]


def test_an_entry_of_other_code_is_never_used(state, tmp_path, monkeypatch):
    _lines(state, tmp_path)
    monkeypatch.setattr(entity_cache, "code_digest", lambda: "another version of entities.py")
    assert _lines(state, tmp_path) == _lines(state, None)
    assert _made[-2].hits == 0 and _made[-2].misses == 3


@pytest.mark.parametrize("damage", ["truncated", "head_changed", "line_changed", "not_json", "empty"])
def test_an_unusable_entry_is_a_miss_and_is_rewritten(state, tmp_path, damage):
    fresh = _lines(state, tmp_path)
    entries = sorted(tmp_path.rglob("*.json"))
    assert len(entries) == 3
    for p in entries:
        text = p.read_text(encoding="utf-8")
        p.write_text({"truncated": text[: len(text) - 5],
                      "head_changed": text.replace('"Film', '"Flim', 1),  # the first one: in the head
                      "line_changed": text[:-1] + " ",
                      "not_json": text.replace("{", "{{", 1),
                      "empty": ""}[damage], encoding="utf-8")
    assert _lines(state, tmp_path) == fresh and _counts() == (0, 3)
    assert _lines(state, tmp_path) == fresh and _counts() == (3, 0)  # written again


# -- a real release: cold, warm and off give the same bytes ----------------------------------------
def _files(release: Path) -> dict:
    from _release_files import release_files

    return release_files(release)


@pytest.mark.slow
def test_release_with_the_entity_cache_is_the_release_without_it(tmp_path):
    """The sample build's state published with the entity cache off, cold and warm (the gate
    cache off, so the gate checks the cached lines themselves; then a cold gate cache), and after
    one track's entry changed: the same sha256 for every file, only the changed film built again,
    and the statistics' token counts taken from the entities' texts equal to counting afresh."""
    from _cli_runner import sample20_build

    from cinesub.settings import load_settings
    from warehouse.release import publish, read_selection
    from warehouse.tokens import count_track_tokens

    home, _ = sample20_build()
    settings = load_settings(None, home)
    state_db = tmp_path / "state.duckdb"
    shutil.copy(home / "state.duckdb", state_db)
    cache = tmp_path / "entities"

    def pub(con, name: str, entities: Path | None, gate: Path | None = None) -> dict:
        r = publish(con, tmp_path / name, config_hash="x", inputs={},
                    countries=read_selection(con, "countries", tuple(settings.countries)),
                    languages=read_selection(con, "languages", tuple(settings.languages)),
                    release_settings=settings.release, thresholds=settings.thresholds,
                    reports_dir=tmp_path / "reports", gate_cache=gate, entity_cache=entities)
        return _files(Path(r["path"]))

    with duckdb.connect(str(state_db)) as con:
        off = pub(con, "off", None)
        cold = pub(con, "cold", cache)
        n_films = _made[-1].misses
        warm = pub(con, "warm", cache)
        assert _counts() == (n_films, 0) and n_films > 1
        warm_gate = pub(con, "warm-gate-cold", cache, tmp_path / "gate")
        assert off == cold == warm == warm_gate and "films.jsonl" in off and "stats/statistics.json" in off

        countries = read_selection(con, "countries", tuple(settings.countries))
        tables = build_tables(con)
        texts = {}
        for e in film_entity_lines(con, tables, countries, cache):
            texts.update(e.texts)
        assert set(texts) == set(tables["tracks"].column("track_id").to_pylist())
        known = dict(con.execute("SELECT text_sha256, n_tokens FROM token_counts").fetchall())
        marked = {sha: n + 1_000_000 for sha, n in known.items()}  # counts that can only come from `known`
        fresh = dict(count_track_tokens(tables["entries"], known=marked).rows())
        assert dict(count_track_tokens(tables["entries"], known=marked, texts=texts).rows()) == fresh
        assert all(n > 1_000_000 for n in fresh.values())  # every track's text was one the cohort counted

        track = tables["tracks"].column("track_id")[0].as_py()
        position = con.execute("SELECT min(position) FROM entries WHERE track_id = ? AND clean_content IS NOT NULL",
                               [track]).fetchone()[0]
        con.execute("UPDATE entries SET clean_content = clean_content || ' (corrected)' "
                    "WHERE track_id = ? AND position = ?", [track, position])
        changed_off = pub(con, "changed-off", None)
        changed_warm = pub(con, "changed-warm", cache)
    assert changed_off == changed_warm and changed_off["films.jsonl"] != off["films.jsonl"]
    assert _counts() == (n_films - 1, 1)
