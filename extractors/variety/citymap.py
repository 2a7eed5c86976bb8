"""City names as printed in Variety → normalised city and country (SPEC B1 city map).

The yearly ranking counts only US cities, so every extracted city goes through a map with the
columns ``original,normalized,lat,lon,state,country`` (the layout of the reference project's
``citymap.csv``). The project ships a small map of US and Canadian cities written for it
(``extractors/variety/data/citymap.csv``: names, state and country only; lat/lon left empty);
a fuller map is passed by path.

:func:`normalize_city` is tolerant of print and OCR variants: case, punctuation and spacing are
folded ("ST. LOUIS", "St Louis"), a trailing date ("Chicago, Oct. 28.") or "(Drawing Pop. …)" is
cut, and a still-unknown name is matched with rapidfuzz against the known names at a high
threshold (:data:`FUZZY_MIN`, with a margin over the runner-up) — "Chicagb" → Chicago, while
"Dallas" never becomes "Dayton". Unknown names give ``(None, None, 'city_unknown')`` and go to
review. Reasons: ``exact``, ``folded``, ``fuzzy``, ``city_unknown``, ``empty``.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rapidfuzz import fuzz, process

DEFAULT_CITYMAP = Path(__file__).resolve().parent / "data" / "citymap.csv"
#: fuzzy match threshold (rapidfuzz ratio on folded names) and the margin over the runner-up
FUZZY_MIN = 85.0
FUZZY_MARGIN = 4.0
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"


@dataclass(frozen=True)
class City:
    original: str
    normalized: str
    state: str | None
    country: str | None
    lat: float | None = None
    lon: float | None = None


def _num(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def fold(name: str) -> str:
    """Lower case, punctuation to spaces, whitespace collapsed: "St. Louis" → "st louis"."""
    return " ".join(re.sub(r"[^0-9a-z]+", " ", name.lower()).split())


def load_citymap(path: str | Path | None = None) -> dict[str, City]:
    """``{folded original: City}`` from a CSV with ``original,normalized,lat,lon,state,country``.

    Raises ``ValueError`` when a required column (original, normalized, country) is missing."""
    path = Path(path) if path is not None else DEFAULT_CITYMAP
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = {"original", "normalized", "country"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}: missing columns {sorted(missing)}")
        out: dict[str, City] = {}
        for row in reader:
            original = (row.get("original") or "").strip()
            if not original:
                continue
            city = City(original, (row.get("normalized") or "").strip(), (row.get("state") or "").strip() or None,
                        (row.get("country") or "").strip() or None, _num(row.get("lat")), _num(row.get("lon")))
            out.setdefault(fold(original), city)
            out.setdefault(fold(city.normalized), city) if city.normalized else None
    return out


@lru_cache(maxsize=8)
def _cached(path: str | None) -> dict[str, City]:
    return load_citymap(path)


def _strip_dateline(raw: str) -> str:
    text = re.sub(r"\(.*?\)", " ", raw)  # (Drawing Pop. 1,350,000)
    text = re.sub(rf"[,.]?\s*{_MONTHS}\.?\s*\d{{1,2}}\b.*$", "", text, flags=re.I)
    return text.strip(" .,;:-")


def lookup_city(raw: str | None, citymap: dict[str, City] | str | Path | None = None) -> tuple[City | None, str]:
    """The :class:`City` for a printed name, or None, with the reason code."""
    if not raw or not raw.strip():
        return None, "empty"
    table = citymap if isinstance(citymap, dict) else _cached(str(citymap) if citymap else None)
    key = fold(raw)
    if key in table:
        return table[key], "exact"
    key2 = fold(_strip_dateline(raw))
    if key2 in table:
        return table[key2], "folded"
    if len(key2) >= 4:
        hits = process.extract(key2, list(table), scorer=fuzz.ratio, limit=5)
        if hits and hits[0][1] >= FUZZY_MIN:
            best = table[hits[0][0]]
            rival = next((h for h in hits[1:] if table[h[0]].normalized != best.normalized), None)
            if rival is None or hits[0][1] - rival[1] >= FUZZY_MARGIN:
                return best, "fuzzy"
    return None, "city_unknown"


def normalize_city(raw: str | None, citymap: dict[str, City] | str | Path | None = None
                   ) -> tuple[str | None, str | None, str]:
    """``(normalized, country, reason)`` for a printed city; unknown → ``(None, None, 'city_unknown')``."""
    city, reason = lookup_city(raw, citymap)
    if city is None:
        return None, None, reason
    return city.normalized, city.country, reason
