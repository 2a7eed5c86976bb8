"""Removal on request (SPEC C): withdraw a film and reissue the release without it.

The withdrawal is recorded in the state DB (``withdrawals``) and appended to the durable log
``releases/withdrawals.jsonl``; a new release is published from the state DB at once (a major
version: data was removed), and every later build leaves the film out. The film keeps its id and
split in the registries, so neither is ever reused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from cinesub.errors import CinesubError
from cinesub.records import utcnow
from warehouse.registry import append_withdrawal_log, read_withdrawal_log


class WithdrawError(CinesubError):
    """A withdrawal refused; ``code`` (= ``reason``): reason_required, unknown_film, already_withdrawn."""

    def __init__(self, code: str, message: str):
        super().__init__(message, code)
        self.code = code


def withdraw(state_con: duckdb.DuckDBPyConnection, releases_dir: Path, imdb_id: str, *, reason: str,
             requested_by: str | None, publish_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Withdraw ``imdb_id``; return {imdb_id, release: publish() result, log}."""
    from warehouse.publish import latest_version
    from warehouse.release import publish
    from warehouse.registry import seed_from_published

    if not reason.strip():
        raise WithdrawError("reason_required", "a withdrawal needs a reason")
    seed_from_published(state_con, releases_dir, latest_version(releases_dir))
    known = state_con.execute("SELECT count(*) FROM film_ids WHERE imdb_id = ?", [imdb_id]).fetchall()[0][0]
    if not known:
        raise WithdrawError("unknown_film", f"{imdb_id} was never released; nothing to withdraw")
    already = state_con.execute("SELECT release_version FROM withdrawals WHERE imdb_id = ?", [imdb_id]).fetchall()
    if already and already[0][0] is not None:
        logged = any(r["imdb_id"] == imdb_id for r in read_withdrawal_log(releases_dir))
        raise WithdrawError("already_withdrawn",
                            f"{imdb_id} was withdrawn in release {already[0][0]}"
                            + ("" if logged else " (log entry missing; run again after checking the log)"))
    requested_at = utcnow().replace(microsecond=0)
    if not already:
        state_con.execute("INSERT INTO withdrawals VALUES (?, ?, ?, ?, NULL)",
                          [imdb_id, reason, requested_by, requested_at])
    result = publish(state_con, releases_dir, **publish_kwargs)
    state_con.execute("UPDATE withdrawals SET release_version = ? WHERE imdb_id = ?", [result["version"], imdb_id])
    record = {"imdb_id": imdb_id, "reason": reason, "requested_by": requested_by,
              "requested_at": requested_at.isoformat(), "release_version": result["version"]}
    append_withdrawal_log(releases_dir, record)
    return {"imdb_id": imdb_id, "release": result, "log": record}
