"""Stratum keys and the frozen split registry of the release (SPEC C; seed 002, data release).

Which films are public is decided by :mod:`warehouse.public_sample` (stratified, every stratum
covered, the rest held back, too-small strata merged); this module holds what it builds on.

Cells are combinations of film attributes, named in ``Settings.release.split_strata``:

* ``decade``          – ``"1990s"``, from a ``decade`` column if present, else from ``year``
                        (or ``releaseYear``);
* ``age_suitability`` – the Common Sense age (``"13+"``);
* ``primary_genre``   – a ``primary_genre`` column if present, else the first of ``genres``;
* ``country``         – a ``country`` column if present, else the first of ``countries_of_origin``
                        / ``countriesOfOrigin`` / ``countries``;
* any other name      – that column of the input table, verbatim.

List-valued attributes may be lists or JSON-encoded lists. A missing or empty value becomes
``unknown``. The cell key is ``"decade=1990s|age_suitability=13+"``.

**Frozen registry.** A film keeps its split forever once assigned, even when the strata, the
share or the film set change later: the persisted registry (``imdb_id, split, stratum,
assigned_seed``) also holds withdrawn films. Persisting it is the caller's job:
:func:`merge_registry` returns the registry to store (previous rows verbatim, including withdrawn
films, plus the newly drawn films).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import polars as pl
import pyarrow as pa

SPLITS = ("public", "heldback")
UNKNOWN = "unknown"
#: Columns of the assignment frame returned by :func:`warehouse.public_sample.select_public`.
ASSIGNMENT_COLUMNS = ("imdb_id", "stratum", "split", "assigned_seed", "new")
#: Columns of the persisted registry (see :func:`merge_registry`).
REGISTRY_COLUMNS = ("imdb_id", "split", "stratum", "assigned_seed")

_ASSIGNMENT_SCHEMA = {"imdb_id": pl.String, "stratum": pl.String, "split": pl.String,
                      "assigned_seed": pl.Int64, "new": pl.Boolean}
_REGISTRY_SCHEMA = {"imdb_id": pl.String, "split": pl.String, "stratum": pl.String,
                    "assigned_seed": pl.Int64}


class SplitError(ValueError):
    """Invalid split input; ``reason`` is a stable reason code."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


def _rank(seed: int, imdb_id: str) -> str:
    return hashlib.sha256(f"{seed}:{imdb_id}".encode()).hexdigest()


def _as_list(value: Any) -> list:
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except ValueError:
                return [text]
            return list(parsed) if isinstance(parsed, list) else [parsed]
        return [text] if text else []
    if isinstance(value, (list, tuple)):
        return list(value)
    try:  # numpy / arrow array-likes
        return list(value)
    except TypeError:
        return [value]


def _first(row: dict, *names: str) -> Any:
    for name in names:
        if name in row:
            items = [v for v in _as_list(row[name]) if v is not None and str(v).strip()]
            if items:
                return items[0]
    return None


def _attribute(row: dict, name: str) -> Any:
    if name == "decade":
        if row.get("decade") not in (None, ""):
            return row["decade"]
        year = row.get("year", row.get("releaseYear"))
        try:
            y = int(year)
        except (TypeError, ValueError):
            return None
        return f"{y // 10 * 10}s"
    if name == "primary_genre":
        if row.get("primary_genre") not in (None, ""):
            return row["primary_genre"]
        return _first(row, "genres")
    if name == "country":
        if row.get("country") not in (None, ""):
            return row["country"]
        return _first(row, "countries_of_origin", "countriesOfOrigin", "countries")
    return row.get(name)


def _clean(value: Any) -> str:
    if value is None:
        return UNKNOWN
    text = str(value).strip()
    if not text:
        return UNKNOWN
    # Keep the key parseable: '|' separates attributes and '=' separates name from value.
    return text.replace("|", "/").replace("=", ":")


def stratum_key(row: dict, strata: tuple[str, ...]) -> str:
    """``"decade=1990s|age_suitability=13+"``; a missing attribute reads ``"<name>=unknown"``.
    No strata → ``"all"`` (one stratum)."""
    if not strata:
        return "all"
    return "|".join(f"{name}={_clean(_attribute(row, name))}" for name in strata)


def _to_polars(frame: pa.Table | pl.DataFrame | None) -> pl.DataFrame | None:
    if frame is None:
        return None
    if isinstance(frame, pl.DataFrame):
        return frame
    if isinstance(frame, (pa.Table, pa.RecordBatch)):
        return pl.from_arrow(frame)
    raise SplitError("split_bad_input", f"expected a pyarrow.Table or polars.DataFrame, got {type(frame).__name__}")


def _previous_map(previous: pl.DataFrame | None) -> dict[str, dict]:
    if previous is None or previous.height == 0:
        return {}
    missing = [c for c in ("imdb_id", "split") if c not in previous.columns]
    if missing:
        raise SplitError("split_registry_missing_column", f"previous lacks {missing}")
    out: dict[str, dict] = {}
    for r in previous.to_dicts():
        iid = r["imdb_id"]
        if r["split"] not in SPLITS:
            raise SplitError("split_registry_bad_value", f"{iid}: split={r['split']!r} not in {SPLITS}")
        if iid in out and out[iid]["split"] != r["split"]:
            raise SplitError("split_registry_conflict", f"{iid} is registered as both splits")
        out[iid] = r
    return out


def merge_registry(previous: pl.DataFrame | None, assignments: pl.DataFrame) -> pl.DataFrame:
    """The registry to persist: every previous row verbatim (withdrawn films included, so they are
    never reassigned if they come back) plus the rows of newly assigned films. Sorted by imdb_id."""
    new_rows = assignments.filter(pl.col("new")).select(list(REGISTRY_COLUMNS)).cast(_REGISTRY_SCHEMA)
    prev = _to_polars(previous)
    if prev is None or prev.height == 0:
        return new_rows.sort("imdb_id")
    prev = prev.select(list(REGISTRY_COLUMNS)).cast(_REGISTRY_SCHEMA)
    clash = set(prev["imdb_id"].to_list()) & set(new_rows["imdb_id"].to_list())
    if clash:
        raise SplitError("split_registry_conflict", f"already registered yet marked new: {sorted(clash)[:5]}")
    return pl.concat([prev, new_rows]).sort("imdb_id")
