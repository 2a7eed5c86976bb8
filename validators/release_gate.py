"""The release consistency gate (SPEC A11 "final consistency checks"), as pure code.

A release is published only when this gate passes. It checks the two published views of the
data — the film entities of ``films.jsonl`` (streamed, one at a time, as they are written) and
the Parquet tables (``films``, ``tracks``, ``entries``, ``ratings``, ``language_safety``,
``task_references``) —
each on its own and against each other:

| check | code | rule |
|---|---|---|
| ids | ``ids_not_unique`` | a film id or imdb_id appears on more than one films row |
| ids | ``id_not_sequential`` | ids are not 1..N (first release) / new ids are not max(previous)+1.. in imdb-id order |
| ids | ``id_changed`` | an imdb_id of ``previous_ids`` now has another id |
| ids | ``id_reused`` | an id of ``previous_ids`` now names another imdb_id |
| links | ``link_mismatch`` | imdbLink is not ``https://www.imdb.com/title/<tt id>/`` of the film; a KIM/CSM link shared by two films; an entity link differs from its films row |
| tracks | ``track_missing`` / ``track_duplicate`` / ``track_unexpected_language`` | exactly one track per selected language |
| entries | ``entries_empty`` | a track without entries |
| entries | ``entry_index_duplicate`` | an SRT index twice in one track |
| entries | ``timeframe_malformed`` | not ``HH:MM:SS,mmm --> HH:MM:SS,mmm`` (tables: or disagrees with start_ms/end_ms) |
| entries | ``timeframe_inverted`` | start after end |
| ratings | ``ratings_count`` | not exactly ``len(countries)`` ratings |
| ratings | ``ratings_country`` | a rating for an unknown country, or a country twice |
| ratings | ``ratings_order`` | ratings not in the defined country order (entities) |
| ratings | ``rating_label_invalid`` | label outside the country's ordered labels, or ordinal not its position (SPEC A8) |
| task_fields | ``task_field_missing`` | a kept task field (SPEC A10) is null or empty (entity or task_references row) |
| task_fields | ``task_field_not_withheld`` | a task field the completeness rule withheld carries a value (entity or task_references row) |
| task_references | ``task_reference_missing`` | a film without a task_references row |
| task_references | ``task_reference_duplicate`` | an imdb_id on more than one task_references row |
| task_references | ``task_reference_mismatch`` | a task_references row disagrees with its film: id differs from the films row, a column is absent, or (cross-check) a field differs from the entity's (``TASK_REFERENCE_COLUMNS``) |
| schema | ``schema_violation`` | the entity does not conform to ``warehouse/film_entity.schema.json`` (path: message) |
| evidence | ``evidence_unresolved`` | an evidenceSubtitleIndices value is not an index of the film's English track |
| evidence | ``evidence_count_mismatch`` | evidenceLineCount != distinct indices, or occurrenceCount < evidenceLineCount |
| evidence | ``safety_category`` | (tables) a film without exactly the four language-safety categories |
| consistency | ``entity_table_mismatch`` | entity count/ids, titles, years, runtimes, tracks (download count, entry count and index sum), ratings or safety counts disagree with the tables |
| consistency | ``orphan_row`` | a tracks/entries/ratings/language_safety/task_references row of no film (or entry of no track, or disagreeing with its track) |

Every failure is a :class:`GateFailure` with a stable reason code; ``source`` says which view
("entity" or "tables") raised it. Set checks on tables run in DuckDB over the Arrow tables
(8M entries at paper scale is one pass each); the entity stream keeps only a small record per film
(ids, links, a few digests), never the entities. Schema conformance uses jsonschema's
``Draft202012Validator``; entries (the bulk) take a fast path derived from the schema's own
``entry`` definition, falling back to jsonschema for any entry the fast path does not accept, so
results are identical to full validation at a fraction of the cost. Schema errors that a
dedicated check reports with a more specific code (timeframe form, imdbLink form) are not
reported twice.

The integrator calls :meth:`ReleaseGate.check_entity` for each entity while writing
``films.jsonl`` and :meth:`ReleaseGate.check_tables` once (before or after); cross-checks run when
results are read (:meth:`failures`, :meth:`passed`, :meth:`summary`).
:func:`warehouse.gate_report.write_gate_report` writes ``gate_report.json`` and ``gate_report.html``.

Layout: this module holds the entity checks, the cross-checks and the results; the table checks
are validators/release_gate_tables.py (mixed into :class:`ReleaseGate`), the reason codes and
shared helpers validators/release_gate_rules.py; the report is warehouse/gate_report.py (its
HTML from warehouse/templates/gate_report.html.j2).
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator

from validators.release_gate_rules import (  # noqa: F401  (re-exported: the gate's public names)
    _DEDICATED,
    CHECK_OF,
    CODES,
    GATE_TABLES,
    IMDB_LINK_RE,
    LANGUAGE_RE,
    SAFETY_CATEGORIES,
    SCHEMA_PATH,
    TASK_REFERENCE_COLUMNS,
    TIMEFRAME_RE,
    GateFailure,
    _clip,
    _default_label_spaces,
    _digest,
    _empty,
    _is_int,
    _task_digest,
    load_schema,
    sort_key,
    timeframe_ms,
)
from validators.release_gate_tables import TableChecks

class _EntryCheck:
    """Schema conformance of one subtitle entry: an exact fast path when the schema's ``entry``
    definition has the expected shape, jsonschema for everything the fast path rejects."""

    def __init__(self, schema: dict[str, Any]):
        defs = schema.get("$defs", {})
        self.validator = Draft202012Validator({"$defs": defs, "$ref": "#/$defs/entry"}) if "entry" in defs else None
        self.fast = False
        entry = defs.get("entry") or {}
        props = entry.get("properties") or {}
        try:
            shape_ok = (
                entry.get("type") == "object" and entry.get("additionalProperties") is False
                and set(entry.get("required", ())) == set(props) == {"index", "timeframe", "content"}
                and props["index"].keys() <= {"type", "minimum", "description"} and props["index"]["type"] == "integer"
                and props["timeframe"].keys() <= {"type", "pattern", "description"} and props["timeframe"]["type"] == "string"
                and props["content"].keys() <= {"type", "description"} and props["content"]["type"] == "string"
            )
        except (KeyError, AttributeError):
            shape_ok = False
        if shape_ok:
            self.fast = True
            self.min_index = props["index"].get("minimum")
            pattern = props["timeframe"].get("pattern")
            self.pattern = re.compile(pattern) if pattern else None

    def accepts(self, e: Any) -> bool:
        if not self.fast or type(e) is not dict or len(e) != 3:
            return False
        i, tf, c = e.get("index"), e.get("timeframe"), e.get("content")
        return (type(i) is int and (self.min_index is None or i >= self.min_index)
                and type(tf) is str and (self.pattern is None or self.pattern.search(tf) is not None)
                and type(c) is str and "index" in e and "timeframe" in e and "content" in e)

    def errors(self, e: Any):
        return self.validator.iter_errors(e) if self.validator is not None else iter(())


class ReleaseGate(TableChecks):
    """Collects SPEC A11 consistency failures over a stream of entities and the release tables.

    ``languages``: the selected language codes (one track each); ``countries``: the SPEC A8
    countries in their defined order; ``kept_task_fields``: task fields kept cohort-wide;
    ``withheld_task_fields``: task fields the completeness rule withheld (must be null);
    ``previous_ids``: imdb_id → id of what was published before (the id registry), or None for a
    first release; ``label_spaces``: country → ordered labels (default: :mod:`validators.ratings`).
    At most ``max_examples_per_code`` failures are kept per code; counts are always complete.
    """

    def __init__(self, *, languages: tuple[str, ...], countries: tuple[str, ...], kept_task_fields: set[str],
                 previous_ids: Mapping[str, int] | None, schema: dict | None = None,
                 max_examples_per_code: int = 50, label_spaces: Mapping[str, Sequence[str]] | None = None,
                 withheld_task_fields: set[str] | None = None):
        self.languages = tuple(languages)
        self.countries = tuple(countries)
        self.kept_task_fields = set(kept_task_fields)
        self.withheld_task_fields = set(withheld_task_fields or ()) - self.kept_task_fields
        self.previous_ids = dict(previous_ids) if previous_ids else {}
        self.first_release = previous_ids is None
        self.schema = schema if schema is not None else load_schema()
        Draft202012Validator.check_schema(self.schema)
        self._validator = Draft202012Validator(self.schema)
        self._entry = _EntryCheck(self.schema)
        self.max_examples = max_examples_per_code
        spaces = label_spaces if label_spaces is not None else _default_label_spaces(self.countries)
        self.label_spaces = {c: tuple(v) for c, v in spaces.items()}
        self._rank = {c: i for i, c in enumerate(self.countries)}
        self._counts: Counter[tuple[str, str, str]] = Counter()  # (check, code, source)
        self._kept: list[GateFailure] = []
        self._kept_per_code: Counter[str] = Counter()
        self.n_entities = 0
        # small per-film records: id -> list of (imdb, title, year, duration, kim, csm, digests)
        self._entity_records: dict[int, list[tuple]] = {}
        self._entity_bad_ids: int = 0
        self._tables_seen = False
        self._table_rows: dict[str, int] = {}
        self._film_rows: dict[int, list[tuple]] = {}  # id -> [(imdb, title, year, runtime, kim, csm)]
        self._table_digests: dict[str, dict[str, bytes]] = {}  # imdb -> section -> digest
        self._task_rows: dict[str, bytes] = {}  # imdb -> task_references digest (films with exactly one row)
        self._capture: list[list] | None = None  # failures of the entity being checked (check_entity_outcome)
        #: the table checks running in a thread (:meth:`begin_tables`): (thread, its failures, its error)
        self._table_thread: tuple[threading.Thread, list[tuple], list[BaseException]] | None = None

    # -- recording --------------------------------------------------------------------------
    def _fail(self, code: str, imdb_id: str | None, detail: str, source: str, into: list | None = None) -> None:
        pending = self._table_thread
        if into is None and pending is not None and pending[0] is threading.current_thread():
            pending[1].append((code, imdb_id, detail, source))  # recorded when the thread is joined
            return
        f = GateFailure(CHECK_OF[code], code, imdb_id, _clip(detail), source)
        if into is not None:
            into.append(f)
            return
        if self._capture is not None:
            self._capture.append([code, imdb_id, f.detail, source])
        self._counts[(f.check, code, source)] += 1
        if self._kept_per_code[code] < self.max_examples:
            self._kept_per_code[code] += 1
            self._kept.append(f)

    # -- tables beside the entities ------------------------------------------------------------
    def begin_tables(self, tables: Mapping[str, Any]) -> None:
        """Start :meth:`check_tables` in a thread — its work is DuckDB's, which runs without the
        GIL — while the entities are checked; :meth:`end_tables` waits for it. Its failures are
        recorded when it is joined, so the gate's counts, kept examples and their order are those
        of checking the entities first and the tables after them."""
        failures: list[tuple] = []
        errors: list[BaseException] = []

        def run() -> None:
            try:
                self.check_tables(tables)
            except BaseException as exc:  # raised again by end_tables
                errors.append(exc)

        thread = threading.Thread(target=run, name="release-gate-tables", daemon=True)
        self._table_thread = (thread, failures, errors)
        thread.start()

    def end_tables(self) -> None:
        """Wait for the table checks :meth:`begin_tables` started and record their failures."""
        if self._table_thread is None:
            return
        thread, failures, errors = self._table_thread
        thread.join()
        self._table_thread = None
        if errors:
            raise errors[0]
        for code, imdb_id, detail, source in failures:
            self._fail(code, imdb_id, detail, source)

    # -- entities -----------------------------------------------------------------------------
    def check_entity(self, entity: dict) -> None:
        """Check one film entity; keeps only a small record of it (never the entity)."""
        self.n_entities += 1
        src = "entity"
        if not isinstance(entity, dict):
            self._fail("schema_violation", None, f"$: entity is {type(entity).__name__}, not an object", src)
            return
        sources = entity.get("sources") if isinstance(entity.get("sources"), dict) else {}
        link = sources.get("imdbLink")
        m = IMDB_LINK_RE.fullmatch(link) if isinstance(link, str) else None
        imdb = m.group(1) if m else None
        fid = entity.get("id")
        label = imdb or f"id={fid!r}"
        if isinstance(link, str) and m is None:
            self._fail("link_mismatch", None, f"entity {label}: imdbLink {link!r} is not https://www.imdb.com/title/<tt id>/", src)

        self._check_schema(entity, imdb, src)
        tracks_digest, en_indices, tracks_ok = self._check_tracks(entity, imdb, src)
        ratings_digest = self._check_ratings(entity, imdb, src)
        self._check_task_fields(entity, imdb, src)
        safety_digest = self._check_evidence(entity, imdb, en_indices, src)

        if _is_int(fid):
            rec = (imdb,
                   entity.get("title") if isinstance(entity.get("title"), str) else None,
                   entity.get("releaseYear") if _is_int(entity.get("releaseYear")) else None,
                   entity.get("duration") if _is_int(entity.get("duration")) else None,
                   sources.get("kidsInMindLink"), sources.get("commonSenseLink"),
                   tracks_digest if tracks_ok else None, ratings_digest, safety_digest,
                   _task_digest([entity.get(f) for f in TASK_REFERENCE_COLUMNS]))
            self._entity_records.setdefault(fid, []).append(rec)
        else:
            self._entity_bad_ids += 1

    def entity_settings(self) -> str:
        """Everything besides the entity that :meth:`check_entity` reads, as canonical JSON: two
        gates with equal settings give an entity the same outcome (the key of a cached outcome,
        warehouse/gate_cache.py)."""
        return json.dumps({"languages": list(self.languages), "countries": list(self.countries),
                           "kept": sorted(self.kept_task_fields), "withheld": sorted(self.withheld_task_fields),
                           "label_spaces": {c: list(v) for c, v in sorted(self.label_spaces.items())},
                           "schema": self.schema}, sort_keys=True, ensure_ascii=False)

    def check_entity_outcome(self, entity: dict) -> dict[str, Any]:
        """:meth:`check_entity`, returning what it recorded — every failure it raised (before the
        per-code example limit) and the film's small record — as JSON-serialisable data, so that
        :meth:`replay_entity` records exactly the same later without checking the entity again."""
        before = (self._entity_bad_ids, {fid: len(v) for fid, v in self._entity_records.items()})
        self._capture = []
        try:
            self.check_entity(entity)
            failures = self._capture
        finally:
            self._capture = None
        fid = entity.get("id") if isinstance(entity, dict) else None
        if self._entity_bad_ids != before[0]:
            kind, rec = "bad_id", None
        elif _is_int(fid) and len(self._entity_records.get(fid, ())) != before[1].get(fid, 0):
            kind, rec = "record", [{"hex": v.hex()} if isinstance(v, bytes) else v
                                   for v in self._entity_records[fid][-1]]
        else:
            kind, rec = "none", None
        return {"failures": failures, "kind": kind, "id": fid if kind == "record" else None, "record": rec}

    def replay_entity(self, outcome: Mapping[str, Any]) -> None:
        """Record an outcome of :meth:`check_entity_outcome` as :meth:`check_entity` would have."""
        self.n_entities += 1
        for code, imdb_id, detail, source in outcome["failures"]:
            self._fail(code, imdb_id, detail, source)
        if outcome["kind"] == "bad_id":
            self._entity_bad_ids += 1
        elif outcome["kind"] == "record":
            rec = tuple(bytes.fromhex(v["hex"]) if isinstance(v, dict) else v for v in outcome["record"])
            self._entity_records.setdefault(int(outcome["id"]), []).append(rec)

    def _check_schema(self, entity: dict, imdb: str | None, src: str) -> None:
        subs = entity.get("subtitles") if self._entry.fast else None  # no fast path: validate all at once
        light = entity
        if isinstance(subs, list):
            light = dict(entity)
            light["subtitles"] = [
                {**t, "entries": []} if isinstance(t, dict) and isinstance(t.get("entries"), list) else t
                for t in subs
            ]
        errors = list(self._validator.iter_errors(light))
        if isinstance(subs, list):
            for ti, t in enumerate(subs):
                if not (isinstance(t, dict) and isinstance(t.get("entries"), list)):
                    continue
                for ei, e in enumerate(t["entries"]):
                    if self._entry.accepts(e):
                        continue
                    for err in self._entry.errors(e):
                        errors.append((("subtitles", ti, "entries", ei), err))
        for item in errors:
            prefix, err = item if isinstance(item, tuple) else ((), item)
            path = tuple(prefix) + tuple(err.absolute_path)
            shape = tuple("*" if isinstance(p, int) else p for p in path)
            if (shape, err.validator) in _DEDICATED:
                continue
            where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
            self._fail("schema_violation", imdb, f"{where}: {err.message}", src)

    def _check_tracks(self, entity: dict, imdb: str | None, src: str) -> tuple[bytes, set[int] | None, bool]:
        subs = entity.get("subtitles")
        if not isinstance(subs, list):
            return _digest([]), None, False
        langs: list[str] = []
        parsed_all = True
        summary: list[tuple] = []
        en_indices: set[int] | None = None
        for t in subs:
            if not isinstance(t, dict):
                parsed_all = False
                continue
            lm = LANGUAGE_RE.fullmatch(t["language"]) if isinstance(t.get("language"), str) else None
            lang = lm.group(2) if lm else None
            if lang is None:
                parsed_all = False
            else:
                langs.append(lang)
            entries = t.get("entries")
            if not isinstance(entries, list):
                parsed_all = False
                continue
            n, idx_sum = self._check_entries(entries, imdb, lang or repr(t.get("language")), src)
            summary.append((lang, t.get("downloadCount"), n, idx_sum))
            if lang == "en":
                en_indices = (en_indices or set()) | {e["index"] for e in entries
                                                      if isinstance(e, dict) and _is_int(e.get("index"))}
        if parsed_all:  # a malformed language is a schema violation; the set check needs all parsed
            self._check_language_set(Counter(langs), imdb, src)
        return _digest(sorted(summary, key=repr)), en_indices, parsed_all

    def _check_language_set(self, counts: Counter, imdb: str | None, src: str) -> None:
        for lang in self.languages:
            if counts[lang] == 0:
                self._fail("track_missing", imdb, f"no {lang} track", src)
            elif counts[lang] > 1:
                self._fail("track_duplicate", imdb, f"{counts[lang]} {lang} tracks", src)
        for lang in sorted(set(counts) - set(self.languages)):
            self._fail("track_unexpected_language", imdb, f"{counts[lang]} track(s) in unselected language {lang}", src)

    def _check_entries(self, entries: list, imdb: str | None, lang: str, src: str) -> tuple[int, int]:
        if not entries:
            self._fail("entries_empty", imdb, f"{lang} track has no entries", src)
            return 0, 0
        seen: set[int] = set()
        dups: list[int] = []
        malformed: list[str] = []
        inverted: list[str] = []
        idx_sum = 0
        for e in entries:
            if not isinstance(e, dict):
                continue
            i = e.get("index")
            if _is_int(i):
                idx_sum += i
                if i in seen:
                    dups.append(i)
                seen.add(i)
            tf = e.get("timeframe")
            if isinstance(tf, str):
                ms = timeframe_ms(tf)
                if ms is None:
                    malformed.append(f"{i}: {tf!r}")
                elif ms[0] > ms[1]:
                    inverted.append(f"{i}: {tf}")
        if dups:
            self._fail("entry_index_duplicate", imdb, f"{lang}: {len(dups)} duplicate index(es), e.g. {sorted(set(dups))[:5]}", src)
        if malformed:
            self._fail("timeframe_malformed", imdb, f"{lang}: {len(malformed)} entr(ies), e.g. {malformed[:3]}", src)
        if inverted:
            self._fail("timeframe_inverted", imdb, f"{lang}: {len(inverted)} entr(ies) end before they start, e.g. {inverted[:3]}", src)
        return len(entries), idx_sum

    def _check_ratings(self, entity: dict, imdb: str | None, src: str) -> bytes | None:
        ratings = entity.get("motionPictureRatings")
        if not isinstance(ratings, list):
            return None
        n = len(self.countries)
        if len(ratings) != n:
            self._fail("ratings_count", imdb, f"{len(ratings)} ratings, expected {n}", src)
        rows = [r for r in ratings if isinstance(r, dict)]
        seq = [r.get("country") for r in rows]
        unknown = sorted({repr(c) for c in seq if c not in self._rank})
        twice = sorted(c for c, k in Counter(c for c in seq if c in self._rank).items() if k > 1)
        if unknown or twice:
            self._fail("ratings_country", imdb, f"unknown countries {unknown}, repeated {twice}", src)
        else:
            ranks = [self._rank[c] for c in seq]
            if ranks != sorted(ranks):
                self._fail("ratings_order", imdb, f"order {seq} is not the defined country order", src)
        for r in rows:
            self._check_label(r.get("country"), r.get("label"), r.get("ordinal"), imdb, src)
        return _digest(sorted(repr((r.get("country"), r.get("label"), r.get("minimumAge"), r.get("ordinal")))
                              for r in rows))

    def _check_label(self, country: Any, label: Any, ordinal: Any, imdb: str | None, src: str) -> None:
        space = self.label_spaces.get(country)
        if space is None:
            return
        if label not in space:
            self._fail("rating_label_invalid", imdb, f"{country}: label {label!r} not in {list(space)}", src)
        elif ordinal != space.index(label):
            self._fail("rating_label_invalid", imdb,
                       f"{country}: label {label!r} has ordinal {ordinal!r}, expected {space.index(label)}", src)

    def _check_task_fields(self, entity: dict, imdb: str | None, src: str) -> None:
        for field in sorted(self.kept_task_fields):
            if _empty(entity.get(field)):
                self._fail("task_field_missing", imdb, f"kept task field {field} is {entity.get(field)!r}", src)
        for field in sorted(self.withheld_task_fields):
            if entity.get(field) is not None:
                self._fail("task_field_not_withheld", imdb, f"withheld task field {field} is {entity.get(field)!r}", src)

    def _check_evidence(self, entity: dict, imdb: str | None, en_indices: set[int] | None, src: str) -> bytes | None:
        lca = entity.get("languageContentAssessment")
        cats = lca.get("categories") if isinstance(lca, dict) else None
        if not isinstance(cats, dict):
            return None
        canon = []
        for name in sorted(cats):
            c = cats[name]
            if not isinstance(c, dict):
                continue
            idx = c.get("evidenceSubtitleIndices")
            idx = idx if isinstance(idx, list) else []
            canon.append((name, c.get("occurrenceCount"), c.get("evidenceLineCount"), tuple(idx)))
            ints = [i for i in idx if _is_int(i)]
            lines, occ = c.get("evidenceLineCount"), c.get("occurrenceCount")
            if _is_int(lines) and lines != len(set(ints)):
                self._fail("evidence_count_mismatch", imdb,
                           f"{name}: evidenceLineCount {lines} != {len(set(ints))} distinct indices", src)
            elif _is_int(lines) and _is_int(occ) and occ < lines:
                self._fail("evidence_count_mismatch", imdb, f"{name}: occurrenceCount {occ} < evidenceLineCount {lines}", src)
            if en_indices is not None:  # no English track is reported as track_missing
                missing = sorted(set(ints) - en_indices)
                if missing:
                    self._fail("evidence_unresolved", imdb,
                               f"{name}: {len(missing)} index(es) not in the English track, e.g. {missing[:5]}", src)
        return _digest(canon)

    # -- cross-checks and results ------------------------------------------------------------
    def _cross(self) -> list[GateFailure]:
        out: list[GateFailure] = []
        if not self._tables_seen:
            return out
        src = "entity"
        n_rows = self._table_rows.get("films", 0)
        if self.n_entities != n_rows:
            self._fail("entity_table_mismatch", None, f"{self.n_entities} film entities, {n_rows} films rows", src, out)
        if self._entity_bad_ids:
            self._fail("entity_table_mismatch", None, f"{self._entity_bad_ids} entities without an integer id", src, out)
        for fid in sorted(set(self._film_rows) - set(self._entity_records)):
            self._fail("entity_table_mismatch", self._film_rows[fid][0][0], f"films row id {fid} has no entity", src, out)
        empty = _digest([])
        for fid in sorted(self._entity_records):
            recs = self._entity_records[fid]
            rows = self._film_rows.get(fid)
            if rows is None:
                self._fail("entity_table_mismatch", recs[0][0], f"entity id {fid} has no films row", src, out)
                continue
            if len(recs) != len(rows):
                self._fail("entity_table_mismatch", recs[0][0],
                           f"id {fid} on {len(recs)} entities but {len(rows)} films rows", src, out)
            by_imdb = {r[0]: r for r in rows}
            for imdb, title, year, duration, kim, csm, d_tracks, d_ratings, d_safety, d_task in recs:
                imdb_t, title_t, year_t, runtime_t, kim_t, csm_t = by_imdb.get(imdb, rows[0])
                if imdb is not None and imdb != imdb_t:
                    self._fail("link_mismatch", imdb_t, f"entity id {fid} imdbLink names {imdb}, films row names {imdb_t}", src, out)
                if kim != kim_t:
                    self._fail("link_mismatch", imdb_t, f"entity id {fid} kidsInMindLink {kim!r} != films.kim_url {kim_t!r}", src, out)
                if csm != csm_t:
                    self._fail("link_mismatch", imdb_t, f"entity id {fid} commonSenseLink {csm!r} != films.csm_url {csm_t!r}", src, out)
                diffs = [name for name, a, b in (("title", title, title_t), ("releaseYear", year, year_t),
                                                 ("duration", duration, runtime_t)) if a is not None and a != b]
                digests = self._table_digests.get(imdb_t, {})
                for name, ours in (("subtitles", d_tracks), ("motionPictureRatings", d_ratings),
                                   ("languageContentAssessment", d_safety)):
                    key = {"subtitles": "tracks", "motionPictureRatings": "ratings",
                           "languageContentAssessment": "safety"}[name]
                    if ours is not None and ours != digests.get(key, empty):
                        diffs.append(name)
                if diffs:
                    self._fail("entity_table_mismatch", imdb_t, f"entity id {fid} disagrees with the tables on {diffs}", src, out)
                row = self._task_rows.get(imdb_t)
                if row is not None and row != d_task:
                    differ = [f"{f} (task_references.{c})" for k, (f, c) in enumerate(TASK_REFERENCE_COLUMNS.items())
                              if row[8 * k: 8 * k + 8] != d_task[8 * k: 8 * k + 8]]
                    self._fail("task_reference_mismatch", imdb_t,
                               f"entity id {fid} and its task_references row differ on {differ}", src, out)
        return out

    def failures(self) -> list[GateFailure]:
        """Failures kept (at most ``max_examples_per_code`` per code), cross-checks included."""
        cross = self._cross()
        kept = list(self._kept)
        per = Counter(self._kept_per_code)
        for f in cross:
            if per[f.code] < self.max_examples:
                per[f.code] += 1
                kept.append(f)
        return kept

    def _all_counts(self) -> Counter:
        counts = Counter(self._counts)
        for f in self._cross():
            counts[(f.check, f.code, f.source)] += 1
        return counts

    def passed(self) -> bool:
        """True when nothing failed and the tables were checked (an entity-only gate never passes)."""
        return self._tables_seen and not self._all_counts()

    def summary(self) -> dict[str, Any]:
        """{passed, n_entities, tables (rows), n_failures, counts{check:{code:n}}, by_source, examples{code:[detail]}}."""
        counts = self._all_counts()
        by_check: dict[str, dict[str, int]] = {}
        by_source: dict[str, int] = {}
        for (check, code, source), n in counts.items():
            by_check.setdefault(check, {})
            by_check[check][code] = by_check[check].get(code, 0) + n
            by_source[source] = by_source.get(source, 0) + n
        examples: dict[str, list[str]] = {}
        for f in sorted(self.failures(), key=sort_key):
            ex = examples.setdefault(f.code, [])
            if len(ex) < 5:
                ex.append(f"{f.imdb_id or '-'} [{f.source}] {f.detail}")
        return {
            "passed": self._tables_seen and not counts,
            "n_entities": self.n_entities,
            "tables_checked": self._tables_seen,
            "tables": dict(sorted(self._table_rows.items())),
            "n_failures": sum(counts.values()),
            "counts": {c: dict(sorted(v.items())) for c, v in sorted(by_check.items())},
            "by_source": dict(sorted(by_source.items())),
            "examples": dict(sorted(examples.items())),
        }

    def codes(self) -> set[str]:
        """The reason codes that fired."""
        return {code for (_, code, _), n in self._all_counts().items() if n}

