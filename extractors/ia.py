"""Internet Archive discovery and download through the ``internetarchive`` package (SPEC B1, B2).

What it does: search items (Variety monthly items, CCE motion-picture volumes), list an item's
files through the metadata API, fetch files into the content-addressed raw store (a second fetch
of a stored file makes no request), split ``{id}_djvu.txt`` into pages, and turn page images
(``{id}_jp2.zip`` or a PDF through ``pdf2image``) into PNG bytes for the Gemini page extractor.

Pointing the real client at another host: ``ArchiveSession(config={"general": {"host": H,
"secure": False}})`` builds every URL as ``{protocol}//{session.host}/…``, but the package appends
``.archive.org`` to any host that does not contain ``archive.org``; :func:`make_session` therefore
sets ``session.host`` back to ``H`` after construction (``127.0.0.1:<port>`` of
``fixtures/ia_server.py`` in tests). Nothing else is patched: search (``Search`` → the scrape API),
``Item`` objects and the download URL (``File.url``) are the package's own.

Retries are ours, through the HTTP client layer (:mod:`extractors.http_client`: one
:class:`RetryPolicy`, one retry loop, one failure classification), bounded, with exponential
backoff (``Retry-After`` honoured up to the backoff cap, :data:`IA_RETRY`): the package's own
urllib3 retries and its download loop (fixed 3 s sleeps) are switched off, so every
attempt is visible. A response hook turns HTTP status ≥ 400 into ``requests.HTTPError`` (the
package's scrape path calls ``r.json()`` without checking the status). Each failed attempt is
appended to :attr:`IAClient.events` (op, key, attempt, reason, detail); the last one raises
:class:`extractors.providers.errors.ProviderError` with a reason code from
:data:`IA_REASON_CODES` — never a silent drop.

Pages: page text comes from a page-indexed derivative only (:mod:`extractors.ia_pages`: the hOCR
search text + page index, else ``_djvu.xml``), names taken from the metadata API's ``files[]``;
real ``_djvu.txt`` has no page separator (no form feed), so an item with only that is reason
``no_page_index`` (:meth:`IAClient.page_texts`), never a guessed split. Page images are fetched one
leaf at a time (:meth:`IAClient.fetch_member`: one member of the ``_jp2.zip``, streamed to a
temporary file and content-addressed), never the whole zip. :meth:`IAClient.item_fingerprint` is
the item's identifier + ``item_last_updated`` (the incremental rebuild's key).

Cache: bytes live in :class:`cinesub.rawstore.RawStore`; the ``(identifier, file name) →
sha256`` reference is a one-line file ``<store>/refs/ia/<identifier>/<quoted name>`` written
atomically, so the cache survives restarts and concurrent writers never see a half-written ref.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import logging
import os
import re
import tempfile
import time
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from cinesub.rawstore import RawStore
from extractors.http_client import (ANY_SERVER_RETRY_STATUSES, AttemptFailed, RetriesExhausted, RetryPolicy,
                                    call_with_retries, retry_after_seconds, status_reason, transport_reason)
from extractors.providers.errors import ProviderError

log = logging.getLogger(__name__)

#: reason codes raised here (all but ``checksum_mismatch`` and the page codes of extractors/ia_pages.py
#: are the shared provider codes of extractors/providers/errors.py)
IA_REASON_CODES: dict[str, str] = {
    "not_found": "item or file absent (metadata API answered {} or HTTP 404/410)",
    "auth_failed": "HTTP 401/403",
    "rate_limited": "HTTP 429 beyond the bounded retries",
    "server_error": "HTTP 5xx beyond the bounded retries",
    "timeout": "connect/read timeout beyond the bounded retries",
    "network": "connection refused/reset beyond the bounded retries",
    "truncated": "body shorter than its Content-Length / the size the metadata API lists",
    "checksum_mismatch": "downloaded bytes do not match the md5 the metadata API lists",
    "provider_body": "HTML or other non-JSON body where the API returns JSON",
    "bad_response": "JSON of an unexpected shape, or an unhandled HTTP status",
    "no_page_index": "a _djvu.txt only (no hOCR page index, no _djvu.xml): pages cannot be told apart",
    "no_text_layer": "no OCR derivative at all (image-only scan)",
    "bad_page_index": "the hOCR page index or _djvu.xml is malformed",
    "no_page_images": "the item has neither a _jp2.zip nor a PDF",
}

RETRYABLE = frozenset({"rate_limited", "server_error", "timeout", "network", "truncated", "provider_body",
                       "checksum_mismatch"})

#: Variety monthly items of one year range (IA_NOTES §1: collection mediahistory, one item per month)
VARIETY_QUERY = "collection:mediahistory AND title:(variety) AND date:[{start} TO {end}]"
#: CCE motion-picture volumes, annual ("Third Series") and cumulative (IA_NOTES §4)
CCE_QUERY = 'title:("catalog of copyright entries") AND title:(motion pictures)'
CCE_THIRD_SERIES_QUERY = 'title:("catalog of copyright entries") AND title:("third series") AND title:(motion pictures)'


def variety_query(start: str, end: str) -> str:
    """``variety_query("1926-01-01", "1926-12-31")``."""
    return VARIETY_QUERY.format(start=start, end=end)


# --------------------------------------------------------------------------------------------
# Session
# --------------------------------------------------------------------------------------------
def _raise_for_status_hook(response: Any, *args: Any, **kwargs: Any) -> Any:
    response.raise_for_status()
    return response


def endpoint_host(url: str) -> tuple[str, bool]:
    """(``HOST[:PORT]``, HTTPS?) of an Internet Archive base URL such as ``https://archive.org``
    (``ValueError`` when it has a path: the ``internetarchive`` package addresses a host root)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"not an http(s) URL: {url!r}")
    if parts.path.strip("/"):
        raise ValueError(f"an Internet Archive endpoint is a host root, not {url!r} (no path)")
    return parts.netloc, parts.scheme == "https"


def make_session(host: str | None = None, *, secure: bool | None = None, user_agent_suffix: str = "cinesub") -> Any:
    """An ``internetarchive.ArchiveSession`` for ``host`` (default archive.org over HTTPS; a
    loopback ``127.0.0.1:PORT`` defaults to plain HTTP; a base URL ``http(s)://HOST[:PORT]`` says
    which itself), with the package's urllib3 retries off."""
    from internetarchive import ArchiveSession

    host = host or "archive.org"
    if "://" in host:  # a base URL (``endpoints.internet_archive``): its scheme says HTTP or HTTPS
        host, url_secure = endpoint_host(host)
        secure = url_secure if secure is None else secure
    if secure is None:
        secure = not host.startswith(("127.0.0.1", "localhost", "[::1]"))
    config = {"general": {"host": host, "secure": secure, "user_agent_suffix": user_agent_suffix}}
    session = ArchiveSession(config=config, config_file=os.devnull)
    session.host = host  # the package appends ".archive.org" to foreign hosts; undo it
    session.mount_http_adapter(max_retries=0)
    session.hooks["response"].append(_raise_for_status_hook)
    return session


# --------------------------------------------------------------------------------------------
# Errors and retries (the HTTP client layer, extractors/http_client.py)
# --------------------------------------------------------------------------------------------
#: the client's default: 4 attempts, 0.5 s doubling to 8 s, no jitter, any 5xx or 429 retried, a
#: Retry-After waited at most the backoff cap (never a reason to give up)
IA_RETRY = RetryPolicy(max_attempts=4, backoff_base_s=0.5, backoff_max_s=8.0, jitter=False,
                       clamp_retry_after=True, retry_statuses=ANY_SERVER_RETRY_STATUSES)


def ia_retry_policy(**changes: Any) -> RetryPolicy:
    """:data:`IA_RETRY` with some fields changed (``max_attempts``, ``backoff_base_s``, ...)."""
    return dataclasses.replace(IA_RETRY, **changes)


def classify(exc: BaseException, policy: RetryPolicy = IA_RETRY) -> tuple[str, bool, float | None]:
    """(reason code, retryable, Retry-After seconds or None) for an exception of a request."""
    import requests

    if isinstance(exc, ProviderError):
        return exc.reason_code, exc.retryable, None
    if isinstance(exc, requests.HTTPError):
        resp = exc.response
        status = resp.status_code if resp is not None else 0
        retryable = policy.retries_status(status)
        retry_after = retry_after_seconds(resp.headers) if retryable and resp is not None else None
        return status_reason(status), retryable, retry_after
    reason = transport_reason(exc)
    if reason is not None:
        return reason, True, None
    if isinstance(exc, ValueError):  # JSONDecodeError (requests' and json's) is a ValueError
        return "provider_body", True, None
    return "bad_response", False, None


@dataclass(frozen=True)
class PageImage:
    """One page image as PNG: ``page`` is the 0-based leaf index (aligned with the djvu.txt pages)."""

    page: int
    png: bytes
    sha256: str
    source: str  # "jp2.zip:<member>" or "pdf:<n>"


@dataclass(frozen=True)
class PageTexts:
    """An item's page texts: ``texts[i]`` is text page *i*, on image leaf ``alignment.leaves[i]``;
    ``source`` hocr | djvu_xml; ``sha256`` of the text derivative read; ``names`` the derivatives."""

    texts: list[str]
    source: str
    sha256: str | None
    alignment: Any
    names: dict[str, str]


# --------------------------------------------------------------------------------------------
# Pure helpers
# --------------------------------------------------------------------------------------------
def png_bytes(img: Any) -> bytes:
    """PNG encoding used for every page image (the sample world uses the same parameters)."""
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue()


def _normalise_image(img: Any) -> Any:
    if img.mode not in ("L", "RGB"):
        img = img.convert("RGB" if img.mode in ("RGBA", "P", "CMYK", "I;16") else "L")
    return img


_LEAF = re.compile(r"_(\d{4})\.(?:jp2|jpe?g|png|tiff?)$", re.I)


def page_images_from_zip(data: bytes) -> list[PageImage]:
    """Page images of an IA ``{id}_jp2.zip`` (members ``{id}_jp2/{id}_NNNN.jp2``; NNNN = leaf) as PNG."""
    from PIL import Image

    out: list[PageImage] = []
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = [(int(m.group(1)), name) for name in zf.namelist() if (m := _LEAF.search(name))]
        for leaf, name in sorted(members):
            with Image.open(io.BytesIO(zf.read(name))) as img:
                img.load()
                png = png_bytes(_normalise_image(img))
            out.append(PageImage(leaf, png, hashlib.sha256(png).hexdigest(), f"jp2.zip:{name}"))
    return out


def page_images_from_pdf(data: bytes, *, dpi: int = 100, first_page: int | None = None,
                         last_page: int | None = None) -> list[PageImage]:
    """PDF pages rendered with ``pdf2image.convert_from_bytes`` (poppler) as PNG; page 0 = first."""
    from pdf2image import convert_from_bytes

    images = convert_from_bytes(data, dpi=dpi, first_page=first_page, last_page=last_page)
    start = (first_page or 1) - 1
    out = []
    for i, img in enumerate(images):
        png = png_bytes(_normalise_image(img))
        out.append(PageImage(start + i, png, hashlib.sha256(png).hexdigest(), f"pdf:{start + i + 1}"))
    return out


# --------------------------------------------------------------------------------------------
# Client
# --------------------------------------------------------------------------------------------
#: items whose metadata one client keeps (least recently used dropped first)
ITEM_CACHE = 32


@dataclass
class IAClient:
    """Discovery and download against archive.org (or a fixture host), with bounded retries."""

    session: Any
    store: RawStore | None = None
    retry: RetryPolicy = IA_RETRY
    timeout_s: float = 30.0
    sleep: Callable[[float], None] = time.sleep
    #: one dict per failed attempt: {op, key, attempt, reason, detail, final}
    events: list[dict[str, Any]] = field(default_factory=list)
    #: requests sent (attempts included), for tests and reports
    requests: int = 0
    #: the last ITEM_CACHE items' metadata (an LRU: a client that walks 1922–1979 holds a few
    #: items, not all of them)
    _items: OrderedDict[str, Any] = field(default_factory=OrderedDict)

    @classmethod
    def for_host(cls, host: str | None = None, store: RawStore | Path | str | None = None, **kw: Any) -> IAClient:
        st = store if isinstance(store, RawStore) or store is None else RawStore(Path(store))
        return cls(make_session(host), st, **kw)

    @classmethod
    def for_endpoint(cls, url: str, store: RawStore | Path | str | None = None, **kw: Any) -> IAClient:
        """A client of the Internet Archive at base URL ``url`` (``endpoints.internet_archive``)."""
        return cls.for_host(url, store, **kw)

    # -- retry loop ----------------------------------------------------------------------------
    def _call(self, op: str, key: str, fn: Callable[[], Any]) -> Any:
        def attempt(n: int) -> Any:
            self.requests += 1
            try:
                return fn()
            except Exception as exc:  # classified below; unknown kinds are not retried
                reason, retryable, retry_after = classify(exc, self.retry)
                if not retryable:
                    failed(AttemptFailed(reason, type(exc).__name__), n, True)
                    raise ProviderError(reason, f"{op} {key}: {type(exc).__name__} after {n} attempt(s)",
                                        retryable=False) from exc
                raise AttemptFailed(reason, type(exc).__name__, retry_after=retry_after) from exc

        def failed(f: AttemptFailed, n: int, final: bool) -> None:
            self.events.append({"op": op, "key": key, "attempt": n, "reason": f.reason, "detail": f.detail,
                                "final": final})
            log.warning("ia %s %s attempt %d failed: %s", op, key, n, f.reason)

        try:
            return call_with_retries(attempt, self.retry, sleep=self.sleep, on_failure=failed)
        except RetriesExhausted as exc:
            last = exc.last
            raise ProviderError(last.reason, f"{op} {key}: {last.detail} after {exc.attempts} attempt(s)",
                                retryable=True) from last.__cause__

    # -- search --------------------------------------------------------------------------------
    def search_items(self, query: str, *, fields: Iterable[str] | None = None) -> list[str]:
        """Identifiers matching ``query`` (the package's scrape-API search), sorted."""
        return sorted(r["identifier"] for r in self.search(query, fields=fields))

    def search(self, query: str, *, fields: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Result dicts (``identifier`` plus ``fields``) of the package's search."""
        flds = list(fields or ["identifier"])

        def run() -> list[dict[str, Any]]:
            s = self.session.search_items(query, fields=flds, max_retries=0,
                                          request_kwargs={"timeout": self.timeout_s})
            results = list(s)
            bad = [r for r in results if "error" in r or "identifier" not in r]
            if bad:
                raise ProviderError("bad_response", f"search error: {str(bad[0])[:120]}")
            return results

        return self._call("search", query, run)

    # -- metadata ------------------------------------------------------------------------------
    def item(self, identifier: str, *, refresh: bool = False) -> Any:
        """The package's ``Item`` built from one metadata-API request (cached per client)."""
        if identifier in self._items and not refresh:
            self._items.move_to_end(identifier)
            return self._items[identifier]
        url = f"{self.session.protocol}//{self.session.host}/metadata/{quote(identifier)}"

        def run() -> dict[str, Any]:
            r = self.session.get(url, timeout=self.timeout_s)
            data = r.json()
            if not isinstance(data, dict):
                raise ProviderError("bad_response", f"metadata {identifier}: not an object")
            return data

        data = self._call("metadata", identifier, run)
        if not data or "metadata" not in data:
            raise ProviderError("not_found", f"no item {identifier!r} (metadata API answered {{}})")
        item = self.session.get_item(identifier, item_metadata=data)
        self._items[identifier] = item
        self._items.move_to_end(identifier)
        while len(self._items) > ITEM_CACHE:
            self._items.popitem(last=False)
        return item

    def metadata(self, identifier: str) -> dict[str, Any]:
        return dict(self.item(identifier).metadata)

    def list_files(self, identifier: str) -> list[dict[str, Any]]:
        """The item's file entries ``{name, source, format, size, md5, sha1, crc32, mtime}``."""
        return [dict(f) for f in self.item(identifier).files]

    # -- download ------------------------------------------------------------------------------
    def _ref_path(self, store: RawStore, identifier: str, name: str) -> Path:
        return store.root / "refs" / "ia" / quote(identifier, safe="") / quote(name, safe="")

    def cached(self, identifier: str, name: str, store: RawStore | None = None, *, md5: str | None = None) -> str | None:
        """The stored digest of ``identifier/name``, or None. With ``md5`` (the metadata API's), a
        copy recorded under another md5 is stale: the item re-derived the file under the same name."""
        st = store or self.store
        if st is None:
            return None
        ref = self._ref_path(st, identifier, name)
        if ref.exists():
            digest, _, recorded = ref.read_text(encoding="ascii").strip().partition(" ")
            if md5 and recorded and recorded != md5:
                return None
            if st.has(digest):
                return digest
        return None

    def _known_md5(self, identifier: str, name: str) -> str | None:
        """The md5 of a file in item metadata this client already holds (no request)."""
        item = self._items.get(identifier)
        entry = next((f for f in getattr(item, "files", None) or [] if f.get("name") == name), None)
        return entry.get("md5") if entry else None

    def fetch_file(self, identifier: str, name: str, store: RawStore | None = None) -> tuple[str, bytes]:
        """(sha256, bytes) of one file; served from the raw store without a request when the
        ``(identifier, name)`` ref exists. Length and md5 are checked against the metadata API."""
        st = store or self.store
        if st is None:
            raise ValueError("fetch_file needs a RawStore")
        digest = self.cached(identifier, name, st, md5=self._known_md5(identifier, name))
        if digest is not None:
            return digest, st.get(digest)
        item = self.item(identifier)
        entry = next((f for f in item.files if f.get("name") == name), None)
        if entry is None:
            raise ProviderError("not_found", f"{identifier}/{name} is not among the item's files")
        url = item.get_file(name).url
        size = int(entry["size"]) if str(entry.get("size", "")).isdigit() else None
        md5 = entry.get("md5")

        def run() -> bytes:
            r = self.session.get(url, params={"cnt": "0"}, timeout=self.timeout_s)
            data = r.content
            if size is not None and len(data) != size:
                raise ProviderError("truncated", f"{len(data)} of {size} bytes", retryable=True)
            if md5 and hashlib.md5(data).hexdigest() != md5:
                raise ProviderError("checksum_mismatch", "md5 differs from the metadata API", retryable=True)
            return data

        data = self._call("download", f"{identifier}/{name}", run)
        digest, _ = st.put(data)
        self._write_ref(st, identifier, name, digest, md5)
        return digest, data

    def _write_ref(self, store: RawStore, identifier: str, name: str, digest: str, md5: str | None = None) -> None:
        ref = self._ref_path(store, identifier, name)
        ref.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=ref.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(digest + (f" {md5}" if md5 else "") + "\n")
            os.replace(tmp, ref)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    # -- derived -------------------------------------------------------------------------------
    def item_fingerprint(self, identifier: str) -> str:
        """``{identifier}@{item_last_updated}`` of the metadata API (``@`` + the files' newest
        mtime when the item has no ``item_last_updated``): what an incremental rebuild compares."""
        item = self.item(identifier)
        raw = getattr(item, "item_metadata", {}) or {}
        updated = raw.get("item_last_updated")
        if updated in (None, ""):
            updated = max((str(f.get("mtime", "")) for f in raw.get("files", [])), default="")
        return f"{identifier}@{updated}"

    def derivatives(self, identifier: str) -> dict[str, str]:
        """:func:`extractors.ia_pages.derivatives` of the item's ``files[]``."""
        from extractors.ia_pages import derivatives

        return derivatives(self.list_files(identifier), identifier)

    def page_texts(self, identifier: str) -> PageTexts:
        """The item's page texts from a page-indexed derivative (hOCR search text + page index,
        else ``_djvu.xml``) aligned with its leaves (``_scandata.xml``, else ``_page_numbers.json``).
        ``ProviderError`` ``no_page_index`` (a ``_djvu.txt`` only), ``no_text_layer`` (no OCR
        derivative) or ``bad_page_index``; a leaf mismatch is ``PageTexts.alignment.reason``."""
        from extractors.ia_pages import (PageIndexError, align_leaves, djvu_xml_pages, hocr_pages, page_numbers,
                                         scandata_access_leaves)

        names = self.derivatives(identifier)
        try:
            if "searchtext" in names and "pageindex" in names:
                _, st = self.fetch_file(identifier, names["searchtext"])
                _, pi = self.fetch_file(identifier, names["pageindex"])
                texts, source, sha = hocr_pages(st, pi), "hocr", self.cached(identifier, names["searchtext"])
            elif "djvu_xml" in names:
                sha, data = self.fetch_file(identifier, names["djvu_xml"])
                texts, source = djvu_xml_pages(data), "djvu_xml"
            elif "djvu_txt" in names:
                raise ProviderError("no_page_index", f"{identifier}: {names['djvu_txt']} only (no page separator)")
            else:
                raise ProviderError("no_text_layer", f"{identifier}: no OCR derivative")
            access: list[int] | None = None
            scan = "assumed"
            if "scandata" in names:
                _, data = self.fetch_file(identifier, names["scandata"])
                access, scan = scandata_access_leaves(data), "scandata"
            elif "page_numbers" in names:
                _, data = self.fetch_file(identifier, names["page_numbers"])
                access, scan = [p["leafNum"] for p in page_numbers(data)], "page_numbers"
        except PageIndexError as exc:
            raise ProviderError(exc.reason, f"{identifier}: {exc.detail}") from exc
        return PageTexts(texts, source, sha, align_leaves(len(texts), access, scan), names)

    def fetch_member(self, identifier: str, zip_name: str, member: str,
                     store: RawStore | None = None) -> tuple[str, int]:
        """(sha256, size) of one member of a zip file of the item (``/download/{id}/{zip}/{member}``
        with the member's ``/`` as ``%2F``), streamed to a temporary file and put into the raw store;
        served from the store without a request when its ref exists. The whole zip is never read."""
        from extractors.ia_pages import member_path

        st = store or self.store
        if st is None:
            raise ValueError("fetch_member needs a RawStore")
        key = f"{zip_name}/{member}"
        digest = self.cached(identifier, key, st)
        if digest is not None:
            return digest, (st.path_for(digest).stat().st_size if st.local else -1)
        url = f"{self.session.protocol}//{self.session.host}{member_path(identifier, zip_name, member)}"

        def run() -> tuple[str, int]:
            n = 0
            r = self.session.get(url, timeout=self.timeout_s, stream=True)
            try:
                expected = r.headers.get("Content-Length")
                fd, tmp = tempfile.mkstemp(prefix=".member-")
                try:
                    with os.fdopen(fd, "wb") as fh:
                        for chunk in r.iter_content(1 << 16):
                            n += len(chunk)
                            fh.write(chunk)
                    if expected and expected.isdigit() and int(expected) != n:
                        raise ProviderError("truncated", f"{n} of {expected} bytes", retryable=True)
                    d, _ = st.put_file(tmp)
                finally:
                    with contextlib.suppress(OSError):
                        os.unlink(tmp)
            finally:
                r.close()
            return d, n

        digest, size = self._call("member", f"{identifier}/{key}", run)
        self._write_ref(st, identifier, key, digest)
        return digest, size

    def page_image(self, identifier: str, zip_name: str, leaf: int, *, max_b64_bytes: int,
                   store: RawStore | None = None) -> tuple[str, str]:
        """(sha256 of the inline-ready image, mime) of one leaf: its ``_jp2.zip`` member
        (:meth:`fetch_member`) made to fit ``max_b64_bytes`` by :func:`extractors.ia_pages.fit_image`
        (PNG with unchanged pixels when it fits, else a downscaled JPEG), stored in the raw store."""
        from extractors.ia_pages import PageIndexError, fit_image, jp2_member

        st = store or self.store
        if st is None:
            raise ValueError("page_image needs a RawStore")
        sha, _ = self.fetch_member(identifier, zip_name, jp2_member(zip_name, leaf), st)
        try:
            data, mime = fit_image(st.get(sha), max_b64_bytes)
        except PageIndexError as exc:
            raise ProviderError(exc.reason, f"{identifier} leaf {leaf}: {exc.detail}", retryable=False) from exc
        except OSError as exc:  # PIL cannot decode the member
            raise ProviderError("bad_response", f"{identifier} leaf {leaf}: {exc}", retryable=False) from exc
        out, _ = st.put(data)
        return out, mime

    def iter_page_images(self, identifier: str, *, leaves: Sequence[int] | None = None, dpi: int = 100,
                         max_b64_bytes: int = 18_000_000) -> Iterator[tuple[int, str]]:
        """(page index, sha256 of its inline-ready image) of every page, one page at a time, each
        stored in the raw store: with ``leaves`` (page *i* ↔ image leaf ``leaves[i]``, from the
        scan data) and a listed ``_jp2.zip``, one member per page (:meth:`page_image`; the zip is
        never fetched whole); else the item's PDF, rendered page by page by pdf2image from the raw
        store's copy, fitted like a member (:func:`extractors.ia_pages.fit_image`); a ``_jp2.zip``
        without known leaves falls back to :meth:`page_images`."""
        from extractors.ia_pages import PageIndexError, fit_image

        st = self.store
        if st is None:
            raise ValueError("iter_page_images needs a RawStore")
        names = [f["name"] for f in self.list_files(identifier)]
        zips = [n for n in names if n.endswith("_jp2.zip")]
        pdfs = [n for n in names if n.lower().endswith(".pdf")]
        if zips and leaves is not None:
            for i, leaf in enumerate(leaves):
                yield i, self.page_image(identifier, zips[0], leaf, max_b64_bytes=max_b64_bytes)[0]
            return
        if zips or not pdfs:
            for p in self.page_images(identifier, dpi=dpi):
                yield p.page, p.sha256
            return
        from pdf2image import convert_from_path, pdfinfo_from_path

        sha, data = self.fetch_file(identifier, pdfs[0])
        with contextlib.ExitStack() as stack:
            if st.local:
                path = str(st.path_for(sha))
            else:
                fd, path = tempfile.mkstemp(prefix=".pdf-", suffix=".pdf")
                stack.callback(os.unlink, path)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
            del data
            n = int(pdfinfo_from_path(path)["Pages"])
            for i in range(n):
                (img,) = convert_from_path(path, dpi=dpi, first_page=i + 1, last_page=i + 1)
                try:
                    png, _ = fit_image(png_bytes(_normalise_image(img)), max_b64_bytes)
                except PageIndexError as exc:
                    raise ProviderError(exc.reason, f"{identifier} page {i}: {exc.detail}", retryable=False) from exc
                yield i, st.put(png)[0]

    def page_images(self, identifier: str, *, dpi: int = 100) -> list[PageImage]:
        """Page images as PNG (stored in the raw store): IA's ``_jp2.zip`` when listed, else the
        item's PDF through pdf2image."""
        names = [f["name"] for f in self.list_files(identifier)]
        zips = [n for n in names if n.endswith("_jp2.zip")]
        pdfs = [n for n in names if n.lower().endswith(".pdf")]
        if zips:
            _, data = self.fetch_file(identifier, zips[0])
            pages = page_images_from_zip(data)
        elif pdfs:
            _, data = self.fetch_file(identifier, pdfs[0])
            pages = page_images_from_pdf(data, dpi=dpi)
        else:
            raise ProviderError("no_page_images", f"{identifier} has neither _jp2.zip nor PDF")
        if self.store is not None:
            for p in pages:
                self.store.put(p.png)
        return pages


# --------------------------------------------------------------------------------------------
# Function forms (the signatures the flow uses)
# --------------------------------------------------------------------------------------------
def search_items(query: str, *, session: Any, fields: Iterable[str] | None = None) -> list[str]:
    return IAClient(session).search_items(query, fields=fields)


def list_files(identifier: str, *, session: Any) -> list[dict[str, Any]]:
    return IAClient(session).list_files(identifier)


def fetch_file(identifier: str, name: str, store: RawStore, *, session: Any) -> tuple[str, bytes]:
    return IAClient(session, store).fetch_file(identifier, name)
