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
results are read (:meth:`failures`, :meth:`passed`, :meth:`summary`). :func:`write_gate_report`
writes ``gate_report.json`` and ``gate_report.html``.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from jsonschema import Draft202012Validator

#: the schema file in the package ``warehouse`` (shipped as package data)
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "warehouse" / "film_entity.schema.json"

#: SPEC A9 categories, in report order
SAFETY_CATEGORIES: tuple[str, ...] = (
    "strongProfanity", "crudeBodilyLanguage", "mildObscenity", "religiousProfanityAndExclamation",
)
#: tables :meth:`ReleaseGate.check_tables` reads
GATE_TABLES: tuple[str, ...] = ("films", "tracks", "entries", "ratings", "language_safety", "task_references")
#: entity field -> task_references column (SPEC A10/A11 task references; same values, typed lists)
TASK_REFERENCE_COLUMNS: dict[str, str] = {
    "plot": "plot", "synopsis": "synopsis", "storyline": "storyline", "keyMessage": "key_message",
    "genres": "genres", "topics": "topics", "ageSuitabilityRating": "age_suitability",
    "fullCast": "full_cast", "countriesOfOrigin": "countries_of_origin", "originalLanguages": "original_languages",
}
#: struct keys of task_references.full_cast -> fullCast keys of the entity
_CAST_KEYS = {"additional_texts": "additionalTexts"}
#: every reason code, by check (report order)
CODES: dict[str, tuple[str, ...]] = {
    "ids": ("ids_not_unique", "id_not_sequential", "id_changed", "id_reused"),
    "links": ("link_mismatch",),
    "tracks": ("track_missing", "track_duplicate", "track_unexpected_language"),
    "entries": ("entries_empty", "entry_index_duplicate", "timeframe_malformed", "timeframe_inverted"),
    "ratings": ("ratings_count", "ratings_country", "ratings_order", "rating_label_invalid"),
    "task_fields": ("task_field_missing", "task_field_not_withheld"),
    "task_references": ("task_reference_missing", "task_reference_duplicate", "task_reference_mismatch"),
    "schema": ("schema_violation",),
    "evidence": ("evidence_unresolved", "evidence_count_mismatch", "safety_category"),
    "consistency": ("entity_table_mismatch", "orphan_row"),
}
CHECK_OF: dict[str, str] = {code: check for check, codes in CODES.items() for code in codes}

TIMEFRAME_RE = re.compile(
    r"(\d{2}):([0-5]\d):([0-5]\d),(\d{3}) --> (\d{2}):([0-5]\d):([0-5]\d),(\d{3})", re.ASCII)
_TIMEFRAME_SQL = "[0-9]{2}:[0-5][0-9]:[0-5][0-9],[0-9]{3} --> [0-9]{2}:[0-5][0-9]:[0-5][0-9],[0-9]{3}"
LANGUAGE_RE = re.compile(r"([A-Z][a-z]+) \(([a-z]{2})\)", re.ASCII)
IMDB_LINK_RE = re.compile(r"https://www\.imdb\.com/title/(tt\d{7,})/", re.ASCII)
#: schema errors (path shape, keyword) reported by a dedicated check instead of schema_violation
_DEDICATED: dict[tuple[tuple[str, ...], str], str] = {
    (("subtitles", "*", "entries", "*", "timeframe"), "pattern"): "timeframe_malformed",
    (("sources", "imdbLink"), "pattern"): "link_mismatch",
}
_DETAIL_MAX = 400


@dataclass(frozen=True)
class GateFailure:
    """One failed consistency check. ``source``: "entity" (films.jsonl) or "tables" (Parquet)."""
    check: str
    code: str
    imdb_id: str | None
    detail: str
    source: str = "tables"


def load_schema() -> dict[str, Any]:
    """The SPEC A11 film-entity JSON Schema (``warehouse/film_entity.schema.json``, package data)."""
    try:
        text = resources.files("warehouse").joinpath(SCHEMA_PATH.name).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        text = SCHEMA_PATH.read_text(encoding="utf-8")
    return json.loads(text)


def timeframe_ms(timeframe: str) -> tuple[int, int] | None:
    """(start_ms, end_ms) of an SRT timeframe, or None when it is not in the strict form."""
    m = TIMEFRAME_RE.fullmatch(timeframe)
    if m is None:
        return None
    g = [int(x) for x in m.groups()]
    return (((g[0] * 60 + g[1]) * 60 + g[2]) * 1000 + g[3], ((g[4] * 60 + g[5]) * 60 + g[6]) * 1000 + g[7])


def _digest(obj: Any) -> bytes:
    return hashlib.blake2b(repr(obj).encode("utf-8"), digest_size=16).digest()


def _clip(text: str) -> str:
    return text if len(text) <= _DETAIL_MAX else text[: _DETAIL_MAX - 1] + "…"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _empty(value: Any) -> bool:
    """None, a blank string, or an empty list/dict (or a list of only blank values)."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, dict):
        return not value
    if isinstance(value, (list, tuple)):
        return all(_empty(v) for v in value)
    return False


def _task_norm(value: Any) -> Any:
    """A task-reference value in comparable form (lists -> tuples, dicts -> sorted item tuples
    with the table's snake_case struct keys renamed to the entity's)."""
    if isinstance(value, dict):
        return tuple(sorted((_CAST_KEYS.get(k, k), _task_norm(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_task_norm(v) for v in value)
    return value


def _task_digest(values: Sequence[Any]) -> bytes:
    """8 bytes per task-reference field, in ``TASK_REFERENCE_COLUMNS`` order."""
    return b"".join(hashlib.blake2b(repr(_task_norm(v)).encode("utf-8"), digest_size=8).digest() for v in values)


def _default_label_spaces(countries: Sequence[str]) -> dict[str, tuple[str, ...]]:
    from validators.ratings import label_space  # SPEC A8 rules file; imported lazily
    out = {}
    for c in countries:
        try:
            out[c] = tuple(label_space(c))
        except KeyError:
            continue
    return out


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


class ReleaseGate:
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

    # -- recording --------------------------------------------------------------------------
    def _fail(self, code: str, imdb_id: str | None, detail: str, source: str, into: list | None = None) -> None:
        f = GateFailure(CHECK_OF[code], code, imdb_id, _clip(detail), source)
        if into is not None:
            into.append(f)
            return
        self._counts[(f.check, code, source)] += 1
        if self._kept_per_code[code] < self.max_examples:
            self._kept_per_code[code] += 1
            self._kept.append(f)

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

    # -- tables -------------------------------------------------------------------------------
    def check_tables(self, tables: Mapping[str, pa.Table]) -> None:
        """Set checks over the release tables (DuckDB over Arrow); keeps O(films) small records."""
        missing = [n for n in GATE_TABLES if n not in tables]
        if missing:
            raise ValueError(f"check_tables needs tables {missing}")
        self._tables_seen = True
        con = duckdb.connect()
        try:
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
        for imdb, lang, n_bad, first_bad, n_inv, first_inv in self._rows(con, parsed):
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
        for f in sorted(self.failures(), key=_sort_key):
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


def _sort_key(f: GateFailure) -> tuple:
    order = list(CODES)
    return (order.index(f.check) if f.check in order else len(order), f.code, f.imdb_id or "", f.source, f.detail)


def write_gate_report(summary: dict, failures: list[GateFailure], out_dir: Path) -> Path:
    """Write ``gate_report.json`` (deterministic: sorted keys and failures) and a self-contained
    ``gate_report.html`` (one table per check, all text escaped) into ``out_dir``; return the JSON path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ordered = sorted(failures, key=_sort_key)
    payload = {"summary": summary, "failures": [asdict(f) for f in ordered]}
    json_path = out_dir / "gate_report.json"
    json_path.write_text(json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")

    e = html.escape
    passed = bool(summary.get("passed"))
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        "<title>cinesub release gate report</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1.5em}"
        "td,th{border:1px solid #bbb;padding:.25em .5em;text-align:left;vertical-align:top}"
        ".pass{color:#060}.fail{color:#a00}code{white-space:pre-wrap}</style></head><body>",
        "<h1>Release consistency gate (SPEC A11)</h1>",
        f'<p class="{"pass" if passed else "fail"}"><strong>{"PASSED" if passed else "FAILED"}</strong> — '
        f"{e(str(summary.get('n_failures', 0)))} failure(s) over {e(str(summary.get('n_entities', 0)))} film entities.</p>",
        "<h2>Counts</h2><table><tr><th>check</th><th>code</th><th>failures</th></tr>",
    ]
    for check, codes in sorted((summary.get("counts") or {}).items()):
        for code, n in sorted(codes.items()):
            parts.append(f"<tr><td>{e(check)}</td><td><code>{e(code)}</code></td><td>{e(str(n))}</td></tr>")
    parts.append("</table>")
    by_check: dict[str, list[GateFailure]] = {}
    for f in ordered:
        by_check.setdefault(f.check, []).append(f)
    for check in sorted(by_check, key=lambda c: list(CODES).index(c) if c in CODES else len(CODES)):
        parts.append(f"<h2>{e(check)}</h2><table><tr><th>code</th><th>imdb_id</th><th>source</th><th>detail</th></tr>")
        for f in by_check[check]:
            parts.append(f"<tr><td><code>{e(f.code)}</code></td><td>{e(f.imdb_id or '')}</td>"
                         f"<td>{e(f.source)}</td><td><code>{e(f.detail)}</code></td></tr>")
        parts.append("</table>")
    if not ordered:
        parts.append("<p>No failures.</p>")
    parts.append("</body></html>")
    (out_dir / "gate_report.html").write_text("\n".join(parts) + "\n", encoding="utf-8")
    return json_path
