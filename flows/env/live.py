"""The live environment: real providers, the Internet Archive, the configured input files.

Every base URL is a setting under ``[endpoints]`` (:class:`cinesub.settings.EndpointSettings`):
the same code runs against the real services, a mirror, a proxy or a replay server; the sample
environment is one such replay (it builds its clients with the same helpers of
:mod:`flows.env.base`, only its endpoints, credentials and :class:`ClientTuning` differ).

* Subtitles: the local-directory provider when ``inputs.subtitles_dir`` is set (pre-downloaded
  dumps), else OpenSubtitles (primary, ``endpoints.opensubtitles``) and SubDL (recovery,
  ``endpoints.subdl`` / ``endpoints.subdl_download``) with credentials from env vars or Prefect
  Secret blocks.
* Source pages: ``inputs.sources_dir`` (mirrored from ``endpoints.kim`` / ``csm`` / ``imdb`` /
  ``imdb_datasets`` by ``cinesub sources mirror``).
* Hollywood: ``endpoints.internet_archive``, the Gemini key of the settings / environment and
  ``endpoints.gemini``, the configured catalog, gold, CPRS export and source-work files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cinesub.errors import ConfigError
from cinesub.rawstore import RawStore
from cinesub.settings import Settings, resolve_secret
from flows.env.base import (Environment, GeminiEndpoint, HollywoodInputs, ProviderCredentials, build_gemini_endpoint,
                            build_ia_client, build_subtitle_providers, dir_digest, file_digest, quota_state)

__all__ = ["LiveEnvironment", "live_credentials", "quota_state"]


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
        # the digest of the source pages the inventory was built from (input snapshot id), and the
        # snapshot `cinesub sources mirror` wrote (SNAPSHOT.json; None for a folder filled otherwise)
        from extractors.sources.mirror import read_snapshot, tree_digest

        root = self.sources_root()
        snap = read_snapshot(root)
        snapshot = None
        if snap is not None:
            snapshot = {k: snap.get(k) for k in ("snapshot_id", "finished_at", "run_id", "counts", "changes")}
            # edited after the crawl? then the snapshot id does not describe these pages
            snapshot["matches_tree"] = snap.get("snapshot_id") == tree_digest(root)
        return {"sample_world": None, "sources": dir_digest(root), "sources_snapshot": snapshot}

    def subtitle_providers(self) -> list:
        settings = self.settings
        if settings.inputs.subtitles_dir is not None:
            from extractors.providers.local_dir import LocalDirProvider

            return [LocalDirProvider(settings.inputs.subtitles_dir)]
        providers = build_subtitle_providers(settings, self.service_endpoints(), live_credentials(settings),
                                             self.tuning)
        if not providers:
            raise ConfigError("no subtitle provider configured: set inputs.subtitles_dir, or OpenSubtitles/SubDL "
                              "credentials (env vars or Prefect Secret blocks), or use --sample",
                              "credentials_missing")
        return providers

    def acquire_inputs(self, run_id: str) -> dict[str, Any]:
        if self.settings.inputs.subtitles_dir is not None:
            return {"subtitles": dir_digest(self.settings.inputs.subtitles_dir)}
        return {"live_run": run_id}  # network providers: searched every build

    def search_inputs(self, imdb_ids: list[str]) -> dict[str, str | None]:
        """A local dump: the film's folder (edited → searched again); remote providers: none."""
        subs = self.settings.inputs.subtitles_dir
        if subs is None:
            return {}
        from cinesub.digests import tree_digest

        return {tt: tree_digest(subs, [tt]) for tt in imdb_ids}

    def rebuild_inputs(self) -> dict[str, Any] | None:
        """The source pages and the local subtitle dump (their bytes); None when the pages were
        mirrored longer ago than ``providers.search_ttl_hours`` (the normal build runs)."""
        import json
        from datetime import datetime, timedelta, timezone

        root, subs = self.settings.inputs.sources_dir, self.settings.inputs.subtitles_dir
        if root is None or not Path(root).is_dir():
            return None
        try:  # SNAPSHOT.json of `cinesub sources mirror` (extractors/sources/mirror.py, not imported here)
            finished = json.loads((Path(root) / "SNAPSHOT.json").read_text(encoding="utf-8")).get("finished_at")
        except (OSError, ValueError, AttributeError):
            finished = None
        if finished:
            try:
                at = datetime.fromisoformat(str(finished).replace("Z", "+00:00"))
                if at.tzinfo is None:
                    at = at.replace(tzinfo=timezone.utc)
            except ValueError:
                return None
            if at < datetime.now(timezone.utc) - timedelta(hours=self.settings.providers.search_ttl_hours):
                return None
        return {"kind": "live", "sources": dir_digest(root),
                "subtitles": dir_digest(subs) if subs is not None and Path(subs).is_dir() else None}

    # -- Hollywood flow -----------------------------------------------------------------------
    def ia_client(self, store: RawStore) -> Any:
        return build_ia_client(self.service_endpoints(), store, self.tuning)

    def remote_marker(self, run_id: str) -> dict[str, Any]:
        # IA content can change: the stage runs every build, its unchanged output leaves later stages reused
        return {"live_run": run_id}

    def gemini_available(self) -> tuple[bool, str | None]:
        from extractors.gemini_pages import resolve_api_key

        ok = resolve_api_key(self.settings) is not None  # the key itself stays here
        return ok, None if ok else "no_gemini_api_key"

    def gemini_endpoint(self) -> GeminiEndpoint | None:
        from extractors.gemini_pages import resolve_api_key

        return build_gemini_endpoint(resolve_api_key(self.settings), self.service_endpoints(), self.tuning)

    def gemini_key_ref(self) -> Any:
        from extractors.gemini_pages import GeminiKeyRef

        cur = self.settings.curation  # the same sources as resolve_api_key, resolved by the worker
        return GeminiKeyRef(cur.gemini_api_key, cur.gemini_api_key_block)

    def hollywood_inputs(self) -> HollywoodInputs:
        hs = self.settings.hollywood
        return HollywoodInputs(catalog=_path(hs.catalog_path), gold_dir=_path(hs.gold_dir),
                               cprs_export=_path(hs.cprs_export_path), source_works=_path(hs.source_works_path))

    def hollywood_release_inputs(self, table_digests: dict[str, str]) -> dict[str, Any]:
        hs = self.settings.hollywood
        return {**table_digests, "catalog": file_digest(hs.catalog_path),
                "cprs_export": file_digest(hs.cprs_export_path), "source_works": file_digest(hs.source_works_path),
                "citymap": file_digest(hs.citymap_path)}


def live_credentials(settings: Settings) -> ProviderCredentials:
    """The subtitle providers' credentials from the settings, env vars or Prefect Secret blocks."""
    p = settings.providers
    return ProviderCredentials(
        opensubtitles_api_key=resolve_secret(p.opensubtitles_api_key, p.opensubtitles_api_key_block),
        opensubtitles_username=p.opensubtitles_username,
        opensubtitles_password=resolve_secret(p.opensubtitles_password, p.opensubtitles_password_block),
        subdl_api_key=resolve_secret(p.subdl_api_key, p.subdl_api_key_block))
