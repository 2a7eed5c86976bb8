"""``cinesub review fill FILM FIELD --value TEXT | --file PATH --by NAME`` (docs/review.md).

A curator supplies a task value the sources leave missing for one film (a key message, an age
suitability, genres in the core space …). It is appended to the state table ``curated_values``
with its author and time (the latest per film and field is in force); the next build's curate
stage uses it where the field is missing (validators/task_fills.py), so one missing value no
longer withholds the task field for the whole cohort (SPEC A10's completeness rule).

Errors are one line and exit 2: an unknown film (reason ``unknown_film``), an unknown field
(``unknown_field``), a value the field cannot hold or neither/both of --value and --file
(``review_input``), an unreadable --file (``review_input``). A home held by a build: exit 6.

Also :func:`review_fill_queues`: what ``cinesub review list`` shows beside the track queue —
the raw genres the genre mapping does not list and the task values still missing.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Optional

import duckdb
import typer

from cinesub.cli_review import _home_option, _out, _print_json, _rows, _stamp, _state, review_app

_TT = re.compile(r"^tt\d{7,10}$")


def _error(message: str, reason: str) -> None:
    from cinesub.errors import CinesubError, ExitCode

    raise CinesubError(message, reason, exit_code=ExitCode.USAGE)


def task_fields() -> tuple[str, ...]:
    from cinesub.settings import CurationSettings

    return tuple(CurationSettings().task_fields)


def resolve_field(name: str) -> str:
    """The task field named ``name`` (exact, or case-insensitively; exit 2 ``unknown_field``)."""
    fields = task_fields()
    if name in fields:
        return name
    folded = {f.casefold(): f for f in fields}
    found = folded.get(name.strip().casefold())
    if found is None:
        _error(f"unknown task field {name!r} (fields: {', '.join(fields)})", "unknown_field")
    return found


def resolve_film(con: duckdb.DuckDBPyConnection, ref: str) -> dict[str, Any]:
    """The film named by an IMDb id (tt…) or a release id (exit 2 ``unknown_film``)."""
    ref = ref.strip()
    if _TT.match(ref):
        rows = _rows(con, "SELECT imdb_id, title, year FROM films WHERE imdb_id = ? ORDER BY kim_id LIMIT 1", [ref])
    elif ref.isdigit():
        rows = _rows(con, """SELECT f.imdb_id, f.title, f.year FROM film_ids i JOIN films f USING (imdb_id)
                             WHERE i.id = ? ORDER BY f.kim_id LIMIT 1""", [int(ref)])
    else:
        rows = []
    if not rows:
        _error(f"unknown film {ref!r}: give an IMDb id (tt…) or a release id of a film in the state "
               "(see `cinesub review list`)", "unknown_film")
    return rows[0]


def _read_value(value: Optional[str], file: Optional[Path]) -> tuple[str, Optional[str]]:
    if (value is None) == (file is None):
        _error("give exactly one of --value TEXT and --file PATH", "review_input")
    if file is None:
        return value or "", None
    try:
        return file.read_text(encoding="utf-8"), str(file)
    except (OSError, UnicodeDecodeError) as exc:
        _error(f"cannot read --file {file}: {exc}", "review_input")
    raise AssertionError  # unreachable


def _state_of(con: duckdb.DuckDBPyConnection, imdb_id: str, field: str) -> str:
    """What the last curate run found for this film's field: missing | filled | present | not in cohort."""
    gap = con.execute("SELECT status FROM task_gaps WHERE imdb_id = ? AND field = ?", [imdb_id, field]).fetchone()
    if gap:
        return gap[0]
    in_cohort = con.execute("""SELECT count(*) FROM films f JOIN film_gates g ON g.kim_id = f.kim_id
                               AND g.dropped_at IS NULL WHERE f.imdb_id = ?""", [imdb_id]).fetchone()[0]
    return "present" if in_cohort else "not in cohort"


@review_app.command("fill")
def review_fill(
    film: str = typer.Argument(..., help="IMDb id (tt…) or release id of the film."),
    field: str = typer.Argument(..., help="Task field: plot, synopsis, storyline, keyMessage, genres, "
                                          "ageSuitabilityRating."),
    value: Optional[str] = typer.Option(None, "--value", help="The value (genres: core labels, comma-separated)."),
    file: Optional[Path] = typer.Option(None, "--file", help="Read the value from this UTF-8 text file."),
    by: Optional[str] = typer.Option(None, "--by", help="Who supplies it (default $USER)."),
    home: Optional[Path] = _home_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the stored value as JSON."),
) -> None:
    """Supply a task value the sources leave missing (append-only); the next build uses it."""
    from validators.genres import core_genres
    from validators.task_fills import FillValueError, parse_value

    name = resolve_field(field)
    text, source_file = _read_value(value, file)
    try:
        stored = parse_value(name, text, core_genres())
    except FillValueError as exc:
        _error(str(exc), "review_input")
    author = (by if by is not None else os.environ.get("USER") or os.environ.get("LOGNAME") or "").strip()
    if not author:
        _error("who supplies the value? pass --by NAME (no $USER in the environment)", "review_input")
    with _state(home, write=True) as con:
        info = resolve_film(con, film)
        now, fill_id = _stamp()
        found = _state_of(con, info["imdb_id"], name)
        con.execute("INSERT INTO curated_values (fill_id, imdb_id, field, value, source_file, filled_by, filled_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [fill_id, info["imdb_id"], name, json.dumps(stored, ensure_ascii=False), source_file, author, now])
    effect = {"missing": "the next build fills the missing value with it",
              "filled": "it replaces the earlier curated value at the next build",
              "present": "the sources give this field a value: the next build keeps the source value and "
                         "uses this one only if the source value goes missing",
              "not in cohort": "the film is not in the cohort: it applies if the film joins it"}[found]
    result = {"fill_id": fill_id, "imdb_id": info["imdb_id"], "title": info["title"], "field": name,
              "value": stored, "source_file": source_file, "filled_by": author, "filled_at": now,
              "state": found, "effect": effect}
    if as_json:
        _print_json(result)
        return
    out = _out()
    out.print(f"recorded {fill_id}: {name} of {info['imdb_id']} {info['title'] or ''} by {author}", highlight=False)
    out.print(effect)


def review_fill_queues(con: duckdb.DuckDBPyConnection) -> dict[str, list[dict[str, Any]]]:
    """The curator queues of this part: unmapped raw genres and task values still missing (empty
    for a state DB written before these tables existed)."""
    have = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall()}
    out: dict[str, list[dict[str, Any]]] = {"unmapped_genres": [], "missing_task_values": []}
    if "genre_reviews" in have:
        out["unmapped_genres"] = _rows(con, "SELECT * FROM genre_reviews ORDER BY source, raw_genre")
    if "task_gaps" in have:
        out["missing_task_values"] = _rows(
            con, """SELECT g.imdb_id, f.title, g.field, g.reason FROM task_gaps g
                    LEFT JOIN (SELECT imdb_id, any_value(title) AS title FROM films GROUP BY imdb_id) f USING (imdb_id)
                    WHERE g.status = 'missing' ORDER BY g.field, g.imdb_id""")
    return out


def print_fill_queues(queues: dict[str, list[dict[str, Any]]]) -> None:
    from rich.table import Table

    out = _out()
    gq = queues["unmapped_genres"]
    t = Table(title=f"unmapped raw genres (genre_reviews): {len(gq)}")
    for col in ("source", "raw genre", "films", "example", "mapping"):
        t.add_column(col, overflow="fold")
    for r in gq:
        t.add_row(r["source"], r["raw_genre"], str(r["films"]), r["example_imdb_id"], r["mapping_version"])
    out.print(t)
    mq = queues["missing_task_values"]
    t = Table(title=f"missing task values (task_gaps): {len(mq)}")
    for col in ("film", "field", "reason"):
        t.add_column(col, overflow="fold")
    for r in mq:
        t.add_row(f"{r['imdb_id']} {r['title'] or ''}", r["field"], r["reason"])
    out.print(t)
    if mq:
        out.print("supply one with `cinesub review fill FILM FIELD --value TEXT | --file PATH --by NAME`")
