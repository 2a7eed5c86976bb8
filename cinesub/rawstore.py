"""Content-addressed, immutable raw store: ``<root>/sha256/ab/cd/<hash>``, written atomically.

Same bytes → same path → no second copy. Provenance is recorded by the caller in the state
DB's ``blobs`` table; the store itself holds bytes only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

from cinesub import tmpfiles


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class RawStore:
    def __init__(self, root: Path):
        self.root = Path(root)

    def path_for(self, digest: str) -> Path:
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a sha256 hex digest: {digest!r}")
        return self.root / "sha256" / digest[:2] / digest[2:4] / digest

    def has(self, digest: str) -> bool:
        return self.path_for(digest).exists()

    def put(self, data: bytes) -> tuple[str, bool]:
        """Store bytes; return (sha256, newly_written). Idempotent and atomic (temp + rename)."""
        digest = sha256_bytes(data)
        target = self.path_for(digest)
        if target.exists():
            return digest, False
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tmpfiles.mkstemp("raw", target.parent)  # named after this process: swept if it dies
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o444)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return digest, True

    def get(self, digest: str) -> bytes:
        data = self.path_for(digest).read_bytes()
        if sha256_bytes(data) != digest:
            raise IOError(f"raw store corruption: {digest} does not hash to its name")
        return data

