"""Typed errors for what a user can get wrong, each with a reason code and an exit code.

Library code raises these (it never exits the process itself); the command line
(:func:`cinesub.cli_errors.run_guarded`) turns one into a single red line on stderr and the
exit code below. The codes are the CLI's contract and are listed in the README ("Exit codes").
"""

from __future__ import annotations

from enum import IntEnum

try:  # typer vendors click; its handler (and typer.testing.CliRunner) knows these exceptions
    from typer._click.exceptions import ClickException as _ClickException
except ImportError:  # pragma: no cover - older typer
    from click import ClickException as _ClickException


class ExitCode(IntEnum):
    OK = 0
    #: the input was judged and rejected (``cinesub inspect``, ``cinesub safety scan``)
    REJECTED = 1
    #: bad usage or configuration: a wrong option or value, a bad config file, a missing input
    USAGE = 2
    #: the build paused: a download quota is spent; the next build resumes
    PAUSED = 3
    #: the release consistency gate failed: nothing was published
    BLOCKED = 4
    #: a remote service (archive, provider, API) stayed unreachable after the bounded retries
    UNREACHABLE = 5
    #: CINESUB_HOME is held by another build (or another writer of its state)
    LOCKED = 6
    #: the run failed on its environment: an I/O error (disk full, permissions) while working
    FAILED = 7
    #: a bug: an unexpected exception; the traceback is in CINESUB_HOME/logs/
    INTERNAL = 70
    #: interrupted (Ctrl-C)
    INTERRUPTED = 130


class CinesubError(_ClickException):
    """A user-facing error: ``str(err)`` is the one-line message, ``reason`` a stable code.

    A click exception too, so a command driven by click itself (tests) still exits with
    ``exit_code`` and shows the message."""

    reason: str = "error"
    exit_code: int = ExitCode.USAGE

    def __init__(self, message: str, reason: str | None = None, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason
        if exit_code is not None:
            self.exit_code = int(exit_code)

    def __str__(self) -> str:
        return self.message


class UsageError(CinesubError):
    """A bad option, argument or input path (exit 2)."""

    reason = "usage"


class ConfigError(CinesubError, ValueError):
    """A bad settings file, key, type or value (exit 2). Also a ``ValueError`` for old callers."""

    reason = "config_invalid"


class HomeLocked(CinesubError):
    """Another process holds the CINESUB_HOME lock (exit 6)."""

    reason = "home_locked"
    exit_code = ExitCode.LOCKED


class DaskUnreachable(CinesubError):
    """The Dask scheduler of ``--runner dask`` cannot be reached (exit 5)."""

    reason = "dask_unreachable"
    exit_code = ExitCode.UNREACHABLE
