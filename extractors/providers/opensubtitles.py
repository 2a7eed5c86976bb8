"""OpenSubtitles.com REST API v1 provider, built on the ``opensubtitlescom`` package.

The package (0.1.5) builds the requests and parses the answers (``login``, ``user_info``,
``search`` → ``SearchResponse``/``Subtitle``, ``download`` → ``DownloadResponse`` → link). Its own
transport is not usable here — module-level ``requests`` calls without a timeout, no status code or
headers for the caller, no retries, no 429 handling, an ``authorization`` header without
``Bearer``, error bodies logged verbatim — so :class:`_Library` subclasses it and replaces exactly
two seams: ``send_api`` (every REST call → our :class:`~extractors.providers.http.HttpTransport`)
and ``download_client`` (the GET of the one-time link → raw bytes, never decoded; the package's
``bytes_to_str``/``download_and_parse`` UTF-8 path is never used).

Public interface (as every provider): ``name``, ``search(imdb_id, language) -> list[Candidate]``,
``download(candidate) -> bytes``; ``scan(imdb_id, language) -> Listing`` adds the search entries
refused before any download. See ``docs/providers.md`` for rate limit, retries, quota.

Multi-file items (``attributes.files`` with several entries, ``nb_cd``; 6% of real items): never one
candidate per part. :func:`validators.multipart.plan_parts` orders the parts by ``cd_number`` and
refuses (``multi_part``, at search time, no quota spent) an item whose metadata shows the parts
cannot be one track; any other becomes ONE candidate whose file id names its parts in part order
(``"4387106+4387110"``). Downloading it downloads every part (one quota unit each, counted in
:attr:`OpenSubtitlesProvider.part_downloads`) and joins them only where the offsets are certain
(:func:`validators.multipart.join_parts`), else ``multi_part``; the join's provenance (part, file id,
original indices, shift) is kept in :attr:`OpenSubtitlesProvider.joins` for the caller to record.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from opensubtitlescom import OpenSubtitles
from opensubtitlescom.config import Config
from opensubtitlescom.languages import language_codes

from cinesub.records import Candidate
from extractors.http_client import RateLimiter, RetryPolicy
from extractors.providers.errors import ProviderError
from extractors.providers.local_dir import Listing, Refusal
from extractors.providers.http import (HttpResult, Redactor, TransportOwner, error_message, json_check,
                                       provider_transport)
from extractors.providers.ratelimit import Clock, QuotaTracker, utc_now

log = logging.getLogger(__name__)

DEFAULT_URL = "https://api.opensubtitles.com/api/v1"
_IMDB = re.compile(r"^tt(\d{7,8})$")
_LANG = re.compile(r"^[a-z]{2,3}(?:-[a-z]{2,4})?$")
#: a candidate's file id: one file, or the parts of a multi-file item in part order joined by "+"
_FILE_ID = re.compile(r"^\d{1,12}(?:\+\d{1,12}){0,15}$")


class _NoConfig(Config):
    """The package reads ``~/.config/opensubtitlescom/config.json`` for fallback credentials; we
    never want credentials from anywhere but our arguments."""

    def __init__(self) -> None:  # noqa: D107 - deliberately not calling super(): no file is read
        self.username = None
        self.password = None
        self.api_key = None
        self.language = "en"


class _LinkFetcher:
    """Stands in for ``opensubtitlescom.download_client.DownloadClient``: GET the link, raw bytes."""

    def __init__(self, owner: OpenSubtitlesProvider):
        self._owner = owner

    def get(self, url: str) -> bytes:
        return self._owner._fetch_link(url)


class _Library(OpenSubtitles):
    """``opensubtitlescom.OpenSubtitles`` with our transport behind ``send_api``."""

    def __init__(self, owner: OpenSubtitlesProvider, user_agent: str, api_key: str | None):
        super().__init__(user_agent, api_key)
        self._config = _NoConfig()
        self.download_client = _LinkFetcher(owner)
        self._owner = owner

    def send_api(self, cmd: str, body: dict | None = None, method: str | None = None) -> dict:
        return self._owner._api(cmd, body, method or ("POST" if body else "GET"))

    def __repr__(self) -> str:
        return "<opensubtitlescom client (credentials hidden)>"


class OpenSubtitlesProvider(TransportOwner):
    """Search and download from OpenSubtitles.com (or a fixture server with the same API).

    ``settings`` is a :class:`cinesub.settings.ProviderSettings` (fields ``opensubtitles_url``,
    ``opensubtitles_api_key``, ``opensubtitles_username``, ``opensubtitles_password``,
    ``user_agent``, ``requests_per_second``) or a mapping of the keyword parameters below; keyword
    arguments override it. Credentials are taken only from these arguments (the caller resolves
    env vars / Prefect Secret blocks with :func:`cinesub.settings.resolve_secret`). The build
    passes ``base_url`` from ``endpoints.opensubtitles`` (flows/env/base.py); the login answer's
    ``base_url`` is followed only from an opensubtitles.com host, so a mirror or proxy is kept.
    """

    name = "opensubtitles"

    def __init__(
        self,
        settings: Any = None,
        state_path: Path | str | None = None,
        *,
        api_key: str | None = None,
        username: str | None = None,
        password: str | None = None,
        base_url: str | None = None,
        user_agent: str | None = None,
        requests_per_second: float | None = None,
        burst: float = 1.0,
        include_machine_translated: bool | None = None,
        timeout_s: float = 30.0,
        retry: RetryPolicy | None = None,
        max_pages: int = 10,
        prefect_rate_limit: str | None = None,
        limiter: RateLimiter | None = None,
        clock: Clock | None = None,
        sleep: Callable[[float], None] | None = None,
        seed: int | None = None,
        follow_base_url: bool = True,
    ):
        p = _params(settings, {
            "api_key": ("opensubtitles_api_key", api_key),
            "username": ("opensubtitles_username", username),
            "password": ("opensubtitles_password", password),
            "base_url": ("opensubtitles_url", base_url),
            "user_agent": ("user_agent", user_agent),
            "requests_per_second": ("requests_per_second", requests_per_second),
            "include_machine_translated": ("include_machine_translated", include_machine_translated),
            "prefect_rate_limit": ("opensubtitles_rate_limit", prefect_rate_limit),
        })
        self._api_key: str | None = p["api_key"]
        self._username: str | None = p["username"]
        self._password: str | None = p["password"]
        self.base_url = (p["base_url"] or DEFAULT_URL).rstrip("/")
        self.user_agent = p["user_agent"] or "cinesub v0.1"
        self.include_machine_translated = bool(p["include_machine_translated"] or False)
        self.max_pages = max(1, int(max_pages))
        self.follow_base_url = follow_base_url
        self.redact = Redactor([self._api_key, self._password])
        self._clock = clock or utc_now
        self.http = provider_transport(self.name, self.redact, self.user_agent, p, timeout_s=timeout_s, burst=burst,
                                       limiter=limiter, retry=retry, sleep=sleep, seed=seed)
        # The quota is per user (per IP when anonymous) and host; the port is left out so that a
        # fixture server restarted on another port keeps its state.
        account = hashlib.sha256(f"{urlsplit(self.base_url).hostname}|{self._username or ''}".encode()).hexdigest()[:16]
        self.quota = QuotaTracker(state_path, provider=self.name, account=account, clock=self._clock)
        self._lib = _Library(self, self.user_agent, self._api_key)
        self._lib.base_url = self.base_url
        self._login_lock = threading.Lock()
        self._auth_error: ProviderError | None = None
        #: nb_cd of the items of the search page being read (the package's Subtitle drops it)
        self._nb_cd: dict[str, Any] = {}
        #: file name of every part seen in a search (provenance of joined tracks)
        self._part_names: dict[str, str | None] = {}
        #: provenance of every multi-part candidate joined by :meth:`download`, by its file id
        self.joins: dict[str, dict[str, Any]] = {}
        #: POST /download answers with a link for one part of a multi-part item (each one quota unit)
        self.part_downloads = 0

    def __repr__(self) -> str:
        return (f"OpenSubtitlesProvider(base_url={self.base_url!r}, api_key={'set' if self._api_key else 'none'}, "
                f"user={'set' if self._username else 'none'})")

    # ------------------------------------------------------------------------------------------
    # public interface
    # ------------------------------------------------------------------------------------------
    def search(self, imdb_id: str, language: str) -> list[Candidate]:
        """Every subtitle for the film and language (one candidate per item: a single file, or a
        multi-part item's parts), over all result pages (at most ``max_pages``), highest download
        count first; machine-/AI-translated excluded unless ``include_machine_translated``."""
        return self.scan(imdb_id, language).candidates

    def scan(self, imdb_id: str, language: str) -> Listing:
        """:meth:`search`'s candidates and the items refused at search time (``multi_part``: a
        multi-file item whose metadata shows its files are not one track)."""
        numeric = _numeric_imdb(imdb_id)
        if not isinstance(language, str) or not _LANG.match(language) or language not in language_codes:
            raise ProviderError("invalid_query", f"not an OpenSubtitles language code: {language!r}")
        mode = "include" if self.include_machine_translated else "exclude"
        out: dict[str, Candidate] = {}
        refused: dict[str, Refusal] = {}
        page = 1
        total_pages = 1
        while page <= min(total_pages, self.max_pages):
            response = self._lib.search(imdb_id=numeric, languages=language, page=None if page == 1 else page,
                                        machine_translated=mode, ai_translated=mode)
            total_pages = int(response.total_pages or 0)
            for item in response.data:
                for cand in self._candidates(item, imdb_id, language, refused):
                    out.setdefault(cand.file_id, cand)
            page += 1
        if total_pages > self.max_pages:
            log.warning("opensubtitles: %s/%s has %d result pages; read the first %d", imdb_id, language,
                        total_pages, self.max_pages)
        found = sorted(out.values(), key=lambda c: (-c.download_count, c.file_id))
        log.debug("opensubtitles: %s/%s -> %d candidates, %d refused", imdb_id, language, len(found), len(refused))
        return Listing(found, sorted(refused.values(), key=lambda r: r.file_id))

    def availability(self, imdb_id: str, languages: list[str] | tuple[str, ...] | None = None,
                     max_pages: int | None = None) -> dict[str, Any]:
        """Search-only availability of one film (the build's survey, SPEC A7): subtitle items
        listed per language over every result page of ONE query for all ``languages`` (comma
        list, sorted as the API asks; None: every language) — no download, no quota spent.
        Machine-/AI-translated items are left out unless ``include_machine_translated``.
        Returns ``{"items": {language: n}, "pages": read, "total_pages": n, "truncated": bool}``."""
        numeric = _numeric_imdb(imdb_id)
        langs = sorted({str(x).strip().lower() for x in languages or () if str(x).strip()})
        bad = [x for x in langs if not _LANG.match(x)]
        if bad:
            raise ProviderError("invalid_query", f"not language codes: {bad!r}")
        mode = "include" if self.include_machine_translated else "exclude"
        cap = max(1, int(max_pages or self.max_pages))
        counts: dict[str, int] = {}
        page, total_pages = 1, 1
        while page <= min(total_pages, cap):
            params = [f"ai_translated={mode}", f"imdb_id={numeric}"]
            if langs:
                params.append(f"languages={','.join(langs)}")
            params.append(f"machine_translated={mode}")
            if page > 1:
                params.append(f"page={page}")
            data = self._api("subtitles?" + "&".join(params), None, "GET")
            total_pages = _int(data.get("total_pages"))
            for item in data["data"]:
                attrs = item.get("attributes") or {}
                if (attrs.get("machine_translated") or attrs.get("ai_translated")) and not self.include_machine_translated:
                    continue
                lang = str(attrs.get("language") or "").lower()
                if lang and (not langs or lang in langs):
                    counts[lang] = counts.get(lang, 0) + 1
            page += 1
        return {"items": counts, "pages": page - 1, "total_pages": total_pages, "truncated": total_pages > cap}

    def download(self, candidate: Candidate) -> bytes:
        """The file's raw bytes (POST /download → one-time link → GET). Raises
        :class:`~extractors.providers.ratelimit.QuotaExhausted` without any request while the
        persisted quota state says the quota is spent."""
        if candidate.provider != self.name:
            raise ProviderError("invalid_query", f"candidate of provider {candidate.provider!r}, not {self.name!r}")
        if not _FILE_ID.match(candidate.file_id or ""):
            raise ProviderError("invalid_query", f"not an OpenSubtitles file id: {candidate.file_id!r}")
        ids = candidate.file_id.split("+")
        if len(ids) > 1:
            return self._download_parts(candidate, ids)
        return self._download_file(candidate.file_id)

    def _download_file(self, file_id: str) -> bytes:
        self.quota.check()
        self._ensure_login()
        # The package refuses to download while its own counter is <= 0 (it starts at 0 and is set
        # by login()/user_info()); our quota tracker is the authority, so keep the counter positive.
        self._lib.user_downloads_remaining = max(1, self.quota.remaining or 1)
        data = self._lib.download(int(file_id))
        if not isinstance(data, (bytes, bytearray)):
            raise ProviderError("bad_response", f"file {file_id}: no bytes from the download link")
        log.debug("opensubtitles: file %s -> %d bytes", file_id, len(data))
        return bytes(data)

    def _download_parts(self, candidate: Candidate, ids: list[str]) -> bytes:
        """Every part of a multi-part candidate (one quota unit each), joined where certain."""
        from validators.multipart import NotJoinable, Part, join_parts

        left = self.quota.remaining
        if left is not None and 0 < left < len(ids) and not self.quota.exhausted:
            raise ProviderError("quota_insufficient", f"item {candidate.file_id}: {len(ids)} parts to download, "
                                f"{left} download(s) left today; tried again after the reset", retryable=True)
        parts = []
        for number, fid in enumerate(ids, start=1):
            data = self._download_file(fid)
            self.part_downloads += 1
            parts.append((Part(number, fid, self._part_names.get(fid)), data))
        try:
            joined = join_parts(parts, candidate.language)
        except NotJoinable as exc:
            log.info("opensubtitles: multi-part item %s not joined: %s", candidate.file_id, exc)
            raise ProviderError("multi_part", f"item {candidate.file_id}: {exc}", retryable=False) from None
        self.joins[candidate.file_id] = joined.provenance
        log.info("opensubtitles: joined the %d parts of %s (%d entries)", len(ids), candidate.file_id,
                 joined.provenance["entries"])
        return joined.data

    def account_info(self) -> dict[str, Any]:
        """``/infos/user`` (needs a login): allowed/remaining downloads, level, VIP."""
        self._ensure_login(required=True)
        response = self._lib.user_info()
        data = response.get("data") if isinstance(response, dict) else None
        if not isinstance(data, dict):
            raise ProviderError("bad_response", "infos/user: no data object")
        self.quota.record_info(data)
        return {k: data.get(k) for k in ("allowed_downloads", "remaining_downloads", "downloads_count", "level", "vip")}

    # ------------------------------------------------------------------------------------------
    # internals
    # ------------------------------------------------------------------------------------------
    def _ensure_login(self, required: bool = False) -> None:
        if self._auth_error is not None:
            raise ProviderError(self._auth_error.reason_code, self._auth_error.detail,
                                retryable=self._auth_error.retryable)
        if self._lib.token:
            return
        if not (self._username and self._password):
            if required:
                raise ProviderError("auth_failed", "no OpenSubtitles username/password configured")
            return  # anonymous download with the API key only (5 per IP and day on the real API)
        with self._login_lock:
            if self._lib.token:
                return
            try:
                response = self._lib.login(self._username, self._password)
            except ProviderError as exc:
                if exc.reason_code == "auth_failed":
                    self._auth_error = exc  # never retry a refused login (accounts get locked)
                raise
            except (KeyError, TypeError) as exc:
                raise ProviderError("bad_response", f"login: unexpected answer ({type(exc).__name__})") from None
            token = self._lib.token
            if not isinstance(token, str) or not token:
                raise ProviderError("bad_response", "login: no token in the answer")
            self.redact.add(token)
            self._follow_base_url(response.get("base_url") if isinstance(response, dict) else None)
            log.info("opensubtitles: logged in (%s)", self.redact(self._lib.base_url))

    def _follow_base_url(self, base_url: Any) -> None:
        """The login answer names the API host to use (``vip-api.opensubtitles.com`` for VIPs).
        Followed only from an opensubtitles.com host to an opensubtitles.com host."""
        if not self.follow_base_url or not isinstance(base_url, str) or not base_url:
            return
        ours = urlsplit(self.base_url)
        host = base_url.strip().split("/")[0].lower()
        if not (ours.hostname or "").endswith("opensubtitles.com"):
            return
        if not re.fullmatch(r"([a-z0-9-]+\.)*opensubtitles\.com", host):
            log.warning("opensubtitles: login named an unexpected API host %r; ignored", host)
            return
        self._lib.base_url = f"{ours.scheme}://{host}{ours.path}"

    def _headers(self, json_body: bool) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self._api_key:
            headers["Api-Key"] = self._api_key
        if json_body:
            headers["Content-Type"] = "application/json"
        if self._lib.token:
            headers["Authorization"] = f"Bearer {self._lib.token}"
        return headers

    def _api(self, cmd: str, body: dict | None, method: str, *, relogin: bool = True) -> dict:
        """What ``OpenSubtitles.send_api`` does, on our transport; returns the JSON object."""
        endpoint = cmd.split("?", 1)[0]
        url = f"{self._lib.base_url}/{cmd}"
        what = f"{method} /{endpoint}"
        result = self.http.request(method, url, what=what, json_body=body, headers=self._headers(body is not None),
                                   check=json_check)
        status = result.status
        if 200 <= status < 300:
            data = result.data
            if not isinstance(data, dict):
                raise ProviderError("bad_response", f"{what}: expected a JSON object")
            if endpoint == "download":
                self.quota.record_success(data)
            if endpoint == "subtitles":
                return _normalise_search(data, what, self._nb_cd)
            return data
        message = self.redact(error_message(result))
        if endpoint == "download" and status in (406, 407):
            raise self.quota.record_refusal(status, _json_or_none(result))
        if status == 401:
            if endpoint != "login" and relogin and self._lib.token and self._username:
                log.info("opensubtitles: token refused; logging in again")
                self._lib.token = None
                self._ensure_login()
                return self._api(cmd, body, method, relogin=False)
            raise ProviderError("auth_failed", f"{what}: HTTP 401 ({message})")
        if status == 403:
            raise ProviderError("auth_failed", f"{what}: HTTP 403 ({message})")
        if status in (404, 410):
            raise ProviderError("not_found", f"{what}: HTTP {status} ({message})")
        if status == 400 or status == 422:
            raise ProviderError("invalid_query", f"{what}: HTTP {status} ({message})")
        raise ProviderError("bad_response", f"{what}: HTTP {status} ({message})")

    def _fetch_link(self, url: Any) -> bytes:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ProviderError("bad_response", "download answer without a usable link")
        # The link is a one-time signed URL on another host: no Api-Key, no token.
        result: HttpResult = self.http.request("GET", url, what="GET download link")
        if 200 <= result.status < 300:
            return result.content
        if result.status in (404, 410):
            raise ProviderError("not_found", f"download link: HTTP {result.status}")
        raise ProviderError("bad_response", f"download link: HTTP {result.status} ({self.redact(result.text_excerpt(100))!r})")

    def _candidates(self, item: Any, imdb_id: str, language: str, refused: dict[str, Refusal]) -> list[Candidate]:
        from validators.multipart import NotJoinable, plan_parts

        lang = (item.language or "").lower()
        if lang and lang != language.lower():
            return []
        mt, ai = bool(item.machine_translated), bool(item.ai_translated)
        if (mt or ai) and not self.include_machine_translated:
            return []
        feature = _tt(item.imdb_id)
        files = [f for f in item.files or [] if isinstance(f, dict)]
        ids: list[str] = []
        if len(files) > 1:  # a multi-file item: one candidate of all its parts, or refused
            shown = "+".join(str(f.get("file_id")) for f in files)[:120]
            try:
                parts = plan_parts(files, self._nb_cd.get(str(item.id)), language)
            except NotJoinable as exc:
                refused.setdefault(shown, Refusal(shown, "multi_part", f"item {item.id}: {exc}"))
                return []
            for p in parts:
                self._part_names[p.file_id] = p.name
            ids = ["+".join(p.file_id for p in parts)]
        for f in files if not ids else []:
            fid = f.get("file_id")
            if isinstance(fid, bool) or not isinstance(fid, (int, str)) or not str(fid).isdigit():
                continue
            ids.append(str(int(fid)))
        out = []
        for file_id in ids:
            out.append(Candidate(
                imdb_id=imdb_id, language=language, provider=self.name, file_id=file_id,
                download_count=_int(item.download_count), uploader=_str(item.uploader_name),
                release=_str(item.release), fps=_float(item.fps), hearing_impaired=bool(item.hearing_impaired),
                machine_translated=mt, ai_translated=ai, upload_date=_str(item.upload_date),
                feature_imdb_id=feature, url=None,
            ))
        return out


# --------------------------------------------------------------------------------------------
def _params(settings: Any, spec: dict[str, tuple[str, Any]]) -> dict[str, Any]:
    """Explicit argument, else the mapping key of the same name, else the settings attribute."""
    out = {}
    for key, (attr, explicit) in spec.items():
        value = explicit
        if value is None and isinstance(settings, Mapping):
            value = settings.get(key, settings.get(attr))
        elif value is None and settings is not None:
            value = getattr(settings, attr, None)
        if hasattr(value, "get_secret_value"):
            value = value.get_secret_value()
        out[key] = value
    return out


def _numeric_imdb(imdb_id: Any) -> int:
    m = _IMDB.match(imdb_id) if isinstance(imdb_id, str) else None
    if not m:
        raise ProviderError("invalid_query", f"not a canonical IMDb id: {imdb_id!r}")
    return int(m.group(1))


def _tt(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        n = int(value)
        return f"tt{n:07d}" if n > 0 else None
    if isinstance(value, str) and _IMDB.match(value):
        return value
    return None


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _float(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _json_or_none(result: HttpResult) -> dict | None:
    data = result.parsed_json()
    if isinstance(data, dict) and isinstance(data.get("data"), dict) and "remaining" not in data:
        return data["data"]  # some proxies wrap the body in {status, data}
    return data if isinstance(data, dict) else None


def _normalise_search(data: dict, what: str, nb_cd: dict[str, Any] | None = None) -> dict:
    """Exactly the keys ``SearchResponse`` takes, with items the package's ``Subtitle`` can read
    (it chains ``.get`` on ``uploader`` and ``feature_details``, which real answers may null);
    ``nb_cd`` receives each item's ``attributes.nb_cd`` by item id (``Subtitle`` drops it)."""
    items = data.get("data")
    if not isinstance(items, list):
        raise ProviderError("bad_response", f"{what}: no 'data' list")
    clean = []
    for item in items:
        if not isinstance(item, dict):
            continue
        attrs = item.get("attributes") if isinstance(item.get("attributes"), dict) else {}
        attrs = dict(attrs)
        for key in ("uploader", "feature_details"):
            if not isinstance(attrs.get(key), dict):
                attrs[key] = {}
        if not isinstance(attrs.get("files"), list):
            attrs["files"] = []
        if nb_cd is not None:
            nb_cd[str(item.get("id"))] = attrs.get("nb_cd")
        clean.append({**item, "attributes": attrs})
    return {
        "total_pages": _int(data.get("total_pages")),
        "total_count": _int(data.get("total_count")),
        "per_page": _int(data.get("per_page")),
        "page": _int(data.get("page")) or 1,
        "data": clean,
    }
