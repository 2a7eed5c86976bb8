"""Rules of the release consistency gate (validators/release_gate.py): the reason codes by
check, the patterns and column mappings, :class:`GateFailure` and the small pure helpers both
halves of the gate (entities, validators/release_gate.py; tables,
validators/release_gate_tables.py) and its report (warehouse/gate_report.py) share."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

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



def sort_key(f: GateFailure) -> tuple:
    order = list(CODES)
    return (order.index(f.check) if f.check in order else len(order), f.code, f.imdb_id or "", f.source, f.detail)
