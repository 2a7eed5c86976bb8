"""``cinesub boxoffice``: Variety box office (SPEC B1, issue 9) — alias resolution, evaluation.

``resolve-aliases --catalog CATALOG.tsv --aliases ALIASES.tsv [--curated CURATED.tsv] [--json]``
suggests an IMDb record for every alias (:mod:`validators.variety_aliases`). CATALOG.tsv is
tab-separated with columns ``imdb, title, year`` (optional ``votes``); ALIASES.tsv with ``year,
alias``; CURATED.tsv (optional) with ``year, alias, imdb`` overrides the suggestions. Output: a
JSON list of ``{year, alias, imdb, score, decision}`` (decision ``auto|review|none``; imdb null
for none), or a table without ``--json``.

``evaluate --gold DIR --pred DIR [--json]``: per-issue and averaged Spearman ρ, Movie F1 and
Tuple F1 with 95% bootstrap intervals (:mod:`validators.extraction_metrics`).

Exit codes: 0 on success; 2 for a missing file or a missing column (message on stderr).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console

boxoffice_app = typer.Typer(help="Variety box office (SPEC B1): resolve-aliases, evaluate.", no_args_is_help=True)
err = Console(stderr=True, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add the ``boxoffice`` command group to the main CLI."""
    app.add_typer(boxoffice_app, name="boxoffice")


def _fail(message: str) -> None:
    err.print(f"[red]{message}[/red]", highlight=False)
    raise typer.Exit(2)


def _read_tsv(path: Path, required: tuple[str, ...], what: str) -> list[dict[str, Any]]:
    if not path.is_file():
        _fail(f"{what} file not found: {path}")
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh, delimiter="\t")
            columns = [c.strip() for c in (reader.fieldnames or [])]
            missing = [c for c in required if c not in columns]
            if missing:
                _fail(f"{what} {path}: missing column(s) {', '.join(missing)} (has: {', '.join(columns) or 'none'}; "
                      f"tab-separated with a header row)")
            rows = [{(k or "").strip(): (v or "").strip() for k, v in r.items()} for r in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        _fail(f"{what} {path}: cannot read ({exc}); expected UTF-8, tab-separated with a header row")
    return rows


@boxoffice_app.command("resolve-aliases")
def resolve_aliases_cmd(
    catalog: Path = typer.Option(..., "--catalog", help="CATALOG.tsv: imdb, title, year [, votes] (tab-separated)."),
    aliases: Path = typer.Option(..., "--aliases", help="ALIASES.tsv: year, alias (tab-separated)."),
    curated: Optional[Path] = typer.Option(None, "--curated", help="CURATED.tsv: year, alias, imdb (overrides)."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list of {year, alias, imdb, score, decision}."),
) -> None:
    """Suggest IMDb records for Variety aliases: auto-accepted, for review, or none."""
    from validators.variety_aliases import AliasResolver, curated_table, resolve_aliases

    cat_rows = _read_tsv(catalog, ("imdb", "title", "year"), "catalog")
    alias_rows = _read_tsv(aliases, ("year", "alias"), "aliases")
    table = curated_table(_read_tsv(curated, ("year", "alias", "imdb"), "curated")) if curated else None
    pairs = []
    for i, r in enumerate(alias_rows, start=2):
        try:
            pairs.append((int(r["year"]), r["alias"]))
        except ValueError:
            _fail(f"aliases {aliases}: line {i}: year {r['year']!r} is not an integer")
    try:
        resolver = AliasResolver(cat_rows)
    except ValueError as exc:
        _fail(f"catalog {catalog}: {exc}")
    results = resolve_aliases(pairs, resolver, curated=table)
    if as_json:
        print(json.dumps([s.to_json() for s in results], ensure_ascii=False))
        return
    for s in results:
        print(f"{s.year}\t{s.alias}\t{s.imdb or '-'}\t{s.title or '-'}\t{s.score:.3f}\t{s.decision}\t{s.reason}")


@boxoffice_app.command("evaluate")
def evaluate_cmd(
    gold: Path = typer.Option(..., "--gold", help="Folder of gold tuples, one file per issue."),
    pred: Path = typer.Option(..., "--pred", help="Folder of predicted tuples, one file per issue."),
    as_json: bool = typer.Option(False, "--json", help="Print the evaluation as JSON."),
) -> None:
    """Spearman ρ, Movie F1 and Tuple F1 per issue and averaged, with 95% bootstrap intervals."""
    from validators.extraction_metrics import evaluate_dirs, render_eval_table

    for what, folder in (("gold", gold), ("pred", pred)):
        if not folder.is_dir():
            _fail(f"{what} folder not found: {folder}")
    result = evaluate_dirs(gold, pred)
    if as_json:
        print(json.dumps(result, ensure_ascii=False, default=str))
        return
    print(render_eval_table(result))
