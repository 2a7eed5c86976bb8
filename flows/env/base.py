"""The environment interface and the input digests both environments use (flows/env/__init__.py
says what an environment is)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cinesub.rawstore import RawStore
from cinesub.settings import Settings


def dir_digest(root: Path) -> str:
    """Digest of a directory tree's file names and bytes (the input snapshot id). Never opens
    anything but a regular file (a FIFO would block); names that are not UTF-8, links, special
    files and unreadable files count by name and kind, so changing them changes the digest."""
    h = hashlib.sha256()
    for p in sorted(Path(root).rglob("*")):
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


def file_digest(path: Path | None) -> str | None:
    if path is None or not Path(path).is_file():
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class GeminiEndpoint:
    """Where a Gemini page reader talks to (the key stays out of task parameters and logs)."""

    api_key: str
    base_url: str | None
    options: dict[str, Any]
    batch_options: dict[str, Any]


@dataclass(frozen=True)
class HollywoodInputs:
    """The input files of the Hollywood flow (None: not available)."""

    catalog: Path | None
    gold_dir: Path | None
    cprs_export: Path | None
    source_works: Path | None


class Environment(ABC):
    """The outside world of one build (see the module docstring)."""

    #: ``sample`` or ``live`` (recorded in ``runs.sample``; never branched on by a stage)
    kind: str
    #: secret-free endpoints of the services (filled by :meth:`services`)
    endpoints: dict[str, Any]
    #: whether the sample world was already generated (None in a live build)
    world_reused: bool | None = None

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.endpoints = {}

    @property
    def sample(self) -> bool:
        return self.kind == "sample"

    def services(self, flow: str) -> contextlib.AbstractContextManager[dict[str, Any]]:
        """The services of a build of ``flow`` for its duration (yields the endpoints)."""
        return contextlib.nullcontext(self.endpoints)

    def prepare(self, flow: str) -> None:
        """Check and make the inputs of ``flow`` before anything runs (sample: generate the world)."""

    # -- subtitle flow ------------------------------------------------------------------------
    @abstractmethod
    def source_pages(self) -> tuple[Path, dict[str, Any] | None]:
        """The directory of source pages (KIM, CSM, IMDb) and, when they were mirrored, the mirror report."""

    @abstractmethod
    def inventory_inputs(self) -> dict[str, Any]:
        """Fingerprint material of the source pages."""

    @abstractmethod
    def subtitle_providers(self) -> list:
        """The subtitle providers in recovery order (the first is primary)."""

    @abstractmethod
    def acquire_inputs(self, run_id: str) -> dict[str, Any]:
        """Fingerprint material of the subtitle providers' answers."""

    @abstractmethod
    def release_inputs(self) -> dict[str, Any]:
        """Input snapshot ids the subtitle release records (``inputs`` of the manifest)."""

    # -- Hollywood flow -----------------------------------------------------------------------
    @abstractmethod
    def ia_client(self, store: RawStore) -> Any:
        """An :class:`extractors.ia.IAClient` caching into ``store``."""

    @abstractmethod
    def remote_marker(self, run_id: str) -> dict[str, Any]:
        """Fingerprint material of a stage that asks the Internet Archive."""

    @abstractmethod
    def gemini_available(self) -> tuple[bool, str | None]:
        """(whether Gemini can be asked, why not)."""

    @abstractmethod
    def gemini_endpoint(self) -> GeminiEndpoint | None:
        """Key, base URL and client options of Gemini page readers (None: no key)."""

    @abstractmethod
    def hollywood_inputs(self) -> HollywoodInputs:
        """The Hollywood flow's input files."""

    @abstractmethod
    def hollywood_release_inputs(self, table_digests: dict[str, str]) -> dict[str, Any]:
        """Input snapshot ids of the Hollywood release (``table_digests``: the discovery tables')."""
