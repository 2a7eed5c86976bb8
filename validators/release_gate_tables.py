"""The table half of the release consistency gate: set checks over the release's Parquet tables
(``films``, ``tracks``, ``entries``, ``ratings``, ``language_safety``, ``task_references``), run in
DuckDB over the Arrow tables, one pass each. :class:`TableChecks` is mixed into
:class:`validators.release_gate.ReleaseGate`, which records the failures (``_fail``) and
cross-checks the per-film records kept here against the entity stream."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from validators.release_gate_rules import (
    _TIMEFRAME_SQL,
    GATE_TABLES,
    SAFETY_CATEGORIES,
    TASK_REFERENCE_COLUMNS,
    _digest,
    _empty,
    _task_digest,
)


class TableChecks:
    """Table checks of :class:`~validators.release_gate.ReleaseGate` (state lives there)."""

    # -- tables -------------------------------------------------------------------------------
    def check_tables(self, tables: Mapping[str, pa.Table]) -> None:
        """Set checks over the release tables (DuckDB over Arrow); keeps O(films) small records."""
        missing = [n for n in GATE_TABLES if n not in tables]
        if missing:
            raise ValueError(f"check_tables needs tables {missing}")
        self._tables_seen = True
        con = duckdb.connect()
        try:
            self._entries_table = tables["entries"]
            for name in GATE_TABLES:
                con.register(name, tables[name])
                self._table_rows[name] = tables[name].num_rows
            con.register("selected_languages", pa.table({"language": pa.array(self.languages, pa.string())}))
            con.register("countries", pa.table({"country": pa.array(self.countries, pa.string())}))
            spaces = [(c, lab, k) for c, labs in self.label_spaces.items() for k, lab in enumerate(labs)]
            con.register("label_spaces", pa.table({
                "country": pa.array([s[0] for s in spaces], pa.string()),
                "label": pa.array([s[1] for s in spaces], pa.string()),
                "ordinal": pa.array([s[2] for s in spaces], pa.int64())}))
            self._tables_films(con)
            self._tables_tracks(con)
            self._tables_entries(con)
            self._tables_ratings(con)
            self._tables_safety(con)
            self._tables_task_references(con)
            self._tables_digests(con)
        finally:
            con.close()
            self._entries_table = None

    def _rows(self, con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[tuple]:
        return con.execute(sql, params or []).fetchall()

    def _tables_films(self, con: duckdb.DuckDBPyConnection) -> None:
        for fid, n, imdbs in self._rows(con, "SELECT id, count(*), list(imdb_id ORDER BY imdb_id) FROM films GROUP BY id HAVING count(*) > 1 ORDER BY id"):
            self._fail("ids_not_unique", None, f"id {fid} on {n} films rows: {imdbs}", "tables")
        for imdb, n, ids in self._rows(con, "SELECT imdb_id, count(*), list(id ORDER BY id) FROM films GROUP BY imdb_id HAVING count(*) > 1 ORDER BY imdb_id"):
            self._fail("ids_not_unique", imdb, f"imdb_id on {n} films rows: ids {ids}", "tables")
        rows = self._rows(con, "SELECT id, imdb_id, title, year, runtime_min, kim_url, csm_url FROM films ORDER BY id, imdb_id")
        for fid, imdb, *rest in rows:
            if fid is not None:
                self._film_rows.setdefault(fid, []).append((imdb, *rest))
        self._check_id_sequence([(fid, imdb) for fid, imdb, *_ in rows])
        for col, name in (("kim_url", "kidsInMindLink"), ("csm_url", "commonSenseLink")):
            for url, imdbs in self._rows(con, f"SELECT {col}, list(imdb_id ORDER BY imdb_id) FROM films WHERE {col} IS NOT NULL GROUP BY {col} HAVING count(DISTINCT imdb_id) > 1 ORDER BY {col}"):
                self._fail("link_mismatch", imdbs[0], f"{name} {url} shared by films {imdbs}", "tables")
        for (imdb,) in self._rows(con, "SELECT imdb_id FROM films WHERE imdb_id IS NULL OR NOT regexp_full_match(imdb_id, 'tt[0-9]{7,}') ORDER BY imdb_id"):
            self._fail("link_mismatch", imdb, f"imdb_id {imdb!r} is not a tt id, no imdbLink can point to it", "tables")

    def _check_id_sequence(self, pairs: list[tuple[Any, Any]]) -> None:
        prev = self.previous_ids
        prev_by_id: dict[int, str] = {}
        for imdb, fid in prev.items():
            prev_by_id.setdefault(fid, imdb)
        for fid, imdb in pairs:
            if fid is None:
                self._fail("id_not_sequential", imdb, "film without an id", "tables")
                continue
            if imdb in prev and prev[imdb] != fid:
                self._fail("id_changed", imdb, f"id {fid}, previously {prev[imdb]}", "tables")
            if fid in prev_by_id and prev_by_id[fid] != imdb and prev.get(imdb) != fid:
                self._fail("id_reused", imdb, f"id {fid} previously named {prev_by_id[fid]}", "tables")
        ids = sorted({fid for fid, _ in pairs if fid is not None})
        if self.first_release:
            if ids != list(range(1, len(ids) + 1)):
                gaps = sorted(set(range(1, (ids[-1] if ids else 0) + 1)) - set(ids))
                self._fail("id_not_sequential", None, f"ids are not 1..{len(ids)}: missing {gaps[:10]}, "
                           f"min {ids[0] if ids else None}, max {ids[-1] if ids else None}", "tables")
            return
        top = max(prev.values(), default=0)
        # new films; one that took a previously used id is reported as id_reused, not here
        new = sorted((fid, imdb) for fid, imdb in pairs
                     if fid is not None and imdb not in prev and fid not in prev_by_id)
        new_ids = [fid for fid, _ in new]
        expected = list(range(top + 1, top + 1 + len(new)))
        if new_ids != expected:
            self._fail("id_not_sequential", None, f"new films have ids {new_ids[:10]}, expected {expected[:10]} "
                       f"(after the previous maximum {top})", "tables")
        elif [imdb for _, imdb in new] != sorted(imdb for _, imdb in new):
            self._fail("id_not_sequential", None, "new ids are not given in imdb-id order", "tables")

    def _tables_tracks(self, con: duckdb.DuckDBPyConnection) -> None:
        for imdb, lang, n in self._rows(con, """SELECT imdb_id, language, count(*) FROM tracks
                WHERE imdb_id IN (SELECT imdb_id FROM films) GROUP BY ALL HAVING count(*) > 1 ORDER BY ALL"""):
            self._fail("track_duplicate", imdb, f"{n} {lang} tracks", "tables")
        for tid, n in self._rows(con, "SELECT track_id, count(*) FROM tracks GROUP BY ALL HAVING count(*) > 1 ORDER BY ALL"):
            self._fail("track_duplicate", None, f"track_id {tid} on {n} rows", "tables")
        for imdb, lang, n in self._rows(con, """SELECT imdb_id, language, count(*) FROM tracks
                WHERE imdb_id IN (SELECT imdb_id FROM films)
                  AND (language IS NULL OR language NOT IN (SELECT language FROM selected_languages))
                GROUP BY ALL ORDER BY ALL"""):
            self._fail("track_unexpected_language", imdb, f"{n} track(s) in unselected language {lang}", "tables")
        for imdb, lang in self._rows(con, """SELECT f.imdb_id, l.language FROM films f CROSS JOIN selected_languages l
                WHERE NOT EXISTS (SELECT 1 FROM tracks t WHERE t.imdb_id = f.imdb_id AND t.language = l.language)
                ORDER BY ALL"""):
            self._fail("track_missing", imdb, f"no {lang} track", "tables")
        for name in ("tracks", "ratings", "language_safety", "task_references"):
            for imdb, n in self._rows(con, f"""SELECT imdb_id, count(*) FROM {name}
                    WHERE imdb_id IS NULL OR imdb_id NOT IN (SELECT imdb_id FROM films WHERE imdb_id IS NOT NULL)
                    GROUP BY ALL ORDER BY ALL"""):
                self._fail("orphan_row", imdb, f"{n} {name} row(s) of no film", "tables")

    def _tables_entries(self, con: duckdb.DuckDBPyConnection) -> None:
        for tid, n in self._rows(con, """SELECT track_id, count(*) FROM entries
                WHERE track_id NOT IN (SELECT track_id FROM tracks) GROUP BY ALL ORDER BY ALL"""):
            self._fail("orphan_row", None, f"{n} entries row(s) of no track ({tid})", "tables")
        for imdb, lang, n in self._rows(con, """SELECT t.imdb_id, t.language, count(*) FROM entries e JOIN tracks t USING (track_id)
                WHERE e.imdb_id IS DISTINCT FROM t.imdb_id OR e.language IS DISTINCT FROM t.language
                GROUP BY ALL ORDER BY ALL"""):
            self._fail("orphan_row", imdb, f"{lang}: {n} entries row(s) name another film or language than their track", "tables")
        for imdb, lang in self._rows(con, """SELECT t.imdb_id, t.language FROM tracks t
                WHERE NOT EXISTS (SELECT 1 FROM entries e WHERE e.track_id = t.track_id) ORDER BY ALL"""):
            self._fail("entries_empty", imdb, f"{lang} track has no entries", "tables")
        for imdb, lang, n, examples in self._rows(con, """SELECT t.imdb_id, t.language, count(*), list(d."index" ORDER BY d."index")[1:5]
                FROM (SELECT track_id, "index" FROM entries GROUP BY ALL HAVING count(*) > 1) d
                JOIN tracks t USING (track_id) GROUP BY ALL ORDER BY ALL"""):
            self._fail("entry_index_duplicate", imdb, f"{lang}: {n} duplicate index(es), e.g. {examples}", "tables")
        flagged = _timeframe_flags(getattr(self, "_entries_table", None))
        if flagged is not None:  # the rows the query below would count, found in one vectorised pass
            con.register("timeframe_flags", flagged)
            rows = self._rows(con, """SELECT tr.imdb_id, tr.language,
                       count(*) FILTER (WHERE bad), min("index") FILTER (WHERE bad),
                       count(*) FILTER (WHERE inverted), min("index") FILTER (WHERE inverted)
                FROM timeframe_flags JOIN tracks tr USING (track_id)
                GROUP BY ALL ORDER BY ALL""")
            con.unregister("timeframe_flags")
            self._timeframe_failures(rows)
            return
        parsed = """
            WITH e AS (
              SELECT track_id, "index", timeframe, start_ms, end_ms,
                     regexp_full_match(timeframe, '{re}') AS ok FROM entries),
            p AS (
              SELECT *, CASE WHEN ok THEN
                  ((CAST(substr(timeframe, 1, 2) AS BIGINT) * 60 + CAST(substr(timeframe, 4, 2) AS BIGINT)) * 60
                    + CAST(substr(timeframe, 7, 2) AS BIGINT)) * 1000 + CAST(substr(timeframe, 10, 3) AS BIGINT) END AS s,
                  CASE WHEN ok THEN
                  ((CAST(substr(timeframe, 18, 2) AS BIGINT) * 60 + CAST(substr(timeframe, 21, 2) AS BIGINT)) * 60
                    + CAST(substr(timeframe, 24, 2) AS BIGINT)) * 1000 + CAST(substr(timeframe, 27, 3) AS BIGINT) END AS t
              FROM e)
            SELECT tr.imdb_id, tr.language,
                   count(*) FILTER (WHERE NOT ok OR ok IS NULL OR s IS DISTINCT FROM start_ms OR t IS DISTINCT FROM end_ms),
                   min("index") FILTER (WHERE NOT ok OR ok IS NULL OR s IS DISTINCT FROM start_ms OR t IS DISTINCT FROM end_ms),
                   count(*) FILTER (WHERE start_ms > end_ms),
                   min("index") FILTER (WHERE start_ms > end_ms)
            FROM p JOIN tracks tr USING (track_id)
            GROUP BY ALL ORDER BY ALL""".format(re=_TIMEFRAME_SQL)
        self._timeframe_failures(self._rows(con, parsed))

    def _timeframe_failures(self, rows: list[tuple]) -> None:
        for imdb, lang, n_bad, first_bad, n_inv, first_inv in rows:
            if n_bad:
                self._fail("timeframe_malformed", imdb, f"{lang}: {n_bad} entr(ies) with a timeframe not in "
                           f"HH:MM:SS,mmm --> HH:MM:SS,mmm form or disagreeing with start_ms/end_ms, first index {first_bad}", "tables")
            if n_inv:
                self._fail("timeframe_inverted", imdb, f"{lang}: {n_inv} entr(ies) with start_ms > end_ms, first index {first_inv}", "tables")

    def _tables_ratings(self, con: duckdb.DuckDBPyConnection) -> None:
        n = len(self.countries)
        for imdb, k in self._rows(con, """SELECT f.imdb_id, count(r.imdb_id) FROM films f LEFT JOIN ratings r USING (imdb_id)
                GROUP BY ALL HAVING count(r.imdb_id) <> ? ORDER BY ALL""", [n]):
            self._fail("ratings_count", imdb, f"{k} ratings, expected {n}", "tables")
        for imdb, unknown, twice in self._rows(con, """
                SELECT imdb_id,
                       list(DISTINCT country ORDER BY country) FILTER (WHERE country IS NULL OR country NOT IN (SELECT country FROM countries)),
                       list(DISTINCT country ORDER BY country) FILTER (WHERE rep > 1)
                FROM (SELECT imdb_id, country, count(*) OVER (PARTITION BY imdb_id, country) AS rep FROM ratings)
                GROUP BY imdb_id
                HAVING count(*) FILTER (WHERE country IS NULL OR country NOT IN (SELECT country FROM countries) OR rep > 1) > 0
                ORDER BY imdb_id"""):
            self._fail("ratings_country", imdb, f"unknown countries {unknown or []}, repeated {twice or []}", "tables")
        for imdb, country, label, ordinal, expected in self._rows(con, """
                SELECT r.imdb_id, r.country, r.label, r.ordinal, s.ordinal
                FROM ratings r LEFT JOIN label_spaces s ON s.country = r.country AND s.label = r.label
                WHERE r.country IN (SELECT DISTINCT country FROM label_spaces)
                  AND (s.ordinal IS NULL OR s.ordinal IS DISTINCT FROM r.ordinal)
                ORDER BY ALL"""):
            if expected is None:
                self._fail("rating_label_invalid", imdb, f"{country}: label {label!r} not in {list(self.label_spaces[country])}", "tables")
            else:
                self._fail("rating_label_invalid", imdb, f"{country}: label {label!r} has ordinal {ordinal!r}, expected {expected}", "tables")

    def _tables_safety(self, con: duckdb.DuckDBPyConnection) -> None:
        cats = ", ".join(f"'{c}'" for c in SAFETY_CATEGORIES)
        for imdb, have in self._rows(con, f"""SELECT f.imdb_id, list(s.category ORDER BY s.category) FILTER (WHERE s.category IS NOT NULL)
                FROM films f LEFT JOIN language_safety s USING (imdb_id) GROUP BY ALL
                HAVING count(s.category) <> 4 OR count(DISTINCT s.category) FILTER (WHERE s.category IN ({cats})) <> 4
                ORDER BY ALL"""):
            self._fail("safety_category", imdb, f"categories {have or []}, expected one row each of {list(SAFETY_CATEGORIES)}", "tables")
        con.execute("""CREATE TEMP TABLE ev AS
            WITH p AS (
              SELECT imdb_id, category, occurrence_count AS occ, evidence_line_count AS lines,
                     CASE WHEN json_valid(evidence_indices) AND json_type(evidence_indices) = 'ARRAY'
                          THEN try_cast(from_json(evidence_indices, '["VARCHAR"]') AS BIGINT[]) END AS idx0,
                     evidence_indices AS raw FROM language_safety)
            SELECT imdb_id, category, occ, lines, raw,
                   CASE WHEN list_count(idx0) = len(idx0) THEN idx0 END AS idx FROM p""")
        for imdb, cat, raw in self._rows(con, "SELECT imdb_id, category, raw FROM ev WHERE idx IS NULL ORDER BY ALL"):
            self._fail("evidence_unresolved", imdb, f"{cat}: evidence_indices {raw!r} is not a JSON list of integers", "tables")
        for imdb, cat, occ, lines, distinct in self._rows(con, """
                SELECT imdb_id, category, occ, lines, len(list_distinct(idx)) FROM ev
                WHERE idx IS NOT NULL AND (lines IS DISTINCT FROM len(list_distinct(idx)) OR occ < lines)
                ORDER BY ALL"""):
            if lines != distinct:
                self._fail("evidence_count_mismatch", imdb, f"{cat}: evidence_line_count {lines} != {distinct} distinct indices", "tables")
            else:
                self._fail("evidence_count_mismatch", imdb, f"{cat}: occurrence_count {occ} < evidence_line_count {lines}", "tables")
        for imdb, cat, n, examples in self._rows(con, """
                WITH u AS (SELECT imdb_id, category, unnest(idx) AS i FROM ev),
                     en AS (SELECT DISTINCT imdb_id, "index" AS i FROM entries WHERE language = 'en'),
                     has_en AS (SELECT DISTINCT imdb_id FROM tracks WHERE language = 'en')
                SELECT u.imdb_id, u.category, count(DISTINCT u.i), list(DISTINCT u.i ORDER BY u.i)[1:5] FROM u
                WHERE u.imdb_id IN (SELECT imdb_id FROM has_en)
                  AND NOT EXISTS (SELECT 1 FROM en WHERE en.imdb_id = u.imdb_id AND en.i = u.i)
                GROUP BY ALL ORDER BY ALL"""):
            self._fail("evidence_unresolved", imdb, f"{cat}: {n} index(es) not in the English track, e.g. {examples}", "tables")

    def _tables_task_references(self, con: duckdb.DuckDBPyConnection) -> None:
        """One row per film, its id that of the films row, kept fields populated and withheld
        ones null; keeps one digest per film for the cross-check with the entities."""
        have = {r[0] for r in self._rows(con, "DESCRIBE task_references")}
        absent = [c for c in ("imdb_id", "id", *TASK_REFERENCE_COLUMNS.values()) if c not in have]
        if absent:
            self._fail("task_reference_mismatch", None, f"task_references lacks column(s) {absent}", "tables")
            return
        for (imdb,) in self._rows(con, """SELECT f.imdb_id FROM films f WHERE f.imdb_id IS NOT NULL AND NOT EXISTS
                (SELECT 1 FROM task_references t WHERE t.imdb_id = f.imdb_id) ORDER BY ALL"""):
            self._fail("task_reference_missing", imdb, "film without a task_references row", "tables")
        dup = {imdb: n for imdb, n in self._rows(con, """SELECT imdb_id, count(*) FROM task_references
                WHERE imdb_id IS NOT NULL GROUP BY ALL HAVING count(*) > 1 ORDER BY ALL""")}
        for imdb, n in dup.items():
            self._fail("task_reference_duplicate", imdb, f"{n} task_references rows", "tables")
        for imdb, tid, fid in self._rows(con, """SELECT t.imdb_id, t.id, f.id FROM task_references t JOIN films f USING (imdb_id)
                WHERE t.id IS DISTINCT FROM f.id ORDER BY ALL"""):
            self._fail("task_reference_mismatch", imdb, f"task_references id {tid} != films id {fid}", "tables")
        fields = list(TASK_REFERENCE_COLUMNS)
        cols = ", ".join(f'"{TASK_REFERENCE_COLUMNS[f]}"' for f in fields)
        films = {r[0] for r in self._rows(con, "SELECT imdb_id FROM films WHERE imdb_id IS NOT NULL")}
        for imdb, *values in self._rows(con, f"SELECT imdb_id, {cols} FROM task_references ORDER BY imdb_id"):
            if imdb not in films:
                continue  # reported as orphan_row
            row = dict(zip(fields, values))
            for field in sorted(self.kept_task_fields & set(fields)):
                if _empty(row[field]):
                    self._fail("task_field_missing", imdb, f"kept task field {field} "
                               f"(task_references.{TASK_REFERENCE_COLUMNS[field]}) is {row[field]!r}", "tables")
            for field in sorted(self.withheld_task_fields & set(fields)):
                if row[field] is not None:
                    self._fail("task_field_not_withheld", imdb, f"withheld task field {field} "
                               f"(task_references.{TASK_REFERENCE_COLUMNS[field]}) is {row[field]!r}", "tables")
            if imdb not in dup:
                self._task_rows[imdb] = _task_digest(values)

    def _tables_digests(self, con: duckdb.DuckDBPyConnection) -> None:
        """Per-film digests of the table-side tracks, ratings and safety, computed exactly as
        :meth:`check_entity` computes them from an entity."""
        per: dict[str, dict[str, list]] = {}
        rows = self._rows(con, """SELECT t.imdb_id, t.language, t.download_count, count(e.track_id), coalesce(sum(e."index"), 0)
                FROM tracks t LEFT JOIN entries e USING (track_id) GROUP BY t.track_id, t.imdb_id, t.language, t.download_count""")
        for imdb, lang, dl, n, s in rows:
            per.setdefault(imdb, {}).setdefault("tracks", []).append((lang, dl, n, int(s)))
        for imdb, country, label, age, ordinal in self._rows(con, "SELECT imdb_id, country, label, minimum_age, ordinal FROM ratings"):
            per.setdefault(imdb, {}).setdefault("ratings", []).append(repr((country, label, age, ordinal)))
        for imdb, cat, occ, lines, idx in self._rows(con, "SELECT imdb_id, category, occurrence_count, evidence_line_count, evidence_indices FROM language_safety"):
            try:
                parsed = tuple(json.loads(idx)) if idx is not None else ()
            except ValueError:
                parsed = ("<unparsable>", idx)
            per.setdefault(imdb, {}).setdefault("safety", []).append((cat, occ, lines, parsed))
        for imdb, sec in per.items():
            self._table_digests[imdb] = {
                "tracks": _digest(sorted(sec.get("tracks", []), key=repr)),
                "ratings": _digest(sorted(sec.get("ratings", []))),
                "safety": _digest(sorted(sec.get("safety", []), key=lambda x: x[0])),
            }



#: a timeframe as _TIMEFRAME_SQL has it: ``HH:MM:SS,mmm --> HH:MM:SS,mmm`` (29 ASCII bytes)
_TF_LEN = 29
_TF_DIGITS = np.array([0, 1, 4, 7, 9, 10, 11, 17, 18, 21, 24, 26, 27, 28])
_TF_SIXES = np.array([3, 6, 20, 23])  # tens of minutes and seconds: [0-5]
_TF_LITERALS = {2: ":", 5: ":", 8: ",", 12: " ", 13: "-", 14: "-", 15: ">", 16: " ", 19: ":", 22: ":", 25: ","}
_TF_LIT_AT = np.array(list(_TF_LITERALS))
_TF_LIT = np.array([ord(c) for c in _TF_LITERALS.values()], dtype=np.uint8)
#: HH:MM:SS,mmm → milliseconds is linear in its nine digits (at these offsets from its start)
_TF_MS_AT = np.array([0, 1, 3, 4, 6, 7, 9, 10, 11])
_TF_MS_WEIGHTS = np.array([36_000_000, 3_600_000, 600_000, 60_000, 10_000, 1000, 100, 10, 1], dtype=np.float64)


def _tf_ms(digits: np.ndarray, at: int) -> np.ndarray:
    """The milliseconds of the ``HH:MM:SS,mmm`` at byte ``at`` of each row of ``digits`` (the
    bytes less ``'0'``; digits are checked apart): exact in float64 (below 100 hours)."""
    return (digits[:, _TF_MS_AT + at].astype(np.float64) @ _TF_MS_WEIGHTS).astype(np.int64)


def _int_column(col: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray] | None:
    """(values as int64, null mask) of an integer column; None for another type."""
    if not pa.types.is_integer(col.type):
        return None
    arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    nulls = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else np.zeros(len(arr), bool)
    return arr.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False), nulls


def _timeframe_flags(entries: pa.Table | None) -> pa.Table | None:
    """The entries that the timeframe query of :meth:`TableChecks._tables_entries` counts, with
    its two conditions, as ``(track_id, index, bad, inverted)``: ``bad`` — the timeframe is not
    ``_TIMEFRAME_SQL`` in full (or null), or its times are not start_ms and end_ms (or those are
    null); ``inverted`` — start_ms > end_ms. Byte for byte on the column's UTF-8 data: the pattern
    is 29 ASCII characters, so a timeframe matches it only when it is 29 bytes of exactly those
    classes. None when the columns are not a string and two integers (the query runs instead)."""
    if entries is None or not all(c in entries.column_names for c in ("track_id", "index", "timeframe",
                                                                      "start_ms", "end_ms")):
        return None
    tf = entries.column("timeframe")
    if not (pa.types.is_string(tf.type) or pa.types.is_large_string(tf.type)):
        return None
    start, end = _int_column(entries.column("start_ms")), _int_column(entries.column("end_ms"))
    if start is None or end is None:
        return None
    n = entries.num_rows
    bad = np.ones(n, dtype=bool)
    pos = 0
    for chunk in tf.chunks:
        m = len(chunk)
        if m:
            width = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
            _, off_buf, data_buf = chunk.buffers()
            offsets = np.frombuffer(off_buf, dtype=width, count=chunk.offset + m + 1)[chunk.offset:].astype(np.int64)
            data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
            fixed = np.diff(offsets) == _TF_LEN
            if chunk.null_count:
                fixed &= ~chunk.is_null().to_numpy(zero_copy_only=False)
            idx = np.flatnonzero(fixed)
            if len(idx):
                first = offsets[0]
                if len(idx) == m and offsets[-1] - first == _TF_LEN * m:  # one after another: a view
                    rows = data[first:first + _TF_LEN * m].reshape(m, _TF_LEN)
                else:
                    rows = data[offsets[idx][:, None] + np.arange(_TF_LEN)]
                digits = rows - np.uint8(48)  # wraps below '0': then above 9
                ok = ((digits[:, _TF_DIGITS] <= 9).all(axis=1) & (digits[:, _TF_SIXES] <= 5).all(axis=1)
                      & (rows[:, _TF_LIT_AT] == _TF_LIT).all(axis=1))
                at = idx + pos
                ok &= ~start[1][at] & ~end[1][at]
                ok &= (_tf_ms(digits, 0) == start[0][at]) & (_tf_ms(digits, 17) == end[0][at])
                bad[at] = ~ok
        pos += m
    inverted = ~start[1] & ~end[1] & (start[0] > end[0])
    keep = np.flatnonzero(bad | inverted)
    sub = entries.select(["track_id", "index"]).take(pa.array(keep, pa.int64()))
    return sub.append_column("bad", pa.array(bad[keep])).append_column("inverted", pa.array(inverted[keep]))
