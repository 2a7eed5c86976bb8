"""The per-track digest of the entity-line cache's key (warehouse/entities.py
``TrackEntries.digest``), read from the Arrow buffers of a track's slice: the same rows give the
same digest whichever chunks hold them (a release's entries are memory-mapped batches, and a
change in one film moves every later track's chunk boundaries), and any other rows — one byte of
a text, bytes moved between neighbouring texts, an index, a start, a row more or less — give
another. A slice with a null is digested as an Arrow IPC stream."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from warehouse.entities import TrackEntries

SCHEMA = pa.schema([("track_id", pa.string()), ("index", pa.int64()), ("timeframe", pa.string()),
                    ("content", pa.string()), ("start_ms", pa.int64())])


def _rows(seed: int = 4) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for t in range(12):
        for i in range(rng.choice([1, 3, 40])):
            rows.append({"track_id": f"t{t:02d}", "index": i + 1, "timeframe": f"00:00:{i % 60:02d},000 --> x",
                         "content": "".join(rng.choice("abc دروغ é\n") for _ in range(rng.randrange(0, 30))),
                         "start_ms": 1000 * i})
    return rows


def _digests(rows: list[dict], chunk: int | None = None, schema: pa.Schema = SCHEMA) -> dict[str, bytes]:
    table = pa.Table.from_pylist(rows, schema=schema)
    if chunk is not None:
        table = pa.Table.from_batches(table.to_batches(max_chunksize=chunk))
    te = TrackEntries(table)
    return {t: te.digest(t) for t in sorted({r["track_id"] for r in rows})}


def test_the_same_rows_give_the_same_digest_in_any_chunks():
    rows = _rows()
    whole = _digests(rows)
    assert len(set(whole.values())) == len(whole)  # every track its own
    for chunk in (1, 7, 33, 100):
        assert _digests(rows, chunk) == whole
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    sliced = pa.concat_tables([table.slice(0, 50), table.slice(50, 3), table.slice(53)])
    te = TrackEntries(sliced)
    assert {t: te.digest(t) for t in whole} == whole
    # a track after another one's change: its rows elsewhere in the table, the same digest
    grown = [dict(rows[0], index=999)] + rows
    assert {t: d for t, d in _digests(grown, 16).items() if t != rows[0]["track_id"]} == \
        {t: d for t, d in whole.items() if t != rows[0]["track_id"]}


@pytest.mark.parametrize("change", ["content_byte", "moved_bytes", "index", "start", "timeframe", "row_more",
                                    "row_less", "swapped"])
def test_other_rows_give_another_digest(change):
    rows = _rows()
    tid = "t05"
    mine = [i for i, r in enumerate(rows) if r["track_id"] == tid]
    assert len(mine) > 2
    a, b = mine[0], mine[1]
    new = [dict(r) for r in rows]
    rows[a]["content"], rows[b]["content"] = "abc", "de"
    new[a]["content"], new[b]["content"] = "abc", "de"
    if change == "content_byte":
        new[a]["content"] = "abd"
    elif change == "moved_bytes":
        new[a]["content"], new[b]["content"] = "ab", "cde"
    elif change == "index":
        new[a]["index"] += 1
    elif change == "start":
        new[b]["start_ms"] += 1
    elif change == "timeframe":
        new[a]["timeframe"] += " "
    elif change == "row_more":
        new.insert(b, dict(new[a]))
    elif change == "row_less":
        del new[b]
    else:
        new[a], new[b] = new[b], new[a]
    before, after = _digests(rows, 9), _digests(new, 9)
    assert before[tid] != after[tid]
    assert {t: d for t, d in before.items() if t != tid} == {t: d for t, d in after.items() if t != tid}


def test_a_null_uses_the_ipc_digest_and_still_tells_rows_apart():
    rows = _rows()
    rows[3]["content"] = None
    d1 = _digests(rows)
    assert _digests(rows, 5) == d1
    rows[3]["content"] = ""
    assert _digests(rows)[rows[3]["track_id"]] != d1[rows[3]["track_id"]]
