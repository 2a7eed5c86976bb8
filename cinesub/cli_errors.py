"""The command line's one error path: every failure is one line on stderr and a documented code.

:func:`run_guarded` runs the click/typer app in non-standalone mode and maps what comes out:

* a usage error of click (bad option, missing argument) → ``error: ...`` + exit 2;
* a :class:`cinesub.errors.CinesubError` → its message + reason code, its exit code;
* a provider error (remote service unreachable) → its reason code, exit 5;
* a DuckDB lock conflict (another process has the state DB open) → exit 6;
* an ``OSError`` → exit 7 and an unexpected exception → exit 70, both with the traceback written
  to ``CINESUB_HOME/logs/`` (never to the terminal, unless ``CINESUB_DEBUG=1``).
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cinesub.errors import CinesubError, ExitCode

# typer >= 0.2x vendors click as typer._click; plain click may still be raised by third parties
_MODS = []
for _name in ("typer._click.exceptions", "click.exceptions"):
    try:
        _MODS.append(__import__(_name, fromlist=["UsageError"]))
    except ImportError:
        pass
_NO_ARGS = tuple(m.NoArgsIsHelpError for m in _MODS if hasattr(m, "NoArgsIsHelpError"))
_USAGE = tuple(m.UsageError for m in _MODS)
_CLICK = tuple(m.ClickException for m in _MODS)
_ABORT = tuple(m.Abort for m in _MODS if hasattr(m, "Abort"))
try:
    from typer.exceptions import Abort as _TyperAbort

    _ABORT += (_TyperAbort,)
except ImportError:
    pass


def _say(message: str) -> None:
    """One line on stderr, red on a terminal."""
    line = " ".join(str(message).split())
    try:
        if sys.stderr.isatty():
            line = f"\x1b[31m{line}\x1b[0m"
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _home_from_argv(argv: list[str]) -> Path:
    home = None
    for i, a in enumerate(argv):
        if a == "--home" and i + 1 < len(argv):
            home = argv[i + 1]
        elif a.startswith("--home="):
            home = a.split("=", 1)[1]
    return Path(home or os.environ.get("CINESUB_HOME") or "./var")


def write_log(exc: BaseException, argv: list[str]) -> Path | None:
    """The traceback of ``exc`` in CINESUB_HOME/logs/ (a temp folder when the home is unusable)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    text = (f"cinesub {' '.join(argv)}\n{datetime.now(timezone.utc).isoformat()}\n\n"
            + "".join(traceback.format_exception(exc)))
    for folder in (_home_from_argv(argv) / "logs", Path(tempfile.gettempdir()) / "cinesub-logs"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"error-{stamp}-{os.getpid()}.log"
            path.write_text(text, encoding="utf-8")
            return path.resolve()
        except OSError:
            continue
    return None


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] + ("…" if len(text) > 300 else "")


def exit_code_for(exc: BaseException, argv: list[str]) -> int:
    """Report ``exc`` in one line and return the exit code (see the module docstring)."""
    if isinstance(exc, CinesubError):
        _say(f"error: {exc} [{exc.reason}]")
        return int(exc.exit_code)
    if _NO_ARGS and isinstance(exc, _NO_ARGS):
        exc.show()
        return ExitCode.USAGE
    if isinstance(exc, _USAGE):
        path = exc.ctx.command_path if exc.ctx is not None else "cinesub"
        _say(f"error: {exc.format_message()} (see `{path} --help`) [usage]")
        return ExitCode.USAGE
    if isinstance(exc, _CLICK):
        _say(f"error: {exc.format_message()} [usage]")
        return exc.exit_code if exc.exit_code else ExitCode.USAGE
    if isinstance(exc, (*_ABORT, KeyboardInterrupt)):
        _say("interrupted")
        return ExitCode.INTERRUPTED
    try:
        from extractors.providers.errors import ProviderError
    except ImportError:  # pragma: no cover
        ProviderError = ()  # type: ignore[assignment]
    if isinstance(exc, ProviderError):
        _say(f"error: a provider or remote service failed: {exc.detail} [{exc.reason_code}]")
        return ExitCode.UNREACHABLE
    if type(exc).__module__.lstrip("_").startswith("duckdb") and "lock" in str(exc).lower():
        _say(f"error: the state database is in use by another process: {_short(exc)} [state_db_locked]")
        return ExitCode.LOCKED
    if os.environ.get("CINESUB_DEBUG", "") not in ("", "0"):
        raise exc
    log = write_log(exc, argv)
    where = f"details in {log}" if log else "no log could be written"
    if isinstance(exc, OSError):
        _say(f"error: {type(exc).__name__}: {_short(exc)} — {where} [os_error]")
        return ExitCode.FAILED
    _say(f"internal error: {type(exc).__name__}: {_short(exc)} — please report; {where}")
    return ExitCode.INTERNAL


def run_guarded(invoke: Callable[..., Any], argv: list[str] | None = None) -> int:
    """Run ``invoke(standalone_mode=False)`` (a click command) and return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        rv = invoke(args=argv, standalone_mode=False, prog_name="cinesub")
    except SystemExit as exc:  # library code should raise typed errors; a message still gets one line
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        _say(f"error: {exc.code} [usage]")
        return ExitCode.USAGE
    except BrokenPipeError:
        try:  # the reader went away (`cinesub ... | head`): nothing more to say
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:
            pass
        return ExitCode.FAILED
    except BaseException as exc:  # noqa: BLE001 - this is the last line of defence
        return exit_code_for(exc, argv)
    return rv if isinstance(rv, int) and not isinstance(rv, bool) else 0
