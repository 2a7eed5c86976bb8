"""The "nothing changed" fast path of ``cinesub build`` (docs/rebuilds.md).

A completed build records a **build fingerprint** (``CINESUB_HOME/state/last-build.json``): the
digest of everything its output depends on — the code (every source file of the packages, the
lock file), the config hash, the environment's inputs (sample: every byte of the world and of
the page mirror made from it; live: the source pages and the local subtitle dump), the content
of every state table (review decisions and curated values included), the raw store's listing
and the release it wrote — with that build's summary. The next build computes the same
fingerprint *before* Prefect, the fixture servers or any heavy import start; when it is equal,
every provider search is still within ``providers.search_ttl_hours`` and the release's files
still have the sha256s of its manifest, the build is answered from the record: the same
summary, marked reused, and a ``runs`` row with status ``reused``. Any difference, a missing
or unreadable record, ``--force``, ``--refresh-search`` or fault modes → the normal build
(which reuses unchanged stages itself).

Only the standard library, DuckDB and the settings are imported here (no Prefect, no Polars).
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import duckdb

from cinesub import __version__
from cinesub.rawstore import _relpath
from cinesub.settings import Settings

#: bump when the material of the fingerprint changes meaning
FASTPATH_VERSION = "2"  # 2: the raw material covers the blobs the state names
RECORD = Path("state") / "last-build.json"
REPO = Path(__file__).resolve().parent.parent
#: the code a build runs: every file under these folders (bytecode caches aside) and these files
CODE_DIRS = ("cinesub", "extractors", "validators", "warehouse", "flows", "sql", "fixtures")
CODE_FILES = ("pyproject.toml", "requirements.lock")
#: state tables left out of the state digest: the kernel's bookkeeping (a reused build adds a
#: ``runs`` row) — everything a stage reads is in
BOOKKEEPING = ("runs", "stage_runs")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)  # (cinesub.records' would import pyarrow)


def new_run_id() -> str:
    """A run id: start time and a random suffix (flows.kernel's runs use this one too)."""
    return utcnow().strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]


def code_digest() -> str:
    h = hashlib.sha256()
    for d in CODE_DIRS:
        for dirpath, dirnames, filenames in os.walk(REPO / d):
            dirnames[:] = sorted(n for n in dirnames if n != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".pyc", ".pyo")):
                    continue
                p = Path(dirpath) / name
                h.update(os.fsencode(p.relative_to(REPO)) + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    for name in CODE_FILES:
        p = REPO / name
        h.update(name.encode() + b"\0" + (hashlib.sha256(p.read_bytes()).digest() if p.is_file() else b"-"))
    return h.hexdigest()


#: state columns that name raw-store blobs (sha256); the fingerprint covers those blobs only
RAW_COLUMNS = ("sha256", "raw_sha256")


def state_material(path: Path) -> tuple[dict[str, str], datetime | None, set[str]] | None:
    """(digest of every state table but the bookkeeping, oldest provider search, the sha256s its
    tables name) of a state DB."""
    if not path.is_file():
        return None
    with duckdb.connect(str(path), read_only=True) as con:
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
            "AND table_type = 'BASE TABLE' ORDER BY 1").fetchall()]
        digests = {}
        for t in tables:
            if t in BOOKKEEPING:
                continue
            n, s = con.execute(f'SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0) FROM "{t}" AS t').fetchone()
            digests[t] = f"{n}:{s}"
        oldest = con.execute("SELECT min(searched_at) FROM search_cache").fetchone()[0] \
            if "search_cache" in tables else None
        shas: set[str] = set()
        marks = ", ".join("?" * len(RAW_COLUMNS))
        for t, c in con.execute(
                "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main' "
                f"AND column_name IN ({marks}) ORDER BY 1, 2", list(RAW_COLUMNS)).fetchall():
            if t in tables and t not in BOOKKEEPING:
                shas.update(r[0] for r in con.execute(f'SELECT DISTINCT "{c}" FROM "{t}" WHERE "{c}" IS NOT NULL')
                            .fetchall())
    return digests, oldest, shas


def raw_listing(root: Path, shas: set[str] | None = None) -> str:
    """Digest of the raw store's file names and sizes (its files are named by their sha256 and
    read-only: a name stands for its bytes); with ``shas``, of those blobs only (present with
    their size, or absent), so blobs another flow added to a shared store change nothing."""
    sizes: dict[str, int] = {}
    if root.is_dir():
        for dirpath, _dirnames, filenames in os.walk(root):
            for name in filenames:
                p = Path(dirpath) / name
                sizes[os.fsdecode(p.relative_to(root))] = p.stat().st_size
    h = hashlib.sha256()
    if shas is None:
        for rel in sorted(sizes):
            h.update(os.fsencode(rel) + b"\0" + str(sizes[rel]).encode() + b"\0")
        return h.hexdigest()
    for sha in sorted(shas):
        try:
            size = sizes.get(_relpath(sha), -1)
        except ValueError:  # not a blob name
            size = -2
        h.update(sha.encode() + b"\0" + str(size).encode() + b"\0")
    return h.hexdigest()


def release_intact(path: str | None) -> bool:
    """Whether a release directory still has every file of its manifest, with its sha256."""
    if not path:
        return False
    root = Path(path)
    try:
        files = json.loads((root / "manifest.json").read_text(encoding="utf-8"))["files"]
        for name, meta in files.items():
            f = root / name
            if not f.is_file() or f.stat().st_size != meta.get("size", f.stat().st_size):
                return False
            with open(f, "rb") as fh:
                if hashlib.file_digest(fh, "sha256").hexdigest() != meta["sha256"]:
                    return False
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    return True


def fingerprint(settings: Settings, env: Any, expect: dict[str, Any] | None = None) -> tuple[str | None, str]:
    """(the build fingerprint, "") or (None, why there is none); ``expect``: see
    :func:`fingerprint_material`."""
    material, why = fingerprint_material(settings, env, expect)
    if material is None:
        return None, why
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest(), ""


def _as_recorded(value: Any) -> Any:
    """``value`` as the record holds it (JSON, ``default=str``)."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def fingerprint_material(settings: Settings, env: Any,
                         expect: dict[str, Any] | None = None) -> tuple[dict[str, Any] | None, str]:
    """What the build fingerprint hashes, or (None, why there is none). With ``expect`` (the
    last build's recorded material) the cheap parts — inputs, code, config — are compared first
    and a difference ends it there, (None, "changed"), before the state DB's digests are read:
    a material that differs in one key has another fingerprint anyway."""
    if any(k.startswith("CINESUB_FAULT_") for k in os.environ):  # a test hook wants the build to run
        return None, "fault_hook"
    inputs = env.rebuild_inputs()
    if inputs is None or settings.raw_store_url:  # a remote raw store: its listing is not read here
        return None, "inputs_unknown"
    cheap: dict[str, Any] = {"version": FASTPATH_VERSION, "code_version": __version__, "inputs": inputs,
                             "config": settings.config_hash()}
    if expect is not None and any(_as_recorded(v) != expect.get(k) for k, v in cheap.items()):
        return None, "changed"
    cheap["code"] = code_digest()
    if expect is not None and cheap["code"] != expect.get("code"):
        return None, "changed"
    state = state_material(settings.state_db)
    if state is None:
        return None, "no_state"
    digests, oldest, shas = state
    ttl = settings.providers.search_ttl_hours
    if ttl <= 0 or (oldest is not None and oldest < utcnow() - timedelta(hours=ttl)):
        return None, "search_expired"
    material = {**cheap, "state": digests, "raw": raw_listing(settings.home / "raw", shas)}
    return material, ""


def record(settings: Settings, env: Any, summary: dict[str, Any]) -> None:
    """After a build: its fingerprint and summary when it completed with nothing left undone
    (else the record goes: the next build runs)."""
    path = settings.home / RECORD
    material, _ = fingerprint_material(settings, env)
    stages: list[str] = []
    if material is not None and summary.get("status") == "completed":
        with duckdb.connect(str(settings.state_db), read_only=True) as con:
            rows = con.execute("SELECT stage, status FROM stage_runs WHERE run_id = ? ORDER BY started_at",
                               [summary.get("run_id")]).fetchall()
        stages = [stage for stage, _ in rows]
        if any(status not in ("completed", "reused") for _, status in rows):  # a stage left work undone
            material = None
    if material is None or summary.get("status") != "completed":
        path.unlink(missing_ok=True)
        return
    fp = hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"fingerprint": fp, "material": material, "run_id": summary.get("run_id"),
                               "recorded_at": utcnow(), "stages": stages, "summary": summary}, default=str),
                   encoding="utf-8")
    os.replace(tmp, path)


def try_reuse(settings: Settings, env: Any, run_id: str) -> dict[str, Any] | None:
    """The summary of the last build, marked reused, when nothing changed since (recorded as
    the run ``run_id``, status ``reused``); else None (the normal build runs)."""
    started = utcnow()
    try:
        last = json.loads((settings.home / RECORD).read_text(encoding="utf-8"))
        summary = dict(last["summary"])
        rel = summary["release"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    expect = last.get("material")
    fp, _ = fingerprint(settings, env, expect if isinstance(expect, dict) else None)
    if fp is None or fp != last.get("fingerprint") or not release_intact(rel.get("path")):
        return None
    # this build's own work: none; its data and release: the last build's
    work = {**summary.get("work", {}), "downloaded": 0, "reused_raw_bytes": 0, "tracks_processed": 0,
            "refused_at_search": 0, "rounds": 0, "reused_stages": list(last.get("stages") or []),
            "sample_world_reused": True if env.sample else None}
    out = {**summary, "run_id": run_id, "release": {**rel, "new": False, "change": None}, "work": work,
           "reused_build": last.get("run_id"), "fingerprint": fp}
    with duckdb.connect(str(settings.state_db)) as con:
        con.execute("INSERT INTO runs (run_id, started_at, finished_at, status, sample, config_hash, code_version, "
                    "summary) VALUES (?, ?, ?, 'reused', ?, ?, ?, ?)",
                    [run_id, started, utcnow(), env.sample, settings.config_hash(), __version__,
                     json.dumps(out, default=str)])
    return out
