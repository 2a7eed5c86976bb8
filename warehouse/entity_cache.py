"""Film-entity lines cached per film (docs/rebuilds.md, "What the release stage redoes").

An entity (warehouse/entities.py) is built from its film's inputs only — the film's rows of the
release tables, its curation lookups, its tracks' entries — and a few cohort-wide values (kept
task fields, country order, language names). Its ``films.jsonl`` line is kept under
``CINESUB_HOME/cache/release-entities/`` by the sha256 of

* the code: warehouse/entities.py, this module, and the Python, polars and pyarrow versions;
* the cohort-wide values (``EntitySource.cohort_digest``);
* the film's inputs (``EntitySource.key``: the ``FilmInputs`` the entity is built from and a
  lossless digest of each track's entries rows).

An entry holds the line, the entity's top-level fields but ``subtitles`` (what the statistics
read), the sha256 of each track's ``entries`` array as text (the statistics' token-count keys,
warehouse/tokens.py), and first of all the sha256 of the rest; an entry that cannot be read,
is not of that form or whose content does not have its sha256 is a miss and is written again
(atomically, cinesub/tmpfiles.py). A hit
gives the same line a fresh build gives, so the release is the same bytes with the cache cold,
warm or off (tests/test_release_incremental.py).
"""

from __future__ import annotations

import hashlib
import json
import platform
from importlib.metadata import version
from pathlib import Path
from typing import Any

from cinesub.digests import files_digest
from cinesub.tmpfiles import write_bytes_atomic
from warehouse.gate_cache import KeyedCache

_HERE = Path(__file__).resolve().parent
_CODE = (_HERE / "entities.py", _HERE / "entity_cache.py")


def code_digest() -> str:
    """Digest of the code an entity's line depends on."""
    return files_digest(_CODE, "python " + platform.python_version(), "polars " + version("polars"),
                        "pyarrow " + version("pyarrow"))


class EntityLineCache(KeyedCache):
    """Lines by key under ``cache_dir`` (``None``: no cache); ``cohort``: the cohort-wide values
    (``EntitySource.cohort_digest``). ``hits``/``misses`` count lookups."""

    def __init__(self, cache_dir: Path | None, cohort: str):
        super().__init__(cache_dir, code_digest() if cache_dir is not None else "", cohort)

    def get(self, key: str) -> tuple[bytes, dict[str, Any], dict[str, str], str] | None:
        """(line as its UTF-8 bytes, head, texts, sha256 of the entry's body) of ``key``, or None
        (no entry, or an unusable one). The line is not decoded: a release writes it as read."""
        got = _read(self.entry(key))
        if got is None:
            self.misses += 1
        else:
            self.hits += 1
        return got

    def put(self, key: str, line: str | bytes, head: dict[str, Any], texts: dict[str, str]) -> str:
        """Keep the entry; the sha256 of its body (which holds ``line``, text or its UTF-8 bytes)."""
        raw = line if isinstance(line, bytes) else line.encode("utf-8")
        body = json.dumps({"head": head, "texts": texts}, ensure_ascii=False).encode("utf-8") + b"\n" + raw
        sha = hashlib.sha256(body).hexdigest()
        write_bytes_atomic(self.entry(key), sha.encode("ascii") + b"\n" + body)
        return sha


def _read(path: Path) -> tuple[bytes, dict[str, Any], dict[str, str], str] | None:
    """An entry: its body's sha256, then the body — the head and texts as one JSON line, then
    the entity's line (returned as bytes: the sha256 vouches for the bytes written, which were
    UTF-8)."""
    try:
        sha_b, raw = path.read_bytes().split(b"\n", 1)
        sha = sha_b.decode("ascii")
        if sha != hashlib.sha256(raw).hexdigest():  # the bytes hashed as written
            return None
        meta, line = raw.split(b"\n", 1)
        info = json.loads(meta)
    except (OSError, ValueError):
        return None
    if not (isinstance(info, dict) and isinstance(info.get("head"), dict) and isinstance(info.get("texts"), dict)):
        return None
    return line, info["head"], info["texts"], sha
