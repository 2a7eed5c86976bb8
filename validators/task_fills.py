"""Curator-supplied task values (``cinesub review fill``; docs/review.md "Filling a missing task value").

SPEC A10 keeps a task field only when every cohort film has it, so one film whose KIM page lacks a
key message used to drop ``keyMessage`` for the whole release. A curator can supply the missing
value (state table ``curated_values``, append-only, the latest per film and field in force); the
next build's curate stage fills the gap with it (:func:`apply_fills`) before the completeness
rule runs. A value the sources do give is never overwritten: the fill applies only where the
field is missing. A gap that stays open is recorded with a reason code (``task_gaps``).

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

#: task_gaps.reason codes
REASON_SOURCE_MISSING = "source_missing"          # the source has no value
REASON_EMPTIED = "emptied_by_curation"            # cleaning (SPEC A10) removed all of it
#: (validators.genres.REASON_NO_CORE = "genres_no_core_label": raw genres, none in the core space)

STATUS_FILLED = "filled"
STATUS_MISSING = "missing"

_AGE = re.compile(r"^\d{1,2}\+$")


class FillValueError(ValueError):
    """A curator value that the field cannot hold (the message says why)."""


def parse_value(field: str, text: str, core: Iterable[str] = ()) -> Any:
    """The stored value of ``field`` from a curator's text: the stripped text; for ``genres`` a
    list of core genre labels (comma-separated, each exactly one of ``core``, case-insensitive);
    for ``ageSuitabilityRating`` an age like ``13+``."""
    value = text.strip()
    if not value:
        raise FillValueError(f"the value for {field} is empty")
    if field == "genres":
        by_fold = {g.casefold(): g for g in core}
        labels, bad = [], []
        for part in value.split(","):
            part = " ".join(part.split())
            if not part:
                continue
            g = by_fold.get(part.casefold())
            if g is None:
                bad.append(part)
            elif g not in labels:
                labels.append(g)
        if bad:
            raise FillValueError(f"not core genres: {', '.join(bad)} (allowed: {', '.join(core)})")
        if not labels:
            raise FillValueError("the value for genres names no genre")
        order = list(core)
        return sorted(labels, key=order.index)
    if field == "ageSuitabilityRating" and not _AGE.match(value):
        raise FillValueError(f"ageSuitabilityRating must be an age like '13+', not {value!r}")
    return value


def present(value: Any) -> bool:
    """Whether a record's value counts as given (the completeness rule's test for plain fields)."""
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, (list, tuple, dict, set)):
        return len(value) > 0
    return True


def apply_fills(records: list[dict[str, Any]], fills: Mapping[tuple[str, str], Mapping[str, Any]],
                fields: Iterable[str], reasons: Mapping[tuple[str, str], str] | None = None,
                *, id_key: str = "id") -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Fill the missing task values of ``records`` from ``fills``.

    ``fills`` = ``{(imdb_id, field): {"fill_id", "value"}}`` (the curated value in force);
    ``reasons`` = ``{(imdb_id, field): reason}`` for gaps the caller can explain (default
    ``source_missing``). Returns the records (copies, filled) and one gap row per missing value:
    ``{imdb_id, field, status: filled|missing, reason, fill_id, value}``."""
    reasons = reasons or {}
    out, gaps = [], []
    fields = list(fields)
    for rec in records:
        rec = dict(rec)
        fid = rec.get(id_key)
        for f in fields:
            if present(rec.get(f)):
                continue
            why = reasons.get((fid, f), REASON_SOURCE_MISSING)
            fill = fills.get((fid, f))
            if fill is not None and present(fill.get("value")):
                rec[f] = fill["value"]
                gaps.append({"imdb_id": fid, "field": f, "status": STATUS_FILLED, "reason": why,
                             "fill_id": fill.get("fill_id"), "value": fill["value"]})
            else:
                gaps.append({"imdb_id": fid, "field": f, "status": STATUS_MISSING, "reason": why,
                             "fill_id": None, "value": None})
        out.append(rec)
    return out, gaps
