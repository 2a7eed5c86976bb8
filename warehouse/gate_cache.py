"""The release gate's entity verdicts, cached per film (docs/rebuilds.md, "What the release stage
redoes").

Checking a film entity (validators/release_gate.py ``check_entity``: the schema, every entry's
timeframe and index, ratings, task fields, evidence) is a pure function of the entity and of the
gate's settings. A rebuild after a few tracks changed publishes mostly the same ``films.jsonl``
lines, so the outcome of checking a line — the failures it raised and the small record the
cross-checks need — is kept under ``CINESUB_HOME/cache/release-gate/`` by the sha256 of

* the code: this module, validators/release_gate.py, validators/release_gate_rules.py,
  validators/release_gate_tables.py (the gate's base class) and the jsonschema version;
* the gate's settings (``ReleaseGate.entity_settings``: languages, countries, kept and withheld
  task fields, rating label spaces, the JSON Schema);
* the line's exact bytes (the entity as published; film_entities builds it from JSON and Arrow
  values only, so the line is the entity).

A hit replays the outcome (``ReleaseGate.replay_entity``): counts, kept examples and cross-checks
come out as from a fresh check, so the gate report and the release are the same bytes as without
the cache (tests/test_release_cache.py). An entry that cannot be read is a miss and is written
again; entries are written atomically (cinesub/tmpfiles.py).
"""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

from cinesub.digests import files_digest
from cinesub.tmpfiles import write_text_atomic

_HERE = Path(__file__).resolve().parent
_CODE = (_HERE / "gate_cache.py", _HERE.parent / "validators" / "release_gate.py",
         _HERE.parent / "validators" / "release_gate_rules.py", _HERE.parent / "validators" / "release_gate_tables.py")


def code_digest() -> str:
    """Digest of the code an entity's verdict depends on."""
    return files_digest(_CODE, "jsonschema " + version("jsonschema"))


class KeyedCache:
    """Entries under ``cache_dir`` by sha256 key (``None``: no cache), every key digested from
    :attr:`prefix` — the digest of the ``code`` and the ``settings`` behind an entry — on;
    ``hits``/``misses`` count lookups (also warehouse/entity_cache.py)."""

    def __init__(self, cache_dir: Path | None, code: str, settings: str):
        self.dir = cache_dir
        self.hits = self.misses = 0
        self.prefix = hashlib.sha256(f"{code}\0{settings}\0".encode()).digest() if cache_dir is not None else b""

    def entry(self, key: str) -> Path:
        assert self.dir is not None
        return self.dir / key[:2] / f"{key}.json"


class EntityGateCache(KeyedCache):
    """Checks entities through ``gate``, reading and writing outcomes under ``cache_dir``
    (``None``: no cache, every entity is checked). ``hits``/``misses`` count lookups."""

    def __init__(self, gate: Any, cache_dir: Path | None):
        self.gate = gate
        super().__init__(cache_dir, code_digest() if cache_dir is not None else "",
                         gate.entity_settings() if cache_dir is not None else "")

    def path(self, line: str | bytes, digest: str | None = None) -> Path:
        """The entry of ``line``; ``digest``: the sha256 of an entity-cache entry that holds the
        line (warehouse/entity_cache.py: the same entry, the same line), used instead of hashing
        the line again."""
        if digest is not None:
            return self.entry(hashlib.sha256(self.prefix + b"entity-entry\0" + digest.encode()).hexdigest())
        raw = line if isinstance(line, bytes) else line.encode("utf-8")
        return self.entry(hashlib.sha256(self.prefix + raw).hexdigest())

    def check(self, entity: dict | None, line: str | bytes, digest: str | None = None) -> None:
        """Check ``entity``, whose films.jsonl line (without its newline; text or its UTF-8
        bytes) is ``line`` (``None``:
        the entity is read from the line when it has to be checked — a line from the entity
        cache, warehouse/entity_cache.py); ``digest``: see :meth:`path`."""
        if self.dir is None:
            self.gate.check_entity(json.loads(line) if entity is None else entity)
            return
        path = self.path(line, digest)
        outcome = _read(path)
        if outcome is not None:
            self.hits += 1
            self.gate.replay_entity(outcome)
            return
        self.misses += 1
        outcome = self.gate.check_entity_outcome(json.loads(line) if entity is None else entity)
        write_text_atomic(path, json.dumps(outcome, ensure_ascii=False))


def _read(path: Path) -> dict[str, Any] | None:
    try:
        outcome = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(outcome, dict) and isinstance(outcome.get("failures"), list)
            and outcome.get("kind") in ("record", "bad_id", "none")):
        return None
    return outcome
