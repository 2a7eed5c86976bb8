"""Gemini page extractor for Variety grosses pages (SPEC B1; seed 003, Appendix B).

A multimodal model (Gemini through ``google-genai``) reads one page image and answers a JSON list
of box-office tuples ``{theater, city, movie, week, gross, conf}`` (schema :class:`GrossTuple`,
sent as the response schema). The prompt is ours: a system instruction with the rules SPEC B1
lists, then two worked examples (page image → JSON, the files under ``data/examples`` written by
:func:`cinesub.sample.variety.write_gemini_examples`), then the page.

This module is the Variety *task* only (schema, prompt, examples, row mapping, provenance with the
issue date); the machinery — client and request building, cache per ``(model, PROMPT_VERSION,
sha256(image))``, thread pool and Batch API modes, reason-coded errors (:data:`REASONS`), key
resolution and scrubbing — is :class:`extractors.gemini_pages.GeminiPageReader`, shared with the
Catalog of Copyright Entries extractor. Changing the prompt or the examples must bump
:data:`PROMPT_VERSION`.

Output rows have the shared tuple shape :data:`ROW_FIELDS` (``extractor = "gemini"``), ``page``
being the 0-based IA leaf index.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

from extractors import gemini_pages as _core
from extractors.gemini_pages import EXTRACTOR, REASONS, ExtractionResult, GeminiPageReader, ImageDigest, PageTask
from extractors.gemini_pages import resolve_api_key

__all__ = ["DEFAULT_MODEL", "EXAMPLES_DIR", "EXTRACTOR", "PROMPT_VERSION", "REASONS", "ROW_FIELDS", "TASK",
           "ExtractionResult", "GeminiPageExtractor", "GrossTuple", "PageError", "PageRef", "load_examples",
           "page_refs_from_world", "parse_answer", "resolve_api_key", "rows_for"]

DEFAULT_MODEL = _core.DEFAULT_MODEL
PROMPT_VERSION = "variety-pages-v1"
EXAMPLES_DIR = Path(__file__).resolve().parent / "data" / "examples"

ROW_FIELDS: tuple[str, ...] = ("issue_date", "item_id", "page", "extractor", "model", "theater", "city", "movie",
                               "week", "gross", "confidence")

SYSTEM_INSTRUCTION = """You read scanned pages of Variety, the show-business weekly (1922-1979), and \
extract the box-office grosses of motion pictures.
Answer a JSON list of tuples {theater, city, movie, week, gross, conf}; answer [] when the page \
has no picture grosses.
Rules:
- city: the city that heads the column (the dateline "San Francisco, Nov. 3." gives "San Francisco"); \
"Broadway" means "New York".
- theater: the theatre name as printed, without circuit, seats and prices. A SHOWCASE entry \
("SHOWCASE (5 houses)") gets theater "SHOWCASE:5".
- movie: the title exactly as printed, without quotes or distributor ("Gone", not a completed title).
- week: "this week" for the estimate of an "Estimates for This Week" entry; "last week" for the \
"Last week, $X" figure (it belongs to the same film after a holdover "(2d wk)", otherwise to the \
film the entry names for last week) and for every figure of an "Estimates for Last Week" block; \
"next week" for a film announced for next week (gross null).
- gross: the dollar amount verbatim as an integer ($14,000 → 14000; "14G" → 14000); null when none.
- One gross shared by several films at one theater is reported for each film.
- Pages headed LEGITIMATE are stage shows: no tuples. Ignore tables, vaudeville bills, orchestras \
and headlines.
- conf: your confidence in the tuple, 0 to 1.
Copy values verbatim; do not correct or complete titles."""

EXAMPLE_PROMPT = "Example page {n}. Extract the grosses tuples."
PAGE_PROMPT = "Extract the grosses tuples of this page. Answer the JSON list only."


class GrossTuple(BaseModel):
    theater: str = Field(description="theatre as printed, or SHOWCASE:N")
    city: str = Field(description="city heading the column; Broadway → New York")
    movie: str = Field(description="title verbatim as printed")
    week: Literal["this week", "last week", "next week"]
    gross: int | None = Field(description="dollars as an integer, null when not given")
    conf: float = Field(ge=0.0, le=1.0, description="confidence 0-1")


_TUPLES = TypeAdapter(list[GrossTuple])


@dataclass(frozen=True)
class PageRef(ImageDigest):
    """One page to extract: provenance plus the image bytes (PNG/JPEG/WEBP); ``sha256`` of them."""

    item_id: str
    issue_date: str
    page: int
    image: bytes = field(repr=False)
    mime_type: str = "image/png"


@dataclass(frozen=True)
class PageError:
    item_id: str
    issue_date: str
    page: int
    image_sha256: str
    model: str
    reason: str
    detail: str


def load_examples(examples_dir: Path = EXAMPLES_DIR) -> list[tuple[bytes, str]]:
    """``[(png bytes, answer JSON text)]`` of the worked examples, in name order."""
    return _core.load_examples(examples_dir, GrossTuple)


def rows_for(page: PageRef, model: str, tuples: Sequence[GrossTuple | dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for t in tuples:
        d = t.model_dump() if isinstance(t, GrossTuple) else dict(t)
        out.append({"issue_date": page.issue_date, "item_id": page.item_id, "page": page.page,
                    "extractor": EXTRACTOR, "model": model, "theater": d["theater"], "city": d["city"],
                    "movie": d["movie"], "week": d["week"], "gross": d["gross"], "confidence": d["conf"]})
    return out


def parse_answer(text: str | None) -> tuple[list[GrossTuple] | None, str | None]:
    """Validated tuples, or ``(None, reason)`` (``no_text``, ``malformed_json``, ``schema_mismatch``)."""
    return _core.parse_answer(text, GrossTuple)


TASK = PageTask(row_model=GrossTuple, system_instruction=SYSTEM_INSTRUCTION, prompt_version=PROMPT_VERSION,
                examples_dir=EXAMPLES_DIR, to_rows=rows_for, example_prompt=EXAMPLE_PROMPT, page_prompt=PAGE_PROMPT,
                batch_display_name="cinesub-variety-pages")


class GeminiPageExtractor(GeminiPageReader):
    """The Variety grosses reader (:class:`extractors.gemini_pages.GeminiPageReader` with
    :data:`TASK`); errors are :class:`PageError` records carrying the issue date."""

    def __init__(self, api_key: str, *, model: str = DEFAULT_MODEL, base_url: str | None = None,
                 thinking_level: str | None = None, media_resolution: str | None = None,
                 cache_dir: Path | str | None = None, max_workers: int = 4, attempts: int = 3,
                 retry_initial_delay_s: float = 1.0, timeout_s: float = 180.0, api_version: str | None = None,
                 examples_dir: Path = EXAMPLES_DIR, temperature: float | None = None, **options: Any):
        """``options``: the reader's other keywords (``max_output_tokens``, ``max_output_tokens_retry``,
        ``split_on_max_tokens``, ``requests_per_minute``, ``limiter``, ``retry``)."""
        task = TASK if Path(examples_dir) == EXAMPLES_DIR else replace(TASK, examples_dir=Path(examples_dir))
        super().__init__(api_key, task, model=model, base_url=base_url, thinking_level=thinking_level,
                         media_resolution=media_resolution, cache_dir=cache_dir, max_workers=max_workers,
                         attempts=attempts, retry_initial_delay_s=retry_initial_delay_s, timeout_s=timeout_s,
                         api_version=api_version, temperature=temperature, **options)

    def page_error(self, page: Any, reason: str, detail: str) -> PageError:
        return PageError(page.item_id, page.issue_date, page.page, page.sha256, self.model, reason, detail)


def page_refs_from_world(world_dir: Path | str) -> list[PageRef]:
    """PageRefs of a sample world's PNG pages (``pages/<item>/<leaf>.png``) with the gold
    provenance — for tests and the offline flow."""
    world = Path(world_dir)
    out = []
    for gp in sorted(world.glob("gold/*/*.json")):
        g = json.loads(gp.read_text(encoding="utf-8"))
        png = world / "pages" / g["item_id"] / f"{g['page']:04d}.png"
        out.append(PageRef(g["item_id"], g["issue_date"], g["page"], png.read_bytes()))
    return out
