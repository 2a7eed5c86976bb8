"""Hollywood releases (warehouse/pd_release.py): layout and manifest, the DuckDB views opened by
warehouse.load.open_release from another place, no new version for unchanged tables, and the
minor / major bump rule."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from flows.stages.hollywood.common import pd_connect
from warehouse.pd_release import TABLES, change_kind, publish, table_change


def _pub(con, rdir: Path) -> dict:
    return publish(con, rdir, config_hash="cfg", inputs={"sample_world": "abc"}, as_of="2026-01-01",
                   primary_extractor="gemini", as_of_frozen=True)


@pytest.fixture()
def state(tmp_path):
    with pd_connect(tmp_path / "state.duckdb") as con:
        con.execute("INSERT INTO pd_top100 VALUES (1934, 1, 'tt9100001', 'imdb', 1000.0, 2, 4), "
                    "(1934, 2, 'loop follies', 'title', 500.0, 1, 1)")
        con.execute("INSERT INTO pd_status VALUES ('LP4520', '1934-01-15', 'GONE', 'likely_public_domain', "
                    "'R2_not_renewed', 'R2_not_renewed: …', NULL, 'unmatched', '2026-01-01')")
        yield con, tmp_path / "releases"


def test_release_layout_manifest_and_views(state, tmp_path):
    con, rdir = state
    res = _pub(con, rdir)
    assert res["new"] and res["version"] == "1.0.0" and res["kind"] == "initial"
    rel = rdir / "1.0.0"
    assert (rdir / "LATEST").read_text().strip() == "1.0.0" and (rdir / "latest").resolve() == rel.resolve()
    assert not [p for p in rdir.iterdir() if p.name.startswith(".tmp")]
    man = json.loads((rel / "manifest.json").read_text())
    assert man["tables"] == list(TABLES) and man["as_of"] == "2026-01-01" and man["config_hash"] == "cfg"
    assert man["as_of_frozen"] is True  # the status date was set (not the run date)
    assert man["files"]["top100.parquet"]["rows"] == 2 and man["files"]["status.parquet"]["rows"] == 1
    for name, meta in man["files"].items():
        data = (rel / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == meta["sha256"] and len(data) == meta["size"]
    moved = tmp_path / "elsewhere" / "1.0.0"
    shutil.copytree(rel, moved)
    from warehouse.load import open_release

    with open_release(moved) as rcon:
        assert rcon.execute("SELECT key FROM top100 ORDER BY rank").fetchall() == [("tt9100001",), ("loop follies",)]
        assert rcon.execute("SELECT count(*) FROM collection").fetchone()[0] == 0


def test_unchanged_tables_publish_nothing_then_minor_then_major(state):
    con, rdir = state
    assert _pub(con, rdir)["version"] == "1.0.0"
    again = _pub(con, rdir)
    assert again == {**again, "version": "1.0.0", "new": False, "kind": None}
    assert sorted(p.name for p in rdir.iterdir() if p.is_dir() and not p.is_symlink()) == ["1.0.0"]
    con.execute("INSERT INTO pd_top100 VALUES (1934, 3, 'pagan moon', 'title', 400.0, 1, 1)")
    added = _pub(con, rdir)
    assert (added["version"], added["kind"]) == ("1.1.0", "minor")
    assert json.loads((rdir / "1.1.0" / "manifest.json").read_text())["changes"]["top100"]["rows_added"] == 1
    con.execute("UPDATE pd_status SET status = 'protected'")
    changed = _pub(con, rdir)
    assert (changed["version"], changed["kind"]) == ("2.0.0", "major")
    con.execute("DELETE FROM pd_top100 WHERE key = 'pagan moon'")
    assert _pub(con, rdir)["version"] == "3.0.0"


def test_table_change_and_kind(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    old = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": [1, 2], "b": ["x", "y"]}), old)
    assert table_change(old, pa.table({"a": [1, 2, 3], "b": ["x", "y", "z"]}))["rows_added"] == 1
    ch = table_change(old, pa.table({"a": [1], "b": ["x"]}))
    assert (ch["rows_added"], ch["rows_removed"]) == (0, 1)
    assert table_change(old, pa.table({"a": [1, 2]}))["columns_removed"] == ["b"]
    assert table_change(None, pa.table({"a": [1]}))["table_added"] is True
    prev = tmp_path / "rel"
    prev.mkdir()
    pq.write_table(pa.table({"a": [1, 2]}), prev / "t.parquet")
    assert change_kind(prev, {"t": pa.table({"a": [2, 1]})})[0] == "patch"  # same rows, other order
    assert change_kind(prev, {"t": pa.table({"a": [1, 2]}), "u": pa.table({"x": [1]})})[0] == "minor"
    assert change_kind(prev, {"u": pa.table({"x": [1]})})[0] == "major"  # a table removed


def _stage_stats(seconds: float) -> list[dict]:
    return [{"flow": "build-hollywood", "stage": "pd-variety", "status": "completed", "items_in": 12,
             "items_out": 9, "dropped": {"not_boxoffice": 2, "internal_error": 1}, "seconds": seconds},
            {"flow": "build-hollywood", "stage": "pd-publish", "status": "completed", "items_in": 9,
             "items_out": 9, "dropped": {}, "seconds": seconds / 2}]


def test_stage_stats_are_listed_but_never_decide_a_new_version(state):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from warehouse.publish import STAGE_STATS_FILE, STAGE_STATS_SCHEMA

    con, rdir = state
    first = publish(con, rdir, config_hash="cfg", inputs={}, as_of="2026-01-01", primary_extractor="gemini",
                    stage_stats=_stage_stats(3.25))
    rel = rdir / first["version"]
    table = pq.read_table(rel / STAGE_STATS_FILE)
    assert table.schema.equals(STAGE_STATS_SCHEMA)
    assert table.schema.field("dropped").type == pa.list_(pa.struct([("reason", pa.string()), ("count", pa.int64())]))
    rows = table.to_pylist()
    assert [(r["stage"], r["items_in"], r["items_out"], r["seconds"]) for r in rows] == [
        ("pd-variety", 12, 9, 3.25), ("pd-publish", 9, 9, 1.625)]
    assert rows[0]["dropped"] == [{"reason": "internal_error", "count": 1}, {"reason": "not_boxoffice", "count": 2}]
    meta = json.loads((rel / "manifest.json").read_text())["files"][STAGE_STATS_FILE]
    assert meta["sha256"] == hashlib.sha256((rel / STAGE_STATS_FILE).read_bytes()).hexdigest() and meta["rows"] == 2
    # other seconds, same tables: the data are identical, no new version
    again = publish(con, rdir, config_hash="cfg", inputs={}, as_of="2026-01-01", primary_extractor="gemini",
                    stage_stats=_stage_stats(9.5))
    assert (again["version"], again["new"]) == (first["version"], False)
    # a row added: minor, and the statistics are not a changed table
    con.execute("INSERT INTO pd_top100 VALUES (1934, 3, 'pagan moon', 'title', 400.0, 1, 1)")
    added = publish(con, rdir, config_hash="cfg", inputs={}, as_of="2026-01-01", primary_extractor="gemini",
                    stage_stats=_stage_stats(1.0))
    assert (added["version"], added["kind"]) == ("1.1.0", "minor")
    man = json.loads((rdir / "1.1.0" / "manifest.json").read_text())
    assert set(man["changes"]) == {"top100"} and STAGE_STATS_FILE in man["files"]
    # a release without statistics (a caller that has none) lists no such file
    con.execute("INSERT INTO pd_top100 VALUES (1934, 4, 'night owl', 'title', 300.0, 1, 1)")
    plain = _pub(con, rdir)
    assert STAGE_STATS_FILE not in json.loads((Path(plain["path"]) / "manifest.json").read_text())["files"]
