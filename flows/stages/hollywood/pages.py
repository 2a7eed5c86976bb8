"""The item-level jobs of the Hollywood stages, as a worker runs them (flows/items.py: in a local
process or on a Dask cluster), issue 17 point 5. A job is a plain picklable tuple — how to reach
the archive and the raw store (:class:`IASpec`), the Gemini reader's settings (:class:`GeminiJob`,
whose key is resolved in the worker), raw-store URLs and digests — never a connection; a worker
reads and writes only the content-addressed raw store and returns rows, and the stage (the only
writer of the state DB) writes them item by item:

* ``variety-discover``: :func:`discover_work` — one Variety item's page texts (hOCR page index /
  ``_djvu.xml``), Tesseract on the pages whose text layer is missing or unusable (one ``_jp2.zip``
  member each), issue dates;
* ``variety-filter``: :func:`filter_item_work` — the page filter on every page of an item;
* ``variety-extract``: :func:`extract_item_work` (the OCR-rules extractor on an item's kept pages)
  and :func:`gemini_item_work` (fetch the kept pages' images, one jp2 member each, and read them
  with Gemini, chunk by chunk);
* ``cce-discover`` / ``cce-parse``: :func:`cce_volume_work` and :func:`gemini_item_work` per volume.

Kept apart from the stages so that a worker process imports only this, the raw store and the
extractors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cinesub.rawstore import RawStore, read_blob

#: reason code of a page whose reading raised (an unforeseen bug: recorded, never a stage failure)
INTERNAL_ERROR = "internal_error"


def _page_text(url: str | None, sha: str | None) -> str:
    return read_blob(url, sha).decode("utf-8") if sha else ""


def filter_work(job: tuple) -> dict[str, Any]:
    """One page of ``variety-filter`` (in a worker): ``(item_id, page, text URL, text sha256)``."""
    from extractors.variety.page_filter import filter_row

    item_id, page, url, sha = job
    return filter_row(item_id, page, _page_text(url, sha))


def filter_failed(job: tuple, error_type: str, message: str, step: str) -> dict[str, Any]:
    """The ``internal_error`` decision of a page whose reading or classification raised."""
    return {"item_id": job[0], "page": job[1], "keep": False, "reason": INTERNAL_ERROR,
            "phrase": f"{error_type}: {message}"[:300], "score": None}


def extract_work(job: tuple) -> tuple[tuple, list[dict[str, Any]], list[dict[str, Any]]]:
    """One kept page of ``variety-extract`` (in a worker): (page key, tuple rows, error rows)."""
    from extractors.variety.ocr_grosses import page_rows

    page, url, sha, citymap = job
    return (page["item_id"], page["page"]), *page_rows(page, _page_text(url, sha), citymap=citymap)


def extract_failed(job: tuple, error_type: str, message: str, step: str) -> tuple[tuple, list, list[dict[str, Any]]]:
    """The ``internal_error`` row of a page on which the OCR-rules extractor raised."""
    page = job[0]
    return (page["item_id"], page["page"]), [], [{**page, "extractor": "ocr-rules", "model": None,
                                                  "reason": INTERNAL_ERROR, "detail": f"{error_type}: {message}"[:300]}]


def image_work(job: tuple) -> tuple[tuple, str | None, str | None, str | None]:
    """Fetch one kept page's image (in a worker): ``(item_id, page, leaf, ia base URL, raw-store
    location, local root, jp2 zip name, max base64 bytes, retry policy)`` → (page key, image sha256,
    reason, detail). One ``_jp2.zip`` member is downloaded (never the zip), fitted to the model's
    inline limit and put into the raw store; an image already fetched costs no request."""
    from pathlib import Path

    from cinesub.rawstore import RawStore
    from extractors.ia import IAClient
    from extractors.providers.errors import ProviderError

    item_id, page, leaf, base_url, store_loc, local_root, zip_name, max_b64, retry = job
    if not zip_name:
        return (item_id, page), None, "no_page_images", "the item has no _jp2.zip"
    store = RawStore(store_loc, local_root=Path(local_root) if local_root else None)
    client = IAClient.for_endpoint(base_url, store, **({"retry": retry} if retry is not None else {}))
    try:
        sha, _mime = client.page_image(item_id, zip_name, leaf, max_b64_bytes=max_b64)
    except ProviderError as exc:
        return (item_id, page), None, exc.reason_code, str(exc)[:300]
    return (item_id, page), sha, None, None


def image_failed(job: tuple, error_type: str, message: str, step: str) -> tuple[tuple, None, str, str]:
    """The ``internal_error`` result of a page whose image fetch raised."""
    return (job[0], job[1]), None, INTERNAL_ERROR, f"{error_type}: {message}"[:300]


# --------------------------------------------------------------------------------------------
# what a worker needs to reach the archive, the raw store and Gemini
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class IASpec:
    """How a worker reaches the Internet Archive (base URL, retry policy) and the raw store."""

    base_url: str
    store_loc: str
    local_root: str | None
    retry: Any = None

    def open(self) -> tuple[Any, RawStore]:
        from extractors.ia import IAClient

        store = RawStore(self.store_loc, local_root=Path(self.local_root) if self.local_root else None)
        client = IAClient.for_endpoint(self.base_url, store, **({"retry": self.retry} if self.retry is not None else {}))
        return client, store


#: kept pages whose images a Gemini job holds in memory at once (read from the raw store when
#: their chunk is sent), so a worker's memory does not grow with an item's size
GEMINI_CHUNK_PAGES = 64


@dataclass(frozen=True)
class GeminiJob:
    """A Gemini page reader as a worker builds it: the task (``variety`` | ``cce``), where the
    key is found (:class:`extractors.gemini_pages.GeminiKeyRef`, resolved in the worker), base
    URL and reader options (the named ``hollywood.gemini_*`` settings, the requests-per-minute
    budget divided among the runner's workers), Batch API or interactive, the answer cache."""

    task: str
    key: Any = field(repr=False)
    base_url: str | None
    options: dict[str, Any]
    batch: bool
    batch_options: dict[str, Any]
    cache_dir: str
    model: str | None = None

    def reader(self) -> Any:
        if self.task == "cce":
            from extractors.cce.gemini_pages import GeminiCCEExtractor as cls
        else:
            from extractors.variety.gemini_pages import GeminiPageExtractor as cls
        return cls(self.key.resolve(), base_url=self.base_url, cache_dir=Path(self.cache_dir), **self.options)

    def read(self, reader: Any, pages: Sequence[Any], make_ref: Callable[[Any], Any],
             chunk: int = GEMINI_CHUNK_PAGES) -> Any:
        """Read ``pages`` chunk by chunk (``make_ref(page)`` loads one image when its chunk is
        sent): one Batch API job series per chunk with ``batch``, else the reader's rate-limited
        thread pool. One merged ``ExtractionResult``."""
        from extractors.gemini_pages import ExtractionResult

        merged = ExtractionResult(rows=[], errors=[])
        for start in range(0, len(pages), max(1, chunk)):
            refs = [make_ref(p) for p in pages[start:start + chunk]]
            res = reader.extract_pages_batch(refs, **self.batch_options) if self.batch else reader.extract_pages(refs)
            del refs
            merged.rows.extend(res.rows)
            merged.errors.extend(res.errors)
            merged.calls += res.calls
            merged.cache_hits += res.cache_hits
        return merged


def _error_tuple(e: Any) -> tuple:
    return (e.item_id, e.page, e.model, e.reason, e.detail)


# --------------------------------------------------------------------------------------------
# variety-discover: one item
# --------------------------------------------------------------------------------------------
def member_text(client: Any, store: RawStore, identifier: str, zip_name: str | None, leaf: int,
                text: str | None, opts: dict[str, Any]) -> Any:
    """The text of one Variety page whose image is a ``_jp2.zip`` member: its text layer when
    usable; else that one member is fetched (streamed into the raw store) and read by Tesseract.
    A member the archive refuses gives ``no_page_image`` (detail: the archive's reason)."""
    from extractors.ia_pages import jp2_member
    from extractors.ocr_tesseract import NO_PAGE_IMAGE, PageText, resolve_page_text, unusable_reason
    from extractors.providers.errors import ProviderError

    if unusable_reason(text, min_words=opts["min_words"], min_word_ratio=opts["min_word_ratio"]) is None \
            or not zip_name or opts["engine"] != "tesseract":
        return resolve_page_text(text, None, **opts)
    try:
        sha, _ = client.fetch_member(identifier, zip_name, jp2_member(zip_name, leaf), store)
    except ProviderError as exc:
        keep = text if text and text.strip() else None
        return PageText(keep, "ia-ocr" if keep is not None else None, NO_PAGE_IMAGE,
                        f"{exc.reason_code}: {exc}"[:300])
    return resolve_page_text(text, store.get(sha), **opts)


def discover_work(job: tuple) -> tuple[dict[str, Any], list[dict[str, Any]], int, int]:
    """One Variety item of ``variety-discover`` (in a worker): ``(IASpec, item row, OCR options)``
    → (item row, page rows, IA requests, failed IA attempts). An item the archive refuses is its
    row with the reason code and no page."""
    from extractors.providers.errors import ProviderError
    from extractors.variety.issue_dates import date_pages, iso_date

    spec, row, opts = job
    client, store = spec.open()
    row = dict(row)
    ident = row["item_id"]
    try:
        pt = client.page_texts(ident)
    except ProviderError as exc:
        row["reason"] = exc.reason_code
        return row, [], client.requests, len(client.events)
    texts, leaves = pt.texts, pt.alignment.leaves
    row.update(djvu_sha256=pt.sha256, text_source=pt.source, alignment=pt.alignment.source,
               alignment_reason=pt.alignment.reason, jp2_zip=pt.names.get("jp2_zip"),
               images_source="jp2.zip" if pt.names.get("jp2_zip") else None, n_pages=len(texts))
    got = [member_text(client, store, ident, row["jp2_zip"], leaves[i], t, opts) for i, t in enumerate(texts)]
    dates = date_pages([g.text or "" for g in got], iso_date(row.get("date_start")), iso_date(row.get("date_end")))
    pages = [{"item_id": ident, "page": i, "leaf": leaves[i], "issue_date": dates[i][0],
              "issue_date_source": dates[i][1],
              "ocr_sha256": store.put(g.text.encode("utf-8"))[0] if g.text is not None else None,
              "image_sha256": None, "text_engine": g.engine, "text_reason": g.reason} for i, g in enumerate(got)]
    return row, pages, client.requests, len(client.events)


def discover_failed(job: tuple, error_type: str, message: str, step: str) -> tuple[dict[str, Any], list, int, int]:
    """The ``internal_error`` row of an item whose reading raised (its pages are not listed)."""
    return {**job[1], "reason": INTERNAL_ERROR, "detail": f"{error_type}: {message}"[:300]}, [], 0, 0


# --------------------------------------------------------------------------------------------
# variety-filter / variety-extract: one item
# --------------------------------------------------------------------------------------------
def filter_item_work(job: tuple) -> tuple[str, list[dict[str, Any]]]:
    """Every page of one item through the page filter: ``(item_id, [(page, text URL, sha)])``;
    a page whose reading or classification raises is its ``internal_error`` row."""
    item_id, pages = job
    out = []
    for page, url, sha in pages:
        try:
            out.append(filter_work((item_id, page, url, sha)))
        except Exception as exc:  # noqa: BLE001 - one poison page is its row
            out.append(filter_failed((item_id, page), type(exc).__name__, str(exc) or repr(exc), "worker"))
    return item_id, out


def filter_item_failed(job: tuple, error_type: str, message: str, step: str) -> tuple[str, list[dict[str, Any]]]:
    return job[0], [filter_failed((job[0], p[0]), error_type, message, step) for p in job[1]]


def extract_item_work(job: tuple) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """The OCR-rules extractor on one item's kept pages: ``(item_id, [(page key, text URL, sha)],
    city map)`` → (item_id, tuple rows, error rows); a page on which it raises is its
    ``internal_error`` row."""
    item_id, pages, citymap = job
    tuples: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for page, url, sha in pages:
        try:
            _, t, e = extract_work((page, url, sha, citymap))
        except Exception as exc:  # noqa: BLE001 - one poison page is its row
            _, t, e = extract_failed((page,), type(exc).__name__, str(exc) or repr(exc), "worker")
        tuples.extend(t)
        errors.extend(e)
    return item_id, tuples, errors


def extract_item_failed(job: tuple, error_type: str, message: str, step: str) -> tuple[str, list, list[dict[str, Any]]]:
    errors = []
    for page, _, _ in job[1]:
        errors.extend(extract_failed((page,), error_type, message, step)[2])
    return job[0], [], errors


def gemini_item_work(job: tuple) -> dict[str, Any]:
    """Gemini on one item's pages (in a worker): ``(GeminiJob, IASpec, item_id, jp2 zip name or
    None, [(page, leaf, issue date ISO, image sha256 or None)], max base64 bytes)``. A page
    without a stored image has its ``_jp2.zip`` member fetched first (fitted to the inline limit);
    images are read from the raw store chunk by chunk. Returns ``{item_id, images: {page: sha},
    image_failures: {page: (reason, detail)}, rows, errors: [(item, page, model, reason, detail)],
    calls, cache_hits}``."""
    from extractors.providers.errors import ProviderError

    gem, spec, item_id, zip_name, pages, max_b64 = job
    client, store = spec.open()
    images: dict[int, str] = {}
    failures: dict[int, tuple[str, str | None]] = {}
    todo = []
    for page, leaf, iso, sha in pages:
        if sha is None:
            if not zip_name:
                failures[page] = ("no_page_images", "the item has no _jp2.zip")
                continue
            try:
                sha, _mime = client.page_image(item_id, zip_name, leaf, max_b64_bytes=max_b64)
            except ProviderError as exc:
                failures[page] = (exc.reason_code, str(exc)[:300])
                continue
        images[page] = sha
        todo.append((page, iso, sha))
    out: dict[str, Any] = {"item_id": item_id, "images": images, "image_failures": failures, "rows": [],
                           "errors": [], "calls": 0, "cache_hits": 0}
    if not todo:
        return out
    reader = gem.reader()
    if gem.task == "cce":
        from extractors.cce.gemini_pages import PageRef as CCERef

        def ref(p: tuple) -> Any:
            return CCERef(item_id, p[0], store.get(p[2]))
    else:
        from extractors.variety.gemini_pages import PageRef

        def ref(p: tuple) -> Any:
            return PageRef(item_id, p[1] or "", p[0], store.get(p[2]))
    res = gem.read(reader, todo, ref)
    out.update(rows=list(res.rows), errors=[_error_tuple(e) for e in res.errors], calls=res.calls,
               cache_hits=res.cache_hits)
    return out


def gemini_item_failed(job: tuple, error_type: str, message: str, step: str) -> dict[str, Any]:
    """Every page of an item whose Gemini job raised: an ``internal_error`` error row each."""
    gem, _spec, item_id, _zip, pages, _ = job
    detail = f"{error_type}: {message}"[:300]
    return {"item_id": item_id, "images": {}, "image_failures": {}, "rows": [], "calls": 0, "cache_hits": 0,
            "errors": [(item_id, p[0], gem.model, INTERNAL_ERROR, detail) for p in pages]}


# --------------------------------------------------------------------------------------------
# cce-discover: one volume
# --------------------------------------------------------------------------------------------
def resolve_text(store: RawStore, text: str | None, image_sha: str | None, opts: dict[str, Any],
                 psm: int | None = None) -> Any:
    """One page's text with the Hollywood OCR options: its text layer when usable, else
    Tesseract (page segmentation ``psm``) on its stored image — a reason either way."""
    from extractors.ocr_tesseract import PSM, resolve_page_text, unusable_reason

    if unusable_reason(text, min_words=opts["min_words"], min_word_ratio=opts["min_word_ratio"]) is None:
        return resolve_page_text(text, None, **opts)  # usable: the image is not read
    image = store.get(image_sha) if image_sha else None
    return resolve_page_text(text, image, **opts, psm=psm or PSM)


def cce_volume_work(job: tuple) -> tuple[dict[str, Any], list[dict[str, Any]], list[str], int, int]:
    """One CCE volume of ``cce-discover`` (in a worker): ``(IASpec, volume row, OCR options, page
    segmentation mode, render dpi, max base64 bytes of a page image)`` → (volume row, page rows, reason codes met, IA requests,
    failed IA attempts). Page texts from the page-indexed derivative (a volume with no text layer
    gives ``image_only`` pages), the page images of every page into the raw store, Tesseract where
    a text layer is missing or unusable."""
    from extractors.providers.errors import ProviderError

    spec, row, opts, psm, dpi, max_b64 = job
    client, store = spec.open()
    row = dict(row)
    ident = row["item_id"]
    reasons: list[str] = []
    texts = leaves = None
    try:
        try:
            pt = client.page_texts(ident)
            texts, leaves = pt.texts, pt.alignment.leaves
            row.update(djvu_sha256=pt.sha256, text_source=pt.source, n_pages=len(texts))
        except ProviderError as exc:
            if exc.reason_code != "no_text_layer":
                raise
    except ProviderError as exc:
        row["reason"] = exc.reason_code
        return row, [], [exc.reason_code], client.requests, len(client.events)
    images: dict[int, str] = {}
    try:
        # one page at a time (a jp2 member per leaf, or a PDF page), stored by the client
        images = dict(client.iter_page_images(ident, leaves=leaves, dpi=dpi, max_b64_bytes=max_b64))
    except ProviderError as exc:  # text pages stay readable by the OCR parser
        row["reason"] = exc.reason_code
        reasons.append(exc.reason_code)
    pages: list[dict[str, Any]] = []
    if texts is not None:
        for leaf, text in enumerate(texts):
            got = resolve_text(store, text, images.get(leaf), opts, psm)
            sha = store.put(got.text.encode("utf-8"))[0] if got.text is not None else None
            if sha is None:
                kind = "image_only"
            else:
                kind = "renewals" if "RENEWAL" in got.text[:300].upper() else "registrations"
            pages.append({"item_id": ident, "page": leaf, "kind": kind, "ocr_sha256": sha,
                          "image_sha256": images.get(leaf), "text_engine": got.engine, "text_reason": got.reason})
    elif images:
        row.update(text_source="pdf_images", n_pages=len(images), reason=row["reason"] or "no_text_layer")
        reasons.append("no_text_layer")
        for leaf, sha in sorted(images.items()):
            # no text layer: Tesseract's text (read by the parser when Gemini is unavailable)
            got = resolve_text(store, None, sha, opts, psm)
            pages.append({"item_id": ident, "page": leaf, "kind": "image_only",
                          "ocr_sha256": store.put(got.text.encode("utf-8"))[0] if got.text is not None else None,
                          "image_sha256": sha, "text_engine": got.engine, "text_reason": got.reason})
    return row, pages, reasons, client.requests, len(client.events)


def cce_volume_failed(job: tuple, error_type: str, message: str, step: str) -> tuple[dict[str, Any], list, list[str], int, int]:
    """The ``internal_error`` row of a volume whose reading raised (its pages are not listed)."""
    return {**job[1], "reason": INTERNAL_ERROR}, [], [INTERNAL_ERROR], 0, 0
