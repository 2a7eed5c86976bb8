"""``cinesub copyright``: US copyright status of registered films (SPEC B2).

``classify --registrations R.tsv --renewals N.tsv --as-of DATE [--json]`` matches registrations to
renewals (number + date, then fuzzy title review; ``validators.copyright_match``) and applies the
status rules (``validators.copyright_status``).

Inputs are tab-separated with a header row and ISO dates (``YYYY-MM-DD``):

* ``R.tsv``: ``title, reg_id, reg_date``
* ``N.tsv``: ``title, orig_reg_id, orig_date, renewal_id, renewal_date``
* optional ``--decisions D.tsv``: ``reg_id, reg_date, renewal_id, decision, by`` (curator
  decisions; ``decision`` is ``renewed`` or ``not_renewed``; empty ``renewal_id`` allowed)
* optional ``--source-works S.tsv``: ``film_reg_id, film_reg_date, source_title, renewed``
  (``renewed``: ``yes``/``no``/``unknown``) plus an optional ``renewal_id``; read by
  :func:`extractors.cce.source_works.read_source_works`, shared with ``build-hollywood``

Output with ``--json``: a JSON list of ``{reg_id, reg_date, title, status, reason}``, status one
of ``public_domain``, ``likely_public_domain``, ``protected``, ``needs_review``. Exit 2 with a
message on stderr for a missing file, a missing column, a bad date or a bad ``--as-of``.
"""

from __future__ import annotations

import csv
import json
from datetime import date
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

copyright_app = typer.Typer(help="Copyright status of registered films (SPEC B2): classify.",
                            no_args_is_help=True)
err = Console(stderr=True, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add the ``copyright`` command group to the main CLI."""
    app.add_typer(copyright_app, name="copyright")


class InputError(ValueError):
    """A bad input file: the message says which file, row and column."""


def _iso(value: str, where: str, *, required: bool = True) -> str | None:
    value = (value or "").strip()
    if not value:
        if required:
            raise InputError(f"{where}: empty date")
        return None
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise InputError(f"{where}: {value!r} is not an ISO date (YYYY-MM-DD)") from None


def read_tsv(path: Path, required: tuple[str, ...]) -> list[dict[str, str]]:
    """Rows of a tab-separated file with a header; :class:`InputError` when unreadable."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read ({e})") from None
    reader = csv.DictReader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)} (header: {header or 'empty'}; "
                         "tab-separated expected)")
    return [{(k or "").strip(): (v or "").strip() for k, v in row.items()} for row in reader]


def load_inputs(registrations: Path, renewals: Path, decisions: Path | None = None,
                source_works: Path | None = None) -> tuple[list, list, list, list]:
    """Parse the four TSVs into the validator dataclasses (:class:`InputError` on bad input)."""
    from validators.copyright_match import CuratorDecision, Registration, Renewal

    regs = []
    for i, row in enumerate(read_tsv(registrations, ("title", "reg_id", "reg_date")), start=2):
        if not row["reg_id"]:
            raise InputError(f"{registrations}:{i}: empty reg_id")
        regs.append(Registration(row["title"], row["reg_id"], _iso(row["reg_date"], f"{registrations}:{i} reg_date")))
    rens = []
    for i, row in enumerate(read_tsv(renewals, ("title", "orig_reg_id", "orig_date", "renewal_id", "renewal_date")),
                            start=2):
        if not row["orig_reg_id"] or not row["renewal_id"]:
            raise InputError(f"{renewals}:{i}: empty orig_reg_id or renewal_id")
        rens.append(Renewal(row["title"], row["orig_reg_id"], _iso(row["orig_date"], f"{renewals}:{i} orig_date"),
                            row["renewal_id"], _iso(row["renewal_date"], f"{renewals}:{i} renewal_date",
                                                    required=False)))
    decs = []
    if decisions is not None:
        for i, row in enumerate(read_tsv(decisions, ("reg_id", "reg_date", "renewal_id", "decision", "by")), start=2):
            if row["decision"] not in ("renewed", "not_renewed"):
                raise InputError(f"{decisions}:{i}: decision {row['decision']!r} is not renewed/not_renewed")
            decs.append(CuratorDecision(row["reg_id"], _iso(row["reg_date"], f"{decisions}:{i} reg_date") or "",
                                        row["renewal_id"] or None, row["decision"], row["by"]))
    srcs = []
    if source_works is not None:
        from extractors.cce.source_works import SourceWorksError, read_source_works

        try:
            srcs = read_source_works(source_works)  # the reader build-hollywood uses too
        except SourceWorksError as e:
            raise InputError(f"{e} (reason {e.reason_code})") from None
    return regs, rens, decs, srcs


@copyright_app.command("classify")
def classify_cmd(
    registrations: Path = typer.Option(..., "--registrations", help="TSV: title, reg_id, reg_date (ISO)."),
    renewals: Path = typer.Option(..., "--renewals",
                                  help="TSV: title, orig_reg_id, orig_date, renewal_id, renewal_date (ISO)."),
    as_of: str = typer.Option(..., "--as-of", help="Status date, YYYY-MM-DD (e.g. 2026-01-01)."),
    decisions: Optional[Path] = typer.Option(None, "--decisions",
                                             help="TSV of curator decisions: reg_id, reg_date, renewal_id, decision, by."),
    source_works: Optional[Path] = typer.Option(None, "--source-works",
                                                help="TSV: film_reg_id, film_reg_date, source_title, renewed."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list of {reg_id, reg_date, title, status, reason}."),
) -> None:
    """Classify each registration as public_domain / likely_public_domain / protected / needs_review."""
    from validators.copyright_status import classify

    try:
        when = date.fromisoformat(as_of.strip())
    except ValueError:
        err.print(f"[red]--as-of {as_of!r} is not an ISO date (YYYY-MM-DD)[/red]", highlight=False)
        raise typer.Exit(2)
    try:
        regs, rens, decs, srcs = load_inputs(registrations, renewals, decisions, source_works)
    except InputError as e:
        err.print(f"[red]{e}[/red]", highlight=False)
        raise typer.Exit(2)
    results = classify(regs, rens, as_of=when, decisions=decs, source_works=srcs)
    if as_json:
        print(json.dumps([r.to_json() for r in results], ensure_ascii=False))
        return
    for r in results:
        print(f"{r.reg_id}\t{r.reg_date}\t{r.status}\t{r.title}\t{r.reason}")


@copyright_app.command("parse-entries")
def parse_entries_cmd(
    file: Path = typer.Argument(..., help="Text file: one printed CCE renewal entry per line."),
    volume_year: Optional[int] = typer.Option(None, "--volume-year", help="Year of the CCE volume (dates two-digit years)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object per entry line."),
) -> None:
    """Parse printed renewal entries: per line a status (read / partial / flagged / unread), its
    reason codes and the records (``extractors.cce.parse.parse_renewal_entry``)."""
    from extractors.cce.entries import entry_status
    from extractors.cce.parse import Unparsed, parse_renewal_entry

    if not file.is_file():
        err.print(f"error: {file}: no such file", highlight=False, markup=False)
        raise typer.Exit(2)
    try:
        lines = file.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        err.print(f"error: {file}: cannot read ({e})", highlight=False, markup=False)
        raise typer.Exit(2)
    out = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        got = parse_renewal_entry(line, volume_year=volume_year)
        if isinstance(got, Unparsed):
            out.append({"line": n, "text": line, "status": "unread", "reasons": [got.reason],
                        "detail": got.detail, "records": []})
            continue
        status, reasons = entry_status(got)
        recs = [{k: v for k, v in r.to_dict().items() if k not in ("raw", "orig_reg_candidates", "renewal_candidates")}
                for r in got]
        out.append({"line": n, "text": line, "status": status, "reasons": reasons, "records": recs})
    if as_json:
        print(json.dumps(out, ensure_ascii=False))
        return
    for e in out:
        ids = ", ".join(f"{r['orig_reg_id']}/{r['orig_date']} -> {r['renewal_id']}/{r['renewal_date']}" for r in e["records"])
        print(f"{e['line']}\t{e['status']}\t{ids}\t{';'.join(e['reasons'])}")
