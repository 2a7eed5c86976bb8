"""``cinesub safety``: subtitle-grounded language safety (SPEC A9, docs/language_safety.md).

``scan PATH.srt`` decodes the file (:mod:`extractors.decode`), parses it strictly
(:mod:`extractors.srt`; both through :func:`validators.inspect_report.inspect_track`, exactly as
``cinesub inspect`` does) and counts the four SPEC A9 categories with
:func:`validators.safety.scan`: per category ``occurrenceCount``, ``evidenceLineCount`` and
``evidenceSubtitleIndices`` (the entries' original indices).

Exit codes: 0 when the file was scanned; 1 when decoding or parsing rejected it (nothing is
counted). With ``--json`` stdout is one JSON object in both cases::

    {"file", "status", "encoding", "entries", "lexiconVersion",
     "categories": {<category>: {occurrenceCount, evidenceLineCount, evidenceSubtitleIndices}} | null,
     "errors": [...], "reasons": [...]}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

safety_app = typer.Typer(help="Language safety (SPEC A9): scan an English subtitle file.",
                         no_args_is_help=True)
err = Console(stderr=True, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add the ``safety`` command group to the main CLI."""
    app.add_typer(safety_app, name="safety")


def scan_file(path: Path) -> tuple[dict[str, Any], int]:
    """(JSON report, exit code) for one subtitle file (English)."""
    import polars as pl

    from validators.inspect_report import inspect_track
    from validators.safety import lexicon_version, safety_to_json, scan

    res = inspect_track(path.read_bytes(), "en")
    report: dict[str, Any] = {
        "file": str(path),
        "status": res.report["status"],
        "encoding": res.report["encoding"],
        "entries": res.report["entries"],
        "lexiconVersion": lexicon_version(),
        "categories": None,
        "errors": res.report["errors"],
        "reasons": res.report["reasons"],
    }
    if res.report["status"] == "rejected":
        return report, 1
    entries = pl.from_arrow(res.table).select("index", "content")
    report["categories"] = safety_to_json(scan(entries))
    return report, 0


@safety_app.command("scan")
def scan_cmd(
    path: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True,
                                help="An English subtitle file (.srt)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
) -> None:
    """Count the four SPEC A9 categories in an English .srt file (exit 1 when it is rejected)."""
    report, code = scan_file(path)
    if as_json:
        print(json.dumps(report, ensure_ascii=False))
    if code:
        why = "; ".join(f"line {e.get('line')}: {e.get('detail')}" for e in report["errors"][:3]) \
            or ", ".join(report["reasons"]) or "rejected"
        err.print(f"[red]{path}: rejected ({why})[/red]", highlight=False)
        raise typer.Exit(code)
    if as_json:
        return
    print(f"{path}: {report['entries']} entries, encoding {report['encoding']}, "
          f"lexicon {report['lexiconVersion']}")
    for cat, c in report["categories"].items():
        indices = ", ".join(str(i) for i in c["evidenceSubtitleIndices"])
        print(f"{cat}: occurrenceCount {c['occurrenceCount']}, evidenceLineCount "
              f"{c['evidenceLineCount']}, evidenceSubtitleIndices [{indices}]")
