"""The gate's timeframe table check (validators/release_gate_tables.py ``_tables_entries``) finds
the rows to count in one vectorised pass over the entries' bytes (``_timeframe_flags``) instead
of a regular expression and eight casts per row in DuckDB: its failures — codes, films, details
(counts and first indices) and their order — are those of the query, on every kind of damaged
timeframe, null values, inverted times, several chunks and sliced chunks."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

import validators.release_gate_tables as tables_mod
from validators.release_gate import ReleaseGate, load_schema


def _tf(ms: int) -> str:
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, x = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{x:03d}"


def _damage(rng: random.Random, tf: str, start: int, end: int) -> tuple[str | None, int | None, int | None]:
    kind = rng.choice(["digit", "six", "sep", "short", "long", "utf8", "null_tf", "null_start", "null_end",
                       "disagree", "inverted", "hours100", "negative", "arrow", "space"])
    pos = rng.randrange(len(tf))
    if kind == "digit":
        return tf[:pos] + rng.choice("a/:;") + tf[pos + 1:], start, end
    if kind == "six":
        return tf[:3] + "6" + tf[4:], start, end
    if kind == "sep":
        return tf[:2] + "." + tf[3:], start, end
    if kind == "short":
        return tf[:-1], start, end
    if kind == "long":
        return tf + "0", start, end
    if kind == "utf8":
        return tf[:pos] + "é" + tf[pos + 2:], start, end  # 29 characters, 30 bytes
    if kind == "null_tf":
        return None, start, end
    if kind == "null_start":
        return tf, None, end
    if kind == "null_end":
        return tf, start, None
    if kind == "disagree":
        return tf, start + 1, end
    if kind == "inverted":
        return f"{_tf(end)} --> {_tf(start)}", end, start
    if kind == "hours100":
        big = 100 * 3_600_000 + start
        return f"{_tf(big)} --> {_tf(big + 5)}", big, big + 5
    if kind == "negative":
        return tf, -start - 1, end
    if kind == "arrow":
        return tf.replace("-->", "->>"), start, end
    return tf.replace(" --> ", "  -> "), start, end


def _world(seed: int, n_tracks: int = 40):
    rng = random.Random(seed)
    tracks, entries = [], []
    for t in range(n_tracks):
        imdb, lang = f"tt{1000000 + t // 3:07d}", ("en", "ar", "fa")[t % 3]
        tid = f"track-{t:03d}"
        tracks.append({"track_id": tid, "imdb_id": imdb, "language": lang})
        at = rng.randrange(0, 5_000_000)
        for i in range(rng.choice([0, 1, 5, 60])):
            start, end = at, at + rng.randrange(0, 4000)
            at = end + rng.randrange(0, 3000)
            tf: str | None = f"{_tf(start)} --> {_tf(end)}"
            s: int | None = start
            e: int | None = end
            if rng.random() < 0.08:
                tf, s, e = _damage(rng, tf, start, end)
            entries.append({"track_id": tid, "imdb_id": imdb, "language": lang, "index": i + 1, "timeframe": tf,
                            "start_ms": s, "end_ms": e})
    entries.append({"track_id": "no-such-track", "imdb_id": "tt9", "language": "en", "index": 1,
                    "timeframe": "bad", "start_ms": 5, "end_ms": 1})  # counted by no film: not in tracks
    schema = pa.schema([("track_id", pa.string()), ("imdb_id", pa.string()), ("language", pa.string()),
                        ("index", pa.int32()), ("timeframe", pa.string()), ("start_ms", pa.int32()),
                        ("end_ms", pa.int32())])
    return pa.Table.from_pylist(tracks), pa.Table.from_pylist(entries, schema=schema)


def _failures(tracks: pa.Table, entries: pa.Table, vectorised: bool, monkeypatch) -> list[tuple]:
    import duckdb

    gate = ReleaseGate(languages=("en", "ar", "fa"), countries=("US",), kept_task_fields=set(), previous_ids=None,
                       schema=load_schema())
    if not vectorised:
        monkeypatch.setattr(tables_mod, "_timeframe_flags", lambda entries: None)
    gate._entries_table = entries
    con = duckdb.connect()
    con.register("tracks", tracks)
    con.register("entries", entries)
    gate._tables_entries(con)
    monkeypatch.undo()
    return [(f.code, f.imdb_id, f.detail) for f in gate.failures() if f.code.startswith("timeframe")]


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("layout", ["one_chunk", "chunks", "sliced", "large_string"])
def test_vectorised_timeframe_check_is_the_query(seed, layout, monkeypatch):
    tracks, entries = _world(seed)
    if layout == "chunks":
        entries = pa.Table.from_batches(entries.to_batches(max_chunksize=37))
    elif layout == "sliced":
        entries = pa.concat_tables([entries.slice(0, 101), entries.slice(101, 250), entries.slice(351)])
    elif layout == "large_string":
        entries = entries.cast(entries.schema.set(entries.schema.get_field_index("timeframe"),
                                                  pa.field("timeframe", pa.large_string())))
    want = _failures(tracks, entries, False, monkeypatch)
    assert {c for c, _, _ in want} == {"timeframe_malformed", "timeframe_inverted"}
    assert _failures(tracks, entries, True, monkeypatch) == want


def test_a_sound_release_flags_nothing_and_other_types_use_the_query():
    tracks, entries = _world(5)
    keep = [i for i, r in enumerate(entries.to_pylist())
            if r["timeframe"] is not None and r["start_ms"] is not None and r["end_ms"] is not None
            and 0 <= r["start_ms"] <= r["end_ms"] < 100 * 3_600_000
            and r["timeframe"] == f"{_tf(r['start_ms'])} --> {_tf(r['end_ms'])}"]
    sound = entries.take(keep)
    assert tables_mod._timeframe_flags(sound).num_rows == 0
    as_text = sound.set_column(sound.schema.get_field_index("start_ms"), "start_ms",
                               sound.column("start_ms").cast(pa.string()))
    assert tables_mod._timeframe_flags(as_text) is None
