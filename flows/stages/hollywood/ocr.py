"""Tesseract where a Hollywood page's text layer is missing or unusable (issue 17 point 3), shared
by ``variety-discover`` and ``cce-discover`` (and read back by ``cce-parse``): which engine
produced a page's text (``text_engine``) and why the text layer was not used (``text_reason``)
are kept per page in ``pd_pages`` / ``pd_cce_pages``. The OCR itself is
:mod:`extractors.ocr_tesseract`."""

from __future__ import annotations

from typing import Any

import duckdb

from flows.kernel_context import RunContext
def ensure_text_columns(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Add ``text_engine`` / ``text_reason`` (issue 17: which engine produced a page's text) to a
    state DB written before them (``CREATE TABLE IF NOT EXISTS`` adds no column)."""
    for col in ("text_engine", "text_reason"):
        con.execute(f'ALTER TABLE "{table}" ADD COLUMN IF NOT EXISTS {col} VARCHAR')


def page_text(ctx: RunContext, store: Any, text: str | None, image_sha: str | None, *, psm: int | None = None) -> Any:
    """:func:`extractors.ocr_tesseract.resolve_page_text` of one page with the Hollywood OCR
    settings: its text layer when usable, else Tesseract (page segmentation ``psm``, default
    :data:`~extractors.ocr_tesseract.PSM`) on its stored image (a reason either way)."""
    from extractors.ocr_tesseract import PSM, options_of, resolve_page_text, unusable_reason

    hs = ctx.settings.hollywood
    opts = options_of(hs)
    if unusable_reason(text, min_words=opts["min_words"], min_word_ratio=opts["min_word_ratio"]) is None:
        return resolve_page_text(text, None, **opts)  # usable: the image is not read
    image = store.get(image_sha) if image_sha else None
    return resolve_page_text(text, image, **opts, psm=psm or PSM)


def ocr_inputs(ctx: RunContext) -> dict[str, Any]:
    """Fingerprint material of a stage that OCRs pages (engine, its version, language)."""
    from extractors.ocr_tesseract import ocr_fingerprint

    hs = ctx.settings.hollywood
    return {"ocr": ocr_fingerprint(hs.ocr_engine, hs.ocr_lang)}


def member_page_text(ctx: RunContext, client: Any, store: Any, identifier: str, zip_name: str | None,
                     leaf: int, text: str | None) -> Any:
    """:func:`page_text` of one Variety page whose image is a ``_jp2.zip`` member: only when its text
    layer is missing or unusable is that one member fetched (full resolution, streamed into the
    raw store by :meth:`extractors.ia.IAClient.fetch_member`) and read by Tesseract. A member the
    archive refuses gives ``no_page_image`` (detail: the archive's reason), never an exception."""
    from extractors.ia_pages import jp2_member
    from extractors.ocr_tesseract import NO_PAGE_IMAGE, PageText, options_of, resolve_page_text, unusable_reason
    from extractors.providers.errors import ProviderError

    opts = options_of(ctx.settings.hollywood)
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
