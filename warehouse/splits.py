"""Frozen stratified public / held-back splits of the release (SPEC C; seed 002, data release).

The release publishes a stratified *public* sample beside a *held-back* split (kept for a hidden
test set). Per stratum the public target is ``max(1, round(fraction * n))`` films, ``n`` being the
number of films of the stratum in the current release; the draw uses a fixed seed.

Strata are combinations of film attributes, named in ``Settings.release.split_strata``:

* ``decade``          – ``"1990s"``, from a ``decade`` column if present, else from ``year``
                        (or ``releaseYear``);
* ``age_suitability`` – the Common Sense age (``"13+"``);
* ``primary_genre``   – a ``primary_genre`` column if present, else the first of ``genres``;
* ``country``         – a ``country`` column if present, else the first of ``countries_of_origin``
                        / ``countriesOfOrigin`` / ``countries``;
* any other name      – that column of the input table, verbatim.

List-valued attributes may be lists or JSON-encoded lists. A missing or empty value becomes
``unknown``. The stratum key is ``"decade=1990s|age_suitability=13+"``.

**Frozen assignment.** A film keeps its split forever once assigned, even when the strata, the
fraction or the film set change later: films found in ``previous`` (the persisted registry, which
also holds withdrawn films) keep their ``split`` and ``assigned_seed`` verbatim; only films never
assigned before are drawn. Per stratum of the *current* strata, the open public slots are
``max(0, target - films of the stratum already public)`` and the new films of the stratum fill them
in the order of ``sha256(f"{seed}:{imdb_id}")`` (ascending), so the result depends only on the set
of films, the previous registry and the seed — not on row order or Python's hash seed.

**Drift (honest caveat).** Because old assignments are frozen, a stratum's public count can drift
from its target: removing public films leaves a stratum under target until new films arrive (open
slots are then filled first by new films only); removing held-back films, or changing the strata or
the fraction, can leave a stratum *over* target, and nothing is ever moved back to held-back to
correct it. A stratum whose films were all assigned earlier may also end with zero public films if
its members were held back under a different stratification. :func:`split_summary` reports ``n``,
``public``, ``heldback``, ``target`` and ``drift = public - target`` per stratum so the release
report can show it.

Persisting the registry is the caller's job: :func:`merge_registry` returns the registry to store
(previous rows verbatim, including withdrawn films, plus the newly drawn films).
"""

from __future__ import annotations

import hashlib
import json
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import polars as pl
import pyarrow as pa

SPLITS = ("public", "heldback")
UNKNOWN = "unknown"
#: Columns of the assignment frame returned by :func:`assign_splits`.
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


def public_target(n: int, fraction: float) -> int:
    """``max(1, round(fraction * n))`` with round-half-up on the decimal value of ``fraction``
    (so 0.15 * 10 = 1.5 rounds to 2, not to 1.4999… → 1 as binary floats would). 0 for n = 0."""
    if n <= 0:
        return 0
    exact = Decimal(str(fraction)) * n
    return min(n, max(1, int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))))


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


def assign_splits(
    films: pa.Table | pl.DataFrame,
    previous: pl.DataFrame | None,
    *,
    strata: tuple[str, ...] = ("decade", "age_suitability"),
    fraction: float = 0.2,
    seed: int,
) -> pl.DataFrame:
    """Assign every current film to ``public`` or ``heldback`` (see the module docstring).

    ``films``: ``imdb_id`` plus the attribute columns the strata need. ``previous``: the registry
    (``imdb_id, split, stratum, assigned_seed``), withdrawn films included; ``None`` on the first
    release. Returns one row per current film, sorted by ``imdb_id``, with columns
    ``imdb_id, stratum, split, assigned_seed, new``; ``stratum`` is the film's stratum under the
    *current* strata, ``split``/``assigned_seed`` are verbatim for films already registered.
    """
    if not 0.0 <= float(fraction) <= 1.0:
        raise SplitError("split_bad_fraction", f"fraction {fraction} not in [0, 1]")
    strata = tuple(strata)
    df = _to_polars(films)
    if "imdb_id" not in df.columns:
        raise SplitError("split_missing_imdb_id", "films table has no imdb_id column")
    rows = df.to_dicts()
    ids = [r["imdb_id"] for r in rows]
    if any(i is None or str(i) == "" for i in ids):
        raise SplitError("split_null_imdb_id", "films table has a null imdb_id")
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})[:5]
        raise SplitError("split_duplicate_imdb_id", f"duplicate imdb_id in films: {dup}")
    prev = _previous_map(_to_polars(previous))

    by_stratum: dict[str, list[str]] = {}
    stratum_of: dict[str, str] = {}
    for r in rows:
        key = stratum_key(r, strata)
        stratum_of[r["imdb_id"]] = key
        by_stratum.setdefault(key, []).append(r["imdb_id"])

    split_of: dict[str, str] = {}
    seed_of: dict[str, int | None] = {}
    is_new: dict[str, bool] = {}
    for key, members in by_stratum.items():
        target = public_target(len(members), fraction)
        old = [i for i in members if i in prev]
        fresh = sorted((i for i in members if i not in prev), key=lambda i: (_rank(seed, i), i))
        already_public = sum(1 for i in old if prev[i]["split"] == "public")
        open_slots = max(0, target - already_public)
        for i in old:
            split_of[i] = prev[i]["split"]
            s = prev[i].get("assigned_seed")
            seed_of[i] = None if s is None else int(s)
            is_new[i] = False
        for pos, i in enumerate(fresh):
            split_of[i] = "public" if pos < open_slots else "heldback"
            seed_of[i] = int(seed)
            is_new[i] = True

    out = sorted(ids)
    return pl.DataFrame(
        {
            "imdb_id": out,
            "stratum": [stratum_of[i] for i in out],
            "split": [split_of[i] for i in out],
            "assigned_seed": [seed_of[i] for i in out],
            "new": [is_new[i] for i in out],
        },
        schema=_ASSIGNMENT_SCHEMA,
    )


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


def split_summary(assignments: pl.DataFrame, *, fraction: float = 0.2) -> pl.DataFrame:
    """Per stratum: ``n``, ``public``, ``heldback``, ``target`` (= ``max(1, round(fraction * n))``)
    and ``drift`` (= ``public - target``; non-zero where frozen assignments diverge from the
    target). Pass the assignments of the *current* films (the output of :func:`assign_splits`)."""
    df = _to_polars(assignments)
    if df.height == 0:
        return pl.DataFrame(schema={"stratum": pl.String, "n": pl.Int64, "public": pl.Int64,
                                    "heldback": pl.Int64, "target": pl.Int64, "drift": pl.Int64})
    agg = (
        df.group_by("stratum")
        .agg(
            pl.len().cast(pl.Int64).alias("n"),
            (pl.col("split") == "public").sum().cast(pl.Int64).alias("public"),
            (pl.col("split") == "heldback").sum().cast(pl.Int64).alias("heldback"),
        )
        .sort("stratum")
    )
    targets = [public_target(n, fraction) for n in agg["n"].to_list()]
    return agg.with_columns(pl.Series("target", targets, dtype=pl.Int64)).with_columns(
        (pl.col("public") - pl.col("target")).alias("drift")
    )

