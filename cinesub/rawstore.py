"""Content-addressed, immutable raw store: ``<root>/sha256/ab/cd/<hash>``, written atomically.

Same bytes → same path → no second copy. Provenance is recorded by the caller in the state
DB's ``blobs`` table; the store itself holds bytes only.

The store is addressed through fsspec: a local folder (default ``CINESUB_HOME/raw``), a
``file:///`` URL, or an object-store URL from the settings (``raw_store_url``, e.g.
``s3://bucket/raw`` with ``s3fs`` installed), so that workers on other machines read the bytes
of a job from its URL and digest (:func:`read_blob`) instead of a path only the coordinator has.
Local writes are temp file + fsync + rename (read-only files); an object store's single PUT is
atomic by itself. Every read is checked against the digest.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cinesub import tmpfiles

if TYPE_CHECKING:
    from cinesub.settings import Settings


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _check_digest(digest: str) -> str:
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ValueError(f"not a sha256 hex digest: {digest!r}")
    return digest


def _relpath(digest: str) -> str:
    _check_digest(digest)
    return f"sha256/{digest[:2]}/{digest[2:4]}/{digest}"


def _is_url(location: Any) -> bool:
    return isinstance(location, str) and "://" in location


def _verified(data: bytes, digest: str, where: str) -> bytes:
    if sha256_bytes(data) != digest:
        raise IOError(f"raw store corruption: {where} does not hash to its name {digest}")
    return data


def read_blob(url: str, digest: str) -> bytes:
    """The bytes at ``url`` (a blob URL from :meth:`RawStore.url_for`), checked against ``digest``.

    What a worker calls: it needs the fsspec implementation of the URL's protocol (``s3fs`` for
    ``s3://``), nothing of the coordinator."""
    import fsspec

    _check_digest(digest)
    with fsspec.open(url, "rb") as fh:
        return _verified(fh.read(), digest, url)


class RawStore:
    """The raw store at ``location``: a local folder (``Path`` or plain path string) or an fsspec
    URL. ``root`` is always a local folder: the store itself when local, else ``local_root``
    (where the coordinator keeps its own lookup files, e.g. Internet Archive refs)."""

    def __init__(self, location: Path | str, *, local_root: Path | None = None):
        import fsspec.core

        self._root_uri: str | None = None

        if _is_url(location):
            self.fs, base = fsspec.core.url_to_fs(str(location))
            protocols = (self.fs.protocol,) if isinstance(self.fs.protocol, str) else tuple(self.fs.protocol)
            self.local = "file" in protocols
            if self.local:
                location = Path(base)
        else:
            self.fs, self.local = None, True
        if self.local:
            self.root = Path(location)
            self._base = str(self.root)
        else:
            self._base = base.rstrip("/")
            self.root = Path(local_root) if local_root is not None else Path(".")

    @classmethod
    def for_settings(cls, settings: Settings) -> RawStore:
        """The store the settings name: ``raw_store_url``, else ``CINESUB_HOME/raw``."""
        return cls(settings.raw_store_url or settings.raw_dir, local_root=settings.raw_dir)

    # -- addressing ------------------------------------------------------------------------------
    def path_for(self, digest: str) -> Path:
        """The local path of a blob (local stores only)."""
        if not self.local:
            raise ValueError(f"the raw store at {self._base} is not a local folder; use url_for")
        return self.root / _relpath(digest)

    def url_for(self, digest: str) -> str:
        """A URL any worker can open (:func:`read_blob`): ``file://`` for a local store."""
        if self.local:
            # built as a string: a pathlib path interns every component (each digest would stay
            # in the interpreter's interned-string table, which never shrinks)
            if self._root_uri is None:
                self._root_uri = self.root.resolve().as_uri().rstrip("/")
            return f"{self._root_uri}/{_relpath(digest)}"
        return self.fs.unstrip_protocol(f"{self._base}/{_relpath(digest)}")

    # -- bytes -----------------------------------------------------------------------------------
    def _local_str(self, digest: str) -> str:
        """The local path of a blob as a string (no pathlib: see :meth:`url_for`)."""
        return os.path.join(self._base, _relpath(digest))

    def has(self, digest: str) -> bool:
        if self.local:
            return os.path.exists(self._local_str(digest))
        return self.fs.exists(f"{self._base}/{_relpath(digest)}")

    def put(self, data: bytes) -> tuple[str, bool]:
        """Store bytes; return (sha256, newly_written). Idempotent and atomic (temp + rename)."""
        digest = sha256_bytes(data)
        if self.has(digest):
            return digest, False
        if not self.local:
            self.fs.pipe_file(f"{self._base}/{_relpath(digest)}", data)  # one PUT: atomic on object stores
            return digest, True
        self._install(digest, lambda out: out.write(data))
        return digest, True

    def put_file(self, path: Path | str, chunk: int = 1 << 20) -> tuple[str, bool]:
        """Store a file's bytes without holding them in memory (an IMDb dataset is gigabytes):
        hashed, then copied, in chunks. Same result as ``put(path.read_bytes())``."""
        import shutil

        path = Path(path)
        h = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(chunk), b""):
                h.update(block)
        digest = h.hexdigest()
        if self.has(digest):
            return digest, False
        if not self.local:
            self.fs.put_file(str(path), f"{self._base}/{_relpath(digest)}")
            return digest, True

        def copy(out: Any) -> None:
            with path.open("rb") as src:
                shutil.copyfileobj(src, out, chunk)

        self._install(digest, copy)
        return digest, True

    def _install(self, digest: str, write: Callable[[Any], object]) -> None:
        """Write the object ``digest`` of a local store: temp file named after this process (swept
        if it dies), fsync, read-only, atomic rename."""
        target = self.path_for(digest)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tmpfiles.mkstemp("raw", target.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                write(fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o444)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def get(self, digest: str) -> bytes:
        if self.local:
            with open(self._local_str(digest), "rb") as fh:
                return _verified(fh.read(), digest, digest)
        return _verified(self.fs.cat_file(f"{self._base}/{_relpath(digest)}"), digest, digest)
