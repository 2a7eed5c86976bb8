"""The sample environment: a generated world served on loopback by the fixture servers, which
speak the real wire formats, so the real clients run (the only production module that imports
``fixtures/``).

* Subtitle flow: the world of :func:`ensure_sample_world` (``CINESUB_HOME/sample-world/seed<N>-n<M>``),
  the OpenSubtitles and SubDL fixtures (``faults`` switches their fault modes on) and the page
  fixture (review sites and IMDb), mirrored by the polite fetcher exactly as a live crawl.
* Hollywood flow: the Variety and CCE worlds of :func:`ensure_pd_worlds`
  (``CINESUB_HOME/sample-world/pd-seed<N>/{variety,cce}``), the IA fixture (the endpoints the
  ``internetarchive`` package speaks) and the Gemini fixture (the REST API ``google-genai`` speaks,
  answering page images from gold with planted errors).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cinesub import tmpfiles
from cinesub.digests import tree_digest
from cinesub.errors import UsageError
from cinesub.rawstore import RawStore
from cinesub.settings import EndpointSettings, Settings, host_to_url
from flows.env.base import (ClientTuning, Environment, GeminiEndpoint, HollywoodInputs, ProviderCredentials,
                            build_gemini_endpoint, build_ia_client, build_subtitle_providers, dir_digest)

SAMPLE_GENERATOR_VERSION_FILE = "world.json"
#: the folders of a sample world the page fixture serves (fixtures/pages_server.py)
PAGE_DIRS = ("kim", "kim_index", "csm", "imdb")
WORLD_MARKER = "world.json"
#: quota of the sample OpenSubtitles fixture when the ``quota`` fault is on: one clean stop in a
#: default sample build (about 200 downloads), completed by the next run; the fixture's own
#: setting, overridable with CINESUB_FIXTURE_QUOTA for smaller worlds
SAMPLE_QUOTA_DOWNLOADS = 120
#: a loopback fixture reads at most 1 MiB of a request body (fixtures/faults.py): inline batch
#: jobs against it carry at most this many image bytes (base64 adds a third)
FIXTURE_MAX_INLINE_BYTES = 500_000
#: older names of the fixture URLs in :attr:`SampleEnvironment.endpoints` (``attached`` callers)
LEGACY_ENDPOINT_KEYS = {"opensubtitles_url": "opensubtitles", "subdl_url": "subdl",
                        "subdl_download_url": "subdl_download", "ia_host": "internet_archive", "gemini_url": "gemini"}


def loopback_tuning() -> ClientTuning:
    """The clients' manners against the loopback fixtures: no need to throttle to the real APIs'
    rates; short backoff and timeout so the fixtures' slow-response fault really times out."""
    from extractors.http_client import RetryPolicy
    from extractors.ia import ia_retry_policy

    return ClientTuning(
        provider_rps=200.0, provider_burst=20.0, provider_timeout_s=2.0,
        provider_retry=RetryPolicy(max_attempts=8, backoff_base_s=0.02, backoff_max_s=0.2, max_retry_after_s=5),
        ia_timeout_s=10.0, ia_retry=ia_retry_policy(max_attempts=4, backoff_base_s=0.02, backoff_max_s=0.2),
        gemini_options={"retry_initial_delay_s": 0.01, "timeout_s": 20.0, "requests_per_minute": None},
        gemini_batch_options={"poll_interval_s": 0.05, "max_inline_bytes": FIXTURE_MAX_INLINE_BYTES})


def fixture_endpoints(base: EndpointSettings, served: dict[str, Any]) -> EndpointSettings:
    """``base`` with the URLs of the running fixture servers in place: ``served`` holds endpoint
    names (``opensubtitles``, ``internet_archive``, ...; the older ``*_url`` / ``ia_host`` names
    too) and ``pages`` (the page fixture's site roots: ``kim``, ``csm``, ``imdb``, ``imdb_datasets``)."""
    names = set(EndpointSettings.model_fields)
    found: dict[str, Any] = {k: v for k, v in dict(served.get("pages") or {}).items() if k in names}
    for key, value in served.items():
        name = LEGACY_ENDPOINT_KEYS.get(key, key)
        if name in names and value:
            found[name] = host_to_url(value) if key == "ia_host" else value
    return EndpointSettings.model_validate({**base.model_dump(), **found})


def parse_faults(faults: str | None) -> list[str]:
    """The fault modes of ``--faults`` (``all`` or a comma list); a bad name is a UsageError."""
    if not faults:
        return []
    from fixtures.faults import parse_faults as parse

    try:
        return sorted(parse(faults))
    except ValueError as exc:
        raise UsageError(str(exc), "bad_faults") from None


def _atomic_world(target: Path, prefix: str, write: Any) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmpfiles.mkdtemp(prefix, target.parent)
    try:
        write(tmp)
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _marker_says(marker: Path, key: str, expected: Any) -> bool:
    """Whether a world's marker file exists and records ``expected`` under ``key`` (a world
    written by another generator version does not)."""
    try:
        return json.loads(marker.read_text()).get(key) == expected
    except (OSError, ValueError, AttributeError):
        return False


def ensure_sample_world(settings: Settings, seed: int, n_films: int) -> tuple[Path, bool]:
    """Generate the sample world under CINESUB_HOME once (deterministic); return (dir, reused)."""
    from cinesub.sample.generate import generate

    from cinesub.sample.generate import GENERATOR_VERSION

    target = settings.home / "sample-world" / f"seed{seed}-n{n_films}"
    if _marker_says(target / SAMPLE_GENERATOR_VERSION_FILE, "generator_version", GENERATOR_VERSION):
        return target, True  # else an older generator wrote it (other page shapes): regenerate
    _atomic_world(target, "world", lambda tmp: generate(tmp, seed=seed, n_films=n_films))
    return target, False


def ensure_pd_worlds(settings: Settings, seed: int) -> tuple[dict[str, Path], bool]:
    """Generate the Variety and CCE sample worlds once (deterministic); return (dirs, reused).
    A world written by another generator version is written again."""
    from cinesub.sample import cce, variety

    target = settings.home / "sample-world" / f"pd-seed{seed}"
    dirs = {"variety": target / "variety", "cce": target / "cce"}
    versions = {"cinesub.sample.variety": variety.GENERATOR_VERSION, "cinesub.sample.cce": cce.GENERATOR_VERSION}
    if _marker_says(target / WORLD_MARKER, "versions", versions):
        return dirs, True  # else an older generator wrote it: regenerate

    def write(tmp: Path) -> None:
        variety.generate_variety_world(tmp / "variety", seed)
        cce.generate_cce_world(tmp / "cce", seed)
        (tmp / WORLD_MARKER).write_text(json.dumps({"seed": seed, "generators": sorted(versions),
                                                    "versions": versions}) + "\n")

    _atomic_world(target, "pd-world", write)
    return dirs, False


def sample_credentials(settings: Settings) -> dict[str, str]:
    """The fixture servers' credentials (configured ones win, so a test can check they are sent)."""
    from fixtures.opensubtitles_server import DEFAULT_API_KEY, DEFAULT_PASSWORD, DEFAULT_USERNAME

    p = settings.providers
    return {
        "api_key": p.opensubtitles_api_key.get_secret_value() if p.opensubtitles_api_key else DEFAULT_API_KEY,
        "username": p.opensubtitles_username or DEFAULT_USERNAME,
        "password": p.opensubtitles_password.get_secret_value() if p.opensubtitles_password else DEFAULT_PASSWORD,
        "subdl_api_key": p.subdl_api_key.get_secret_value() if p.subdl_api_key else DEFAULT_API_KEY,
    }


def sample_provider_credentials(settings: Settings) -> ProviderCredentials:
    c = sample_credentials(settings)
    return ProviderCredentials(opensubtitles_api_key=c["api_key"], opensubtitles_username=c["username"],
                               opensubtitles_password=c["password"], subdl_api_key=c["subdl_api_key"])


def ia_replay(*worlds: Path) -> contextlib.AbstractContextManager[Any]:
    """The Internet Archive fixture over generated worlds (benchmarks and tools that drive the
    Hollywood stages against it); ``.host`` is its address, ``.sent`` the bytes of every answer."""
    from fixtures.ia_server import IAFixture

    return IAFixture(*worlds)


class SampleEnvironment(Environment):
    kind = "sample"

    def __init__(self, settings: Settings, *, seed: int = 7, n_films: int = 40, faults: str | None = None) -> None:
        super().__init__(settings)
        self.seed, self.n_films = seed, n_films
        self.faults = parse_faults(faults)
        self.world: Path | None = None  # the subtitle world
        self.worlds: dict[str, Path] = {}  # the Hollywood worlds
        self.digest: str | None = None
        self.pages_digest: str | None = None  # the world's page folders (PAGE_DIRS)

    @classmethod
    def attached(cls, settings: Settings, *, world: Path | None = None, worlds: dict[str, Path] | None = None,
                 endpoints: dict[str, Any] | None = None, digest: str | None = None) -> SampleEnvironment:
        """An environment over a world (and servers) someone else made: a stage run on its own."""
        env = cls(settings)
        env.world, env.worlds, env.endpoints = world, dict(worlds or {}), dict(endpoints or {})
        root = world or (next(iter(env.worlds.values())) if env.worlds else None)
        env.digest = digest or (dir_digest(root) if root else None)
        return env

    def prepare(self, flow: str) -> None:
        if flow == "build-hollywood":
            self.worlds, self.world_reused = ensure_pd_worlds(self.settings, self.settings.hollywood.sample_seed)
            self.digest = dir_digest(self.worlds["variety"].parent)
        else:
            self.world, self.world_reused = ensure_sample_world(self.settings, self.seed, self.n_films)
            self.digest = dir_digest(self.world)
            # what the page server serves: a changed subtitle file leaves the inventory reused
            self.pages_digest = tree_digest(self.world, PAGE_DIRS)

    def services(self, flow: str) -> contextlib.AbstractContextManager[dict[str, Any]]:
        return self._pd_services() if flow == "build-hollywood" else self._subtitle_services()

    @contextlib.contextmanager
    def _subtitle_services(self) -> Iterator[dict[str, Any]]:
        from fixtures.faults import FaultConfig
        from fixtures.opensubtitles_server import OpenSubtitlesFixture
        from fixtures.pages_server import PagesFixture
        from fixtures.subdl_server import SubDLFixture

        creds = sample_credentials(self.settings)
        config = FaultConfig(quota_downloads=int(os.environ.get("CINESUB_FIXTURE_QUOTA", SAMPLE_QUOTA_DOWNLOADS)))
        os_fx = OpenSubtitlesFixture(self.world, self.faults, config=config, api_key=creds["api_key"],
                                     username=creds["username"], password=creds["password"])
        sd_fx = SubDLFixture(self.world, self.faults, config=config, api_key=creds["subdl_api_key"])
        pages_fx = PagesFixture(self.world)  # review sites and IMDb, shaped like the real ones
        with os_fx, sd_fx, pages_fx:
            self.endpoints = {"pages": pages_fx.base_urls, "faults": self.faults,
                              "opensubtitles": os_fx.api_url, "subdl": sd_fx.api_url,
                              "subdl_download": sd_fx.download_url}
            yield self.endpoints

    @contextlib.contextmanager
    def _pd_services(self) -> Iterator[dict[str, Any]]:
        from fixtures.gemini_pages_server import GeminiPagesFixture
        from fixtures.ia_server import IAFixture

        with IAFixture(self.worlds["variety"], self.worlds["cce"]) as ia, \
                GeminiPagesFixture(self.worlds["variety"], self.worlds["cce"]) as gem:
            self.endpoints = {"internet_archive": host_to_url(ia.host), "gemini": gem.base_url}
            yield self.endpoints

    @property
    def tuning(self) -> ClientTuning:  # type: ignore[override]
        return loopback_tuning()

    def service_endpoints(self) -> EndpointSettings:
        """The settings' endpoints with the running fixture servers' URLs in place: the sample
        build is a replay, its clients are built by the same code as the live ones."""
        return fixture_endpoints(self.settings.endpoints, self.endpoints)

    # -- subtitle flow ------------------------------------------------------------------------
    def source_pages(self) -> tuple[Path, dict[str, Any] | None]:
        """The sample pages, mirrored from the page fixture server by the polite fetcher
        (robots.txt, rate limit, on-disk cache, conditional requests, the crawl status table)
        exactly as `cinesub sources mirror` crawls the live sites."""
        from extractors.sources.fetch import PoliteFetcher
        from extractors.sources.mirror import CrawlStatus, mirror_sources

        base_urls = self.endpoints.get("pages")
        if not base_urls:  # no page server (a stage run on its own): the world's pages as they are
            return self.world, None
        out = self.settings.home / "sources" / "sample-mirror"
        with PoliteFetcher(self.settings.home / "cache" / "pages", requests_per_second=500.0,
                           site_roots=tuple(base_urls.values()), backoff_base_s=0.02) as fetcher, \
                CrawlStatus(self.settings.home / "state" / "crawl-sample.duckdb") as status:
            # revalidate every page: the world behind the fixture may have been regenerated
            report = mirror_sources(fetcher, base_urls, out, status=status, refresh=True)
        return out, {"pages": len(report.kim) + len(report.csm), "imdb_titles": len(report.imdb_titles),
                     "skipped": len(report.skipped), "counts": report.counts(), "snapshot_id": report.snapshot_id}

    def inventory_inputs(self) -> dict[str, Any]:
        return {"sample": self.pages_digest or self.digest}  # the pages are the sample world's, served verbatim

    def release_inputs(self) -> dict[str, Any]:
        return {"sample_world": self.digest, "sources": None}

    def subtitle_providers(self) -> list:
        return build_subtitle_providers(self.settings, self.service_endpoints(),
                                        sample_provider_credentials(self.settings), self.tuning)

    def acquire_inputs(self, run_id: str) -> dict[str, Any]:
        return {"sample": self.digest, "faults": self.faults}

    @property
    def search_cacheable(self) -> bool:  # type: ignore[override]
        # fault modes plant listings that live as long as one fixture server (SubDL's unsafe
        # archives): a fault build is a test of the providers' answers, searched afresh
        return not self.faults

    def answer_code(self) -> list[Path]:
        """The fixture servers' sources: they answer every provider query of a sample build."""
        import fixtures

        return sorted(Path(fixtures.__file__).parent.glob("*.py"))

    def search_inputs(self, imdb_ids: list[str]) -> dict[str, str | None]:
        """The film's files in the world the provider fixtures serve (subtitles, multi-part
        items, search-only listings): a changed world file means a changed answer."""
        from fixtures.opensubtitles_server import LISTINGS_FILE, MULTIPART_DIR

        if self.world is None:
            return {}
        listings: dict[str, list[Any]] = {}
        path = self.world / LISTINGS_FILE
        if path.is_file():
            for item in json.loads(path.read_text(encoding="utf-8")).get("items", []):
                listings.setdefault(str(item.get("imdb_id")), []).append(item)
        out: dict[str, str | None] = {}
        for tt in imdb_ids:
            parts = [tree_digest(self.world, [f"subtitles/{tt}", f"{MULTIPART_DIR}/{tt}"]),
                     json.dumps(listings.get(tt, []), sort_keys=True)]
            out[tt] = hashlib.sha256("\0".join(parts).encode()).hexdigest()
        return out

    def rebuild_inputs(self) -> dict[str, Any] | None:
        """The world (bytes of every file), the parameters, and the page mirror made from it;
        None when the world is not there yet or fault modes are on (a fault build is a test)."""
        from cinesub.sample.generate import GENERATOR_VERSION

        target = self.settings.home / "sample-world" / f"seed{self.seed}-n{self.n_films}"
        if self.faults or not _marker_says(target / SAMPLE_GENERATOR_VERSION_FILE, "generator_version",
                                           GENERATOR_VERSION):
            return None
        mirror = self.settings.home / "sources" / "sample-mirror"
        return {"kind": "sample", "seed": self.seed, "n_films": self.n_films, "world": dir_digest(target),
                "mirror": dir_digest(mirror) if mirror.is_dir() else None}

    # -- Hollywood flow -----------------------------------------------------------------------
    def ia_client(self, store: RawStore) -> Any:
        return build_ia_client(self.service_endpoints(), store, self.tuning)

    def remote_marker(self, run_id: str) -> dict[str, Any]:
        return {"sample": self.digest}  # the fixture serves nothing else

    def gemini_available(self) -> tuple[bool, str | None]:
        return True, None

    def gemini_endpoint(self) -> GeminiEndpoint | None:
        from fixtures.gemini_server import DEFAULT_API_KEY

        return build_gemini_endpoint(DEFAULT_API_KEY, self.service_endpoints(), self.tuning)

    def gemini_key_ref(self) -> Any:
        from pydantic import SecretStr

        from extractors.gemini_pages import GeminiKeyRef
        from fixtures.gemini_server import DEFAULT_API_KEY

        return GeminiKeyRef(SecretStr(DEFAULT_API_KEY))  # the fixture server's published key

    def hollywood_inputs(self) -> HollywoodInputs:
        v, c = self.worlds.get("variety"), self.worlds.get("cce")
        return HollywoodInputs(catalog=v / "catalog.tsv" if v else None, gold_dir=v / "gold" if v else None,
                               cprs_export=c / "cprs_export.tsv" if c else None,
                               source_works=c / "afi_based_on.tsv" if c else None)

    def hollywood_release_inputs(self, table_digests: dict[str, str]) -> dict[str, Any]:
        return {"sample_world": self.digest, "seed": self.settings.hollywood.sample_seed}
