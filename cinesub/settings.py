"""Settings: environment variables (prefix ``CINESUB_``) plus an optional TOML/YAML config file.

Every threshold of SPEC A5/A9 is a named setting here. Credentials are ``SecretStr``: they are
never printed (``repr`` masks them), never written by us, and can come from env vars or from a
Prefect Secret block named in the config (resolved lazily by :func:`resolve_secret`).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import tomllib
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import pydantic
import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from cinesub.errors import ConfigError

#: The six subtitle languages of the corpus (SPEC A1 gate 5), ISO 639-1.
LANGUAGES: tuple[str, ...] = ("en", "ar", "id", "fa", "ro", "vi")
LANGUAGE_NAMES: dict[str, str] = {
    "en": "English",
    "ar": "Arabic",
    "id": "Indonesian",
    "fa": "Persian",
    "ro": "Romanian",
    "vi": "Vietnamese",
}
#: The ten rating countries in release order (SPEC A8, A11 "defined country order").
COUNTRIES: tuple[str, ...] = (
    "Australia",
    "Brazil",
    "France",
    "Germany",
    "Netherlands",
    "Singapore",
    "South Korea",
    "Sweden",
    "United Kingdom",
    "United States",
)


#: settings sections: unknown keys are errors (a typo must not be silently ignored), so are inf/nan
_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)


class Thresholds(BaseModel):
    """SPEC A5 verification thresholds (defaults are the paper's)."""

    model_config = _STRICT

    block_lifespan_min: float = Field(15.0, gt=0, description="flag a single block lasting >= this many minutes")
    delayed_onset_min: float = Field(5.0, ge=0, description="flag when the first subtitle starts after this many minutes")
    runtime_coverage_min_ratio: float = Field(2 / 3, ge=0, le=1, description="flag when last end / runtime < this")
    macro_interval_min: float = Field(15.0, gt=0, description="flag a gap >= this many minutes between adjacent blocks")
    language_min_share: float = Field(0.80, ge=0, le=1,
                                      description="flag when the share of text in the expected language < this")
    span_ratio_min: float = Field(0.65, ge=0, le=1, description="duration audit: span / runtime < this opens inspection")
    token_ratio_min: float = Field(0.60, ge=0, description="duration audit: tokens / English tokens < this")
    entry_ratio_min: float = Field(0.70, ge=0, description="duration audit: entries / English entries < this")
    # Not a paper number: A.9.1 flags a track whose "temporal span differs unusually from English"
    # without saying how much. 0.25 is our choice: Table 12's span/runtime is ~0.95 with a p05 of
    # ~0.87-0.90 in every language, so same-film spans normally agree within ~10%; a quarter of
    # the English span (~28 min of a 114.6-min mean runtime) is well outside that and about the
    # size of a missing act. The interval density of A.9.1 has no threshold in the paper and none
    # here: it is measured (release statistics), never flagged.
    span_vs_english_max_diff: float = Field(0.25, ge=0,
                                            description="duration audit: |span - English span| / English span > this "
                                                        "(our setting; A.9.1 gives no number)")
    max_candidates: int = Field(5, ge=1, le=1000, description="candidates tried per film and language before giving up")


class SafetySettings(BaseModel):
    """SPEC A9 settings."""

    model_config = _STRICT

    discrepancy_large: int = Field(5, ge=0, description="|subtitle count - KIM count| above this is a large discrepancy")


#: the real services (EndpointSettings defaults); a mirror, a proxy or a replay server replaces any
DEFAULT_ENDPOINTS: dict[str, str] = {
    "kim": "https://kids-in-mind.com",
    "csm": "https://www.commonsensemedia.org",
    "imdb": "https://www.imdb.com",
    "imdb_datasets": "https://datasets.imdbws.com",
    "opensubtitles": "https://api.opensubtitles.com/api/v1",
    "subdl": "https://api.subdl.com/api/v1",
    "subdl_download": "https://dl.subdl.com",
    "internet_archive": "https://archive.org",
    "gemini": "https://generativelanguage.googleapis.com",
}
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def check_endpoint_url(value: Any) -> str:
    """An ``http(s)://HOST[:PORT][/PATH]`` base URL without a trailing ``/`` (``ValueError`` naming
    the expected form otherwise)."""
    if not isinstance(value, str):
        raise ValueError(f"not an http(s) URL: {value!r} (expected http(s)://HOST[:PORT][/PATH])")
    text = value.strip()
    parts = urlsplit(text)
    try:
        parts.port  # noqa: B018 -- raises on a port that is not a number or out of range
    except ValueError:
        raise ValueError(f"bad port in URL {value!r}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or any(c.isspace() for c in text):
        raise ValueError(f"not an http(s) URL: {value!r} (expected http(s)://HOST[:PORT][/PATH])")
    if parts.query or parts.fragment:
        raise ValueError(f"a base URL has no query or fragment: {value!r}")
    return text.rstrip("/")


def host_to_url(host: str) -> str:
    """``hollywood.ia_host`` (a host name, ``HOST:PORT`` or a URL) as a base URL: a loopback host
    defaults to plain HTTP, any other to HTTPS (what :func:`extractors.ia.make_session` did)."""
    host = host.strip()
    if "://" in host:
        return host
    return ("http://" if host.startswith(_LOOPBACK_HOSTS) else "https://") + host


def redact_url(url: str | None) -> str | None:
    """``url`` with the password of its userinfo replaced by ``***`` (``https://user:***@host``)."""
    if not url:
        return url
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{netloc}"))


class EndpointSettings(BaseModel):
    """Base URL of every remote service (``[endpoints]``, ``CINESUB_ENDPOINTS__<NAME>``): point the
    same live code at a mirror, a proxy or a replay server. Not part of the config hash (where the
    bytes come from changes no output); the sample build points them at its fixture servers."""

    model_config = _STRICT

    kim: str = Field(DEFAULT_ENDPOINTS["kim"], description="Kids-in-Mind site root (per-letter indexes, reviews)")
    csm: str = Field(DEFAULT_ENDPOINTS["csm"], description="Common Sense Media site root (/movie-reviews)")
    imdb: str = Field(DEFAULT_ENDPOINTS["imdb"], description="IMDb www root (/title/<tt>/ pages)")
    imdb_datasets: str = Field(DEFAULT_ENDPOINTS["imdb_datasets"], description="IMDb datasets root (<name>.tsv.gz)")
    opensubtitles: str = Field(DEFAULT_ENDPOINTS["opensubtitles"], description="OpenSubtitles REST API base")
    subdl: str = Field(DEFAULT_ENDPOINTS["subdl"], description="SubDL API base")
    subdl_download: str = Field(DEFAULT_ENDPOINTS["subdl_download"], description="SubDL download host (ZIPs)")
    internet_archive: str = Field(DEFAULT_ENDPOINTS["internet_archive"],
                                  description="Internet Archive root (search, metadata, download)")
    gemini: str = Field(DEFAULT_ENDPOINTS["gemini"], description="Gemini API root (google-genai base_url)")

    @pydantic.field_validator("*", mode="before")
    @classmethod
    def _url(cls, value: Any) -> str:
        return check_endpoint_url(value)

    def as_dict(self) -> dict[str, str]:
        return self.model_dump()

    def public(self) -> dict[str, str]:
        """The endpoints with userinfo passwords redacted (for manifests and logs)."""
        return {k: redact_url(v) for k, v in self.model_dump().items()}


#: deprecated settings that name an endpoint: (section, key, endpoint); set, they fill ``endpoints``
DEPRECATED_ENDPOINT_KEYS: tuple[tuple[str, str, str], ...] = (
    ("providers", "opensubtitles_url", "opensubtitles"),
    ("providers", "subdl_url", "subdl"),
    ("curation", "gemini_base_url", "gemini"),
    ("hollywood", "ia_host", "internet_archive"),
)


class ProviderSettings(BaseModel):
    model_config = _STRICT

    #: deprecated: ``endpoints.opensubtitles`` / ``endpoints.subdl`` (set, they fill those)
    opensubtitles_url: str | None = None
    subdl_url: str | None = None
    opensubtitles_api_key: SecretStr | None = None
    opensubtitles_username: str | None = None
    opensubtitles_password: SecretStr | None = None
    subdl_api_key: SecretStr | None = None
    #: Prefect Secret block names, used when the value above is not set.
    opensubtitles_api_key_block: str | None = "opensubtitles-api-key"
    opensubtitles_password_block: str | None = "opensubtitles-password"
    subdl_api_key_block: str | None = "subdl-api-key"
    user_agent: str = "cinesub v0.1"
    requests_per_second: float = Field(4.0, gt=0, description="client-side request rate (requests per second, > 0)")
    #: hours a provider search (film, language, provider) is trusted before a build asks again
    #: (docs/rebuilds.md): listings change slowly, a day spares a rebuild 2 requests per film and
    #: language; 0 searches every build (``cinesub build --refresh-search`` once)
    search_ttl_hours: float = Field(24.0, ge=0, description="hours a provider search stays fresh (>= 0)")


class CurationSettings(BaseModel):
    """SPEC A10 task-reference curation: rules always, an optional Gemini-assisted pass."""

    model_config = _STRICT
    gemini_enabled: bool = False
    gemini_model: str = "gemini-2.5-flash"
    gemini_api_key: SecretStr | None = None
    gemini_api_key_block: str | None = "gemini-api-key"
    gemini_base_url: str | None = Field(None, description="deprecated: endpoints.gemini (set, it fills that)")
    gemini_thinking_level: str | None = None
    #: task fields subject to the completeness rule (a field is kept only when every cohort film has it)
    task_fields: tuple[str, ...] = ("plot", "synopsis", "storyline", "keyMessage", "genres", "ageSuitabilityRating")


class InputSettings(BaseModel):
    """Where a non-sample build reads its inputs (the sample build fills these itself)."""

    model_config = _STRICT
    sources_dir: Path | None = Field(None, description="review pages and IMDb datasets laid out as docs/sample_world.md")
    subtitles_dir: Path | None = Field(None, description="local-directory provider root: <tt>/<lang>/<file_id>.srt")


class ReleaseSettings(BaseModel):
    """SPEC A11 / C release practice: splits, statistics tokenizer, licence and citation text."""

    model_config = _STRICT
    split_strata: tuple[str, ...] = Field(
        ("decade", "age_suitability"),
        description="film attributes whose combinations (cells) define the public-sample strata (decade, "
                    "age_suitability, primary_genre, country); too-small cells merge (warehouse/public_sample.py)")
    public_share: float = Field(
        0.25, gt=0, lt=1,
        description="public share per stratum: min(n-1, max(1, round(share * n))) films of n are public, the "
                    "rest held back (seed 002's release practice; not its 0.2 human-evaluation overlap rule)")
    public_min_stratum: int | None = Field(
        None, ge=2, description="strata smaller than this merge with a neighbour; default max(2, ceil(1/public_share))")
    split_seed: int = Field(20260929, description="fixed seed of the split draw (frozen: a film keeps its split)")
    tokenizer: str = Field("o200k_base", description="tiktoken encoding for input-length statistics (the paper's)")
    license: str = Field("cc-by-nc-4.0", description="licence of the released annotations (SPDX / HF id)")
    dataset_url: str = Field("https://example.org/cinesub", description="where the release is published")


class HollywoodSettings(BaseModel):
    """SPEC B1/B2: the public-domain Hollywood flow (``build-hollywood``, flows/hollywood.py).

    Credentials are not here: the Gemini key is ``curation.gemini_api_key`` / its Prefect Secret
    block / ``CINESUB_GEMINI_API_KEY`` (extractors.variety.gemini_pages.resolve_api_key), so this
    model hashes into the config hash without a secret.
    """

    model_config = _STRICT

    as_of: date = Field(default_factory=lambda: datetime.now(timezone.utc).date(),
                        description="copyright status date (SPEC B2; validators/copyright_status.py). Unset: the "
                        "run date (UTC day the settings are loaded); set it (e.g. 2026-01-01) to freeze the "
                        "statuses for a reproducible release. The release manifest records the as_of used "
                        "and whether it was frozen")
    variety_start: str = Field("1922-01-01", description="first Variety issue date searched on the Internet Archive")
    variety_end: str = Field("1979-12-31", description="last Variety issue date searched")
    gemini_enabled: bool = Field(True, description="read page images with Gemini (else the OCR-rules extractor only)")
    gemini_model: str = Field("gemini-3-pro-preview", description="Gemini model for the page extractor")
    # -- Gemini as the paper ran it (seed 003, Appendix B: Gemini 3 Pro, high thinking, ultra-high
    #    resolution, two worked examples); docs/hollywood.md "Gemini page reading and the plan"
    gemini_thinking_level: Literal["minimal", "low", "medium", "high"] | None = Field(
        "high", description="ThinkingConfig.thinking_level (None: the model's default); the paper: high")
    gemini_media_resolution: Literal["low", "medium", "high", "ultra_high"] | None = Field(
        "ultra_high", description="media resolution of page images: low/medium/high go to "
        "GenerateContentConfig.media_resolution, ultra_high to each image Part (the paper: ultra-high)")
    gemini_max_output_tokens: int | None = Field(16384, ge=1, description="max_output_tokens of a page request "
                                                 "(thinking included)")
    gemini_max_output_tokens_retry: int | None = Field(
        65536, ge=1, description="the larger budget a MAX_TOKENS answer is asked again with, once (then the "
        "page is read in two halves)")
    gemini_split_on_max_tokens: bool = Field(True, description="split a page still cut by MAX_TOKENS into halves")
    gemini_requests_per_minute: float | None = Field(
        60.0, ge=0, description="token bucket shared by the reader's workers (None or 0: no limit)")
    gemini_max_workers: int = Field(8, ge=1, description="concurrent page requests")
    gemini_batch: bool = Field(False, description="use the Batch API (live volume runs; half price, asynchronous)")
    # -- `cinesub hollywood plan`: prices and token estimates (sources and dates in docs/hollywood.md)
    gemini_price_input_per_mtok: float = Field(2.00, ge=0, description="USD per 1M input tokens (gemini-3-pro-preview, "
                                               "prompts <= 200k tokens)")
    gemini_price_output_per_mtok: float = Field(12.00, ge=0, description="USD per 1M output tokens, thinking included")
    gemini_batch_price_factor: float = Field(0.5, ge=0, le=1, description="Batch API price as a share of the "
                                             "interactive price")
    gemini_prices_source: str = Field("ai.google.dev/gemini-api/docs/pricing, gemini-3-pro-preview, read 2025-11",
                                      description="where and when the prices were read (printed by the plan)")
    gemini_image_tokens: int | None = Field(None, ge=1, description="input tokens per image (None: by media "
                                            "resolution, extractors.gemini_pages.IMAGE_TOKENS)")
    gemini_output_tokens_per_page: int = Field(6000, ge=1, description="expected output tokens per page request "
                                               "(answer + thinking), for the plan")
    plan_keep_rate: float = Field(0.03, ge=0, le=1, description="share of leaves the page filter keeps, used by "
                                  "the plan when no build has measured it (issue 17: 2-4 %)")
    primary_extractor: Literal["gemini", "ocr-rules"] = Field("gemini", description="'gemini' or 'ocr-rules': whose tuples feed the ranking "
                                   "('ocr-rules' is used whenever Gemini is disabled or has no key)")
    top_n: int = Field(100, ge=1, description="the yearly top-N that defines popularity (SPEC B1)")
    alias_min_count: int = Field(3, ge=1, description="aliases seen at least this often in a year are resolved (SPEC B1)")
    catalog_path: Path | None = Field(None, description="live: IMDb-derived catalog TSV imdb,title,year[,votes] "
                                      "(feature films from title.basics)")
    citymap_path: Path | None = Field(None, description="city map CSV (default: the shipped map)")
    cprs_export_path: Path | None = Field(None, description="live: CPRS renewal export TSV (post-1978 RE renewals)")
    source_works_path: Path | None = Field(
        None, description="live: curator-supplied TSV of films' source works from the AFI catalog 'based on' data: "
        "film_reg_id, film_reg_date, source_title, renewed (yes/no/unknown)[, renewal_id] "
        "(extractors/cce/source_works.py). A film based on a source work whose copyright was renewed is "
        "protected (R5_source_work_renewed), unknown → needs_review. A malformed file fails the "
        "copyright-status stage. Sample builds use the CCE world's afi_based_on.tsv")
    gold_dir: Path | None = Field(None, description="live: hand-labelled gold pages gold/<item>/<leaf>.json")
    ia_host: str | None = Field(None, description="deprecated: endpoints.internet_archive (a host name, HOST:PORT "
                                "or URL; set, it fills that)")
    max_items: int | None = Field(None, ge=1, description="cap on Variety items per build (live trial runs)")
    page_image_max_b64_bytes: int = Field(
        18_000_000, ge=10_000, description="a page image sent to the model is PNG when its base64 fits this many "
        "bytes, else a downscaled JPEG that fits (Gemini's inline request limit is 20 MB)")
    state_memory_limit: str | None = Field(
        "64MiB", pattern=r"^\d+(\.\d+)?\s*(B|KB|KiB|MB|MiB|GB|GiB)$",
        description="DuckDB memory_limit of the Hollywood state DB while a stage runs (None: DuckDB's default, "
        "80 % of RAM). Beyond it DuckDB evicts cached blocks and spills to <db>.tmp, so the state DB's memory does "
        "not grow with the items (issue 17; docs/hollywood.md). Not in the config hash: it changes no output")
    film_title_min: float = Field(90.0, ge=0, le=100, description="title similarity (0-100) linking a ranked film to a "
                                  "registration or an IA film item")
    sample_seed: int = Field(1934, description="seed of the sample Variety and CCE worlds")
    ocr_engine: Literal["tesseract", "none"] = Field(
        "tesseract", description="OCR engine for pages with no or unusable text layer (extractors/ocr_tesseract.py); "
        "'none': such pages are recorded ocr_unavailable")
    ocr_lang: str = Field("eng", description="Tesseract language (the tesseract-ocr-<lang> package)")
    ocr_min_words: int = Field(5, ge=0, description="a usable text layer has at least this many dictionary-like tokens "
                               "(else Tesseract reads the page image: unusable_text_layer)")
    ocr_min_word_ratio: float = Field(0.5, ge=0, le=1, description="...and at least this share of its non-numeric "
                                      "tokens dictionary-like")


class SelectionSettings(BaseModel):
    """SPEC A7 run by the build (``[selection]``; flows/stages/subtitles/survey.py,
    docs/coverage.md "Selection run by the build"): a search-only availability survey and the exact
    complete-coverage search choose the subtitle languages the build acquires and the rating
    countries it releases. ``fixed`` mode uses ``Settings.languages`` / ``Settings.countries``
    (the survey still records its tables)."""

    model_config = _STRICT

    languages_mode: Literal["survey", "fixed"] = Field(
        "survey", description="'survey': the coverage search over the survey chooses the languages; "
        "'fixed': acquire Settings.languages")
    language_pool: tuple[str, ...] | None = Field(
        None, description="languages the survey asks the primary provider for (OpenSubtitles codes); "
        "None: every language it lists, the pool being the language_pool_size most available (the paper "
        "names only 6 of its 29 and the 29th, Czech)")
    language_pool_size: int = Field(29, ge=1, le=200, description="top-N languages by availability in the pool")
    languages_k: int | Literal["optimum"] = Field(
        6, description="languages to choose (the paper's 6), or 'optimum': the best K of all")
    languages_required: tuple[str, ...] = Field(("en",), description="languages every chosen set contains")
    languages_min_films: int = Field(1, ge=0, description="a chosen language set keeps at least this many films")
    countries_mode: Literal["survey", "fixed"] = Field(
        "survey", description="'survey': the coverage search chooses the rating countries; "
        "'fixed': Settings.countries")
    country_pool_size: int = Field(21, ge=1, le=300, description="top-N rating countries by availability in the pool")
    countries_k: int | Literal["optimum"] = Field(10, description="rating countries to choose (the paper's 10)")
    countries_required: tuple[str, ...] = Field((), description="countries every chosen set contains")
    countries_min_films: int = Field(1, ge=0, description="a chosen country set keeps at least this many films")
    survey_max_pages: int = Field(20, ge=1, le=1000,
                                  description="result pages read per film by the availability survey")

    @pydantic.field_validator("languages_k", "countries_k")
    @classmethod
    def _k(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and value < 1:
            raise ValueError("must be >= 1 or 'optimum'")
        return value


_DASK_ADDRESS_RE = re.compile(r"^(tcp|tls)://[A-Za-z0-9_.\-]+(?::\d{1,5})?$|^(tcp|tls)://\[[0-9A-Fa-f:]+\](?::\d{1,5})?$")


def check_dask_address(value: str | None) -> str | None:
    """``tcp://HOST:PORT`` or ``tls://HOST:PORT`` (a ``ValueError`` naming the form otherwise)."""
    if value is None:
        return None
    value = value.strip()
    if not _DASK_ADDRESS_RE.match(value):
        raise ValueError(f"not a Dask scheduler address: {value!r} (expected tcp://HOST:PORT or tls://HOST:PORT)")
    port = value.rsplit(":", 1)[-1]
    if port.isdigit() and not 0 < int(port) < 65536:
        raise ValueError(f"port out of range in Dask scheduler address {value!r}")
    return value


class SourceSettings(BaseModel):
    """The crawl of the metadata sources (``cinesub sources mirror``; docs/sources.md "Crawl").
    Changes no output (not in the config hash): it decides how pages are fetched, not what they say."""

    model_config = _STRICT

    browser_fallback: bool = Field(False, description="fetch a page answered with a bot challenge (AWS WAF) "
                                   "again in headless Chromium (/usr/bin/chromium via Playwright)")
    requests_per_second: float = Field(1.0, gt=0, description="per-site request rate of the crawl "
                                       "(a robots.txt Crawl-delay lowers it further)")
    user_agent: str | None = Field(None, description="User-Agent of the crawl; keep the cinesub/<version> token and "
                                   "add your contact (default: extractors.sources.fetch.DEFAULT_USER_AGENT)")
    refresh_after_days: float = Field(30.0, ge=0, description="a review/title page fetched less than this many days "
                                      "ago is not asked for again (index pages and datasets always are, "
                                      "conditionally)")


class ExecutionSettings(BaseModel):
    """Where the per-item work runs (flows/items.py, docs/distributed.md). Changes no output."""

    model_config = _STRICT

    runner: Literal["local", "dask"] = Field("local", description="local spawn processes, or a Dask cluster")
    dask_address: str | None = Field(None, description="scheduler address (tcp://HOST:PORT or tls://HOST:PORT); "
                                     "none: a dask.distributed.LocalCluster for the length of the build")
    dask_workers: int = Field(2, ge=1, le=256, description="worker processes of the LocalCluster (no address)")
    batch_size: int = Field(8, ge=1, le=10_000, description="items per Prefect task (item-batch) on Dask")

    @pydantic.field_validator("dask_address")
    @classmethod
    def _address(cls, value: str | None) -> str | None:
        return check_dask_address(value)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="CINESUB_", env_nested_delimiter="__", extra="ignore", allow_inf_nan=False
    )

    home: Path = Field(Path("./var"), description="CINESUB_HOME: state, raw store, releases")
    languages: tuple[str, ...] = LANGUAGES
    countries: tuple[str, ...] = COUNTRIES
    selection: SelectionSettings = SelectionSettings()
    decoder_policy: Literal["default", "paper"] = "default"
    seed: int = 7
    thresholds: Thresholds = Thresholds()
    safety: SafetySettings = SafetySettings()
    providers: ProviderSettings = ProviderSettings()
    inputs: InputSettings = InputSettings()
    curation: CurationSettings = CurationSettings()
    release: ReleaseSettings = ReleaseSettings()
    hollywood: HollywoodSettings = HollywoodSettings()
    endpoints: EndpointSettings = EndpointSettings()
    sources: SourceSettings = SourceSettings()
    workers: int = Field(2, ge=1, le=256, description="parallel processes for track processing")
    process_batch_tracks: int = Field(
        128, ge=1, le=4096, description="candidates per job of the process stage: decoded and parsed one "
        "by one, verified and sanitized in one vectorised pass, written in one transaction")
    execution: ExecutionSettings = ExecutionSettings()
    raw_store_url: str | None = Field(None, description="fsspec URL of the raw store (s3://bucket/raw, "
                                      "file:///srv/raw); default: the local folder CINESUB_HOME/raw")

    @pydantic.model_validator(mode="after")
    def _deprecated_endpoints(self) -> Settings:
        """The deprecated endpoint keys (``providers.opensubtitles_url``, ...) fill ``endpoints``;
        set together with the endpoint to another URL they are an error."""
        updates: dict[str, str] = {}
        for section, key, name in DEPRECATED_ENDPOINT_KEYS:
            old = getattr(getattr(self, section), key)
            if old is None:
                continue
            try:
                url = check_endpoint_url(host_to_url(old) if key == "ia_host" else old)
            except ValueError as exc:
                raise ValueError(f"{section}.{key} (deprecated, use endpoints.{name}): {exc}") from None
            if name in self.endpoints.model_fields_set and getattr(self.endpoints, name) != url:
                raise ValueError(f"{section}.{key} (deprecated) = {redact_url(url)!r} disagrees with endpoints.{name}"
                                 f" = {redact_url(getattr(self.endpoints, name))!r}: set only endpoints.{name}")
            updates[name] = url
        if updates:
            self.endpoints = self.endpoints.model_copy(update=updates)
        return self

    # -- derived paths -------------------------------------------------------------------------
    @property
    def state_db(self) -> Path:
        return self.home / "state.duckdb"

    @property
    def raw_dir(self) -> Path:
        return self.home / "raw"

    @property
    def releases_dir(self) -> Path:
        return self.home / "releases"

    @property
    def reports_dir(self) -> Path:
        return self.home / "reports"

    def public_dict(self) -> dict[str, Any]:
        """Settings without secrets, for hashing and for writing into manifests."""
        data = self.model_dump(mode="json", exclude={"providers": {
            "opensubtitles_api_key", "opensubtitles_password", "subdl_api_key", "opensubtitles_username"},
            "curation": {"gemini_api_key"}})
        data["home"] = str(self.home)
        # endpoints are not secret, but a URL may carry ``user:password@``
        data["endpoints"] = self.endpoints.public()
        for section, key, _ in DEPRECATED_ENDPOINT_KEYS:
            if data.get(section, {}).get(key):
                data[section][key] = redact_url(data[section][key])
        return data

    def config_hash(self) -> str:
        """Hash of everything that changes outputs (home excluded: moving CINESUB_HOME changes nothing)."""
        data = self.public_dict()
        data.pop("home", None)
        data.pop("workers", None)
        data.pop("execution", None)  # where the work runs changes no output
        data.pop("raw_store_url", None)  # content-addressed: the same bytes wherever they are kept
        data.pop("inputs", None)  # input contents are fingerprinted by the stages themselves
        data.pop("hollywood", None)  # the build-hollywood flow hashes its own section (flows/stages/hollywood/common.py)
        data.pop("endpoints", None)  # a mirror, a proxy or a replay of the same services changes no output
        data.pop("sources", None)  # how the crawl fetches pages changes no output
        data.get("providers", {}).pop("search_ttl_hours", None)  # when to ask again changes no output
        for section, key, _ in DEPRECATED_ENDPOINT_KEYS:  # their old names neither
            data.get(section, {}).pop(key, None)
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def _read_config_file(path: Path) -> dict[str, Any]:
    """The settings mapping of a TOML or YAML file (:class:`ConfigError` with the line when malformed)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}", "config_not_found") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read config file {path}: {e}", "config_unreadable") from None
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text) or {}
        else:
            raise ConfigError(f"config file must be .toml, .yaml or .yml: {path}", "config_format")
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"malformed TOML in {path}: {e}", "config_malformed") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(f"malformed YAML in {path}{where}: {problem}", "config_malformed") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping at top level", "config_malformed")
    data = data.get("cinesub", data)
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: [cinesub] must be a mapping", "config_malformed")
    return data


def _model_of(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def unknown_keys(data: dict[str, Any], model: type[BaseModel] = None, prefix: str = "") -> list[str]:
    """One message per key of ``data`` (nested sections included) that ``model`` does not have,
    with the closest known key as a suggestion."""
    model = model or Settings
    out = []
    fields = model.model_fields
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if key not in fields:
            close = difflib.get_close_matches(str(key), list(fields), n=1, cutoff=0.6)
            hint = f" (did you mean '{prefix}{close[0]}'?)" if close else f" (known keys: {', '.join(fields)})"
            out.append(f"unknown config key '{dotted}'{hint}")
            continue
        sub = _model_of(fields[key].annotation)
        if sub is not None and isinstance(value, dict):
            out.extend(unknown_keys(value, sub, dotted + "."))
    return out


#: CINESUB_* environment variables that are not settings (read directly by their modules)
NON_SETTING_ENV = ("CINESUB_DEBUG", "CINESUB_GEMINI_API_KEY", "CINESUB_REPO", "CINESUB_SHARED", "CINESUB_BUILD_TOKEN")
NON_SETTING_ENV_PREFIXES = ("CINESUB_FIXTURE_", "CINESUB_FAULT_", "CINESUB_TEST_", "CINESUB_BENCH_")


def unknown_env(environ: dict[str, str] | None = None) -> list[str]:
    """Typos among CINESUB_* variables: an unknown key inside a section (``CINESUB_A__B``), or a
    top-level name close to a setting (``CINESUB_WORKER``). Other top-level names are left alone:
    they may be read by other modules (``NON_SETTING_ENV``)."""
    environ = dict(os.environ if environ is None else environ)
    out = []
    fields = {f.upper(): f for f in Settings.model_fields}
    for name in sorted(environ):
        up = name.upper()
        if not up.startswith("CINESUB_") or up in NON_SETTING_ENV or up.startswith(NON_SETTING_ENV_PREFIXES):
            continue
        parts = up[len("CINESUB_"):].split("__")
        if len(parts) == 1:
            if parts[0] in fields:
                continue
            close = difflib.get_close_matches(parts[0], list(fields), n=1, cutoff=0.8)
            if close:
                out.append(f"unknown setting in environment variable {name} (did you mean CINESUB_{close[0]}?)")
            continue
        model: type[BaseModel] | None = Settings
        for i, part in enumerate(parts):
            names = {f.upper(): f for f in model.model_fields} if model is not None else {}
            if part in names:
                model = _model_of(model.model_fields[names[part]].annotation)
                if model is None:
                    break
                continue
            close = difflib.get_close_matches(part, list(names), n=1, cutoff=0.6)
            hint = "CINESUB_" + "__".join([*parts[:i], close[0]]) if close else None
            out.append(f"unknown setting in environment variable {name}"
                       + (f" (did you mean {hint}?)" if hint else ""))
            break
    return out


def _describe(exc: pydantic.ValidationError, source: str) -> str:
    msgs = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ()))
        if not loc:  # a check across sections (Settings model validator): its message says it all
            msgs.append(f"{err.get('msg', '').removeprefix('Value error, ')} in {source}")
            continue
        if err.get("type") == "extra_forbidden":
            msgs.append(f"unknown config key '{loc}' in {source}")
            continue
        value = err.get("input")
        shown = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
        msgs.append(f"config key '{loc}' = {shown[:80]} in {source}: {err.get('msg')}")
    return "; ".join(msgs)


def load_settings(config: Path | None = None, home: Path | None = None, **overrides: Any) -> Settings:
    """Settings from (lowest to highest priority): defaults, config file, env vars, arguments.

    :class:`ConfigError` (a ``ValueError``) when the file is malformed, a key is unknown (with a
    suggestion), or a value has the wrong type or is out of range (naming key and value).
    """
    file_values: dict[str, Any] = _read_config_file(Path(config)) if config else {}
    problems = unknown_keys(file_values)
    if problems:
        raise ConfigError(f"{config}: " + "; ".join(problems), "config_unknown_key")
    problems = unknown_env()
    if problems:
        raise ConfigError("; ".join(problems), "config_unknown_key")
    try:
        env = Settings()  # env vars and defaults
    except pydantic.ValidationError as e:
        raise ConfigError(_describe(e, "the environment (CINESUB_* variables)"), "config_invalid") from None
    env_set = env.model_dump(exclude_unset=True)
    merged = _deep_merge(file_values, env_set)
    merged = _deep_merge(merged, overrides)
    if home is not None:
        merged["home"] = home
    elif "home" not in merged and os.environ.get("CINESUB_HOME"):
        merged["home"] = os.environ["CINESUB_HOME"]
    try:
        settings = Settings.model_validate(merged)
    except pydantic.ValidationError as e:
        raise ConfigError(_describe(e, str(config) if config else "the settings"), "config_invalid") from None
    settings.home = Path(settings.home).resolve()
    return settings


def _deep_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def resolve_secret(value: SecretStr | None, block_name: str | None, env_var: str | None = None) -> str | None:
    """A credential from the setting, an env var, or a Prefect Secret block (in that order).

    Returns the plain value for the client only; callers must never log it.
    """
    if value is not None:
        return value.get_secret_value()
    if env_var and os.environ.get(env_var):
        return os.environ[env_var]
    if block_name:
        try:
            from prefect.blocks.system import Secret

            return Secret.load(block_name).get()
        except Exception:  # no server, no block: live mode will fail with a clear error later
            return None
    return None
