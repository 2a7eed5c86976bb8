"""Temporary files of atomic writers: named after their owner, swept when the owner is dead,
and published readable by others.

Every atomic writer (a release, an export, a sample world, the raw store) writes into a
temporary sibling named ``.tmp-<kind>-<pid>.<start>-<random>`` and renames it into place. A
build killed mid-write leaves that temporary behind; :func:`sweep` removes it on the next build:

* a tagged name whose owner (same pid *and* same process start time, so a reused pid is not
  mistaken for the owner) is no longer running is stale;
* an untagged ``.tmp-*`` name (an earlier cinesub, or a writer that does not tag) is stale once
  it has not been modified for :data:`UNTAGGED_STALE_S` seconds: a writer still at work keeps
  touching its file.

:func:`make_public` gives a tree the modes a published folder needs whatever the umask and
``mkdtemp``'s 0700: directories 0755, files 0644.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from cinesub.procs import pid_alive, start_ticks

PREFIX = ".tmp-"
#: an untagged temporary untouched for this long is a leftover
UNTAGGED_STALE_S = 600.0
_TAG = re.compile(r"^\.tmp-[A-Za-z_-]*?-?(\d+)\.(\d+)-")
DIR_MODE, FILE_MODE = 0o755, 0o644


def owner_tag(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{pid}.{start_ticks(pid) or 0}"


def _alive(pid: int, ticks: int) -> bool:
    now = start_ticks(pid)
    if now is not None:
        return ticks == 0 or now == ticks
    if Path("/proc/self/stat").exists():
        return False  # /proc works and has no such process
    return pid_alive(pid)  # no /proc: the pid alone


def mkdtemp(kind: str, directory: Path) -> Path:
    """A new private directory ``.tmp-<kind>-<owner>-<random>`` in ``directory``."""
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-{owner_tag()}-", dir=directory))


def mkstemp(kind: str, directory: Path, suffix: str = "") -> tuple[int, str]:
    """A new file ``.tmp-<kind>-<owner>-<random><suffix>`` in ``directory``: (fd, path)."""
    return tempfile.mkstemp(prefix=f"{PREFIX}{kind}-{owner_tag()}-", suffix=suffix, dir=directory)


def is_stale(path: Path, *, now: float | None = None) -> bool:
    """Whether the temporary ``path`` (a ``.tmp-*`` name) was left by a writer that is gone."""
    m = _TAG.match(path.name)
    if m:
        return not _alive(int(m.group(1)), int(m.group(2)))
    try:
        mtime = path.lstat().st_mtime
    except FileNotFoundError:
        return False
    return (time.time() if now is None else now) - mtime >= UNTAGGED_STALE_S


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def sweep(directory: Path, *, recursive: bool = False, prefix: str = PREFIX,
          skip: tuple[str, ...] = ()) -> list[Path]:
    """Remove the stale temporaries (names starting with ``prefix``) in ``directory`` (and, with
    ``recursive``, below it, not descending into the top-level names in ``skip``); return them."""
    directory = Path(directory)
    removed: list[Path] = []
    if not directory.is_dir():
        return removed
    for root, dirs, files in os.walk(directory):
        here = Path(root)
        for name in [*dirs, *files]:
            p = here / name
            if name.startswith(prefix) and is_stale(p):
                _remove(p)
                removed.append(p)
        # never descend into a temporary (removed, or a live writer's) or a skipped folder
        dirs[:] = [d for d in dirs if not d.startswith(PREFIX)
                   and not (here == directory and d in skip)] if recursive else []
    return removed


def make_public(root: Path) -> None:
    """Directories 0755 and files 0644 throughout ``root`` (symbolic links left alone)."""
    root = Path(root)
    os.chmod(root, DIR_MODE)
    for dirpath, dirs, files in os.walk(root):
        for d in dirs:
            p = os.path.join(dirpath, d)
            if not os.path.islink(p):
                os.chmod(p, DIR_MODE)
        for f in files:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                os.chmod(p, FILE_MODE)


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (UTF-8): :func:`write_bytes_atomic`."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all: a tagged temporary sibling (:func:`mkstemp`, swept when
    its writer died) renamed into place. Parents are created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = mkstemp("write", path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
