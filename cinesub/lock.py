"""One writer per ``CINESUB_HOME``: an advisory lock file that names its holder.

The core is ``fcntl.flock`` on ``CINESUB_HOME/cinesub.lock``: the kernel drops the lock when the
holding process dies, however it dies, so a crashed build never leaves a lock that blocks the
next one. The file holds the holder's PID, its process start time (to tell a reused PID apart),
host, command and start time, for the message a second build prints; it is emptied on release,
so content found on acquiring means the previous holder died (``HomeLock.stale``). Where
``flock`` is not supported (some network file systems) the file itself is the lock: a holder
whose PID is dead, or alive with another process start time, is stale and taken over.

The lock is re-entrant within a process (a flow run inside a locked command may take it again)
and is not inherited by programs the holder starts (``O_CLOEXEC``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from cinesub.errors import HomeLocked, UsageError
from cinesub.procs import pid_alive, start_ticks

LOCK_NAME = "cinesub.lock"


@dataclass(frozen=True)
class Holder:
    pid: int
    proc_start: str | None  # /proc/<pid>/stat start time (clock ticks since boot), None off Linux
    host: str
    command: str
    since: str  # ISO 8601, UTC

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host} (`{self.command}`, since {self.since})"


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` as the kernel records it (None when unknown)."""
    ticks = start_ticks(pid)
    return None if ticks is None else str(ticks)


def is_stale(holder: Holder) -> bool:
    """True when the process named by ``holder`` no longer runs (dead, or its PID was reused)."""
    if holder.host != socket.gethostname():
        return False  # another machine's process: cannot tell, assume alive
    if not pid_alive(holder.pid):
        return True
    now = process_start(holder.pid)
    return holder.proc_start is not None and now is not None and now != holder.proc_start


def read_holder(path: Path) -> Holder | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "null")
        return Holder(**data) if isinstance(data, dict) else None
    except (OSError, ValueError, TypeError):
        return None


def check_home(home: Path | None) -> Path:
    """The resolved CINESUB_HOME (``home``, else $CINESUB_HOME, else ./var); :class:`UsageError`
    when it, or the nearest existing folder above it, is not a directory."""
    h = Path(home if home else (os.environ.get("CINESUB_HOME") or "./var")).expanduser().resolve()
    for p in (h, *h.parents):
        if p.exists():
            if not p.is_dir():
                raise UsageError(f"home {h} is not a directory ({p} is a file)", "home_not_directory")
            break
    return h


def _command() -> str:
    args = [Path(sys.argv[0]).name if sys.argv else "python", *sys.argv[1:]]
    if args[0] in ("cli.py", "__main__.py", "-m", "-c"):
        args[0] = "cinesub"
    return " ".join(args)[:200]


_held: dict[Path, list] = {}  # path -> [fd, depth]: re-entrancy within this process


class HomeLock:
    """``with HomeLock(home).acquire(wait=...)``: the exclusive lock on one CINESUB_HOME."""

    def __init__(self, home: Path, command: str | None = None) -> None:
        self.home = Path(home).resolve()
        self.path = self.home / LOCK_NAME
        self.command = command or _command()
        self.stale: Holder | None = None  # the dead holder whose lock this one replaced
        self._fd: int | None = None

    # -- acquiring ---------------------------------------------------------------------------
    def acquire(self, wait: bool = False, timeout: float | None = None, poll: float = 0.25,
                on_wait=None) -> "HomeLock":
        if self.path in _held:
            _held[self.path][1] += 1
            self._fd = _held[self.path][0]
            return self
        try:
            self.home.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except (NotADirectoryError, FileExistsError) as exc:
            raise UsageError(f"home {self.home} is not a directory ({exc.strerror})", "home_not_directory") from None
        except PermissionError as exc:
            raise UsageError(f"cannot write to home {self.home}: {exc.strerror}", "home_not_writable") from None
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        told = False
        try:
            while not self._try_lock(fd):
                holder = read_holder(self.path)
                if not wait or (deadline is not None and time.monotonic() >= deadline):
                    raise HomeLocked(self._message(holder, waited=wait))
                if on_wait is not None and not told:
                    on_wait(holder)
                    told = True
                time.sleep(poll)
        except BaseException:
            os.close(fd)
            raise
        previous = read_holder(self.path)
        if previous is not None and previous.pid != os.getpid():
            self.stale = previous
        me = Holder(os.getpid(), process_start(os.getpid()), socket.gethostname(), self.command,
                    datetime.now(timezone.utc).isoformat(timespec="seconds"))
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(asdict(me)) + "\n").encode(), 0)
        os.fsync(fd)
        _held[self.path] = [fd, 1]
        self._fd = fd
        return self

    def _try_lock(self, fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        except OSError as exc:
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                raise
        # no flock here: the file is the lock; a live holder keeps it, a stale one is replaced
        holder = read_holder(self.path)
        return holder is None or holder.pid == os.getpid() or is_stale(holder)

    def _message(self, holder: Holder | None, waited: bool) -> str:
        who = holder.describe() if holder is not None else "another process (starting up)"
        if holder is not None and is_stale(holder):
            who += (" — that process has ended, but one it started still holds the lock "
                    f"(find it with `fuser {self.path}`)")
        hint = "gave up waiting" if waited else "wait for it to finish, or rerun with --wait"
        return f"home {self.home} is locked by {who}; {hint}"

    # -- releasing ---------------------------------------------------------------------------
    def release(self) -> None:
        entry = _held.get(self.path)
        if entry is None or self._fd is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            del _held[self.path]
            try:
                os.ftruncate(entry[0], 0)  # an empty file: released cleanly
            finally:
                fcntl.flock(entry[0], fcntl.LOCK_UN)
                os.close(entry[0])
        self._fd = None

    def __enter__(self) -> "HomeLock":
        if self._fd is None:
            self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@contextlib.contextmanager
def home_lock(home: Path, *, wait: bool = False, timeout: float | None = None, command: str | None = None,
              on_wait=None, on_stale=None) -> Iterator[HomeLock]:
    """Hold the exclusive lock on ``home`` for the block (:class:`HomeLocked` when it is taken)."""
    lock = HomeLock(home, command).acquire(wait=wait, timeout=timeout, on_wait=on_wait)
    try:
        if lock.stale is not None and on_stale is not None:
            on_stale(lock.stale)
        yield lock
    finally:
        lock.release()
