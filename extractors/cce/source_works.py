"""The source-work table (SPEC B2: AFI catalog "based on"): which registered films are based on a
novel, story or play, and whether that source work's own copyright was renewed.

A tab-separated file with a header row (UTF-8, BOM tolerated), one row per (film, source work)::

    film_reg_id  film_reg_date  source_title  renewed  [renewal_id]

``film_reg_date`` is ISO (``YYYY-MM-DD``) or empty; ``renewed`` is ``yes``/``true``/``renewed``,
``no``/``false``/``not_renewed`` or ``unknown``/empty (None: the rule then asks for review, it never
gives a public-domain answer). The same reader serves ``cinesub copyright classify --source-works``
and the ``copyright-status`` stage of ``build-hollywood`` (``hollywood.source_works_path``; the
sample CCE world's ``afi_based_on.tsv``).

Policy: a malformed file is an error, never partly read — a row silently dropped could turn a
film whose source was renewed into "likely public domain". :class:`SourceWorksError` carries a
reason code (:data:`REASONS`) and the file, line and column in its message.
:func:`parse_source_works` is pure (text in, rows out); :func:`read_source_works` reads the file.
"""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

from validators.copyright_status import SourceWork

COLUMNS: tuple[str, ...] = ("film_reg_id", "film_reg_date", "source_title", "renewed")
#: ``renewed`` cell (lower-cased) → SourceWork.renewed
RENEWED_FLAGS: dict[str, bool | None] = {"yes": True, "true": True, "renewed": True, "no": False, "false": False,
                                         "not_renewed": False, "unknown": None, "": None}
REASONS: dict[str, str] = {
    "source_works:no_file": "the file does not exist",
    "source_works:unreadable": "the file cannot be read as UTF-8 text",
    "source_works:missing_column": "a required column is missing from the header (tab-separated expected)",
    "source_works:empty_reg_id": "a row has no film_reg_id",
    "source_works:empty_source_title": "a row has no source_title",
    "source_works:bad_date": "film_reg_date is not an ISO date (YYYY-MM-DD)",
    "source_works:bad_renewed": "renewed is not yes/no/unknown",
    "source_works:bad_row": "a row has more cells than the header",
}


class SourceWorksError(ValueError):
    """A malformed source-work file: ``reason_code`` (one of :data:`REASONS`) and a message that
    names the file, line and column."""

    def __init__(self, reason_code: str, message: str):
        super().__init__(message)
        self.reason_code = reason_code


def parse_source_works(text: str, where: str = "source works") -> list[SourceWork]:
    """The rows of a source-work TSV's text (see the module docstring); :class:`SourceWorksError`
    on the first malformed row (``where`` names the file in the message)."""
    reader = csv.DictReader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise SourceWorksError("source_works:missing_column",
                               f"{where}: missing column(s) {', '.join(missing)} (header: {header or 'empty'}; "
                               "tab-separated expected)")
    out = []
    for line, raw in enumerate(reader, start=2):
        if None in raw:
            raise SourceWorksError("source_works:bad_row", f"{where}:{line}: more cells than the header")
        row = {(k or "").strip(): (v or "").strip() for k, v in raw.items()}
        if not any(row.values()):
            continue  # a blank line is no row
        if not row["film_reg_id"]:
            raise SourceWorksError("source_works:empty_reg_id", f"{where}:{line}: empty film_reg_id")
        if not row["source_title"]:
            raise SourceWorksError("source_works:empty_source_title", f"{where}:{line}: empty source_title")
        reg_date = None
        if row["film_reg_date"]:
            try:
                reg_date = date.fromisoformat(row["film_reg_date"]).isoformat()
            except ValueError:
                raise SourceWorksError("source_works:bad_date", f"{where}:{line} film_reg_date: "
                                       f"{row['film_reg_date']!r} is not an ISO date (YYYY-MM-DD)") from None
        flag = row["renewed"].lower()
        if flag not in RENEWED_FLAGS:
            raise SourceWorksError("source_works:bad_renewed",
                                   f"{where}:{line}: renewed {row['renewed']!r} is not yes/no/unknown")
        out.append(SourceWork(row["film_reg_id"], reg_date, row["source_title"], RENEWED_FLAGS[flag],
                              row.get("renewal_id") or None))
    return out


def read_source_works(path: Path | str) -> list[SourceWork]:
    """:func:`parse_source_works` of the file at ``path`` (:class:`SourceWorksError` when it is
    missing, unreadable or malformed)."""
    p = Path(path)
    if not p.is_file():
        raise SourceWorksError("source_works:no_file", f"{p}: no such file")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise SourceWorksError("source_works:unreadable", f"{p}: cannot read ({e})") from None
    return parse_source_works(text, str(p))
