"""The live environment: real providers, the Internet Archive, the configured input files.

* Subtitles: the local-directory provider when ``inputs.subtitles_dir`` is set (pre-downloaded
  dumps), else OpenSubtitles (primary) and SubDL (recovery) with credentials from env vars or
  Prefect Secret blocks.
* Source pages: ``inputs.sources_dir``.
* Hollywood: ``hollywood.ia_host``, the Gemini key of the settings / environment and
  ``curation.gemini_base_url``, the configured catalog, gold, CPRS export and source-work files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cinesub.errors import ConfigError
from cinesub.rawstore import RawStore
from cinesub.settings import resolve_secret
from flows.env.base import Environment, GeminiEndpoint, HollywoodInputs, dir_digest, file_digest


def _path(value: Any) -> Path | None:
    return Path(value) if value else None


class LiveEnvironment(Environment):
    kind = "live"

    def prepare(self, flow: str) -> None:
        if flow == "build-hollywood":
            cat = self.settings.hollywood.catalog_path
            if cat is None or not Path(cat).is_file():
                raise ConfigError("a live Hollywood build needs hollywood.catalog_path: a TSV imdb, title, year"
                                  "[, votes] derived from IMDb title.basics (CINESUB_HOLLYWOOD__CATALOG_PATH)",
                                  "catalog_missing")

    # -- subtitle flow ------------------------------------------------------------------------
    def sources_root(self) -> Path:
        root = self.settings.inputs.sources_dir
        if root is None:
            raise ConfigError("no source pages: set inputs.sources_dir (CINESUB_INPUTS__SOURCES_DIR) or use --sample",
                              "inputs_missing")
        return Path(root)

    def source_pages(self) -> tuple[Path, dict[str, Any] | None]:
        return self.sources_root(), None

    def source_digests(self) -> dict[str, str | None]:
        root = self.sources_root()
        return {d: dir_digest(root / d) if (root / d).is_dir() else None for d in ("kim", "csm", "imdb")}

    def inventory_inputs(self) -> dict[str, Any]:
        return {"sources": self.source_digests()}

    def release_inputs(self) -> dict[str, Any]:
        # the digest of the source pages the inventory was built from (input snapshot id)
        return {"sample_world": None, "sources": dir_digest(self.sources_root())}

    def subtitle_providers(self) -> list:
        from extractors.providers.opensubtitles import OpenSubtitlesProvider
        from extractors.providers.subdl import SubDLProvider

        settings = self.settings
        if settings.inputs.subtitles_dir is not None:
            from extractors.providers.local_dir import LocalDirProvider

            return [LocalDirProvider(settings.inputs.subtitles_dir)]
        p = settings.providers
        api_key = resolve_secret(p.opensubtitles_api_key, p.opensubtitles_api_key_block)
        password = resolve_secret(p.opensubtitles_password, p.opensubtitles_password_block)
        subdl_key = resolve_secret(p.subdl_api_key, p.subdl_api_key_block)
        providers: list = []
        if api_key:
            providers.append(OpenSubtitlesProvider(p, state_path=quota_state(settings), api_key=api_key,
                                                   username=p.opensubtitles_username, password=password))
        if subdl_key:
            providers.append(SubDLProvider(p, api_key=subdl_key))
        if not providers:
            raise ConfigError("no subtitle provider configured: set inputs.subtitles_dir, or OpenSubtitles/SubDL "
                              "credentials (env vars or Prefect Secret blocks), or use --sample",
                              "credentials_missing")
        return providers

    def acquire_inputs(self, run_id: str) -> dict[str, Any]:
        if self.settings.inputs.subtitles_dir is not None:
            return {"subtitles": dir_digest(self.settings.inputs.subtitles_dir)}
        return {"live_run": run_id}  # network providers: searched every build

    # -- Hollywood flow -----------------------------------------------------------------------
    def ia_client(self, store: RawStore) -> Any:
        from extractors.ia import IAClient

        return IAClient.for_host(self.settings.hollywood.ia_host, store)

    def remote_marker(self, run_id: str) -> dict[str, Any]:
        # IA content can change: the stage runs every build, its unchanged output leaves later stages reused
        return {"live_run": run_id}

    def gemini_available(self) -> tuple[bool, str | None]:
        from extractors.gemini_pages import resolve_api_key

        ok = resolve_api_key(self.settings) is not None  # the key itself stays here
        return ok, None if ok else "no_gemini_api_key"

    def gemini_endpoint(self) -> GeminiEndpoint | None:
        from extractors.gemini_pages import resolve_api_key

        key = resolve_api_key(self.settings)
        if not key:
            return None
        return GeminiEndpoint(key, self.settings.curation.gemini_base_url, {}, {"poll_interval_s": 30.0})

    def hollywood_inputs(self) -> HollywoodInputs:
        hs = self.settings.hollywood
        return HollywoodInputs(catalog=_path(hs.catalog_path), gold_dir=_path(hs.gold_dir),
                               cprs_export=_path(hs.cprs_export_path), source_works=_path(hs.source_works_path))

    def hollywood_release_inputs(self, table_digests: dict[str, str]) -> dict[str, Any]:
        hs = self.settings.hollywood
        return {**table_digests, "catalog": file_digest(hs.catalog_path),
                "cprs_export": file_digest(hs.cprs_export_path), "source_works": file_digest(hs.source_works_path),
                "citymap": file_digest(hs.citymap_path)}


def quota_state(settings: Any) -> Path:
    """Where the OpenSubtitles client keeps its download-quota state."""
    state = settings.home / "state" / "opensubtitles-quota.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    return state
