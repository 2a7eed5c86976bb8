"""SubDL provider: search by IMDb id and language, download a ZIP, extract the SRT safely.

API (https://subdl.com/api-doc, "beta"): ``GET {base}/subtitles?api_key=…&imdb_id=tt…&languages=EN
&type=movie&subs_per_page=30[&page=n]`` → ``{status: true, results: [...], subtitles: [...]}``
(``totalPages``/``currentPage`` when paged); failures usually come as ``{status: false, error}``,
often with HTTP 200. A subtitle's ``url`` (``/subtitle/<sd>-<id>.zip``) is fetched from the
download host (``https://dl.subdl.com``); search answers may splice ``?api_key=…`` into that url,
so the query string is always dropped before the url is stored or logged.

The ZIP is extracted in memory by :mod:`extractors.providers.safezip` (reason codes ``zip_*``,
``ass_only``); ``download`` returns the bytes of the largest SRT member, untouched — except for a
ZIP of CD1/CD2 parts (every SRT member names a part number), which is joined only where the
offsets are certain (:func:`validators.multipart.join_parts`), else refused ``multi_part``.

Limits and refusals that stop SubDL (no further request):

* the daily limit — an answer whose JSON body (``status: false``) names a daily/download limit or
  quota, on any status (a 429 of that kind is not retried): remembered like the OpenSubtitles quota
  in a :class:`~extractors.providers.ratelimit.QuotaTracker` state file (``state_path``); until the
  reset (``reset_time_utc`` / ``Retry-After`` when given, else the next daily reset) every search
  and download raises :class:`~extractors.providers.ratelimit.QuotaExhausted` without a request;
* an auth failure — 401/402/403, or any 403 whose body is not JSON (a text "Forbidden" page): one
  ``auth_failed`` error, logged once, repeated for the rest of this client's life without a request.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from cinesub.records import Candidate
from extractors.http_client import RateLimiter, RetryPolicy, retry_after_seconds
from extractors.providers.errors import ProviderError
from extractors.providers.http import (HttpResult, Redactor, TransportOwner, error_message, json_check,
                                       looks_like_html, provider_transport)
from extractors.providers.opensubtitles import _params
from extractors.providers.ratelimit import Clock, QuotaTracker, utc_now
from extractors.providers.safezip import ZipLimits, extract_srt, pick_srt

log = logging.getLogger(__name__)

DEFAULT_URL = "https://api.subdl.com/api/v1"
DEFAULT_DOWNLOAD_URL = "https://dl.subdl.com"
_IMDB = re.compile(r"^tt\d{7,8}$")
_LANG = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z]{2,4})?$")
_FILE_ID = re.compile(r"^[0-9]{1,12}-[0-9]{1,12}$")
_NOT_FOUND = re.compile(r"can'?t find|not found|no (?:results|subtitles?)", re.I)
#: an error text naming the daily (download) limit, not a per-minute rate limit ("rate limit
#: exceeded, please wait a few minutes" is retried as a 429)
_DAILY_LIMIT = re.compile(r"daily|per day|a day|24 ?h|quota|download(?:s)? limit|limit (?:of|reached|for today)", re.I)
#: ISO 639-1 → SubDL language code where they differ (SubDL otherwise uses the upper-cased code:
#: EN, AR, ID, FA, RO, VI for the corpus languages)
SUBDL_LANGUAGE = {"pt-br": "BR_PT"}


def subdl_language(language: str) -> str:
    return SUBDL_LANGUAGE.get(language.lower(), language.split("-")[0].upper())


class SubDLProvider(TransportOwner):
    name = "subdl"

    def __init__(
        self,
        settings: Any = None,
        state_path: Path | str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        download_url: str | None = None,
        user_agent: str | None = None,
        requests_per_second: float | None = None,
        burst: float = 1.0,
        timeout_s: float = 30.0,
        retry: RetryPolicy | None = None,
        subs_per_page: int = 30,
        max_pages: int = 5,
        zip_limits: ZipLimits | None = None,
        prefect_rate_limit: str | None = None,
        limiter: RateLimiter | None = None,
        clock: Clock | None = None,
        sleep: Callable[[float], None] | None = None,
        seed: int | None = None,
    ):
        p = _params(settings, {
            "api_key": ("subdl_api_key", api_key),
            "base_url": ("subdl_url", base_url),
            "download_url": ("subdl_download_url", download_url),
            "user_agent": ("user_agent", user_agent),
            "requests_per_second": ("requests_per_second", requests_per_second),
            "prefect_rate_limit": ("subdl_rate_limit", prefect_rate_limit),
        })
        self._api_key: str | None = p["api_key"]
        self.base_url = (p["base_url"] or DEFAULT_URL).rstrip("/")
        self.download_url = (p["download_url"] or DEFAULT_DOWNLOAD_URL).rstrip("/")
        self.user_agent = p["user_agent"] or "cinesub v0.1"
        self.subs_per_page = max(1, min(30, int(subs_per_page)))
        self.max_pages = max(1, int(max_pages))
        self.zip_limits = zip_limits or ZipLimits()
        self.redact = Redactor([self._api_key])
        self.http = provider_transport(self.name, self.redact, self.user_agent, p, timeout_s=timeout_s, burst=burst,
                                       limiter=limiter, retry=retry, sleep=sleep, seed=seed,
                                       max_body_bytes=self.zip_limits.max_archive_bytes + 1)
        self._clock = clock or utc_now
        # The daily limit is per API key (an assumption, docs/providers.md): the state file holds a
        # digest of host and key, never the key; the port is left out (a restarted fixture keeps it).
        key_digest = hashlib.sha256((self._api_key or "").encode()).hexdigest()
        account = hashlib.sha256(f"{urlsplit(self.base_url).hostname}|{key_digest}".encode()).hexdigest()[:16]
        self.quota = QuotaTracker(state_path, provider=self.name, account=account, clock=self._clock)
        self._auth_error: ProviderError | None = None
        #: provenance of every CD1/CD2 archive joined by :meth:`download`, by its file id
        self.joins: dict[str, dict[str, Any]] = {}

    def __repr__(self) -> str:
        return f"SubDLProvider(base_url={self.base_url!r}, api_key={'set' if self._api_key else 'none'})"

    # ------------------------------------------------------------------------------------------
    def search(self, imdb_id: str, language: str) -> list[Candidate]:
        if not isinstance(imdb_id, str) or not _IMDB.match(imdb_id):
            raise ProviderError("invalid_query", f"not a canonical IMDb id: {imdb_id!r}")
        if not isinstance(language, str) or not _LANG.match(language):
            raise ProviderError("invalid_query", f"not a language code: {language!r}")
        if not self._api_key:
            raise ProviderError("auth_failed", "no SubDL API key configured")
        self._check_usable()
        code = subdl_language(language)
        out: dict[str, Candidate] = {}
        page, total_pages = 1, 1
        while page <= min(total_pages, self.max_pages):
            params = {"api_key": self._api_key, "imdb_id": imdb_id, "languages": code, "type": "movie",
                      "subs_per_page": self.subs_per_page}
            if page > 1:
                params["page"] = page
            data = self._get_json(f"{self.base_url}/subtitles", params, what="GET /subtitles")
            if data is None:  # "can't find movie or tv"
                return []
            feature = None
            for r in data.get("results") or []:
                if isinstance(r, dict) and isinstance(r.get("imdb_id"), str) and _IMDB.match(r["imdb_id"]):
                    feature = r["imdb_id"]
                    break
            for s in data.get("subtitles") or []:
                cand = self._candidate(s, imdb_id, language, code, feature)
                if cand is not None:
                    out.setdefault(cand.file_id, cand)
            tp = data.get("totalPages")
            total_pages = tp if isinstance(tp, int) and not isinstance(tp, bool) and tp > 0 else 1
            page += 1
        return list(out.values())

    def download_archive(self, candidate: Candidate) -> bytes:
        """The ZIP exactly as the download host serves it."""
        if candidate.provider != self.name:
            raise ProviderError("invalid_query", f"candidate of provider {candidate.provider!r}, not {self.name!r}")
        if not _FILE_ID.match(candidate.file_id or ""):
            raise ProviderError("invalid_query", f"not a SubDL file id: {candidate.file_id!r}")
        self._check_usable()
        url = f"{self.download_url}/subtitle/{candidate.file_id}.zip"
        result = self.http.request("GET", url, what=f"GET zip {candidate.file_id}", check=_zip_check,
                                   final=_is_limit_answer)
        if 200 <= result.status < 300 and not _is_limit_answer(result):
            return result.content
        self._refusal(result, f"zip {candidate.file_id}")
        message = self.redact(error_message(result))
        if result.status in (404, 410):
            raise ProviderError("not_found", f"zip {candidate.file_id}: HTTP {result.status}")
        raise ProviderError("bad_response", f"zip {candidate.file_id}: HTTP {result.status} ({message})")

    def download(self, candidate: Candidate) -> bytes:
        """The raw bytes of the largest SRT member of the candidate's ZIP (extracted in memory); a
        CD1/CD2 archive's parts joined where certain (else ``multi_part``)."""
        from validators.multipart import NotJoinable, Part, join_parts, parts_of_members

        archive = self.download_archive(candidate)
        try:
            members = extract_srt(archive, self.zip_limits)
            numbered = parts_of_members([n for n, _ in members])
            if numbered is None:
                name, data = pick_srt(members)
            else:
                by_name = dict(members)
                joined = join_parts([(Part(k, f"{candidate.file_id}#{k}", n), by_name[n]) for k, n in numbered],
                                    candidate.language)
                self.joins[candidate.file_id] = joined.provenance
                name, data = f"{len(numbered)} parts", joined.data
        except NotJoinable as exc:
            log.info("subdl: archive %s holds parts that are not joined: %s", candidate.file_id, exc)
            raise ProviderError("multi_part", f"zip {candidate.file_id}: {exc}", retryable=False) from None
        except ProviderError as exc:
            log.warning("subdl: archive %s refused: %s", candidate.file_id, exc.reason_code)
            raise ProviderError(exc.reason_code, f"zip {candidate.file_id}: {exc.detail}", retryable=False) from None
        log.debug("subdl: zip %s -> %s (%d bytes)", candidate.file_id, name, len(data))
        return data

    # ------------------------------------------------------------------------------------------
    def _check_usable(self) -> None:
        """Raise, without a request, while SubDL is off: refused credentials, or the daily limit."""
        if self._auth_error is not None:
            raise ProviderError(self._auth_error.reason_code, self._auth_error.detail, retryable=False)
        self.quota.check()

    def _auth(self, detail: str) -> ProviderError:
        if self._auth_error is None:
            log.error("subdl: the API key was refused (%s); SubDL is off for this run", detail)
            self._auth_error = ProviderError("auth_failed", detail, retryable=False)
        return self._auth_error

    def _refusal(self, result: HttpResult, what: str) -> None:
        """Raise for an answer that stops SubDL (daily limit, auth); return for any other."""
        body = result.parsed_json()
        if _is_limit_answer(result):
            reset: dict[str, Any] = {}
            if isinstance(body, dict):
                reset = {k: body.get(k) for k in ("reset_time_utc", "reset_time") if body.get(k)}
            wait = retry_after_seconds(result.headers)
            if "reset_time_utc" not in reset and wait:
                reset["reset_time_utc"] = (self._clock() + timedelta(seconds=wait)).isoformat()
            exc = self.quota.record_refusal(result.status, reset)
            log.warning("subdl: daily limit reached (%s: HTTP %d, %s); no SubDL request until %s", what,
                        result.status, self.redact(error_message(result))[:120], exc.reset_time_utc)
            raise exc
        if result.status in (401, 402) or (result.status == 403) or (
                isinstance(body, dict) and body.get("status") is False
                and re.search(r"api[_ ]?key", str(body.get("error") or body.get("message") or ""), re.I)):
            kind = "JSON" if isinstance(body, dict) else "text"
            raise self._auth(self.redact(f"{what}: HTTP {result.status} ({kind} body: {error_message(result)[:160]!r})"))

    # ------------------------------------------------------------------------------------------
    def _get_json(self, url: str, params: dict[str, Any], *, what: str) -> dict | None:
        result = self.http.request("GET", url, params=params, what=what, check=json_check, final=_is_limit_answer)
        data = result.data if 200 <= result.status < 300 else result.parsed_json()
        if isinstance(data, dict) and data.get("status") is False:
            err = str(data.get("error") or data.get("message") or "unknown error")
            if _NOT_FOUND.search(err) and result.status in (200, 404):
                return None
            self._refusal(result, what)
            if result.status == 429:
                raise ProviderError("rate_limited", self.redact(f"{what}: HTTP {result.status}: {err}"), retryable=True)
            raise ProviderError("provider_error", self.redact(f"{what}: HTTP {result.status}: {err}"))
        if not 200 <= result.status < 300:
            self._refusal(result, what)
            message = self.redact(error_message(result))
            if result.status == 400:
                raise ProviderError("invalid_query", f"{what}: HTTP 400 ({message})")
            raise ProviderError("bad_response", f"{what}: HTTP {result.status} ({message})")
        if not isinstance(data, dict) or data.get("status") is not True:
            raise ProviderError("bad_response", f"{what}: expected {{status: true, ...}}")
        return data

    def _candidate(self, s: Any, imdb_id: str, language: str, code: str, feature: str | None) -> Candidate | None:
        if not isinstance(s, dict) or not isinstance(s.get("url"), str):
            return None
        lang = s.get("language")
        if isinstance(lang, str) and lang and lang.upper() != code:
            return None
        path = urlsplit(s["url"]).path  # drop any ?api_key=… the search answer spliced in
        stem = PurePosixPath(path).name
        if not stem.lower().endswith(".zip"):
            return None
        file_id = stem[:-4]
        if not _FILE_ID.match(file_id):
            return None
        count = s.get("download_count", s.get("downloads"))
        return Candidate(
            imdb_id=imdb_id, language=language, provider=self.name, file_id=file_id,
            download_count=count if isinstance(count, int) and not isinstance(count, bool) else 0,
            uploader=s.get("author") if isinstance(s.get("author"), str) else None,
            release=s.get("release_name") if isinstance(s.get("release_name"), str) else None,
            hearing_impaired=bool(s.get("hi", False)),
            feature_imdb_id=feature,
            url=f"{self.download_url}/subtitle/{file_id}.zip",
        )


def _is_limit_answer(result: HttpResult) -> bool:
    """A JSON ``status: false`` answer whose error names the daily/download limit or a quota."""
    data = result.parsed_json() if result.status >= 400 or result.content[:1] == b"{" else None
    if not isinstance(data, dict) or data.get("status") is not False:
        return False
    return bool(_DAILY_LIMIT.search(f"{data.get('error') or ''} {data.get('message') or ''}"))


def _zip_check(result: HttpResult) -> tuple[str, str] | None:
    """An HTML page where a ZIP is expected is a transient provider answer: retried."""
    if looks_like_html(result.content, result.headers.get("content-type")):
        return "provider_body", f"HTML page instead of a ZIP ({result.text_excerpt(80)!r})"
    return None
