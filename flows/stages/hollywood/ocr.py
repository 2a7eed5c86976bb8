"""Tesseract where a Hollywood page's text layer is missing or unusable (issue 17 point 3), shared
by ``variety-discover`` and ``cce-discover`` (and read back by ``cce-parse``): which engine
produced a page's text (``text_engine``) and why the text layer was not used (``text_reason``)
are kept per page in ``pd_pages`` / ``pd_cce_pages``. The OCR itself is
:mod:`extractors.ocr_tesseract`, run inside the stages' item jobs
(:func:`flows.stages.hollywood.pages.member_text`, :func:`~flows.stages.hollywood.pages.resolve_text`)."""

from __future__ import annotations

from typing import Any

import duckdb

from flows.kernel_context import RunContext


def ensure_text_columns(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Add ``text_engine`` / ``text_reason`` (issue 17: which engine produced a page's text) to a
    state DB written before them (``CREATE TABLE IF NOT EXISTS`` adds no column)."""
    for col in ("text_engine", "text_reason"):
        con.execute(f'ALTER TABLE "{table}" ADD COLUMN IF NOT EXISTS {col} VARCHAR')


def ocr_inputs(ctx: RunContext) -> dict[str, Any]:
    """Fingerprint material of a stage that OCRs pages (engine, its version, language)."""
    from extractors.ocr_tesseract import ocr_fingerprint

    hs = ctx.settings.hollywood
    return {"ocr": ocr_fingerprint(hs.ocr_engine, hs.ocr_lang)}
