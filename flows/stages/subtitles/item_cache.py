"""Per-item results of the cohort and survey stages, kept across builds (docs/rebuilds.md, "What
the cohort and survey stages redo").

An item's result is a JSON file under ``CINESUB_HOME/cache/<name>/`` named by the sha256 of the
cache's *prefix* — the digest of the code and settings the result depends on — and of the item's
own key (its exact inputs: a content digest). A changed code file or setting changes every
name, so nothing computed by other code is ever read back; a missing or unreadable file is a
miss (the caller computes the item again and writes it). Files are written atomically
(cinesub/tmpfiles.py) and never evicted: wiping the folder only costs the next build a full
computation.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from cinesub.digests import files_digest
from cinesub.tmpfiles import write_text_atomic


class ItemCache:
    """JSON values by item key under ``root`` (None: no cache, every lookup misses). ``hits`` and
    ``misses`` count lookups."""

    def __init__(self, root: Path | None, code: Iterable[Path | str], *settings: str) -> None:
        self.root = root
        self.prefix = files_digest(code, *settings) if root is not None else ""
        self.hits = self.misses = 0

    def path(self, key: str) -> Path:
        assert self.root is not None
        name = hashlib.sha256(f"{self.prefix}\0{key}".encode()).hexdigest()
        return self.root / name[:2] / f"{name}.json"

    def get(self, key: str, valid: Callable[[Any], bool] = lambda value: True) -> Any | None:
        """The value stored for ``key``, or None (and a miss) when there is none or it is not
        ``valid``."""
        value = None
        if self.root is not None:
            try:
                value = json.loads(self.path(key).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                value = None
            if value is not None and not _safe(valid, value):
                value = None
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put(self, key: str, value: Any) -> Any:
        """Store ``value`` for ``key``; returns it as a later :meth:`get` reads it (JSON types)."""
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
        if self.root is not None:
            write_text_atomic(self.path(key), text)
        return json.loads(text)

    def counts(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses}


def _safe(valid: Callable[[Any], bool], value: Any) -> bool:
    try:
        return bool(valid(value))
    except (KeyError, TypeError, ValueError, AttributeError):
        return False
