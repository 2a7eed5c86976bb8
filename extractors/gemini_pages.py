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

* Configurable model, thinking level and media resolution (``types.GenerateContentConfig``).
* Retries: google-genai's own loop, configured from the HTTP client layer's
  :class:`~extractors.http_client.RetryPolicy` (``attempts``/``retry_initial_delay_s``, or ``retry``).
* Cached per ``(model, prompt_version, sha256(image))`` as one JSON file
  ``<cache_dir>/<model>/<prompt_version>/<sha256>.json`` (successes only): a rerun makes no call.
  Changing a prompt or its examples must bump the task's ``prompt_version``.
* Volume: :meth:`GeminiPageReader.extract_pages` runs sequential calls on a bounded thread pool;
  :meth:`GeminiPageReader.extract_pages_batch` submits one ``client.batches.create`` job with
  inline requests and polls ``client.batches.get`` (the live Batch API is asynchronous and half
  price; the loopback fixture answers it at once).
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
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, TypeAdapter, ValidationError

from extractors.http_client import RetryPolicy, genai_http_options, genai_policy, is_transport_error

log = logging.getLogger(__name__)

DEFAULT_MODEL = "gemini-3-pro-preview"
EXTRACTOR = "gemini"

REASONS: dict[str, str] = {
    "quota": "HTTP 429 RESOURCE_EXHAUSTED (quota or rate) after the client's bounded retries",
    "server_error": "HTTP 5xx after the client's bounded retries",
    "auth_failed": "API key refused (400 API_KEY_INVALID, 401, 403)",
    "bad_request": "another HTTP 4xx",
    "blocked": "no candidate (promptFeedback.blockReason)",
    "no_text": "a candidate without text",
    "malformed_json": "the answer is not JSON",
    "schema_mismatch": "JSON that does not fit the row schema",
    "transport_error": "connection or timeout failure",
    "client_error": "the client raised something else",
    "batch_failed": "the batch job ended in a state other than SUCCEEDED, or timed out",
}


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


def resolve_api_key(settings: Any = None) -> str | None:
    """The Gemini key: ``settings.curation.gemini_api_key`` (or its Prefect Secret block), else
    ``CINESUB_GEMINI_API_KEY``, ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY`` from the environment."""
    if settings is not None:
        from cinesub.settings import resolve_secret

        cur = getattr(settings, "curation", None)
        if cur is not None:
            key = resolve_secret(cur.gemini_api_key, cur.gemini_api_key_block, "CINESUB_GEMINI_API_KEY")
            if key:
                return key
    for var in ("CINESUB_GEMINI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        if os.environ.get(var):
            return os.environ[var]
    return None


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


class GeminiPageReader:
    """Reads page images for one :class:`PageTask`. Subclasses may override :meth:`page_error`
    to carry more provenance in their error records."""

    def __init__(self, api_key: str, task: PageTask, *, model: str = DEFAULT_MODEL, base_url: str | None = None,
                 thinking_level: str | None = None, media_resolution: str | None = None,
                 cache_dir: Path | str | None = None, max_workers: int = 4, attempts: int = 3,
                 retry_initial_delay_s: float = 1.0, timeout_s: float = 180.0, api_version: str | None = None,
                 temperature: float | None = None, retry: RetryPolicy | None = None):
        if not api_key:
            raise ValueError(f"{type(self).__name__} needs an API key")
        from google import genai
        from google.genai import types

        self.task = task
        self.model = model
        self.thinking_level = thinking_level
        self.media_resolution = media_resolution
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.max_workers = max(1, max_workers)
        self.temperature = temperature
        self.examples = load_examples(task.examples_dir, task.row_model)
        self._adapter = task.adapter
        self._types = types
        self._secret = api_key
        self.retry = retry or genai_policy(attempts, retry_initial_delay_s, 8.0)
        http = genai_http_options(self.retry, base_url=base_url, api_version=api_version, timeout_s=timeout_s)
        self._client = genai.Client(api_key=api_key, http_options=http)
        self.calls = 0
        self.cache_hits = 0

    def __repr__(self) -> str:  # never the key
        return (f"{type(self).__name__}(model={self.model!r}, prompt_version={self.task.prompt_version!r}, "
                f"thinking_level={self.thinking_level!r}, media_resolution={self.media_resolution!r}, "
                f"api_key='***')")

    # -- request -------------------------------------------------------------------------------
    def config(self) -> Any:
        t = self._types
        kwargs: dict[str, Any] = dict(system_instruction=self.task.system_instruction,
                                      response_mime_type="application/json",
                                      response_schema=list[self.task.row_model])  # type: ignore[name-defined]
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.thinking_level:
            kwargs["thinking_config"] = t.ThinkingConfig(thinking_level=self.thinking_level)
        if self.media_resolution:
            mr = self.media_resolution.upper()
            kwargs["media_resolution"] = mr if mr.startswith("MEDIA_RESOLUTION_") else f"MEDIA_RESOLUTION_{mr}"
        return t.GenerateContentConfig(**kwargs)

    def contents(self, page: PageLike) -> list[Any]:
        """The turns: each worked example (prompt + image, then its answer), then the page."""
        t = self._types
        turns: list[Any] = []
        for n, (png, answer) in enumerate(self.examples, start=1):
            turns.append(t.Content(role="user", parts=[t.Part.from_text(text=self.task.example_prompt.format(n=n)),
                                                       t.Part.from_bytes(data=png, mime_type="image/png")]))
            turns.append(t.Content(role="model", parts=[t.Part.from_text(text=answer)]))
        turns.append(t.Content(role="user", parts=[t.Part.from_text(text=self.task.page_prompt),
                                                   t.Part.from_bytes(data=page.image, mime_type=page.mime_type)]))
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
            self.cache_hits += 1
            return cached, None
        self.calls += 1
        try:
            resp = self._client.models.generate_content(model=self.model, contents=self.contents(page),
                                                        config=self.config())
        except Exception as exc:  # noqa: BLE001 - classified into a reason code
            reason = reason_for_exception(exc)
            log.warning("gemini page %s/%s failed: %s", page.item_id, page.page, reason)
            return None, self._error(page, reason, f"{type(exc).__name__}: {getattr(exc, 'message', '') or ''}")
        return self._from_response(page, resp)

    def _from_response(self, page: PageLike, resp: Any) -> Answer:
        if not getattr(resp, "candidates", None):
            return None, self._error(page, "blocked", "no candidate")
        try:
            text = resp.text
        except Exception:  # noqa: BLE001 - a candidate without text parts
            text = None
        rows, reason = parse_answer(text, self.task.row_model)
        if rows is None:
            assert reason is not None
            return None, self._error(page, reason, (text or "")[:120])
        items = [r.model_dump() for r in rows]
        self._cache_put(page.sha256, items)
        return items, None

    def extract_page(self, page: PageLike) -> tuple[list[dict[str, Any]], Any]:
        """Rows of one page, or ``([], error)``; a cached page makes no request."""
        items, err = self._answer(page)
        return ([], err) if items is None else (self.rows_for(page, items), None)

    # -- many pages ----------------------------------------------------------------------------
    def extract_pages(self, pages: Iterable[PageLike], *, errors_path: Path | str | None = None) -> ExtractionResult:
        """All pages on a bounded thread pool (``max_workers``), rows in input order; one request
        per distinct uncached image."""
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
        each polled with ``client.batches.get`` until it ends. The live API caps an inline batch
        at 20 MB, so requests are grouped into jobs of at most ``max_inline_bytes`` of image bytes
        (page + worked examples; base64 adds a third); a request over the cap goes alone. Every
        job counts as one call."""
        pages = list(pages)
        calls0, hits0 = self.calls, self.cache_hits
        answers: dict[str, Answer] = {}
        todo: dict[str, PageLike] = {}
        for p in pages:
            if p.sha256 in answers or p.sha256 in todo:
                continue
            cached = self._cache_get(p.sha256)
            if cached is not None:
                self.cache_hits += 1
                answers[p.sha256] = (cached, None)
            else:
                todo[p.sha256] = p
        examples_bytes = sum(len(png) for png, _ in self.examples)
        jobs: list[list[str]] = []
        size = 0
        for s in todo:
            need = len(todo[s].image) + examples_bytes
            if not jobs or size + need > max_inline_bytes:
                jobs.append([])
                size = 0
            jobs[-1].append(s)
            size += need
        deadline = time.monotonic() + timeout_s
        for order in jobs:
            answers.update(self._batch_job({s: todo[s] for s in order}, poll_interval_s, deadline,
                                           display_name or self.task.batch_display_name))
        return self._collect(pages, answers, calls0, hits0, errors_path)

    def _batch_job(self, todo: dict[str, PageLike], poll_interval_s: float, deadline: float,
                   display_name: str) -> dict[str, Answer]:
        """One batch job for ``todo`` (sha256 → page): the answer of each page."""
        t = self._types
        order = list(todo)
        answers: dict[str, Answer] = {}
        src = [t.InlinedRequest(model=self.model, contents=self.contents(todo[s]), config=self.config(),
                                metadata={"key": s}) for s in order]
        self.calls += 1
        try:
            job = self._client.batches.create(model=self.model, src=src,
                                              config=t.CreateBatchJobConfig(display_name=display_name))
            done = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"}
            while str(getattr(job.state, "value", job.state)) not in done and time.monotonic() < deadline:
                time.sleep(poll_interval_s)
                job = self._client.batches.get(name=job.name)
            state = str(getattr(job.state, "value", job.state))
        except Exception as exc:  # noqa: BLE001
            reason = reason_for_exception(exc)
            return {s: (None, self._error(todo[s], reason, f"batch: {type(exc).__name__}")) for s in order}
        inl = (job.dest.inlined_responses if job.dest is not None else None) or []
        if state != "JOB_STATE_SUCCEEDED" or len(inl) != len(order):
            return {s: (None, self._error(todo[s], "batch_failed", f"state {state}, {len(inl)} responses"))
                    for s in order}
        for s, r in zip(order, inl):
            key = (r.metadata or {}).get("key", s) if isinstance(r.metadata, dict) else s
            page = todo.get(key, todo[s])
            if r.error is not None:
                code = int(getattr(r.error, "code", 0) or 0)
                reason = "quota" if code == 429 else "server_error" if code >= 500 else "bad_request"
                answers[page.sha256] = (None, self._error(page, reason, f"batch item error {code}"))
            else:
                answers[page.sha256] = self._from_response(page, r.response)
        return answers
