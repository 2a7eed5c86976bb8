"""The environment interface and the input digests both environments use (flows/env/__init__.py
says what an environment is)."""

from __future__ import annotations

import contextlib
import hashlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from cinesub.digests import tree_digest
from cinesub.rawstore import RawStore
from cinesub.settings import EndpointSettings, Settings


def dir_digest(root: Path) -> str:
    """Digest of a directory tree's file names and bytes (the input snapshot id;
    :func:`cinesub.digests.tree_digest`)."""
    return tree_digest(root)


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
class ClientTuning:
    """Rate, timeout and retry parameters of the clients an environment builds: the only thing,
    besides the endpoints and the credentials, in which the sample environment's clients differ
    from the live ones (fast loopback manners against the fixture servers)."""

    #: provider requests per second (None: ``providers.requests_per_second``) and burst
    provider_rps: float | None = None
    provider_burst: float = 1.0
    provider_timeout_s: float = 30.0
    #: an :class:`extractors.http_client.RetryPolicy` (None: the client's default)
    provider_retry: Any = None
    ia_timeout_s: float = 30.0
    #: an IA :class:`~extractors.http_client.RetryPolicy` (None: ``extractors.ia.IA_RETRY``)
    ia_retry: Any = None
    gemini_options: Mapping[str, Any] = field(default_factory=dict)
    gemini_batch_options: Mapping[str, Any] = field(default_factory=lambda: {"poll_interval_s": 30.0})


#: the live services' manners (the clients' own defaults)
LIVE_TUNING = ClientTuning()


@dataclass(frozen=True, repr=False)
class ProviderCredentials:
    """Resolved subtitle-provider credentials (plain values, never printed: ``repr`` hides them)."""

    opensubtitles_api_key: str | None = None
    opensubtitles_username: str | None = None
    opensubtitles_password: str | None = None
    subdl_api_key: str | None = None

    def __repr__(self) -> str:
        return ("ProviderCredentials(" + ", ".join(f"{k}={'set' if getattr(self, k) else 'none'}"
                                                   for k in self.__dataclass_fields__) + ")")


def quota_state(settings: Any, provider: str = "opensubtitles") -> Path:
    """Where a provider's client keeps its download-quota state (OpenSubtitles' quota, SubDL's
    daily limit): ``CINESUB_HOME/state/<provider>-quota.json``."""
    state = settings.home / "state" / f"{provider}-quota.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    return state


def build_subtitle_providers(settings: Settings, endpoints: EndpointSettings, creds: ProviderCredentials,
                             tuning: ClientTuning = LIVE_TUNING) -> list:
    """OpenSubtitles (primary, when it has an API key) and SubDL (recovery, when it has one),
    talking to ``endpoints`` — the one place both environments build network providers."""
    from extractors.providers.opensubtitles import OpenSubtitlesProvider
    from extractors.providers.subdl import SubDLProvider

    manners: dict[str, Any] = dict(requests_per_second=tuning.provider_rps, burst=tuning.provider_burst,
                                   timeout_s=tuning.provider_timeout_s, retry=tuning.provider_retry)
    providers: list = []
    if creds.opensubtitles_api_key:
        providers.append(OpenSubtitlesProvider(
            settings.providers, state_path=quota_state(settings), api_key=creds.opensubtitles_api_key,
            username=creds.opensubtitles_username, password=creds.opensubtitles_password,
            base_url=endpoints.opensubtitles, **manners))
    if creds.subdl_api_key:
        providers.append(SubDLProvider(settings.providers, state_path=quota_state(settings, "subdl"),
                                       api_key=creds.subdl_api_key, base_url=endpoints.subdl,
                                       download_url=endpoints.subdl_download, **manners))
    for provider in providers:  # a proxy password in an endpoint is a secret of the client's logs too
        for url in (endpoints.opensubtitles, endpoints.subdl, endpoints.subdl_download):
            password = urlsplit(url).password
            if password and hasattr(provider, "redact"):
                provider.redact.add(password)
                provider.redact.add(unquote(password))
    return providers


def build_ia_client(endpoints: EndpointSettings, store: RawStore, tuning: ClientTuning = LIVE_TUNING) -> Any:
    """An :class:`extractors.ia.IAClient` of ``endpoints.internet_archive`` caching into ``store``."""
    from extractors.ia import IAClient

    kw: dict[str, Any] = {"timeout_s": tuning.ia_timeout_s}
    if tuning.ia_retry is not None:
        kw["retry"] = tuning.ia_retry
    return IAClient.for_endpoint(endpoints.internet_archive, store, **kw)


def build_gemini_endpoint(api_key: str | None, endpoints: EndpointSettings,
                          tuning: ClientTuning = LIVE_TUNING) -> GeminiEndpoint | None:
    """Where Gemini page readers talk to (None without a key)."""
    if not api_key:
        return None
    return GeminiEndpoint(api_key, endpoints.gemini, dict(tuning.gemini_options), dict(tuning.gemini_batch_options))


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

    #: the clients' rate, timeout and retry parameters
    tuning: ClientTuning = LIVE_TUNING

    def service_endpoints(self) -> EndpointSettings:
        """The base URLs the clients of this build talk to (live: ``settings.endpoints``; sample:
        the same with the running fixture servers' URLs in place)."""
        return self.settings.endpoints

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

    #: whether a provider answer may be reused by a later build (the search cache)
    search_cacheable: bool = True

    def search_inputs(self, imdb_ids: list[str]) -> dict[str, str | None]:
        """Per film, a digest of what a provider search of it depends on, beyond the search
        cache's TTL (docs/rebuilds.md): a film whose digest changed is searched again. Remote
        providers: none known (None, the TTL alone decides)."""
        return {}

    def answer_code(self) -> list[Path]:
        """Source files of whatever answers this environment's provider queries, beyond the
        provider clients (a cache of answers keys on them): remote services, none."""
        return []

    def rebuild_inputs(self) -> dict[str, Any] | None:
        """Fingerprint material of this environment's inputs for the "nothing changed" fast path
        (flows/kernel_fastpath.py), computed before any service starts; None: the fast path
        cannot tell (the normal build runs)."""
        return None

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
    def gemini_key_ref(self) -> Any:
        """An :class:`extractors.gemini_pages.GeminiKeyRef`: how the worker of a Gemini item job
        finds the key (the key is resolved there, never passed in clear)."""

    @abstractmethod
    def hollywood_inputs(self) -> HollywoodInputs:
        """The Hollywood flow's input files."""

    @abstractmethod
    def hollywood_release_inputs(self, table_digests: dict[str, str]) -> dict[str, Any]:
        """Input snapshot ids of the Hollywood release (``table_digests``: the discovery tables')."""
