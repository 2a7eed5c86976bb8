"""Genres in the paper's core genre space (seed 000: Appendix B.3 "Allowed genre labels", Table 13).

Seed 000 predicts genres in a normalised 22-label space and keeps the raw genres beside it
(149 raw labels, 4.08 raw genres per film). :func:`normalize_genres` maps the raw genre strings of
one source (``imdb``, ``csm``, ``kim``) with the versioned mapping of
``validators/data/genre_map_v1.json``:

* a listed raw string maps to one or more core genres (status ``mapped``);
* a raw string listed with an empty list is known and outside the core space (``outside_core``:
  IMDb's ``Short``, ``News``, ``Reality-TV`` …), recorded, never turned into a core label;
* a raw string not listed is ``unmapped``: it is queued for curator review (state table
  ``genre_reviews``, shown by ``cinesub review list``), never guessed.

The raw strings are never modified (annotations beside the data). Keys match after Unicode case
folding and whitespace collapsing. Pure: besides reading the mapping file, no I/O.
Documented in ``docs/genres.md``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

MAP_PATH = Path(__file__).resolve().parent / "data" / "genre_map_v1.json"

SOURCES: tuple[str, ...] = ("imdb", "csm", "kim")

#: statuses of one raw genre
STATUS_MAPPED = "mapped"
STATUS_OUTSIDE = "outside_core"
STATUS_UNMAPPED = "unmapped"

#: reason code of a film whose raw genres give no core genre at all (task_gaps.reason)
REASON_NO_CORE = "genres_no_core_label"


class GenreMapError(ValueError):
    """The mapping file is malformed (a target outside the core space, an unknown source…)."""


def _key(raw: str) -> str:
    return " ".join(raw.split()).casefold()


@dataclass(frozen=True)
class GenreMap:
    version: str
    sha256: str
    core: tuple[str, ...]
    table: dict[str, dict[str, tuple[str, ...]]]  # source -> folded raw -> core genres

    def lookup(self, source: str, raw: str) -> tuple[str, ...] | None:
        """The core genres of ``raw`` (empty: outside the core space), or None when unmapped."""
        if source not in self.table:
            raise GenreMapError(f"unknown genre source {source!r} (known: {', '.join(self.table)})")
        return self.table[source].get(_key(raw))

    def info(self) -> dict[str, Any]:
        """What a release manifest records about the mapping."""
        return {"version": self.version, "sha256": self.sha256, "core_labels": len(self.core),
                "file": MAP_PATH.name}


def load_map(path: Path | str = MAP_PATH) -> GenreMap:
    text = Path(path).read_bytes()
    data = json.loads(text)
    core = tuple(data["core"])
    if len(set(core)) != len(core):
        raise GenreMapError("duplicate core genre labels")
    table: dict[str, dict[str, tuple[str, ...]]] = {}
    for source, entries in data["sources"].items():
        if source not in SOURCES:
            raise GenreMapError(f"unknown genre source {source!r} in {path}")
        t: dict[str, tuple[str, ...]] = {}
        for raw, targets in entries.items():
            bad = [g for g in targets if g not in core]
            if bad:
                raise GenreMapError(f"{source} {raw!r} maps to {bad}, outside the core space")
            k = _key(raw)
            if k in t and t[k] != tuple(targets):
                raise GenreMapError(f"{source} {raw!r} is listed twice with different targets")
            t[k] = tuple(targets)
        table[source] = t
    return GenreMap(version=str(data["version"]), sha256=hashlib.sha256(text).hexdigest(), core=core, table=table)


@lru_cache(maxsize=1)
def default_map() -> GenreMap:
    return load_map(MAP_PATH)


def mapping_version() -> str:
    return default_map().version


def core_genres() -> tuple[str, ...]:
    return default_map().core


@dataclass
class RawGenre:
    source: str
    position: int
    raw: str
    core: tuple[str, ...]
    status: str


@dataclass
class GenreResult:
    """One film's genres: the core labels (core-space order) and every raw genre beside them."""

    core: list[str]
    raw: list[RawGenre] = field(default_factory=list)
    version: str = ""

    @property
    def unmapped(self) -> list[RawGenre]:
        return [r for r in self.raw if r.status == STATUS_UNMAPPED]


def normalize_genres(raw_by_source: dict[str, Iterable[str] | None], gmap: GenreMap | None = None) -> GenreResult:
    """Map the raw genres of each source into the core space (see the module docstring).

    ``raw_by_source`` = ``{"imdb": [...], "csm": [...]}``; blank strings are ignored, a repeated
    raw string of one source is recorded once. The core labels come out in core-space order."""
    gmap = gmap or default_map()
    rows: list[RawGenre] = []
    found: set[str] = set()
    for source in sorted(raw_by_source):
        seen: set[str] = set()
        for raw in raw_by_source[source] or []:
            if not isinstance(raw, str) or not raw.strip() or _key(raw) in seen:
                continue
            seen.add(_key(raw))
            targets = gmap.lookup(source, raw)
            if targets is None:
                status, targets = STATUS_UNMAPPED, ()
            elif targets:
                status = STATUS_MAPPED
            else:
                status = STATUS_OUTSIDE
            found.update(targets)
            rows.append(RawGenre(source, len(seen) - 1, raw, tuple(targets), status))
    return GenreResult(core=[g for g in gmap.core if g in found], raw=rows, version=gmap.version)
