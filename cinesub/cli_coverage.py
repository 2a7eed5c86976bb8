"""``cinesub coverage solve``: exact complete-coverage optimisation (SPEC A7, docs/coverage.md).

Input: a long CSV with header ``film_id,attribute`` (one row per film and attribute; extra
columns are ignored; a row with an empty attribute records a film with none). Output: the best
set, the per-K table (search beside the frequency-prefix baseline) and the elapsed time.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

coverage_app = typer.Typer(help="Complete-coverage optimisation: the attribute set keeping the most files.",
                           no_args_is_help=True)
err = Console(stderr=True, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add the ``coverage`` command group to the main CLI."""
    app.add_typer(coverage_app, name="coverage")


def _fail(message: str) -> None:
    err.print(f"[red]error:[/red] {message}", markup=True, highlight=False)
    raise typer.Exit(2)


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """(film_id, attribute) rows of a long CSV; ValueError with a clear message when unreadable."""
    if not path.is_file():
        raise ValueError(f"no such file: {path}")
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path}: empty file; expected a header 'film_id,attribute'")
        cols = [h.strip() for h in header]
        if "film_id" not in cols or "attribute" not in cols:
            raise ValueError(f"{path}: bad header {','.join(header)!r}; expected 'film_id,attribute'")
        fi, ai = cols.index("film_id"), cols.index("attribute")
        pairs = []
        for line, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) <= max(fi, ai):
                raise ValueError(f"{path}: line {line}: expected {len(cols)} columns, got {len(row)}")
            film = row[fi].strip()
            if not film:
                raise ValueError(f"{path}: line {line}: empty film_id")
            pairs.append((film, row[ai].strip()))
    return pairs


def _fmt(entry: Optional[dict]) -> tuple[str, str, str]:
    if entry is None:
        return ("—", "—", "—")
    return (",".join(entry["attributes"]), str(entry["films"]), str(entry["score"]))


@coverage_app.command("solve")
def solve_cmd(
    avail: Path = typer.Argument(..., help="Long CSV with header film_id,attribute."),
    pool: Optional[int] = typer.Option(None, "--pool", min=1, help="Keep the top-N attributes by availability (default: all)."),
    max_k: Optional[int] = typer.Option(None, "--max-k", min=1, help="Largest set size (default: the pool size)."),
    k: Optional[int] = typer.Option(None, "--k", min=1, help="Solve only this set size."),
    require: str = typer.Option("", "--require", help="Comma-separated attributes every set must contain."),
    min_films: int = typer.Option(0, "--min-films", min=0, help="Sets must keep at least this many films."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Exact optimum of |S|·|M(S)| for every set size K, beside the frequency-prefix baseline."""
    from validators.coverage_optimizer import CoverageError, solve  # numba: imported by this command only

    try:
        pairs = read_pairs(avail)
    except (ValueError, OSError, UnicodeDecodeError, csv.Error) as exc:
        _fail(str(exc))
    if not pairs:
        _fail(f"{avail}: no rows")
    required = [r.strip() for r in require.split(",") if r.strip()]
    try:
        result = solve(pairs, pool=pool, max_k=max_k, k=k, require=required, min_films=min_films)
    except CoverageError as exc:
        _fail(str(exc))
    if as_json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    out = Console()
    table = Table(title=f"complete coverage: {result['films']} films, pool of {len(result['pool'])}")
    for col in ("K", "search", "films", "score", "prefix", "films", "score"):
        table.add_column(col, justify="left" if col in ("search", "prefix") else "right")
    for row in result["per_k"]:
        table.add_row(str(row["k"]), *_fmt(row["search"]), *_fmt(row["prefix"]))
    out.print(table)
    best = result["best"]
    if best is None:
        out.print("best: none (no feasible set)")
    else:
        out.print(f"best: {','.join(best['attributes'])} × {best['films']} films = {best['score']} "
                  f"({result['elapsed_s']:.3f} s)")
