"""The per-page jobs of ``variety-filter`` and ``variety-extract``, as a worker runs them
(flows/items.py): read one page's OCR text from the raw store by URL and digest, apply the pure
per-page function (extractors/variety), return the rows. Kept apart from the stages so that a
worker process imports only this, the raw store and the extractors."""

from __future__ import annotations

from typing import Any

from cinesub.rawstore import read_blob

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
