"""``cinesub review``: curator decisions on flagged tracks (docs/review.md).

``list`` shows the review queue of the current state (flagged and rejected tracks, tracks with
duration-audit flags) beside the entity-link adjudication queue; ``show`` one track with its
flags, evidence, candidate chain and decision history; ``decide`` appends a decision
(retain | repair | replace | exclude) with its author, time and note to ``decisions``; ``export``
writes the whole history as CSV for audit. The next build honours the decision in force per
track (the latest one) through the recovery chain of ``sql/selection.sql``.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import sys
import uuid
from collections.abc import Iterator
from datetime import date, datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Any, Optional

import duckdb
import typer
from rich.console import Console
from rich.table import Table

from cinesub.cli_common import home_dir as _home

review_app = typer.Typer(help="Curator review of flagged tracks: list, show, decide, export.",
                         no_args_is_help=True)
err = Console(stderr=True, soft_wrap=True)  # messages are never folded mid-phrase

HOME_HELP = "CINESUB_HOME (default $CINESUB_HOME or ./var)."


class Action(str, Enum):
    retain = "retain"
    repair = "repair"
    replace = "replace"
    exclude = "exclude"


#: what the next build does with each action (printed by ``decide``; docs/review.md)
EFFECTS: dict[str, str] = {
    "retain": "the flag is resolved: the next build counts this track as clean and selects it as "
              "'retained' unless a better-ranked candidate is clean; the flags stay in the history",
    "repair": "recorded: the track stays flagged (and selectable only as the flagged fallback) until "
              "the curator supplies the repaired file as a new candidate (docs/review.md)",
    "replace": "the next build moves on to the next candidate of the chain (downloaded and "
               "processed if needed)",
    "exclude": "the next build leaves this film-language without a track (selection 'excluded'); "
               "the film drops at gate 5",
}


def register(app: typer.Typer) -> None:
    """Add the ``review`` command group to the main CLI."""
    import cinesub.cli_review_fill  # noqa: F401  (registers `review fill`)

    app.add_typer(review_app, name="review")


# --------------------------------------------------------------------------------------------
# state access
# --------------------------------------------------------------------------------------------
def _fail(message: str, code: int = 2) -> None:
    from cinesub.errors import CinesubError

    raise CinesubError(message, "review_input", exit_code=code)


@contextlib.contextmanager
def _state(home: Optional[Path], write: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """The state DB with the review views of sql/review.sql (read-only unless ``write``)."""
    from cinesub.state import init_state, render_sql
    from validators.candidate import PROCESSING_VERSION

    path = _home(home) / "state.duckdb"
    if not path.exists():
        _fail(f"no state database at {path}: run `cinesub build` first (or pass --home)")
    held = contextlib.ExitStack()
    if write:  # a writer of the state takes the home lock, as a build does (exit 6 while one runs)
        from cinesub.lock import home_lock

        held.enter_context(home_lock(_home(home)))
    try:
        if write:
            init_state(path)
        con = duckdb.connect(str(path), read_only=not write)
    except duckdb.IOException as exc:  # another process (a running build) holds the write lock
        held.close()
        _fail(f"cannot open {path}: {exc}. Is a build running? Retry when it has finished.", 6)
    try:
        _link_decision_views(con)
        con.execute(render_sql("review.sql", processing_version=PROCESSING_VERSION))
        yield con
    finally:
        con.close()
        held.close()


def _link_decision_views(con: duckdb.DuckDBPyConnection) -> None:
    """The view of sql/link_decisions.sql; a state DB written before ``link_decisions`` existed
    (opened read-only, so not migrated) reads as one without entity-link decisions."""
    from cinesub.state import sql_text

    if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'link_decisions' "
                       "AND NOT temporary").fetchone()[0]:
        con.execute("CREATE OR REPLACE TEMP TABLE link_decisions (decision_id VARCHAR, kim_id VARCHAR, "
                    "decision VARCHAR, kim_imdb_id VARCHAR, csm_imdb_id VARCHAR, note VARCHAR, "
                    "decided_by VARCHAR, decided_at TIMESTAMPTZ)")
    con.execute(sql_text("link_decisions.sql"))


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def _jsonable(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _print_json(data: Any) -> None:
    print(json.dumps(_jsonable(data), indent=2, ensure_ascii=False))


def resolve_track(con: duckdb.DuckDBPyConnection, ref: str) -> dict[str, Any]:
    """The track named by a full track id or a unique prefix (exit 2 otherwise)."""
    ref = ref.strip().lower()
    if not ref:
        _fail("empty track id")
    found = _rows(con, "SELECT track_id, imdb_id, language, file_id, processing_version FROM tracks "
                       "WHERE starts_with(track_id, ?) ORDER BY track_id LIMIT 11", [ref])
    if not found:
        _fail(f"no track with id or prefix {ref!r} (see `cinesub review list`)")
    exact = [r for r in found if r["track_id"] == ref]
    if exact:
        return exact[0]
    if len(found) > 1:
        names = ", ".join(f"{r['track_id'][:12]} ({r['imdb_id']} {r['language']} {r['file_id']})" for r in found[:10])
        _fail(f"track prefix {ref!r} is ambiguous: {names}{' ...' if len(found) > 10 else ''}")
    return found[0]


def _fmt_time(value: Any) -> str:
    if isinstance(value, datetime):
        return value.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
    return "" if value is None else str(value)


# --------------------------------------------------------------------------------------------
# commands
# --------------------------------------------------------------------------------------------
QUEUE_COLUMNS = ("track_id", "imdb_id", "title", "language", "provider", "file_id", "rank", "track_status",
                 "layers", "severity", "selection_status", "selected", "selected_file_id", "decision",
                 "decided_by", "decided_at", "film_status")


@review_app.command("list")
def review_list(
    layer: Optional[str] = typer.Option(None, "--layer", help="Only tracks flagged on this layer."),
    language: Optional[str] = typer.Option(None, "--language", help="Only this language (ISO 639-1)."),
    home: Optional[Path] = typer.Option(None, "--home", help=HOME_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON on stdout."),
) -> None:
    """Flagged and rejected tracks of the current state, and the entity-link review queue."""
    with _state(home) as con:
        where, params = [], []
        if layer:
            where.append("list_contains(layers, ?)")
            params.append(layer)
        if language:
            where.append("language = ?")
            params.append(language)
        sql = (f"SELECT {', '.join(QUEUE_COLUMNS)} FROM review_queue"
               + (" WHERE " + " AND ".join(where) if where else "")
               + " ORDER BY imdb_id, language, rank NULLS LAST, file_id")
        tracks = _rows(con, sql, params)
        links = _rows(con, "SELECT * FROM review_link_queue ORDER BY decision = 'open' DESC, kim_id")
        link_history = _rows(con, "SELECT * FROM review_link_decision_history ORDER BY decided_at, decision_id")
        known_layers = [r[0] for r in con.execute("SELECT DISTINCT layer FROM flags ORDER BY 1").fetchall()]
        from cinesub.cli_review_fill import print_fill_queues, review_fill_queues

        fill_queues = review_fill_queues(con)
    if layer and layer not in known_layers:
        err.print(f"note: no flag on layer {layer!r} in the state (layers: {', '.join(known_layers) or 'none'})")
    from cinesub.cli_hollywood import pd_review_queues

    pd = pd_review_queues(_home(home))  # the Hollywood collection's queues, when it was built here
    if as_json:
        out_json = {"tracks": tracks, "link_reviews": links, "link_decisions": link_history, **fill_queues}
        if pd is not None:
            out_json["variety_aliases"] = pd["aliases"]
            out_json["copyright_matches"] = pd["matches"]
            out_json["unknown_cities"] = pd["cities"]
        _print_json(out_json)
        return
    out = _out()
    t = Table(title=f"review queue: {len(tracks)} track(s)" + (f", layer {layer}" if layer else "")
              + (f", language {language}" if language else ""))
    for col in ("track", "film", "lang", "rank", "file id", "status", "layers", "selection", "decision", "film status"):
        t.add_column(col, overflow="fold")
    for r in tracks:
        if r["selected"]:
            sel = f"this ({r['selection_status']})"
        elif r["selected_file_id"]:
            sel = f"{r['selected_file_id']} ({r['selection_status']})"
        else:
            sel = r["selection_status"] or "-"
        dec = f"{r['decision']} by {r['decided_by']}" if r["decision"] else "-"
        t.add_row(r["track_id"][:12], f"{r['imdb_id']} {r['title'] or ''}", r["language"], str(r["rank"] or "-"),
                  r["file_id"], r["track_status"], ", ".join(r["layers"]), sel, dec, r["film_status"])
    out.print(t)
    lt = Table(title=f"entity-link review queue (link_reviews): {len(links)}")
    for col in ("kim id", "title", "KIM imdb", "CSM imdb", "reason", "decision", "film status"):
        lt.add_column(col, overflow="fold")
    for r in links:
        dec = r["decision"] if r["decision"] == "open" else (
            f"{r['decision']} by {r['decided_by']}" + ("" if r["applied"] else " (next build)"))
        lt.add_row(r["kim_id"], f"{r['title'] or ''} ({r['year'] or '?'})", r["kim_imdb_id"] or "-",
                   r["csm_imdb_id"] or "-", r["reason"], dec, r["film_status"])
    out.print(lt)
    if links:
        out.print("decide with `cinesub review decide-link KIM_ID --accept kim|csm|reject --note TEXT`")
    print_fill_queues(fill_queues)
    if pd is not None:
        out.print(f"Hollywood collection queues: {pd['counts']['aliases']} Variety alias(es), "
                  f"{pd['counts']['matches']} copyright match(es), {pd['counts']['cities']} unknown city(ies) to review "
                  "(`cinesub hollywood review list`, `decide-alias`, `decide-match`)")


def track_details(con: duckdb.DuckDBPyConnection, track_id: str) -> dict[str, Any]:
    """Everything ``review show`` prints about one track."""
    track = _rows(con, "SELECT * FROM review_all_tracks WHERE track_id = ?", [track_id])
    if track:
        info = track[0]
    else:  # a track of another processing version: history only
        info = _rows(con, "SELECT *, status AS track_status FROM tracks WHERE track_id = ?", [track_id])[0]
        info["note"] = "not a track of the current processing version: no longer part of the state"
    flags = _rows(con, """SELECT layer, severity, value, threshold, detail, evidence FROM flags
                          WHERE track_id = ? ORDER BY layer""", [track_id])
    for f in flags:
        f["evidence"] = json.loads(f["evidence"]) if f["evidence"] else None
    chain = _rows(con, """
        SELECT c.rank, c.provider, c.file_id, c.download_count,
               coalesce(c.machine_translated, false) OR coalesce(c.ai_translated, false) AS machine_translated,
               t.track_id, coalesce(t.status, 'not processed') AS track_status, t.reasons,
               d.action AS decision, coalesce(s.track_id = t.track_id, false) AS selected
        FROM candidates c
        LEFT JOIN review_current_tracks t ON t.imdb_id = c.imdb_id AND t.language = c.language
                                         AND t.provider = c.provider AND t.file_id = c.file_id
        LEFT JOIN review_latest_decisions d ON d.track_id = t.track_id
        LEFT JOIN selections s ON s.imdb_id = c.imdb_id AND s.language = c.language
        WHERE c.imdb_id = ? AND c.language = ?
        ORDER BY c.rank, c.provider, c.file_id""", [info["imdb_id"], info["language"]])
    history = _rows(con, """SELECT decision_id, decided_at, decided_by, action, note, track_id, file_id, in_force
                            FROM review_decision_history WHERE imdb_id = ? AND language = ?
                            ORDER BY decided_at, decision_id""", [info["imdb_id"], info["language"]])
    selection = _rows(con, "SELECT * FROM selections WHERE imdb_id = ? AND language = ?",
                      [info["imdb_id"], info["language"]])
    sanitized = _rows(con, """SELECT action, reasons, count(*) AS n FROM sanitization_log WHERE track_id = ?
                              GROUP BY ALL ORDER BY action, reasons""", [track_id])
    link = _rows(con, """SELECT lr.* FROM link_reviews lr JOIN films f USING (kim_id)
                         WHERE f.imdb_id = ?""", [info["imdb_id"]])
    return {"track": info, "flags": flags, "selection": selection[0] if selection else None,
            "chain": chain, "history": history, "sanitization": sanitized, "link_review": link}


@review_app.command("show")
def review_show(
    track: str = typer.Argument(..., help="Track id or a unique prefix of it."),
    home: Optional[Path] = typer.Option(None, "--home", help=HOME_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON on stdout."),
) -> None:
    """One track: its flags with evidence, the candidate chain and the decision history."""
    with _state(home) as con:
        ref = resolve_track(con, track)
        d = track_details(con, ref["track_id"])
    if as_json:
        _print_json(d)
        return
    out = _out()
    t = d["track"]
    out.print(f"[bold]track {t['track_id']}[/bold]  {t['imdb_id']} {t.get('title') or ''} "
              f"({t.get('year') or '?'})  language {t['language']}  {t['provider']} file {t['file_id']}")
    out.print(f"status {t['track_status']}  film {t.get('film_status', '-')}  encoding {t.get('encoding')}  "
              f"entries {t.get('n_entries')}  span {_mmss(t.get('first_start_ms'))}–{_mmss(t.get('last_end_ms'))} "
              f"of runtime {t.get('runtime_min')} min", highlight=False)
    if t.get("note"):
        out.print(f"[yellow]{t['note']}[/yellow]")
    sel = d["selection"]
    if sel:
        out.print(f"selection for {t['imdb_id']} {t['language']}: {sel['status']}"
                  + (f" file {sel['file_id']}" if sel["file_id"] else "")
                  + (" (this track)" if sel["track_id"] == t["track_id"] else "")
                  + (f" — {sel['reason']}" if sel["reason"] else ""), highlight=False)
    ft = Table(title="flags")
    for col in ("layer", "severity", "value", "threshold", "detail", "evidence"):
        ft.add_column(col, overflow="fold")
    for f in d["flags"]:
        ft.add_row(f["layer"], f["severity"], _num(f["value"]), _num(f["threshold"]), f["detail"] or "",
                   json.dumps(f["evidence"], ensure_ascii=False)[:400] if f["evidence"] is not None else "")
    out.print(ft)
    ct = Table(title="candidate chain (download-count order)")
    for col in ("rank", "file id", "downloads", "status", "reasons", "decision", "selected"):
        ct.add_column(col)
    for c in d["chain"]:
        status = c["track_status"] + (" (machine translated: skipped)" if c["machine_translated"] else "")
        ct.add_row(str(c["rank"]), c["file_id"] + (" ◀" if c["track_id"] == t["track_id"] else ""),
                   str(c["download_count"]), status, c["reasons"] or "", c["decision"] or "",
                   "yes" if c["selected"] else "")
    out.print(ct)
    ht = Table(title=f"decision history for {t['imdb_id']} {t['language']}")
    for col in ("when", "by", "action", "file id", "in force", "note"):
        ht.add_column(col, overflow="fold")
    for h in d["history"]:
        ht.add_row(_fmt_time(h["decided_at"]), h["decided_by"], h["action"], h["file_id"] or h["track_id"][:12],
                   "yes" if h["in_force"] else "superseded", h["note"])
    out.print(ht)
    if d["sanitization"]:
        out.print("sanitization: " + ", ".join(f"{s['action']} {s['n']} ({s['reasons']})" for s in d["sanitization"]))
    for lr in d["link_review"]:
        out.print(f"entity-link review: KIM {lr['kim_imdb_id']} vs CSM {lr['csm_imdb_id']} ({lr['reason']}), "
                  f"decision {lr['decision'] or 'open'}")


def _out() -> Console:
    """stdout console; wide when piped, so tables do not fold into unreadable columns."""
    return Console() if sys.stdout.isatty() else Console(width=220)


def _mmss(ms: Any) -> str:
    if ms is None:
        return "?"
    s = int(ms) // 1000
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _num(v: Any) -> str:
    return "" if v is None else f"{v:.4g}"


@contextlib.contextmanager
def _deciding(note: str, by: Optional[str], home: Optional[Path]):
    """(state connection for writing, the checked note, the author) of one curator decision."""
    note, author = _note_and_author(note, by)
    with _state(home, write=True) as con:
        yield con, note, author


def _stamp() -> tuple[datetime, str]:
    """The time of a decision and its id (decision ids start with the time, so they sort by it)."""
    from cinesub.records import utcnow

    now = utcnow()
    return now, now.strftime("%Y%m%dT%H%M%S%fZ") + "-" + uuid.uuid4().hex[:8]


def _note_and_author(note: str, by: Optional[str]) -> tuple[str, str]:
    """The decision's note and author, both required (they are the audit trail)."""
    note = note.strip()
    if not note:
        _fail("--note must say why (it is the audit trail)")
    author = (by if by is not None else os.environ.get("USER") or os.environ.get("LOGNAME") or "").strip()
    if not author:
        _fail("who decides? pass --by NAME (no $USER in the environment)")
    return note, author


def _home_option():
    return typer.Option(None, "--home", help=HOME_HELP)


def _note_option():
    return typer.Option(..., "--note", help="Why (stored with the decision; required).")


def _by_option():
    return typer.Option(None, "--by", help="Who decides (default $USER).")


def _decision_json_option():
    return typer.Option(False, "--json", help="Print the stored decision as JSON.")


@review_app.command("decide")
def review_decide(
    track: str = typer.Argument(..., help="Track id or a unique prefix of it."),
    action: Action = typer.Option(..., "--action", help="retain | repair | replace | exclude (docs/review.md)."),
    note: str = _note_option(),
    by: Optional[str] = _by_option(),
    home: Optional[Path] = _home_option(),
    as_json: bool = _decision_json_option(),
) -> None:
    """Record a curator decision (append-only); the next build honours it."""
    from validators.candidate import PROCESSING_VERSION

    with _deciding(note, by, home) as (con, note, author):
        ref = resolve_track(con, track)
        if ref["processing_version"] != PROCESSING_VERSION:
            _fail(f"track {ref['track_id']} was processed with version {ref['processing_version']}, not the "
                  f"current {PROCESSING_VERSION}: decide on its current track (cinesub review list)")
        info = _rows(con, "SELECT * FROM review_all_tracks WHERE track_id = ?", [ref["track_id"]])[0]
        if action is Action.retain and info["track_status"] == "rejected" and info["decision"] is None:
            _fail(f"track {info['track_id'][:12]} is rejected ({info['reasons']}): a stop flag means there is no "
                  "usable text to retain; use replace, exclude or repair")
        now, decision_id = _stamp()
        row = {"decision_id": decision_id, "track_id": info["track_id"], "imdb_id": info["imdb_id"],
               "language": info["language"], "action": action.value, "note": note, "decided_by": author,
               "decided_at": now}
        con.execute("INSERT INTO decisions (decision_id, track_id, imdb_id, language, action, note, decided_by, "
                    "decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", list(row.values()))
        remaining = con.execute(
            """SELECT count(*) FROM candidates c
               WHERE c.imdb_id = ? AND c.language = ? AND c.rank > coalesce(?, 0)
                 AND NOT coalesce(c.machine_translated, false) AND NOT coalesce(c.ai_translated, false)""",
            [info["imdb_id"], info["language"], info["rank"]]).fetchone()[0]
    result = dict(row, file_id=info["file_id"], track_status=info["track_status"], effect=EFFECTS[action.value],
                  later_candidates=remaining)
    if as_json:
        _print_json(result)
        return
    out = _out()
    out.print(f"recorded {decision_id}: {action.value} on track {info['track_id'][:12]} "
              f"({info['imdb_id']} {info['language']} file {info['file_id']}, {info['track_status']}) "
              f"by {author}", highlight=False)
    out.print(EFFECTS[action.value])
    if action is Action.replace and remaining == 0:
        out.print("[yellow]note: no later candidate in the chain; the film-language will have no clean "
                  "track[/yellow]")


class LinkChoice(str, Enum):
    kim = "kim"
    csm = "csm"
    reject = "reject"


@review_app.command("decide-link")
def review_decide_link(
    kim_id: str = typer.Argument(..., help="KIM page id of the disagreement (see `cinesub review list`)."),
    accept: LinkChoice = typer.Option(..., "--accept", help="kim (the KIM IMDb id is right) | csm (the CSM "
                                      "IMDb id is right) | reject (drop the film at gate 3)."),
    note: str = _note_option(),
    by: Optional[str] = _by_option(),
    home: Optional[Path] = _home_option(),
    as_json: bool = _decision_json_option(),
) -> None:
    """Decide an entity-link disagreement (append-only); the next build honours it."""
    from validators.entity_link import CHOICES, EFFECTS

    decision = CHOICES[accept.value]
    with _deciding(note, by, home) as (con, note, author):
        found = _rows(con, "SELECT * FROM review_link_queue WHERE kim_id = ?", [kim_id.strip()])
        if not found:
            known = [r[0] for r in con.execute("SELECT kim_id FROM link_reviews ORDER BY 1 LIMIT 10").fetchall()]
            _fail(f"no entity-link review for KIM id {kim_id!r} (queue: {', '.join(known) or 'empty'})")
        review = found[0]
        if decision == "accept_csm" and not review["csm_imdb_id"]:
            _fail(f"the CSM page of {review['kim_id']} has no IMDb id to accept ({review['reason']}): "
                  "use --accept kim or --accept reject")
        now, decision_id = _stamp()
        row = {"decision_id": decision_id, "kim_id": review["kim_id"], "decision": decision,
               "kim_imdb_id": review["kim_imdb_id"], "csm_imdb_id": review["csm_imdb_id"], "note": note,
               "decided_by": author, "decided_at": now}
        con.execute("INSERT INTO link_decisions (decision_id, kim_id, decision, kim_imdb_id, csm_imdb_id, note, "
                    "decided_by, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", list(row.values()))
    result = dict(row, previous=review["decision"], effect=EFFECTS[decision])
    if as_json:
        _print_json(result)
        return
    out = _out()
    out.print(f"recorded {decision_id}: {decision} on {review['kim_id']} (KIM {review['kim_imdb_id']} vs CSM "
              f"{review['csm_imdb_id'] or '-'}; was {review['decision']}) by {author}", highlight=False)
    out.print(EFFECTS[decision])


EXPORT_COLUMNS = ("decision_id", "decided_at", "decided_by", "action", "note", "track_id", "imdb_id", "title",
                  "language", "provider", "file_id", "track_status", "in_force", "selection_status",
                  "selected_file_id", "track_selected")


@review_app.command("export")
def review_export(
    path: Path = typer.Argument(..., help="CSV file to write ('-' for stdout)."),
    home: Optional[Path] = typer.Option(None, "--home", help=HOME_HELP),
) -> None:
    """Write every decision (who, when, what, why, and the current outcome) as CSV."""
    with _state(home) as con:
        rows = _rows(con, f"SELECT {', '.join(EXPORT_COLUMNS)} FROM review_decision_history "
                          "ORDER BY decided_at, decision_id")
    if str(path) == "-":
        _write_csv(sys.stdout, rows)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        _write_csv(fh, rows)
    tmp.replace(path)
    err.print(f"{len(rows)} decision(s) written to {path}", highlight=False)


def _write_csv(fh, rows: list[dict[str, Any]]) -> None:
    w = csv.DictWriter(fh, fieldnames=list(EXPORT_COLUMNS))
    w.writeheader()
    for r in rows:
        r = dict(r)
        if isinstance(r["decided_at"], datetime):
            r["decided_at"] = r["decided_at"].astimezone(timezone.utc).isoformat()
        w.writerow(r)
