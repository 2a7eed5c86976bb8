"""``cinesub inspect``: the curator's one-file tool (issue 3).

Runs :func:`validators.inspect_report.inspect_file` -- decode, strict parse, the verification
layers, sanitization and (with ``--english``) the duration audit, the same composition as the
pipeline -- on one subtitle file and prints a short summary or, with ``--json``, the stable
contract (keys ``encoding, decoder, status, entries, repairs, errors, flags`` and more, see
:mod:`validators.inspect_report`).

Exit codes: 0 when the track is ``ok`` or ``flagged``, 1 when it is ``rejected``, 2 for usage
errors (missing or unreadable file, unknown language or policy, runtime not positive).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.table import Table

_err = Console(stderr=True, soft_wrap=True)


def _usage(message: str) -> typer.Exit:
    _err.print(f"[red]{message}[/red]", highlight=False)
    return typer.Exit(2)


def _read(path: Path, what: str) -> bytes:
    if not path.is_file():
        raise _usage(f"{what} not found (or not a file): {path}")
    try:
        return path.read_bytes()
    except OSError as e:
        raise _usage(f"cannot read {what} {path}: {e}") from e


def register(app: typer.Typer) -> None:
    @app.command("inspect")
    def inspect(
        path: Path = typer.Argument(..., help="The subtitle file (raw bytes as downloaded)."),
        language: str = typer.Option(..., "--language", "-l", help="Expected language: en, ar, id, fa, ro or vi."),
        policy: str = typer.Option("default", "--policy", help="Decoder policy: default or paper (SPEC A3 cascade)."),
        runtime: Optional[float] = typer.Option(
            None, "--runtime", help="Film runtime in minutes (enables runtime coverage; span ratio with --english)."),
        english: Optional[Path] = typer.Option(
            None, "--english", help="The film's English subtitle file: runs the duration audit against it."),
        as_json: bool = typer.Option(False, "--json", help="Print the report as JSON on stdout."),
        dump_entries: Optional[Path] = typer.Option(
            None, "--dump-entries", help="Write the entries as JSON lines (index, timeframe, start_ms, end_ms, content)."),
        config: Optional[Path] = typer.Option(None, "--config", help="TOML or YAML settings file (thresholds)."),
    ) -> None:
        """Decode, strictly parse, verify and sanitize one subtitle file; report what was found."""
        from cinesub.settings import LANGUAGES, load_settings
        from extractors.decode import POLICIES

        lang = language.strip().lower()
        if lang not in LANGUAGES:
            raise _usage(f"unknown language {language!r}: expected one of {', '.join(LANGUAGES)}")
        if policy not in POLICIES:
            raise _usage(f"unknown policy {policy!r}: expected one of {', '.join(POLICIES)}")
        if runtime is not None and not (math.isfinite(runtime) and runtime > 0):
            raise _usage(f"--runtime must be a positive, finite number of minutes, got {runtime:g}")
        if config is not None and not config.is_file():
            raise _usage(f"config file not found: {config}")
        if dump_entries is not None and not dump_entries.resolve().parent.is_dir():
            raise _usage(f"--dump-entries {dump_entries}: folder {dump_entries.resolve().parent} does not exist")
        if dump_entries is not None and dump_entries.is_dir():
            raise _usage(f"--dump-entries {dump_entries} is a folder; give a file name")
        raw = _read(path, "file")
        en_raw = _read(english, "English file") if english is not None else None
        try:
            thresholds = load_settings(config).thresholds
        except ValueError as e:
            raise _usage(f"bad config {config}: {e}") from e

        from validators.inspect_report import audit_summary, inspect_file, write_entries_jsonl

        english_summary = None
        if en_raw is not None:
            en_res = inspect_file(en_raw, "en", policy, runtime, thresholds)
            english_summary = {"file": str(english), **audit_summary(en_res)}
        res = inspect_file(raw, lang, policy, runtime, thresholds, english=english_summary)
        report: dict[str, Any] = {"file": str(path), **res.report}
        if dump_entries is not None:
            try:
                with dump_entries.open("w", encoding="utf-8") as fh:
                    report["dumped_entries"] = write_entries_jsonl(res.table, fh)
            except OSError as e:
                raise _usage(f"cannot write --dump-entries {dump_entries}: {e.strerror or e}") from e
        if as_json:
            print(json.dumps(report, ensure_ascii=False, indent=2, default=str))
        else:
            _print_human(report)
        if report["status"] == "rejected":
            raise typer.Exit(1)


def _print_human(r: dict[str, Any]) -> None:
    out = Console()
    colour = {"ok": "green", "flagged": "yellow", "rejected": "red"}[r["status"]]
    out.print(f"[bold]{r['file']}[/bold] ({r['language']}, {r['bytes']:,} bytes)", highlight=False)
    out.print(f"status: [{colour}]{r['status']}[/{colour}]   encoding: {r['encoding']} "
              f"(decoder {r['decoder']}, policy {r['policy']})   entries: {r['entries']:,}   "
              f"repairs: {len(r['repairs'])}", highlight=False)
    for e in r["errors"]:
        out.print(f"[red]error[/red] line {e['line']} ({e['layer']}): {e['detail']}: {e['text']!r}",
                  highlight=False)
    if r["flags"]:
        t = Table(title="flags")
        for col in ("layer", "severity", "value", "threshold", "detail"):
            t.add_column(col)
        for f in r["flags"]:
            v, th = f.get("value"), f.get("threshold")
            t.add_row(f["layer"], f["severity"], "" if v is None else f"{v:.4g}",
                      "" if th is None else f"{th:.4g}", f["detail"])
        out.print(t)
    else:
        out.print("flags: none")
    if r["checks"]["evaluated"]:
        out.print("layers evaluated: " + ", ".join(r["checks"]["evaluated"]
                                                   + r.get("audit", {}).get("evaluated", [])), highlight=False)
    san = r.get("sanitization")
    if san is not None:
        out.print(f"sanitization (patterns v{san['version']}): {san['removed']} entries removed, "
                  f"{san['modified']} redacted", highlight=False)
        for a in san["actions"][:10]:
            out.print(f"  index {a['index']}: {a['action']} ({a['reasons']})", highlight=False)
        if len(san["actions"]) > 10:
            out.print(f"  ... {len(san['actions']) - 10} more (--json lists all)", highlight=False)
    if "audit" in r and r["audit"]["english"].get("status") == "rejected":
        out.print("[yellow]duration audit not run: the English file was rejected[/yellow]")
    if "dumped_entries" in r:
        out.print(f"{r['dumped_entries']:,} entries written", highlight=False)
