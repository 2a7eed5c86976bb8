"""Digests of directory trees: the input snapshot ids of builds and of source mirrors."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path


def tree_digest(root: Path | str, subdirs: Iterable[str] | None = None) -> str:
    """Digest of the file names (relative to ``root``) and bytes of a tree, or of only its
    ``subdirs``. Never opens anything but a regular file (a FIFO would block); names that are not
    UTF-8, links, special files and unreadable files count by name and kind, so changing them
    changes the digest."""
    root = Path(root)
    h = hashlib.sha256()
    if subdirs is None:
        paths = sorted(root.rglob("*"))
    else:
        paths = sorted(p for d in subdirs if (root / d).is_dir() for p in (root / d).rglob("*"))
    for p in paths:
        name = os.fsencode(p.relative_to(root))
        try:
            if not stat.S_ISREG(os.stat(p).st_mode):
                if not p.is_dir():
                    h.update(name + b"\0special\0")
                continue
            with open(p, "rb") as f:
                h.update(name + b"\0")
                h.update(hashlib.file_digest(f, "sha256").digest())
        except OSError as exc:  # dangling link, permission denied
            h.update(name + b"\0" + type(exc).__name__.encode() + b"\0")
    return h.hexdigest()


def files_digest(paths: Iterable[Path | str], *extra: str) -> str:
    """Digest of the bytes of ``paths`` (in the order given) and of ``extra`` strings: the version
    of the code behind a cached result (a changed file, another cache key)."""
    h = hashlib.sha256()
    for p in paths:
        h.update(hashlib.sha256(Path(p).read_bytes()).digest())
    for x in extra:
        h.update(b"\0" + x.encode())
    return h.hexdigest()
