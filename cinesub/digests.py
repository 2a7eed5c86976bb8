"""Digests of directory trees: the input snapshot ids of builds and of source mirrors."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

#: within :func:`one_snapshot`: a file's sha256 by (path, device, inode, size, mtime, ctime)
_MEMO: dict[tuple, bytes] | None = None


@contextlib.contextmanager
def one_snapshot() -> Iterator[None]:
    """A scope (one build) in which the trees digested do not change under the digests: each
    file is read and hashed once however many digests cover it (a build digests its sample world
    for the "nothing changed" test, for the run's inputs and again for the next build's record,
    and each film's files for the search cache). A file rewritten in the scope has a new ctime or
    size, so it is hashed again; outside any scope nothing is remembered."""
    global _MEMO
    outer, _MEMO = _MEMO, ({} if _MEMO is None else _MEMO)
    try:
        yield
    finally:
        _MEMO = outer


def _file_sha256(p: Path, st: os.stat_result) -> bytes:
    memo = _MEMO
    key = (str(p), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if memo is not None and key in memo:
        return memo[key]
    with open(p, "rb") as f:
        digest = hashlib.file_digest(f, "sha256").digest()
    if memo is not None:
        memo[key] = digest
    return digest


def tree_digest(root: Path | str, subdirs: Iterable[str] | None = None) -> str:
    """Digest of the file names (relative to ``root``) and bytes of a tree, or of only its
    ``subdirs``. Never opens anything but a regular file (a FIFO would block); names that are not
    UTF-8, links, special files and unreadable files count by name and kind, so changing them
    changes the digest."""
    root = Path(root)
    h = hashlib.sha256()
    tops = [root] if subdirs is None else [root / d for d in subdirs if (root / d).is_dir()]
    for parts, p in sorted(entry for top in tops for entry in _below(root, top)):
        name = os.fsencode("/".join(parts))
        try:
            st = os.stat(p)
            if not stat.S_ISREG(st.st_mode):
                if not stat.S_ISDIR(st.st_mode):
                    h.update(name + b"\0special\0")
                continue
            digest = _file_sha256(p, st)
            h.update(name + b"\0")
            h.update(digest)
        except OSError as exc:  # dangling link, permission denied
            h.update(name + b"\0" + type(exc).__name__.encode() + b"\0")
    return h.hexdigest()


def _below(root: Path, top: Path) -> Iterator[tuple[tuple[str, ...], str]]:
    """(path parts relative to ``root``, path) of everything below ``top``, as ``top.rglob("*")``
    lists it (a link to a folder is listed, not entered; an unreadable folder is passed over),
    with plain strings instead of Path objects (a tree of tens of thousands of files: ~4x
    faster); sorted, the parts order the entries as ``sorted()`` orders the Paths."""
    base = str(root)
    for dirpath, dirs, files in os.walk(top):
        rel = os.path.relpath(dirpath, base)
        head = () if rel == os.curdir else tuple(rel.split(os.sep))
        for name in (*dirs, *files):
            yield (*head, name), os.path.join(dirpath, name)


def files_digest(paths: Iterable[Path | str], *extra: str) -> str:
    """Digest of the bytes of ``paths`` (in the order given) and of ``extra`` strings: the version
    of the code behind a cached result (a changed file, another cache key)."""
    h = hashlib.sha256()
    for p in paths:
        h.update(hashlib.sha256(Path(p).read_bytes()).digest())
    for x in extra:
        h.update(b"\0" + x.encode())
    return h.hexdigest()
