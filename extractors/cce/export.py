"""Reading CPRS renewal exports and NYPL cce-renewals TSVs (split out of ``extractors.cce.parse``,
which re-exports :func:`read_renewal_export`). Pure: reads only the file it is given."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from extractors.cce.normalize import FILM_CLASSES, normalize_reg_id, normalize_renewal_id, parse_cce_date
from extractors.cce.parse import ParseResult, RenewalRecord, Unparsed

#: Column aliases of the export reader: canonical name -> accepted header names.
EXPORT_COLUMNS: dict[str, tuple[str, ...]] = {
    "title": ("title", "titl"),
    "orig_reg_id": ("orig_reg_id", "oreg"),
    "orig_date": ("orig_date", "odat"),
    "renewal_id": ("renewal_id", "id"),
    "renewal_date": ("renewal_date", "dreg", "rdat"),
    "claimants": ("claimants",),
    "author": ("author", "auth"),
    "entry_id": ("entry_id",),
}


def read_renewal_export(source: str | Path, *, film_only: bool = False) -> ParseResult:
    """Read a CPRS renewal export (post-1978 ``RE`` numbers) or an NYPL cce-renewals TSV.

    Layout (the NYPL ``1978-from-db.tsv`` layout, which NYPL built from the Copyright Office
    database): tab-separated, UTF-8, one header row, one row per (original registration,
    renewal) pair, so an entry renewing several registrations has several rows sharing
    ``entry_id``. Required columns: ``titl`` (or ``title``), ``oreg`` (``orig_reg_id``), ``odat``
    (``orig_date``, ISO), ``id`` (``renewal_id``: ``RE9390``; CPRS zero-padded ``RE0000123456``
    and ``RE-123-456`` accepted), ``dreg`` (``renewal_date``, ISO; ``rdat`` in the NYPL volume
    files). Optional: ``claimants`` (``name|BASIS`` joined by ``||``), ``auth``, ``entry_id``;
    other columns are ignored. ``film_only`` keeps motion-picture classes (L, LP, LU, M, MP,
    MU); other rows then come back as ``Unparsed('not_motion_picture')``.
    ``source``: a path, or the text itself when it contains a newline.
    """
    text = source if isinstance(source, str) and "\n" in source else Path(source).read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = reader.fieldnames or []
    col = {k: next((a for a in aliases if a in header), None) for k, aliases in EXPORT_COLUMNS.items()}
    missing = [k for k in ("title", "orig_reg_id", "orig_date", "renewal_id", "renewal_date") if col[k] is None]
    if missing:
        raise ValueError(f"renewal export lacks columns {missing}; header is {header}")
    result = ParseResult()
    for row in reader:
        get = lambda k: (row.get(col[k]) or "").strip() if col[k] else ""  # noqa: E731
        raw = "\t".join(row.get(h) or "" for h in header)
        empty = [k for k in ("orig_reg_id", "renewal_id") if not get(k)]
        if empty:
            result.unparsed.append(Unparsed(raw, "missing_field", f"empty {empty}"))
            continue
        reg = normalize_reg_id(get("orig_reg_id"), classes=None)
        ren = normalize_renewal_id(get("renewal_id"))
        if film_only and (reg.best is None or reg.best.prefix not in FILM_CLASSES):
            result.unparsed.append(Unparsed(raw, "not_motion_picture", get("orig_reg_id")))
            continue
        odate, rdate = parse_cce_date(get("orig_date")), parse_cce_date(get("renewal_date"))
        claims = [c.split("|") for c in get("claimants").split("||") if c.strip()]
        claimant = "; ".join(c[0].strip() for c in claims) or None
        basis = "; ".join(dict.fromkeys(c[1].strip() for c in claims if len(c) > 1)) or None
        reasons = ([f"orig_reg:{r}" for r in reg.reasons] + [f"renewal:{r}" for r in ren.reasons]
                   + [f"orig_date:{r}" for r in odate.reasons] + [f"renewal_date:{r}" for r in rdate.reasons])
        rec = RenewalRecord(
            title=get("title").split("|")[0].strip(), orig_reg_id=reg.value, orig_date=odate.iso,
            renewal_id=ren.value, renewal_date=rdate.iso, claimant=claimant, basis=basis, layout="cprs",
            raw=raw, orig_reg_raw=get("orig_reg_id"), renewal_raw=get("renewal_id"),
            orig_year=int(odate.iso[:4]) if odate.iso else None, note=get("entry_id"),
            reasons=tuple(dict.fromkeys(reasons)), orig_reg_candidates=reg.candidates,
            renewal_candidates=ren.candidates)
        if reg.value is None or ren.value is None:
            result.unparsed.append(Unparsed(raw, "orig_reg_uncertain" if reg.value is None else "renewal_id_uncertain",
                                            "; ".join(reasons), {"record": rec}))
        else:
            result.records.append(rec)
    return result
