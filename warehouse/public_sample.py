"""The release's public sample as seed 002 releases it (SPEC C; issue 18 point 5d).

Seed 002 (data release): "a stratified public sample covering all [...] countries and [...]
categories is available immediately for development, and the remaining items are held back as a
hidden test set". Its other rule, ``max(1, round(0.2·n))`` per country–category cell, picks the
*human-evaluation overlap subset* (Appendix, "Overlap-subset selection"); this project runs no
human evaluation, so that rule has no place here and is not used for the public sample.

**Strata.** A film's *cell* is the combination of the attributes named in
``Settings.release.split_strata`` (``"decade=1990s|age_suitability=13+"``, see
:func:`warehouse.splits.stratum_key`). Cells are put in their *natural order*: attribute by
attribute, values compared with digit runs as numbers (``6+`` < ``10+`` < ``13+``, ``1970s`` <
``1980s``), ``unknown`` last. Too-small cells are then merged, deterministically:

  while more than one stratum is left and some stratum has fewer than ``min_size`` films: take
  the smallest such stratum (ties: the first in the order) and merge it with one of its two
  neighbours in the order — the one whose adjacent cell shares more leading attributes with it
  (same decade before another decade), then the smaller one, then the previous one.

A stratum is therefore always a run of consecutive cells; its name is the cell key when it is one
cell, else ``"<first cell> .. <last cell>"`` (the manifest lists every cell of it): small cells
merge first with cells that share the leading attributes (same decade, next age), and only then
across them (the next decade). ``min_size`` is
``release.public_min_stratum`` or, by default, ``max(2, ceil(1 / public_share))`` — the smallest
stratum in which the share rounds to at least one film.

**Public count.** Per stratum of ``n`` films: ``min(n - 1, max(1, round_half_up(share · n)))`` —
every stratum has a public film (covered) and keeps a held-back one. The only exception is a
release of one film (one stratum of one film, nothing to merge with): that film is public and
the manifest shows ``heldback: 0`` for it.

**Draw.** Films are ranked by ``sha256(f"{seed}:{imdb_id}")`` within their stratum; the first
ones are public. The seed is ``release.split_seed`` (part of the release config and its hash), so
the sample depends only on the set of films, the strata, the share and the seed — not on row order
nor Python's hash seed.

**Frozen.** A film keeps its split forever once assigned (``previous`` is the persisted registry,
withdrawn films included): only films never assigned before are drawn, into the open public slots
``max(0, target - already public)`` of their current stratum. When nothing changes a rebuild
therefore gives the same sample; when films come and go a stratum's public count can drift from
its target (nothing ever moves back) — :func:`stratum_summary` reports ``drift`` per stratum and
the manifest carries it.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import polars as pl
import pyarrow as pa

from warehouse.splits import (
    _ASSIGNMENT_SCHEMA,
    UNKNOWN,
    SplitError,
    _previous_map,
    _rank,
    _to_polars,
    stratum_key,
)

#: Columns of :func:`stratum_summary`.
SUMMARY_COLUMNS = ("stratum", "cells", "n", "public", "heldback", "target", "drift")
MERGE_RULE = ("cells in natural order (attribute by attribute, numbers by value, unknown last); while a "
              "stratum has fewer than min_size films, the smallest (first on ties) merges with the "
              "neighbour sharing more leading attributes, then the smaller, then the previous")
_SEP = " .. "


def stratum_min_size(share: float, override: int | None = None) -> int:
    """``override`` when given (≥ 1), else ``max(2, ceil(1 / share))``."""
    if override is not None:
        if int(override) < 1:
            raise SplitError("public_bad_min_stratum", f"min stratum size {override} < 1")
        return int(override)
    share = _check_share(share)
    return max(2, math.ceil(Decimal(1) / Decimal(str(share))))


def _check_share(share: float) -> float:
    if not 0.0 < float(share) < 1.0:
        raise SplitError("public_bad_share", f"public share {share} not in (0, 1)")
    return float(share)


def public_count(n: int, share: float) -> int:
    """Public films of a stratum of ``n``: ``min(n - 1, max(1, round_half_up(share · n)))``;
    1 for ``n == 1`` (a one-film release), 0 for ``n == 0``."""
    if n <= 0:
        return 0
    if n == 1:
        return 1
    exact = Decimal(str(share)) * n
    return min(n - 1, max(1, int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))))


def _natural(value: str) -> tuple:
    if value == UNKNOWN:
        return (1,)
    parts = re.split(r"(\d+)", value)
    return (0, tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p != ""))


def cell_order(cell: str) -> tuple:
    """Sort key of a cell key ``"a=v|b=w"``: values in natural order, attribute by attribute."""
    if cell == "all":
        return ()
    return tuple(_natural(part.split("=", 1)[1] if "=" in part else part) for part in cell.split("|"))


def _shared(a: str, b: str) -> int:
    """How many leading attributes two cell keys share."""
    k = 0
    for x, y in zip(a.split("|"), b.split("|")):
        if x != y:
            break
        k += 1
    return k


def merge_cells(sizes: dict[str, int], min_size: int) -> dict[str, list[str]]:
    """Strata from cell sizes (see the module docstring): {stratum name: [cells, in order]}."""
    groups: list[list[str]] = [[c] for c in sorted(sizes, key=lambda c: (cell_order(c), c))]
    counts = [sizes[g[0]] for g in groups]
    while len(groups) > 1:
        small = [i for i, k in enumerate(counts) if k < min_size]
        if not small:
            break
        i = min(small, key=lambda j: (counts[j], j))
        if i == 0:
            j = 1
        elif i == len(groups) - 1:
            j = i - 1
        else:  # the neighbour sharing more leading attributes, then the smaller, then the previous
            before = (-_shared(groups[i - 1][-1], groups[i][0]), counts[i - 1], 0)
            after = (-_shared(groups[i][-1], groups[i + 1][0]), counts[i + 1], 1)
            j = i - 1 if before <= after else i + 1
        lo, hi = min(i, j), max(i, j)
        groups[lo:hi + 1] = [groups[lo] + groups[hi]]
        counts[lo:hi + 1] = [counts[lo] + counts[hi]]
    return {stratum_name(g): g for g in groups}


def stratum_name(cells: list[str]) -> str:
    return cells[0] if len(cells) == 1 else f"{cells[0]}{_SEP}{cells[-1]}"


def select_public(
    films: pa.Table | pl.DataFrame,
    previous: pl.DataFrame | None,
    *,
    strata: tuple[str, ...] = ("decade", "age_suitability"),
    share: float = 0.25,
    seed: int,
    min_stratum_size: int | None = None,
) -> pl.DataFrame:
    """Assign every current film to ``public`` or ``heldback`` (see the module docstring).

    ``films``: ``imdb_id`` plus the attribute columns the strata need. ``previous``: the registry
    (``imdb_id, split, stratum, assigned_seed``), withdrawn films included; ``None`` on the first
    release. Returns one row per current film, sorted by ``imdb_id``: ``imdb_id, stratum, split,
    assigned_seed, new`` (``stratum`` = its stratum now; split/seed verbatim for registered films).
    """
    share = _check_share(share)
    min_size = stratum_min_size(share, min_stratum_size)
    strata = tuple(strata)
    df = _to_polars(films)
    if "imdb_id" not in df.columns:
        raise SplitError("split_missing_imdb_id", "films table has no imdb_id column")
    rows = df.to_dicts()
    ids = [r["imdb_id"] for r in rows]
    if any(i is None or str(i) == "" for i in ids):
        raise SplitError("split_null_imdb_id", "films table has a null imdb_id")
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dup = sorted({i for i in ids if i in seen or seen.add(i)})[:5]
        raise SplitError("split_duplicate_imdb_id", f"duplicate imdb_id in films: {dup}")
    prev = _previous_map(_to_polars(previous))

    cell_of = {r["imdb_id"]: stratum_key(r, strata) for r in rows}
    sizes: dict[str, int] = {}
    for c in cell_of.values():
        sizes[c] = sizes.get(c, 0) + 1
    stratum_of_cell = {c: name for name, cells in merge_cells(sizes, min_size).items() for c in cells}
    members: dict[str, list[str]] = {}
    for i in ids:
        members.setdefault(stratum_of_cell[cell_of[i]], []).append(i)

    split_of: dict[str, str] = {}
    seed_of: dict[str, int | None] = {}
    is_new: dict[str, bool] = {}
    for name, group in members.items():
        target = public_count(len(group), share)
        old = [i for i in group if i in prev]
        fresh = sorted((i for i in group if i not in prev), key=lambda i: (_rank(seed, i), i))
        open_slots = max(0, target - sum(1 for i in old if prev[i]["split"] == "public"))
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
        {"imdb_id": out, "stratum": [stratum_of_cell[cell_of[i]] for i in out],
         "split": [split_of[i] for i in out], "assigned_seed": [seed_of[i] for i in out],
         "new": [is_new[i] for i in out]},
        schema=_ASSIGNMENT_SCHEMA,
    )


def _cells_of(name: str, cells_by_stratum: dict[str, list[str]] | None) -> list[str]:
    if cells_by_stratum and name in cells_by_stratum:
        return list(cells_by_stratum[name])
    return name.split(_SEP) if _SEP in name else [name]


def stratum_summary(assignments: pl.DataFrame, *, share: float,
                    cells: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    """Per stratum, in the strata's order: ``stratum, cells, n, public, heldback, target, drift``
    (``target`` = :func:`public_count`, ``drift`` = ``public - target``). ``cells`` maps a merged
    stratum to its cells (else the first and last cell named in it)."""
    df = _to_polars(assignments)
    out: dict[str, dict[str, Any]] = {}
    for name, split in zip(df["stratum"].to_list(), df["split"].to_list()):
        row = out.setdefault(name, {"stratum": name, "cells": _cells_of(name, cells), "n": 0,
                                    "public": 0, "heldback": 0})
        row["n"] += 1
        row[split if split in ("public", "heldback") else "heldback"] += 1
    rows = sorted(out.values(), key=lambda r: (cell_order(r["cells"][0]), r["stratum"]))
    for r in rows:
        r["target"] = public_count(r["n"], share)
        r["drift"] = r["public"] - r["target"]
    return rows


def strata_cells(films: pa.Table | pl.DataFrame, strata: tuple[str, ...], share: float,
                 min_stratum_size: int | None = None) -> dict[str, list[str]]:
    """{stratum: [cells]} for ``films`` (what :func:`select_public` stratifies by)."""
    df = _to_polars(films)
    sizes: dict[str, int] = {}
    for r in df.to_dicts():
        c = stratum_key(r, tuple(strata))
        sizes[c] = sizes.get(c, 0) + 1
    return merge_cells(sizes, stratum_min_size(share, min_stratum_size))


def manifest_section(assignments: pl.DataFrame, *, strata: tuple[str, ...], share: float, seed: int,
                     min_size: int, cells: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The manifest's ``splits``: the strata definition, the share, the seed, totals and the
    counts per stratum (public / held back)."""
    per = stratum_summary(assignments, share=share, cells=cells)
    df = _to_polars(assignments)
    return {
        "strata": list(strata),
        "public_share": share,
        "min_stratum_size": min_size,
        "merge_rule": MERGE_RULE,
        "seed": seed,
        "public": int(df.filter(pl.col("split") == "public").height),
        "heldback": int(df.filter(pl.col("split") == "heldback").height),
        "per_stratum": per,
    }
