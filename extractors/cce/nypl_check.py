"""The printed-entry parser read against NYPL's independent parse (``NYPL/cce-renewals`` TSVs).

Each NYPL row is one (original registration, renewal) pair with the entry as printed in
``full_text``; the fields compared are ``oreg`` -> ``orig_reg_id``, ``odat`` -> ``orig_date``,
``id`` -> ``renewal_id``, ``rdat`` -> ``renewal_date``, ``claimants`` (``name|BASIS`` joined by
``||``) -> ``claimant`` / ``basis`` (``"; "``-joined), ``title`` starting with the parsed title.

A row is **fully read** when its entry's status is ``read`` and a record of that entry agrees on
every field; a **silent error** is a row whose entry claims ``read`` while a field disagrees (or
no record has its registration); every other row is a **miss**, which must carry a reason code.
Run ``python -m extractors.cce.nypl_check FILE.tsv ...`` for the figures as JSON.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path
from typing import Any, Iterable

from extractors.cce.entries import entry_status
from extractors.cce.parse import Unparsed, parse_renewal_entry


def _reg(s: str | None) -> str:
    return re.sub(r"[\s-]", "", s or "").upper()


def nypl_rows(paths: Iterable[str | Path]) -> list[dict[str, str]]:
    """Rows with a ``full_text`` of NYPL renewal TSVs (tab-separated, one header row)."""
    out: list[dict[str, str]] = []
    for p in paths:
        text = Path(p).read_text(encoding="utf-8")
        for row in csv.DictReader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE):
            if (row.get("full_text") or "").strip():
                out.append({k: (v or "").strip() for k, v in row.items() if k})
    return out


def _disagreements(row: dict[str, str], rec: Any) -> list[str]:
    claims = [c.split("|") for c in row.get("claimants", "").split("||") if c.strip()]
    want_claimant = "; ".join(c[0].strip() for c in claims) or None
    want_basis = "; ".join(dict.fromkeys(c[1].strip() for c in claims if len(c) > 1)) or None
    bad = []
    if _reg(rec.orig_reg_id) != _reg(row.get("oreg")):
        bad.append("oreg")
    for field, col in (("orig_date", "odat"), ("renewal_id", "id"), ("renewal_date", "rdat")):
        if (getattr(rec, field) or "") != row.get(col, ""):
            bad.append(col)
    if claims and (rec.claimant, rec.basis) != (want_claimant, want_basis):
        bad.append("claimants")
    title = row.get("title", "")
    if title and not (rec.title and title.lower().startswith(rec.title.lower())):
        bad.append("title")
    return bad


def measure(rows: list[dict[str, str]], *, volume_year: int | None = None) -> dict[str, Any]:
    """Fully read / silent-error / miss figures of the parser on NYPL rows (see the module doc)."""
    cache: dict[str, tuple[str, list[str], list[Any]]] = {}
    fully, silent, misses = 0, [], []
    for row in rows:
        text = row["full_text"]
        if text not in cache:
            got = parse_renewal_entry(text, volume_year=volume_year)
            if isinstance(got, Unparsed):
                cache[text] = ("unread", [got.reason], [])
            else:
                status, reasons = entry_status(got)
                cache[text] = (status, reasons, got)
        status, reasons, recs = cache[text]
        mine = [r for r in recs if _reg(r.orig_reg_id) == _reg(row.get("oreg"))
                and (r.renewal_id or "") == row.get("id")] or [r for r in recs if _reg(r.orig_reg_id) == _reg(row.get("oreg"))]
        bad = _disagreements(row, mine[0]) if mine else ["no_record_for_oreg"]
        if status == "read" and not bad:
            fully += 1
        elif status == "read":
            silent.append({"oreg": row.get("oreg"), "id": row.get("id"), "fields": bad, "text": text})
        else:
            misses.append({"oreg": row.get("oreg"), "id": row.get("id"), "status": status,
                           "reasons": reasons, "fields": bad, "text": text})
    n = len(rows)
    return {"rows": n, "entries": len(cache), "fully_read": fully, "fully_read_fraction": fully / n if n else 0.0,
            "silent_errors": silent, "misses": misses,
            "misses_without_reason": [m for m in misses if not m["reasons"]]}


if __name__ == "__main__":  # python -m extractors.cce.nypl_check FILE.tsv ...
    res = measure(nypl_rows(sys.argv[1:]))
    print(json.dumps({k: (len(v) if isinstance(v, list) else v) for k, v in res.items()}, indent=1))
    for m in res["silent_errors"] + res["misses"]:
        print(json.dumps(m, ensure_ascii=False))
