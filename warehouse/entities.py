"""The film entity of SPEC A11: one JSON object per film, streamed (entries read per track).

Field names are exactly those of SPEC A11 (schema: warehouse/film_entity.schema.json). Task
references are the curated text (SPEC A10), and task fields dropped cohort-wide are null.

Each entity is built from its film's :class:`FilmInputs` (the film's rows of the release tables
and of the curation lookups) plus the cohort-wide values of :class:`EntitySource` and the film's
tracks' entries, nothing else: :meth:`EntitySource.key` digests exactly these, which is what the
entity-line cache (warehouse/entity_cache.py, docs/rebuilds.md) keys on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import duckdb
import polars as pl
import pyarrow as pa

from cinesub.settings import LANGUAGE_NAMES


def entity_line(entity: dict[str, Any]) -> str:
    """The entity's ``films.jsonl`` line (without its newline)."""
    return json.dumps(entity, ensure_ascii=False, sort_keys=False)


class FilmInputs(NamedTuple):
    """Everything of one film an entity is built from (besides its tracks' entries)."""

    film: dict[str, Any]
    ratings: list[dict[str, Any]]
    safety: list[dict[str, Any]]
    tracks: list[dict[str, Any]]  # in language order
    curated: dict[str, Any]  # field -> clean text
    filled: dict[str, Any]  # field -> curator-supplied value
    core: tuple[bool, Any]  # (has core genres, the genres)


class EntitySource:
    """The release's entities, one film at a time: :meth:`films` the films' inputs in release
    order, :meth:`entity` the SPEC A11 object of one, :meth:`key` the digest of everything it is
    built from."""

    def __init__(self, con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table], countries: tuple[str, ...]):
        self._films = tables["films"].to_pylist()
        self._ratings: dict[str, list[dict]] = {}
        for r in tables["ratings"].to_pylist():
            self._ratings.setdefault(r["imdb_id"], []).append(r)
        self._safety: dict[str, list[dict]] = {}
        for r in tables["language_safety"].to_pylist():
            self._safety.setdefault(r["imdb_id"], []).append(r)
        self._tracks: dict[str, list[dict]] = {}
        for t in tables["tracks"].to_pylist():
            self._tracks.setdefault(t["imdb_id"], []).append(t)
        self.entries_of = _track_entries(tables["entries"])
        self.order = {c: i for i, c in enumerate(countries)}
        # SPEC A10: cleaned task references, and only the task fields complete across the cohort
        self._curated: dict[str, dict[str, Any]] = {}
        for i, f, c in con.execute("SELECT imdb_id, field, clean FROM curation").fetchall():
            self._curated.setdefault(i, {})[f] = c
        self.kept = {f: k for f, k in con.execute("SELECT field, kept FROM task_fields").fetchall()}
        # genres in the core genre space (film_genres; the raw genres stay beside them in the state DB
        # and in task_references.raw_genres), and curator-supplied values where the sources had none
        self._core = {i: g for i, g in con.execute(
            """SELECT imdb_id, list_sort(list_distinct(flatten(list(core_genres)))) FROM film_genres
               GROUP BY imdb_id""").fetchall()}
        self._filled: dict[str, dict[str, Any]] = {}
        for i, f, v in con.execute(
                "SELECT imdb_id, field, CAST(value AS VARCHAR) FROM task_gaps WHERE status = 'filled'").fetchall():
            self._filled.setdefault(i, {})[f] = json.loads(v)

    def cohort_digest(self) -> str:
        """The cohort-wide values every entity depends on: kept task fields, country order,
        language names."""
        return repr((sorted(self.kept.items()), sorted(self.order.items()), sorted(LANGUAGE_NAMES.items())))

    def films(self) -> Iterator[FilmInputs]:
        for film in self._films:
            i = film["imdb_id"]
            yield FilmInputs(film, self._ratings.get(i, []), self._safety.get(i, []),
                             sorted(self._tracks.get(i, []), key=lambda t: t["language"]),
                             self._curated.get(i, {}), self._filled.get(i, {}),
                             (i in self._core, self._core.get(i)))

    def key(self, prefix: bytes, inp: FilmInputs) -> str:
        """sha256 of ``prefix`` (code and :meth:`cohort_digest`), the film's inputs and its tracks'
        entries (:meth:`TrackEntries.digest`)."""
        h = hashlib.sha256(prefix)
        h.update(repr(inp).encode("utf-8", "surrogatepass"))
        for t in inp.tracks:
            h.update(b"\0" + self.entries_of.digest(t["track_id"]))
        return h.hexdigest()

    def entity(self, inp: FilmInputs) -> dict[str, Any]:
        """The SPEC A11 object of one film."""
        film, kept = inp.film, self.kept

        def task(field: str, value: Any) -> Any:
            if not kept.get(field, True):
                return None
            if field in inp.filled:
                return inp.filled[field]
            return value
        imdb = json.loads(film["imdb_json"])
        kim = json.loads(film["kim_json"])
        csm = json.loads(film["csm_json"]) if film["csm_json"] else {}
        cast = imdb.get("cast") or []
        safety: dict[str, dict] = {}
        for r in inp.safety:
            safety[r["category"]] = {
                "occurrenceCount": r["occurrence_count"],
                "evidenceLineCount": r["evidence_line_count"],
                "evidenceSubtitleIndices": json.loads(r["evidence_indices"]),
            }
        subtitles = []
        for t in inp.tracks:
            rows = self.entries_of(t["track_id"])
            subtitles.append({
                "language": f"{LANGUAGE_NAMES.get(t['language'], t['language'])} ({t['language']})",
                "downloadCount": t["download_count"],
                "entries": [{"index": i, "timeframe": tf, "content": c} for i, tf, c in rows],
            })
        has_core, core = inp.core
        return {
            "id": film["id"],
            "title": film["title"],
            "releaseYear": film["year"],
            "duration": film["runtime_min"],
            "imdbRating": imdb.get("rating"),
            "countriesOfOrigin": imdb.get("countries") or [],
            "originalLanguages": imdb.get("languages") or [],
            "directors": imdb.get("directors") or [],
            "writers": imdb.get("writers") or [],
            "topCast": [{"actor": c["actor"], "character": (c.get("characters") or [None])[0]} for c in cast[:10]],
            "fullCast": [{"actor": c["actor"], "characters": c.get("characters") or [],
                          "additionalTexts": c.get("additional_texts") or []} for c in cast],
            "plot": task("plot", inp.curated.get("plot", imdb.get("plot"))),
            "synopsis": task("synopsis", inp.curated.get("synopsis", imdb.get("synopsis"))),
            "storyline": task("storyline", inp.curated.get("storyline", csm.get("storyline"))),
            "keyMessage": task("keyMessage", kim.get("key_message")),
            "genres": task("genres", core if has_core else imdb.get("genres") or []),
            "topics": imdb.get("topics") or [],
            "ageSuitabilityRating": task("ageSuitabilityRating", csm.get("age_suitability")),
            "motionPictureRatings": [
                {"country": r["country"], "label": r["label"], "minimumAge": r["minimum_age"], "ordinal": r["ordinal"]}
                for r in sorted(inp.ratings, key=lambda r: self.order.get(r["country"], 99))
            ],
            "languageContentReference": kim.get("language_content") or {"rating": None, "summary": None, "source": None},
            "languageContentAssessment": {
                "inputLanguage": "English (en)",
                "categories": safety,
            },
            "sources": {
                "imdbLink": f"https://www.imdb.com/title/{film['imdb_id']}/",
                "commonSenseLink": film["csm_url"],
                "kidsInMindLink": film["kim_url"],
            },
            "subtitles": subtitles,
        }


def film_entities(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table],
                  countries: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    """Yield one SPEC A11 film object at a time (entries read per track, :func:`_track_entries`)."""
    source = EntitySource(con, tables, countries)
    for inp in source.films():
        yield source.entity(inp)


class EntityLine(NamedTuple):
    """One film of ``films.jsonl``: its line as UTF-8 bytes (``raw``, without its newline; the
    text is :attr:`line`), its top-level fields but ``subtitles`` (``head``), the sha256 of each
    track's ``entries`` array as text (``texts``: track_id → :func:`warehouse.tokens.text_sha256`,
    the statistics' token-count keys) and the entity itself when it was built (None when the
    line came from the cache)."""

    raw: bytes
    head: dict[str, Any]
    texts: dict[str, str]
    entity: dict[str, Any] | None
    #: sha256 of the entity cache's entry that holds ``line`` (None without a cache): a digest
    #: of the line the gate cache keys by, without hashing the line again
    digest: str | None = None

    @property
    def line(self) -> str:
        """The line as text (:func:`entity_line` of the entity)."""
        return self.raw.decode("utf-8")


def film_entity_lines(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table], countries: tuple[str, ...],
                      cache_dir: Path | None = None) -> Iterator[EntityLine]:
    """The entities' lines in release order; with ``cache_dir`` a film whose inputs equal an
    earlier one's reuses that line (warehouse/entity_cache.py) instead of being built again —
    as the bytes the cache holds, never decoded (a release writes them as they are)."""
    from warehouse.entity_cache import EntityLineCache
    from warehouse.tokens import format_track, text_sha256

    source = EntitySource(con, tables, countries)
    cache = EntityLineCache(cache_dir, source.cohort_digest())
    for inp in source.films():
        key = source.key(cache.prefix, inp) if cache.dir is not None else None
        hit = cache.get(key) if key is not None else None
        if hit is not None:
            raw, head, texts, digest = hit
            yield EntityLine(raw, head, texts, None, digest)
            continue
        entity = source.entity(inp)
        raw = entity_line(entity).encode("utf-8")
        head = {k: v for k, v in entity.items() if k != "subtitles"}
        texts = {t["track_id"]: text_sha256(format_track(s["entries"]))
                 for t, s in zip(inp.tracks, entity["subtitles"])}
        digest = cache.put(key, raw, head, texts) if key is not None else None
        yield EntityLine(raw, head, texts, entity, digest)


class TrackEntries:
    """``track_id -> [(index, timeframe, content)]`` in release order (start_ms, then index; ties
    in the table's order, as warehouse/tokens.py formats the counted text), reading one track's
    rows at a time. The release's entries table holds each track's rows together (sorted by film,
    language, start_ms, position): a track is a zero-copy slice, sorted alone; a table where a
    track's rows are not contiguous is filtered per track instead (same rows, same order)."""

    def __init__(self, entries: pa.Table):
        self._cols = entries.select(["track_id", "index", "timeframe", "content", "start_ms"])
        runs = pl.Series("track_id", self._cols.column("track_id").combine_chunks()).rle().struct.unnest()
        spans: dict[str, tuple[int, int]] | None = {}
        offset = 0
        for tid, n in zip(runs["value"].to_list(), runs["len"].to_list()):
            if tid in spans:
                spans = None
                break
            spans[tid] = (offset, n)
            offset += n
        self._spans = spans
        self._frame = None if spans is not None else pl.from_arrow(self._cols)

    def _part(self, track_id: str) -> pl.DataFrame:
        if self._spans is not None:
            start, n = self._spans.get(track_id, (0, 0))
            part = pl.from_arrow(self._cols.slice(start, n))
        else:
            part = self._frame.filter(pl.col("track_id") == track_id)
        assert isinstance(part, pl.DataFrame)
        return part

    def __call__(self, track_id: str) -> list[tuple[int, str, str]]:
        part = self._part(track_id).sort(["start_ms", "index"], maintain_order=True)
        return list(zip(part["index"].to_list(), part["timeframe"].to_list(), part["content"].to_list()))

    def digest(self, track_id: str) -> bytes:
        """sha256 of the track's rows (every column :meth:`__call__` reads, in table order):
        lossless, so other rows give another digest, and the same whichever chunks of the table
        hold them (a change in an earlier film moves the spooled batches' boundaries; an Arrow
        IPC stream of a slice spanning one differs from one of the same rows in one chunk).
        Per column, its type, the number of rows and the sha256 of its values (fixed-width: their
        bytes; strings: each one's length, then their bytes), read from the Arrow buffers of the
        track's slice as they lie; a slice with a null is one Arrow IPC stream of its rows in one
        chunk instead."""
        if self._spans is None:
            return _ipc_digest(self._part(track_id).to_arrow())
        start, n = self._spans.get(track_id, (0, 0))
        part = self._cols.slice(start, n)
        if any(col.null_count for col in part.columns):
            return _ipc_digest(part)
        h = hashlib.sha256(b"track-entries/1\0")
        for name, col in zip(part.column_names, part.columns):
            h.update(f"{name}\0{col.type}\0{len(col)}\0".encode())
            if name == "track_id":  # the span is a run of this one value: the value says it all
                h.update(track_id.encode("utf-8", "surrogatepass") + b"\0")
            else:
                h.update(_column_digest(col))
        return h.digest()


def _ipc_digest(table: pa.Table) -> bytes:
    """sha256 of ``table``'s rows copied into one chunk, as one Arrow IPC stream."""
    table = pa.Table.from_batches([pa.concat_batches(table.to_batches())] if table.num_rows else [],
                                  schema=table.schema)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return hashlib.sha256(sink.getvalue()).digest()


def _column_digest(col: pa.ChunkedArray) -> bytes:
    """sha256 of a null-free column's values, the same whichever chunks hold them: fixed-width
    values as their bytes; strings as every value's length (int64) and, apart, their bytes."""
    import numpy as np

    typ = col.type
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_binary(typ):
        lengths, data = hashlib.sha256(), hashlib.sha256()
        width = np.int64 if pa.types.is_large_string(typ) else np.int32
        for chunk in col.chunks:
            if not len(chunk):
                continue
            _, off_buf, data_buf = chunk.buffers()
            offsets = np.frombuffer(off_buf, dtype=width, count=chunk.offset + len(chunk) + 1)[chunk.offset:]
            lengths.update(np.diff(offsets).astype(np.int64).tobytes())
            if data_buf is not None:
                data.update(memoryview(data_buf)[int(offsets[0]):int(offsets[-1])])
        return lengths.digest() + data.digest()
    if not (pa.types.is_integer(typ) or pa.types.is_floating(typ)):  # another type: as IPC
        return _ipc_digest(pa.table({"c": col}))
    size = typ.bit_width // 8
    values = hashlib.sha256()
    for chunk in col.chunks:
        if len(chunk):
            values.update(memoryview(chunk.buffers()[1])[chunk.offset * size:(chunk.offset + len(chunk)) * size])
    return values.digest()


_track_entries = TrackEntries
