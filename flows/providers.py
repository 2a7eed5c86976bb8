"""Which subtitle providers a build uses, and the loopback services of a sample build.

* Sample build: the OpenSubtitles and SubDL fixture servers (``fixtures/``) serve the sample
  world over loopback, speaking the real wire formats, so the real clients run; ``faults``
  switches their fault modes on.
* Live build with ``inputs.subtitles_dir``: the local-directory provider (pre-downloaded dumps).
* Live build otherwise: OpenSubtitles (primary) and SubDL (recovery) with credentials from env
  vars or Prefect Secret blocks.

Endpoints travel to the tasks in the spec; credentials never do (Prefect records flow and task
parameters): every task reads them from settings or, in a sample build, from the fixtures.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cinesub.settings import Settings, resolve_secret

#: quota of the sample OpenSubtitles fixture when the ``quota`` fault is on: one clean stop in a
#: default sample build (about 200 downloads), completed by the next run; the fixture's own
#: setting, overridable with CINESUB_FIXTURE_QUOTA for smaller worlds
SAMPLE_QUOTA_DOWNLOADS = 120


def _sample_credentials(settings: Settings) -> dict[str, str]:
    from fixtures.opensubtitles_server import DEFAULT_API_KEY, DEFAULT_PASSWORD, DEFAULT_USERNAME

    p = settings.providers
    return {
        "api_key": p.opensubtitles_api_key.get_secret_value() if p.opensubtitles_api_key else DEFAULT_API_KEY,
        "username": p.opensubtitles_username or DEFAULT_USERNAME,
        "password": p.opensubtitles_password.get_secret_value() if p.opensubtitles_password else DEFAULT_PASSWORD,
        "subdl_api_key": p.subdl_api_key.get_secret_value() if p.subdl_api_key else DEFAULT_API_KEY,
    }


@contextlib.contextmanager
def sample_services(settings: Settings, world: Path, faults: str | None) -> Iterator[dict[str, Any]]:
    """Start the fixture servers for a sample build; yield the endpoints (no secrets)."""
    from fixtures.faults import FaultConfig, parse_faults
    from fixtures.opensubtitles_server import OpenSubtitlesFixture
    from fixtures.pages_server import PagesFixture
    from fixtures.subdl_server import SubDLFixture

    active = sorted(parse_faults(faults)) if faults else []
    creds = _sample_credentials(settings)
    config = FaultConfig(quota_downloads=int(os.environ.get("CINESUB_FIXTURE_QUOTA", SAMPLE_QUOTA_DOWNLOADS)))
    os_fx = OpenSubtitlesFixture(world, active, config=config, api_key=creds["api_key"],
                                 username=creds["username"], password=creds["password"])
    sd_fx = SubDLFixture(world, active, config=config, api_key=creds["subdl_api_key"])
    pages_fx = PagesFixture(world)  # review sites and IMDb, shaped like the real ones
    with os_fx, sd_fx, pages_fx:
        yield {
            "pages": pages_fx.base_urls,
            "kind": "fixtures",
            "faults": active,
            "opensubtitles_url": os_fx.api_url,
            "subdl_url": sd_fx.api_url,
            "subdl_download_url": sd_fx.download_url,
        }


def make_providers(settings: Settings, endpoints: dict[str, Any] | None) -> list:
    """The providers in recovery order (the first is primary)."""
    from extractors.providers.opensubtitles import OpenSubtitlesProvider
    from extractors.providers.ratelimit import RetryPolicy
    from extractors.providers.subdl import SubDLProvider

    state = settings.home / "state" / "opensubtitles-quota.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    if endpoints and endpoints.get("kind") == "fixtures":
        creds = _sample_credentials(settings)
        # loopback: no need to throttle to the real API's 5 req/s; short backoff and timeout so
        # the fixtures' slow-response fault really times out
        fast = dict(requests_per_second=200.0, burst=20.0, timeout_s=2.0,
                    retry=RetryPolicy(max_attempts=8, backoff_base_s=0.02, backoff_max_s=0.2, max_retry_after_s=5))
        return [
            OpenSubtitlesProvider(settings.providers, state_path=state, api_key=creds["api_key"],
                                  username=creds["username"], password=creds["password"],
                                  base_url=endpoints["opensubtitles_url"], **fast),
            SubDLProvider(settings.providers, api_key=creds["subdl_api_key"], base_url=endpoints["subdl_url"],
                          download_url=endpoints["subdl_download_url"], **fast),
        ]
    if settings.inputs.subtitles_dir is not None:
        from extractors.providers.local_dir import LocalDirProvider

        return [LocalDirProvider(settings.inputs.subtitles_dir)]
    p = settings.providers
    api_key = resolve_secret(p.opensubtitles_api_key, p.opensubtitles_api_key_block)
    password = resolve_secret(p.opensubtitles_password, p.opensubtitles_password_block)
    subdl_key = resolve_secret(p.subdl_api_key, p.subdl_api_key_block)
    providers: list = []
    if api_key:
        providers.append(OpenSubtitlesProvider(p, state_path=state, api_key=api_key,
                                               username=p.opensubtitles_username, password=password))
    if subdl_key:
        providers.append(SubDLProvider(p, api_key=subdl_key))
    if not providers:
        from cinesub.errors import ConfigError

        raise ConfigError("no subtitle provider configured: set inputs.subtitles_dir, or OpenSubtitles/SubDL "
                          "credentials (env vars or Prefect Secret blocks), or use --sample", "credentials_missing")
    return providers
