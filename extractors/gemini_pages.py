"""Model-agnostic Gemini page reader: one page image in, a validated JSON list of rows out.

What: :class:`GeminiPageReader` sends one scanned page (PNG/JPEG/WEBP) to Gemini through
``google-genai`` with a task's system instruction, its worked examples (page image → JSON answer)
and a pydantic row model as the response schema, validates the answer, and maps each row to an
output dict. A task (:class:`PageTask`) supplies everything page-kind specific: the row model, the
prompts, the prompt version, the examples directory and the row → output mapping. The Variety
grosses extractor (``extractors/variety/gemini_pages.py``) and the Catalog of Copyright Entries
extractor (``extractors/cce/gemini_pages.py``) are two such tasks.

Why one module: the client construction, retries, caching, volume modes, failure classification
and key handling are the same for every page kind, and must behave the same (SPEC B1, B2):

* Configurable model, thinking level and media resolution, as the paper ran it (Gemini 3 Pro,
  high thinking, ultra-high media resolution): ``thinking_level`` → ``ThinkingConfig``;
  ``media_resolution`` low/medium/high → ``GenerateContentConfig.media_resolution``,
  ``ultra_high`` → the per-part ``Part.media_resolution`` of every image (the config-level enum has
  no ultra-high value). The named settings are ``hollywood.gemini_*`` (:func:`reader_options`).
* ``MAX_TOKENS`` fallback: a candidate with ``finishReason: MAX_TOKENS`` is asked again once with
  the larger ``max_output_tokens_retry`` budget; still truncated, the page image is split into a top
  and a bottom half at the whitest row near the middle (:func:`split_page_image`), each half is
  asked, and their rows are merged (top first). Only then is the page a ``max_tokens`` failure.
* A 200 answer that is not an answer is a page failure with its reason: no candidate
  (``promptFeedback.blockReason``) → ``blocked``; ``finishReason`` SAFETY (or another content
  filter: RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, IMAGE_*) → ``safety``.
* Rate: every request takes a token of one :class:`~extractors.http_client.TokenBucket`
  (``requests_per_minute``) shared by the thread pool's workers.
* Retries: google-genai's own loop, configured from the HTTP client layer's
  :class:`~extractors.http_client.RetryPolicy` (``attempts``/``retry_initial_delay_s``, or ``retry``).
* Cached per ``(model, prompt_version, sha256(image))`` as one JSON file
  ``<cache_dir>/<model>/<prompt_version>/<sha256>.json`` (successes only): a rerun makes no call.
  Changing a prompt or its examples must bump the task's ``prompt_version``.
* Volume: :meth:`GeminiPageReader.extract_pages` runs sequential calls on a bounded thread pool;
  :meth:`GeminiPageReader.extract_pages_batch` submits one ``client.batches.create`` job with
  inline requests per job and polls every unfinished job in each round (``client.batches.get``),
  so jobs run side by side, not one after another (the live Batch API is asynchronous and half
  price; the loopback fixture answers at once or after ``batch_pending_polls`` rounds). Batch
  answers cut by ``MAX_TOKENS`` take the fallback above with direct calls.
* Failures never vanish: every page that fails gets a page error with a reason code
  (:data:`REASONS`), returned and, when ``errors_path`` is given, appended to a JSONL file.
  Failed pages are not cached, so the next run asks again.
* The API key comes from the caller, the settings or the environment (:func:`resolve_api_key`);
  it is never logged, never in ``repr``, and scrubbed from every error detail.

Pages are duck-typed (:class:`PageLike`: ``item_id``, ``page``, ``image``, ``mime_type``,
``sha256``), so a task keeps its own provenance fields (Variety's ``issue_date``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, TypeAdapter, ValidationError

from extractors.http_client import NoLimit, RateLimiter, RetryPolicy, TokenBucket, genai_http_options, genai_policy
from extractors.gemini_keys import GeminiKeyRef, resolve_api_key  # noqa: F401  (re-exported)
from extractors.http_client import is_transport_error

log = logging.getLogger(__name__)

DEFAULT_MODEL = "gemini-3-pro-preview"
EXTRACTOR = "gemini"

REASONS: dict[str, str] = {
    "quota": "HTTP 429 RESOURCE_EXHAUSTED (quota or rate) after the client's bounded retries",
    "server_error": "HTTP 5xx after the client's bounded retries",
    "auth_failed": "API key refused (400 API_KEY_INVALID, 401, 403)",
    "bad_request": "another HTTP 4xx",
    "blocked": "no candidate (promptFeedback.blockReason)",
    "safety": "the candidate was stopped by a content filter (finishReason SAFETY, RECITATION, BLOCKLIST, "
              "PROHIBITED_CONTENT, SPII, IMAGE_*)",
    "max_tokens": "finishReason MAX_TOKENS after the larger budget and the split into halves",
    "no_text": "a candidate without text",
    "malformed_json": "the answer is not JSON",
    "schema_mismatch": "JSON that does not fit the row schema",
    "transport_error": "connection or timeout failure",
    "client_error": "the client raised something else",
    "batch_failed": "the batch job ended in a state other than SUCCEEDED, or timed out",
}


#: finish reasons of a candidate stopped by a content filter (google-genai ``types.FinishReason``)
BLOCKING_FINISH = frozenset({"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
                             "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "IMAGE_OTHER"})
#: values of the media-resolution setting; ``ultra_high`` is sent per image part
MEDIA_RESOLUTIONS = ("low", "medium", "high", "ultra_high")
#: the half-page prompt added after the task's page prompt when a page is read in halves
HALF_PROMPT = ("This image is the {which} half of a page that was cut in two; extract the rows it shows "
               "(a row cut by the edge belongs to the half that holds its gross).")


def _enum(value: Any) -> str:
    return str(getattr(value, "value", value) or "")


def split_page_image(image: bytes) -> tuple[bytes, bytes]:
    """The top and bottom halves of a page image (PNG, lossless), cut at the whitest pixel row of
    the middle fifth (40-60 % of the height) so the cut runs between printed lines."""
    import io

    import numpy as np
    from PIL import Image

    with Image.open(io.BytesIO(image)) as img:
        img.load()
        w, h = img.size
        if h < 2:
            raise ValueError("a page image under 2 pixels high cannot be split")
        gray = np.asarray(img.convert("L"), dtype=np.float32)
        lo, hi = int(h * 0.4), max(int(h * 0.6), int(h * 0.4) + 1)
        cut = lo + int(np.argmax(gray[lo:hi].mean(axis=1)))
        cut = min(max(cut, 1), h - 1)
        out = []
        for box in ((0, 0, w, cut), (0, cut, w, h)):
            buf = io.BytesIO()
            img.crop(box).save(buf, format="PNG")
            out.append(buf.getvalue())
    return out[0], out[1]


#: input tokens of one image by media resolution (Gemini 3 docs, "media_resolution"; ultra_high is an
#: assumption, docs/hollywood.md) — the plan's estimate, overridable by ``hollywood.gemini_image_tokens``
IMAGE_TOKENS: dict[str | None, int] = {"low": 280, "medium": 560, "high": 1120, "ultra_high": 2240, None: 1120}
#: characters per text token of the plan's estimate (English prose and JSON)
CHARS_PER_TOKEN = 4.0


def task_text_tokens(task: PageTask) -> int:
    """Estimated text tokens of one request of ``task``: system instruction, example prompts and
    answers, page prompt (the images are counted apart)."""
    chars = len(task.system_instruction) + len(task.page_prompt)
    for n, png in enumerate(sorted(Path(task.examples_dir).glob("example*.png")), start=1):
        chars += len(task.example_prompt.format(n=n)) + len(png.with_suffix(".json").read_text(encoding="utf-8"))
    return int(round(chars / CHARS_PER_TOKEN))


def plan_cost(kept_pages: int, hs: Any, task: PageTask) -> dict[str, Any]:
    """Requests, tokens and cost of reading ``kept_pages`` page images with the named settings
    ``hs`` (``hollywood.gemini_*``): one request per page (worked examples + page), input = the
    images at the media resolution + the task's text, output = ``gemini_output_tokens_per_page``;
    prices per million tokens from the settings, times ``gemini_batch_price_factor`` with
    ``gemini_batch``. No request is made."""
    n_examples = len(list(Path(task.examples_dir).glob("example*.png")))
    image_tokens = hs.gemini_image_tokens or IMAGE_TOKENS.get(hs.gemini_media_resolution, IMAGE_TOKENS[None])
    per_in = image_tokens * (n_examples + 1) + task_text_tokens(task)
    per_out = hs.gemini_output_tokens_per_page
    tokens_in, tokens_out = kept_pages * per_in, kept_pages * per_out
    factor = hs.gemini_batch_price_factor if hs.gemini_batch else 1.0
    cost_in = tokens_in / 1e6 * hs.gemini_price_input_per_mtok * factor
    cost_out = tokens_out / 1e6 * hs.gemini_price_output_per_mtok * factor
    rpm = hs.gemini_requests_per_minute
    return {"model": hs.gemini_model, "mode": "batch" if hs.gemini_batch else "interactive",
            "requests": kept_pages, "worked_examples": n_examples, "image_tokens": image_tokens,
            "input_tokens_per_request": per_in, "output_tokens_per_request": per_out,
            "input_tokens": tokens_in, "output_tokens": tokens_out,
            "cost_usd": {"input": round(cost_in, 2), "output": round(cost_out, 2), "total": round(cost_in + cost_out, 2)},
            "prices": {"input_per_mtok": hs.gemini_price_input_per_mtok,
                       "output_per_mtok": hs.gemini_price_output_per_mtok, "price_factor": factor,
                       "source": hs.gemini_prices_source},
            "minutes_at_rate_limit": round(kept_pages / rpm, 1) if rpm and not hs.gemini_batch else None,
            "max_tokens_fallback": "a page cut by MAX_TOKENS costs up to 3 more requests (larger budget, two halves)"}


def reader_options(hs: Any) -> dict[str, Any]:
    """Reader keyword options from the named Hollywood settings (``hollywood.gemini_*``)."""
    return dict(model=hs.gemini_model, thinking_level=hs.gemini_thinking_level,
                media_resolution=hs.gemini_media_resolution, max_output_tokens=hs.gemini_max_output_tokens,
                max_output_tokens_retry=hs.gemini_max_output_tokens_retry,
                split_on_max_tokens=hs.gemini_split_on_max_tokens,
                requests_per_minute=hs.gemini_requests_per_minute, max_workers=hs.gemini_max_workers)


class PageLike(Protocol):
    """What the reader needs of a page: provenance for errors plus the image bytes."""

    item_id: str
    page: int
    image: bytes
    mime_type: str

    @property
    def sha256(self) -> str: ...


class ImageDigest:
    """Mixin of page records: ``sha256`` of their ``image`` bytes (the cache and fixture key)."""

    image: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.image).hexdigest()


@dataclass(frozen=True)
class PageRef(ImageDigest):
    """A page without further provenance: item, 0-based leaf index, image bytes."""

    item_id: str
    page: int
    image: bytes = field(repr=False)
    mime_type: str = "image/png"


@dataclass(frozen=True)
class PageError:
    item_id: str
    page: int
    image_sha256: str
    model: str
    reason: str
    detail: str


@dataclass
class ExtractionResult:
    rows: list[dict[str, Any]]
    errors: list[Any]
    calls: int = 0
    cache_hits: int = 0


#: ``to_rows(page, model, items)``: the output rows of one page from its validated answer items
#: (each a ``row_model.model_dump()`` dict), in answer order.
RowMapper = Callable[[Any, str, list[dict[str, Any]]], list[dict[str, Any]]]


@dataclass(frozen=True)
class PageTask:
    """The page-kind specific half of a reader: what to ask and how to turn answers into rows."""

    row_model: type[BaseModel]
    system_instruction: str
    prompt_version: str
    examples_dir: Path
    to_rows: RowMapper
    example_prompt: str = "Example page {n}. Extract the rows."
    page_prompt: str = "Extract the rows of this page. Answer the JSON list only."
    batch_display_name: str = "cinesub-pages"

    @property
    def adapter(self) -> TypeAdapter[Any]:
        return _adapter(self.row_model)


_ADAPTERS: dict[type[BaseModel], TypeAdapter[Any]] = {}


def _adapter(row_model: type[BaseModel]) -> TypeAdapter[Any]:
    ad = _ADAPTERS.get(row_model)
    if ad is None:
        ad = _ADAPTERS[row_model] = TypeAdapter(list[row_model])  # type: ignore[valid-type]
    return ad


def load_examples(examples_dir: Path, row_model: type[BaseModel]) -> list[tuple[bytes, str]]:
    """``[(png bytes, answer JSON text)]`` of the worked examples ``example*.png`` + ``.json`` in
    name order; each answer must fit the schema it teaches; at least two examples."""
    out = []
    for png in sorted(Path(examples_dir).glob("example*.png")):
        answer = json.loads(png.with_suffix(".json").read_text(encoding="utf-8"))
        _adapter(row_model).validate_python(answer)
        out.append((png.read_bytes(), json.dumps(answer, ensure_ascii=False)))
    if len(out) < 2:
        raise FileNotFoundError(f"two worked examples expected under {examples_dir}")
    return out


def parse_answer(text: str | None, row_model: type[BaseModel]) -> tuple[list[Any] | None, str | None]:
    """Validated rows, or ``(None, reason)`` (``no_text``, ``malformed_json``, ``schema_mismatch``)."""
    if not text:
        return None, "no_text"
    try:
        data = json.loads(text)
    except ValueError:
        return None, "malformed_json"
    try:
        return _adapter(row_model).validate_python(data), None
    except ValidationError:
        return None, "schema_mismatch"


def reason_for_exception(exc: BaseException) -> str:
    """The reason code of an exception raised by the client (see :data:`REASONS`)."""
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        code = int(getattr(exc, "code", 0) or 0)
        status = str(getattr(exc, "status", "") or "")
        if code == 429 or status == "RESOURCE_EXHAUSTED":
            return "quota"
        if code >= 500:
            return "server_error"
        if code in (401, 403) or "API_KEY_INVALID" in str(getattr(exc, "details", "")) or \
                "API key not valid" in str(getattr(exc, "message", "")):
            return "auth_failed"
        return "bad_request"
    return "transport_error" if is_transport_error(exc) else "client_error"


Answer = tuple[list[dict[str, Any]] | None, Any]  # (validated items as dicts, page error or None)
#: one response read: (items, page error, truncated by MAX_TOKENS)
Reading = tuple[list[dict[str, Any]] | None, Any, bool]


class GeminiPageReader:
    """Reads page images for one :class:`PageTask`. Subclasses may override :meth:`page_error`
    to carry more provenance in their error records."""

    def __init__(self, api_key: str, task: PageTask, *, model: str = DEFAULT_MODEL, base_url: str | None = None,
                 thinking_level: str | None = None, media_resolution: str | None = None,
                 cache_dir: Path | str | None = None, max_workers: int = 4, attempts: int = 3,
                 retry_initial_delay_s: float = 1.0, timeout_s: float = 180.0, api_version: str | None = None,
                 temperature: float | None = None, retry: RetryPolicy | None = None,
                 max_output_tokens: int | None = None, max_output_tokens_retry: int | None = None,
                 split_on_max_tokens: bool = True, requests_per_minute: float | None = None,
                 limiter: RateLimiter | None = None):
        if not api_key:
            raise ValueError(f"{type(self).__name__} needs an API key")
        if media_resolution and media_resolution.lower().removeprefix("media_resolution_") not in MEDIA_RESOLUTIONS:
            raise ValueError(f"media_resolution {media_resolution!r} is not one of {', '.join(MEDIA_RESOLUTIONS)}")
        from google import genai
        from google.genai import types

        self.task = task
        self.model = model
        self.thinking_level = thinking_level
        self.media_resolution = media_resolution.lower().removeprefix("media_resolution_") if media_resolution else None
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.max_workers = max(1, max_workers)
        self.temperature = temperature
        self.max_output_tokens = max_output_tokens
        self.max_output_tokens_retry = max_output_tokens_retry
        self.split_on_max_tokens = split_on_max_tokens
        if limiter is None:
            limiter = TokenBucket(requests_per_minute / 60.0) if requests_per_minute and requests_per_minute > 0 \
                else NoLimit()
        self.limiter = limiter
        self.examples = load_examples(task.examples_dir, task.row_model)
        self._adapter = task.adapter
        self._types = types
        self._secret = api_key
        self.retry = retry or genai_policy(attempts, retry_initial_delay_s, 8.0)
        http = genai_http_options(self.retry, base_url=base_url, api_version=api_version, timeout_s=timeout_s)
        self._client = genai.Client(api_key=api_key, http_options=http)
        self._lock = threading.Lock()
        self.calls = 0
        self.cache_hits = 0
        #: pages asked again with the larger budget, pages read in halves
        self.max_tokens_retries = 0
        self.splits = 0

    def __repr__(self) -> str:  # never the key
        return (f"{type(self).__name__}(model={self.model!r}, prompt_version={self.task.prompt_version!r}, "
                f"thinking_level={self.thinking_level!r}, media_resolution={self.media_resolution!r}, "
                f"api_key='***')")

    def _count(self, name: str, n: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + n)

    # -- request -------------------------------------------------------------------------------
    def config(self, max_output_tokens: int | None = None) -> Any:
        t = self._types
        kwargs: dict[str, Any] = dict(system_instruction=self.task.system_instruction,
                                      response_mime_type="application/json",
                                      response_schema=list[self.task.row_model])  # type: ignore[name-defined]
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.thinking_level:
            kwargs["thinking_config"] = t.ThinkingConfig(thinking_level=self.thinking_level)
        if self.media_resolution and self.media_resolution != "ultra_high":
            kwargs["media_resolution"] = f"MEDIA_RESOLUTION_{self.media_resolution.upper()}"
        budget = max_output_tokens or self.max_output_tokens
        if budget:
            kwargs["max_output_tokens"] = budget
        return t.GenerateContentConfig(**kwargs)

    def _image_part(self, data: bytes, mime_type: str) -> Any:
        t = self._types
        if self.media_resolution == "ultra_high":
            return t.Part.from_bytes(data=data, mime_type=mime_type, media_resolution="MEDIA_RESOLUTION_ULTRA_HIGH")
        return t.Part.from_bytes(data=data, mime_type=mime_type)

    def contents(self, page: PageLike, image: bytes | None = None, mime_type: str | None = None,
                 half: str | None = None) -> list[Any]:
        """The turns: each worked example (prompt + image, then its answer), then the page (or
        one ``half`` of it, ``image``)."""
        t = self._types
        turns: list[Any] = []
        for n, (png, answer) in enumerate(self.examples, start=1):
            turns.append(t.Content(role="user", parts=[t.Part.from_text(text=self.task.example_prompt.format(n=n)),
                                                       self._image_part(png, "image/png")]))
            turns.append(t.Content(role="model", parts=[t.Part.from_text(text=answer)]))
        prompt = self.task.page_prompt + ("" if half is None else " " + HALF_PROMPT.format(which=half))
        turns.append(t.Content(role="user", parts=[t.Part.from_text(text=prompt),
                                                   self._image_part(image if image is not None else page.image,
                                                                    mime_type or page.mime_type)]))
        return turns

    # -- output --------------------------------------------------------------------------------
    def rows_for(self, page: PageLike, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return self.task.to_rows(page, self.model, items)

    def page_error(self, page: PageLike, reason: str, detail: str) -> Any:
        """The error record of a failed page (``detail`` already scrubbed)."""
        return PageError(page.item_id, page.page, page.sha256, self.model, reason, detail)

    # -- cache ---------------------------------------------------------------------------------
    def cache_path(self, image_sha256: str) -> Path | None:
        if self.cache_dir is None:
            return None
        safe_model = self.model.replace("/", "_")
        return self.cache_dir / safe_model / self.task.prompt_version / f"{image_sha256}.json"

    def _cache_get(self, sha: str) -> list[dict[str, Any]] | None:
        p = self.cache_path(sha)
        if p is None or not p.exists():
            return None
        try:
            return [r.model_dump() for r in self._adapter.validate_json(p.read_bytes())]
        except ValidationError:
            return None  # a damaged cache entry is a miss

    def _cache_put(self, sha: str, items: list[dict[str, Any]]) -> None:
        p = self.cache_path(sha)
        if p is None:
            return
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(items, fh, ensure_ascii=False)
        os.replace(tmp, p)

    # -- errors --------------------------------------------------------------------------------
    def _scrub(self, s: str) -> str:
        return s.replace(self._secret, "***") if self._secret else s

    def _error(self, page: PageLike, reason: str, detail: str) -> Any:
        return self.page_error(page, reason, self._scrub(detail)[:300])

    @staticmethod
    def reason_for_exception(exc: BaseException) -> str:
        return reason_for_exception(exc)

    # -- one page ------------------------------------------------------------------------------
    def _answer(self, page: PageLike) -> Answer:
        cached = self._cache_get(page.sha256)
        if cached is not None:
            self._count("cache_hits")
            return cached, None
        return self._fallback(page, self._ask(page))

    def _ask(self, page: PageLike, image: bytes | None = None, mime_type: str | None = None,
             budget: int | None = None, half: str | None = None) -> Reading:
        """One request (after a rate-limit token): ``(items, error, truncated)``."""
        self.limiter.acquire()
        self._count("calls")
        try:
            resp = self._client.models.generate_content(
                model=self.model, contents=self.contents(page, image, mime_type, half), config=self.config(budget))
        except Exception as exc:  # noqa: BLE001 - classified into a reason code
            reason = reason_for_exception(exc)
            log.warning("gemini page %s/%s failed: %s", page.item_id, page.page, reason)
            return None, self._error(page, reason, f"{type(exc).__name__}: {getattr(exc, 'message', '') or ''}"), False
        return self._read(page, resp)

    def _read(self, page: PageLike, resp: Any) -> Reading:
        """A response → ``(items, error, truncated)``; ``truncated``: finishReason MAX_TOKENS."""
        cands = getattr(resp, "candidates", None)
        if not cands:
            fb = getattr(resp, "prompt_feedback", None)
            block = _enum(getattr(fb, "block_reason", None)) if fb is not None else ""
            return None, self._error(page, "blocked", f"no candidate; promptFeedback.blockReason {block or 'absent'}"), \
                False
        finish = _enum(getattr(cands[0], "finish_reason", None))
        if finish == "MAX_TOKENS":
            return None, None, True
        if finish in BLOCKING_FINISH:
            return None, self._error(page, "safety", f"finishReason {finish}"), False
        try:
            text = resp.text
        except Exception:  # noqa: BLE001 - a candidate without text parts
            text = None
        rows, reason = parse_answer(text, self.task.row_model)
        if rows is None:
            assert reason is not None
            return None, self._error(page, reason, (text or "")[:120]), False
        return [r.model_dump() for r in rows], None, False

    def _fallback(self, page: PageLike, first: Reading) -> Answer:
        """The page's answer from its first reading, through the MAX_TOKENS fallback (a larger
        budget once, then the two halves merged); a success is cached."""
        items, err, truncated = first
        big = self.max_output_tokens_retry
        if truncated and big and big > (self.max_output_tokens or 0):
            self._count("max_tokens_retries")
            items, err, truncated = self._ask(page, budget=big)
        if truncated and self.split_on_max_tokens:
            self._count("splits")
            try:
                halves = split_page_image(page.image)
            except Exception as exc:  # noqa: BLE001 - an image Pillow cannot read or cut
                return None, self._error(page, "max_tokens", f"split failed: {type(exc).__name__}: {exc}")
            merged: list[dict[str, Any]] = []
            for which, img in zip(("top", "bottom"), halves):
                h_items, h_err, h_trunc = self._ask(page, img, "image/png", budget=big, half=which)
                if h_trunc:
                    return None, self._error(page, "max_tokens", f"finishReason MAX_TOKENS on the {which} half")
                if h_items is None:
                    return None, h_err
                merged += h_items
            items, err, truncated = merged, None, False
        if truncated:
            return None, self._error(page, "max_tokens", f"finishReason MAX_TOKENS at {big or self.max_output_tokens} "
                                                         "output tokens")
        if items is None:
            return None, err
        self._cache_put(page.sha256, items)
        return items, None

    def extract_page(self, page: PageLike) -> tuple[list[dict[str, Any]], Any]:
        """Rows of one page, or ``([], error)``; a cached page makes no request."""
        items, err = self._answer(page)
        return ([], err) if items is None else (self.rows_for(page, items), None)

    # -- many pages ----------------------------------------------------------------------------
    def extract_pages(self, pages: Iterable[PageLike], *, errors_path: Path | str | None = None) -> ExtractionResult:
        """All pages on a bounded thread pool (``max_workers``) within the rate limit, rows in
        input order; one request per distinct uncached image (more for a MAX_TOKENS fallback)."""
        pages = list(pages)
        calls0, hits0 = self.calls, self.cache_hits
        uniq: dict[str, PageLike] = {}
        for p in pages:
            uniq.setdefault(p.sha256, p)
        with ThreadPoolExecutor(max_workers=self.max_workers) as pool:
            answers = dict(zip(uniq, pool.map(self._answer, uniq.values())))
        return self._collect(pages, answers, calls0, hits0, errors_path)

    def _collect(self, pages: Sequence[PageLike], answers: dict[str, Answer], calls0: int, hits0: int,
                 errors_path: Path | str | None) -> ExtractionResult:
        """Rows and errors per input page (pages sharing an image share its answer)."""
        rows: list[dict[str, Any]] = []
        errors: list[Any] = []
        for p in pages:
            items, err = answers[p.sha256]
            if err is not None:
                errors.append(self.page_error(p, err.reason, err.detail))
            else:
                rows += self.rows_for(p, items or [])
        if errors and errors_path is not None:
            path = Path(errors_path)
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as fh:
                for e in errors:
                    fh.write(json.dumps(asdict(e), ensure_ascii=False) + "\n")
        return ExtractionResult(rows, errors, self.calls - calls0, self.cache_hits - hits0)

    def extract_pages_batch(self, pages: Iterable[PageLike], *, poll_interval_s: float = 30.0,
                            timeout_s: float = 24 * 3600.0, errors_path: Path | str | None = None,
                            display_name: str | None = None,
                            max_inline_bytes: int = 14_000_000) -> ExtractionResult:
        """Batch API jobs (``client.batches.create`` with inline requests) for the uncached pages,
        all created first, then polled together (each round asks ``client.batches.get`` for
        every unfinished job, then sleeps ``poll_interval_s``) until each ends. The live API caps
        an inline batch at 20 MB, so requests are grouped into jobs of at most ``max_inline_bytes``
        of image bytes (page + worked examples; base64 adds a third); a request over the cap goes
        alone. Every job creation counts as one call; pages cut by MAX_TOKENS are then read
        through the fallback with direct calls."""
        pages = list(pages)
        calls0, hits0 = self.calls, self.cache_hits
        answers: dict[str, Answer] = {}
        todo: dict[str, PageLike] = {}
        for p in pages:
            if p.sha256 in answers or p.sha256 in todo:
                continue
            cached = self._cache_get(p.sha256)
            if cached is not None:
                self._count("cache_hits")
                answers[p.sha256] = (cached, None)
            else:
                todo[p.sha256] = p
        examples_bytes = sum(len(png) for png, _ in self.examples)
        groups: list[list[str]] = []
        size = 0
        for s in todo:
            need = len(todo[s].image) + examples_bytes
            if not groups or size + need > max_inline_bytes:
                groups.append([])
                size = 0
            groups[-1].append(s)
            size += need
        deadline = time.monotonic() + timeout_s
        name = display_name or self.task.batch_display_name
        jobs = [self._batch_create({s: todo[s] for s in order}, name) for order in groups]
        self._batch_poll(jobs, poll_interval_s, deadline)
        for job in jobs:
            for s, reading in self._batch_readings(job).items():
                answers[s] = self._fallback(todo[s], reading)
        return self._collect(pages, answers, calls0, hits0, errors_path)

    def _batch_create(self, todo: dict[str, PageLike], display_name: str) -> dict[str, Any]:
        """Submit one batch job for ``todo`` (sha256 → page); its state record."""
        t = self._types
        src = [t.InlinedRequest(model=self.model, contents=self.contents(todo[s]), config=self.config(),
                                metadata={"key": s}) for s in todo]
        self._count("calls")
        job: dict[str, Any] = {"todo": todo, "job": None, "error": None, "state": None}
        try:
            job["job"] = self._client.batches.create(model=self.model, src=src,
                                                     config=t.CreateBatchJobConfig(display_name=display_name))
            job["state"] = _enum(job["job"].state)
        except Exception as exc:  # noqa: BLE001
            job["error"] = exc
        return job

    def _batch_poll(self, jobs: list[dict[str, Any]], poll_interval_s: float, deadline: float) -> None:
        """Poll every unfinished job once per round until all end or the deadline passes."""
        pending = [j for j in jobs if j["error"] is None and j["state"] not in BATCH_DONE]
        while pending and time.monotonic() < deadline:
            time.sleep(poll_interval_s)
            for j in pending:
                try:
                    j["job"] = self._client.batches.get(name=j["job"].name)
                    j["state"] = _enum(j["job"].state)
                except Exception as exc:  # noqa: BLE001
                    j["error"] = exc
            pending = [j for j in pending if j["error"] is None and j["state"] not in BATCH_DONE]

    def _batch_readings(self, job: dict[str, Any]) -> dict[str, Reading]:
        """The reading of each page of one finished (or failed) job."""
        todo: dict[str, PageLike] = job["todo"]
        order = list(todo)
        if job["error"] is not None:
            exc = job["error"]
            reason = reason_for_exception(exc)
            return {s: (None, self._error(todo[s], reason, f"batch: {type(exc).__name__}"), False) for s in order}
        state = job["state"]
        inl = (job["job"].dest.inlined_responses if job["job"].dest is not None else None) or []
        if state not in ("JOB_STATE_SUCCEEDED", "JOB_STATE_PARTIALLY_SUCCEEDED") or len(inl) != len(order):
            return {s: (None, self._error(todo[s], "batch_failed", f"state {state}, {len(inl)} responses"), False)
                    for s in order}
        out: dict[str, Reading] = {}
        for s, r in zip(order, inl):
            # responses need not come back in request order: the key says whose answer it is
            key = (r.metadata or {}).get("key", s) if isinstance(r.metadata, dict) else s
            page = todo.get(key, todo[s])
            if r.error is not None:
                code = int(getattr(r.error, "code", 0) or 0)
                reason = "quota" if code == 429 else "server_error" if code >= 500 else "bad_request"
                out[page.sha256] = (None, self._error(page, reason, f"batch item error {code}"), False)
            else:
                out[page.sha256] = self._read(page, r.response)
        for s in order:  # a key answered twice leaves another unanswered
            out.setdefault(s, (None, self._error(todo[s], "batch_failed", "no response for this request"), False))
        return out


#: terminal states of a batch job (google-genai maps the API's BATCH_STATE_* to JOB_STATE_*)
BATCH_DONE = frozenset({"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED",
                        "JOB_STATE_PARTIALLY_SUCCEEDED"})
