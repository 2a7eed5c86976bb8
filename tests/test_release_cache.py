"""The release stage in proportion to what changed (issue 18 point 4, docs/rebuilds.md): the
gate's cached entity verdicts (warehouse/gate_cache.py), the per-track reading of film entities
(warehouse/entities.py) and the per-track statistics computed once (sql/release_stats.sql).

A cached verdict must give the gate exactly what a fresh check gives (summary, kept examples,
pass/fail), and never be used for other code, other gate settings or another entity."""

from __future__ import annotations

import copy
import json

import duckdb
import pyarrow as pa
import pytest
from _gate_world import make_gate, make_spec, render_entity, render_tables
from test_release_gate import SPEC_DEFECTS

import warehouse.gate_cache as gate_cache
from warehouse.entities import _track_entries
from warehouse.gate_cache import EntityGateCache


def _lines(spec):
    ents = [render_entity(f) for f in spec]
    return [(e, json.dumps(e, ensure_ascii=False)) for e in ents]


def _run(spec, cache_dir, **kw):
    gate = make_gate(**kw)
    checker = EntityGateCache(gate, cache_dir)
    for e, line in _lines(spec):
        checker.check(e, line)
    gate.check_tables(render_tables(spec))
    return gate, checker


def _verdict(gate):
    return gate.summary(), gate.failures(), gate.passed()


# every defect of the gate's own tests, plus the consistent release
CASES = [("consistent", lambda s: None, {})] + [(name, plant, kw) for name, plant, kw, _, _ in SPEC_DEFECTS]


@pytest.mark.parametrize("name,plant,kw", CASES, ids=[c[0] for c in CASES])
def test_cached_verdicts_equal_fresh_checks(name, plant, kw, tmp_path):
    spec = make_spec()
    plant(spec)
    fresh, _ = _run(spec, None, **kw)
    cold, c1 = _run(spec, tmp_path, **kw)
    warm, c2 = _run(spec, tmp_path, **kw)
    assert (c1.hits, c1.misses) == (0, len(spec))
    assert (c2.hits, c2.misses) == (len(spec), 0)
    assert _verdict(cold) == _verdict(fresh) == _verdict(warm)


def test_replay_keeps_the_per_code_example_limit(tmp_path):
    """Many films with the same failure: the kept examples stop at the limit, counts do not."""
    spec = make_spec(n_films=6)
    for f in spec:
        f["ratings"] = f["ratings"][:-1]
    fresh, _ = _run(spec, None, max_examples_per_code=2)
    _run(spec, tmp_path, max_examples_per_code=2)
    warm, c = _run(spec, tmp_path, max_examples_per_code=2)
    assert c.hits == len(spec)
    assert _verdict(warm) == _verdict(fresh)
    assert warm.summary()["counts"]["ratings"]["ratings_count"] == 2 * len(spec)  # entity and table views


def test_a_changed_entity_is_checked_again(tmp_path):
    spec = make_spec()
    _run(spec, tmp_path)
    changed = copy.deepcopy(spec)
    changed[1]["tracks"][0]["entries"][2]["timeframe"] = "0:01:09.000 --> 0:01:11.000"
    fresh, _ = _run(changed, None)
    warm, c = _run(changed, tmp_path)
    assert (c.hits, c.misses) == (len(spec) - 1, 1)
    assert _verdict(warm) == _verdict(fresh) and not warm.passed()


def test_an_entry_of_other_gate_settings_is_never_used(tmp_path):
    """The same lines under another kept-task-field set: the verdict differs, so must the key."""
    spec = make_spec()
    for f in spec:
        f["keyMessage"] = None
    loose = {"kept_task_fields": {"plot", "synopsis"}}
    passed, _ = _run(spec, tmp_path, **loose)
    assert passed.passed()
    strict_fresh, _ = _run(spec, None)
    strict, c = _run(spec, tmp_path)
    assert c.hits == 0
    assert _verdict(strict) == _verdict(strict_fresh) and "task_field_missing" in strict.codes()


def test_an_entry_of_other_code_is_never_used(tmp_path, monkeypatch):
    spec = make_spec()
    _run(spec, tmp_path)
    monkeypatch.setattr(gate_cache, "code_digest", lambda: "another version of the gate")
    _, c = _run(spec, tmp_path)
    assert (c.hits, c.misses) == (0, len(spec))


def test_an_unreadable_entry_is_a_miss_and_is_rewritten(tmp_path):
    spec = make_spec()
    _, c = _run(spec, tmp_path)
    gate = make_gate()
    checker = EntityGateCache(gate, tmp_path)
    e, line = _lines(spec)[0]
    checker.path(line).write_text("{not json", encoding="utf-8")
    checker.check(e, line)
    assert (checker.hits, checker.misses) == (0, 1)
    assert json.loads(checker.path(line).read_text(encoding="utf-8"))["kind"] == "record"


# -- film entities: each track's entries -------------------------------------------------------
def _entries_table(rows):
    return pa.table({"track_id": [r[0] for r in rows], "index": pa.array([r[1] for r in rows], pa.int64()),
                     "timeframe": [r[2] for r in rows], "content": [r[3] for r in rows],
                     "start_ms": pa.array([r[4] for r in rows], pa.int64())})


ROWS = [  # (track, index, timeframe, content, start_ms): release order within a track, ties included
    ("t1", 2, "a", "x", 100), ("t1", 1, "b", "y", 100), ("t1", 3, "c", "z", 50),
    ("t1", 1, "d", "dup index, same start", 100),
    ("t2", 7, "e", "u", 10), ("t2", 5, "f", "v", 20),
    ("t3", 1, "g", "w", 0),
]


@pytest.mark.parametrize("shuffle", [False, True], ids=["contiguous", "interleaved"])
def test_track_entries_are_in_start_index_order_as_the_counted_text(shuffle):
    rows = ROWS if not shuffle else [ROWS[i] for i in (0, 4, 1, 6, 2, 5, 3)]
    table = _entries_table(rows)
    got = _track_entries(table)
    for tid in ("t1", "t2", "t3"):
        part = [r for r in rows if r[0] == tid]
        want = [(i, tf, c) for _, i, tf, c, _ in sorted(part, key=lambda r: (r[4], r[1]))]  # stable: table order on ties
        assert got(tid) == want
    assert got("absent") == []


def test_track_entries_equal_the_per_track_query_without_ties():
    """Without (start_ms, index) ties, the order of the former per-track DuckDB query."""
    rows = [r for r in ROWS if r[3] != "dup index, same start"]
    table = _entries_table(rows)
    con = duckdb.connect()
    con.register("rel_entries", table)
    got = _track_entries(table)
    for tid in ("t1", "t2", "t3"):
        want = con.execute('SELECT "index", timeframe, content FROM rel_entries WHERE track_id = ? '
                           'ORDER BY start_ms, "index"', [tid]).fetchall()
        assert got(tid) == want


def _one_released_track(releases) -> str:
    """The track_id of the first track of the latest release in ``releases``."""
    import pyarrow.parquet as pq

    latest = sorted(p for p in releases.iterdir() if p.is_dir() and p.name[0].isdigit())[-1]
    return pq.read_table(latest / "tracks.parquet", columns=["track_id"]).column(0)[0].as_py()


# -- a real release: with the cache, the same bytes ----------------------------------------------
@pytest.mark.slow
def test_release_with_the_gate_cache_is_the_release_without_it(tmp_path):
    """The sample build's state published three ways — no cache, a cold cache, a warm one — and,
    after one film's entry changed, a warm cache against none: every file of each release has
    the same sha256 (the manifest's; the database: the same rows), and the warm cache checked
    only the changed film again."""
    import shutil
    from pathlib import Path

    from _cli_runner import sample20_build

    from cinesub.settings import load_settings
    from warehouse.release import publish, read_selection

    home, _ = sample20_build()
    settings = load_settings(None, home)
    state = tmp_path / "state.duckdb"
    shutil.copy(home / "state.duckdb", state)
    counted: list[EntityGateCache] = []
    real_init = EntityGateCache.__init__

    def spy(self, gate, cache_dir):
        real_init(self, gate, cache_dir)
        counted.append(self)

    def pub(con, name: str, cache: Path | None) -> dict:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(EntityGateCache, "__init__", spy)
            r = publish(con, tmp_path / name, config_hash="x", inputs={},
                        countries=read_selection(con, "countries", tuple(settings.countries)),
                        languages=read_selection(con, "languages", tuple(settings.languages)),
                        release_settings=settings.release, thresholds=settings.thresholds,
                        reports_dir=tmp_path / "reports", gate_cache=cache)
        from _release_files import release_files

        return release_files(Path(r["path"]))

    cache = tmp_path / "cache"
    with duckdb.connect(str(state)) as con:
        plain = pub(con, "plain", None)
        cold = pub(con, "cold", cache)
        n_films = counted[-1].misses
        warm = pub(con, "warm", cache)
        assert plain == cold == warm and "films.jsonl" in plain
        assert (counted[-1].hits, counted[-1].misses) == (n_films, 0) and n_films > 0
        track = _one_released_track(tmp_path / "plain")
        position = con.execute("SELECT min(position) FROM entries WHERE track_id = ? AND clean_content IS NOT NULL",
                               [track]).fetchone()[0]
        con.execute("UPDATE entries SET clean_content = clean_content || ' (corrected)' "
                    "WHERE track_id = ? AND position = ?", [track, position])
        changed_plain = pub(con, "changed-plain", None)
        changed_warm = pub(con, "changed-warm", cache)
    assert changed_plain == changed_warm and changed_plain["films.jsonl"] != plain["films.jsonl"]
    assert (counted[-1].hits, counted[-1].misses) == (n_films - 1, 1)
