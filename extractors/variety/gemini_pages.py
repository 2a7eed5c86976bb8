"""Gemini page extractor for Variety grosses pages (SPEC B1; seed 003, Appendix B).

A multimodal model (Gemini through ``google-genai``) reads one page image and answers a JSON list
of box-office tuples ``{theater, city, movie, week, gross, conf}`` (schema :class:`GrossTuple`,
sent as the response schema). The prompt is ours: a system instruction with the rules SPEC B1
lists, then two worked examples (page image → JSON, the files under ``data/examples`` written by
:func:`cinesub.sample.variety.write_gemini_examples`), then the page.

* Configurable model, thinking level and media resolution (``types.GenerateContentConfig``).
* Cached per ``(model, PROMPT_VERSION, sha256(image))`` as one JSON file
  ``<cache_dir>/<model>/<PROMPT_VERSION>/<sha256>.json`` (successes only): a rerun makes no call.
  Changing the prompt or the examples must bump :data:`PROMPT_VERSION`.
* Volume: :meth:`GeminiPageExtractor.extract_pages` runs sequential calls on a bounded thread
  pool; :meth:`GeminiPageExtractor.extract_pages_batch` submits one ``client.batches.create`` job
  with inline requests and polls ``client.batches.get`` (the live Batch API is asynchronous —
  hours — and half price; the loopback fixture answers it at once).
* Failures never vanish: every page that fails gets a :class:`PageError` with a reason code
  (:data:`REASONS`): ``quota`` (HTTP 429 RESOURCE_EXHAUSTED after the client's bounded retries),
  ``server_error`` (5xx), ``auth_failed``, ``bad_request``, ``malformed_json``,
  ``schema_mismatch``, ``blocked``, ``no_text``, ``transport_error``, ``client_error``; errors are
  returned and, when ``errors_path`` is given, appended to a JSONL file. Failed pages are retried
  on the next run (not cached).
* The API key comes from the caller, the settings or the environment (:func:`resolve_api_key`);
  it is never logged, never in ``repr``, and scrubbed from every error detail.

Output rows have the shared tuple shape :data:`ROW_FIELDS` (``extractor = "gemini"``), ``page``
being the 0-based IA leaf index.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

log = logging.getLogger(__name__)

DEFAULT_MODEL = "gemini-3-pro-preview"
PROMPT_VERSION = "variety-pages-v1"
EXAMPLES_DIR = Path(__file__).resolve().parent / "data" / "examples"
EXTRACTOR = "gemini"

ROW_FIELDS: tuple[str, ...] = ("issue_date", "item_id", "page", "extractor", "model", "theater", "city", "movie",
                               "week", "gross", "confidence")

REASONS: dict[str, str] = {
    "quota": "HTTP 429 RESOURCE_EXHAUSTED (quota or rate) after the client's bounded retries",
    "server_error": "HTTP 5xx after the client's bounded retries",
    "auth_failed": "API key refused (400 API_KEY_INVALID, 401, 403)",
    "bad_request": "another HTTP 4xx",
    "blocked": "no candidate (promptFeedback.blockReason)",
    "no_text": "a candidate without text",
    "malformed_json": "the answer is not JSON",
    "schema_mismatch": "JSON that does not fit the tuple schema",
    "transport_error": "connection or timeout failure",
    "client_error": "the client raised something else",
    "batch_failed": "the batch job ended in a state other than SUCCEEDED, or timed out",
}

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
class PageRef:
    """One page to extract: provenance plus the image bytes (PNG/JPEG/WEBP)."""

    item_id: str
    issue_date: str
    page: int
    image: bytes = field(repr=False)
    mime_type: str = "image/png"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.image).hexdigest()


@dataclass(frozen=True)
class PageError:
    item_id: str
    issue_date: str
    page: int
    image_sha256: str
    model: str
    reason: str
    detail: str


@dataclass
class ExtractionResult:
    rows: list[dict[str, Any]]
    errors: list[PageError]
    calls: int = 0
    cache_hits: int = 0


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


def load_examples(examples_dir: Path = EXAMPLES_DIR) -> list[tuple[bytes, str]]:
    """``[(png bytes, answer JSON text)]`` of the worked examples, in name order."""
    out = []
    for png in sorted(Path(examples_dir).glob("example*.png")):
        answer = json.loads(png.with_suffix(".json").read_text(encoding="utf-8"))
        _TUPLES.validate_python(answer)  # the examples must fit the schema they teach
        out.append((png.read_bytes(), json.dumps(answer, ensure_ascii=False)))
    if len(out) < 2:
        raise FileNotFoundError(f"two worked examples expected under {examples_dir}")
    return out


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
    if not text:
        return None, "no_text"
    try:
        data = json.loads(text)
    except ValueError:
        return None, "malformed_json"
    try:
        return _TUPLES.validate_python(data), None
    except ValidationError:
        return None, "schema_mismatch"


class GeminiPageExtractor:
    def __init__(self, api_key: str, *, model: str = DEFAULT_MODEL, base_url: str | None = None,
                 thinking_level: str | None = None, media_resolution: str | None = None,
                 cache_dir: Path | str | None = None, max_workers: int = 4, attempts: int = 3,
                 retry_initial_delay_s: float = 1.0, timeout_s: float = 180.0, api_version: str | None = None,
                 examples_dir: Path = EXAMPLES_DIR, temperature: float | None = None):
        if not api_key:
            raise ValueError("GeminiPageExtractor needs an API key")
        from google import genai
        from google.genai import types

        self.model = model
        self.thinking_level = thinking_level
        self.media_resolution = media_resolution
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.max_workers = max(1, max_workers)
        self.temperature = temperature
        self.examples = load_examples(examples_dir)
        self._types = types
        self._secret = api_key
        http = types.HttpOptions(
            base_url=base_url, api_version=api_version, timeout=int(timeout_s * 1000),
            retry_options=types.HttpRetryOptions(
                attempts=max(1, attempts), initial_delay=retry_initial_delay_s,
                max_delay=max(retry_initial_delay_s, 8.0), exp_base=2.0, jitter=0.0,
                http_status_codes=[408, 429, 500, 502, 503, 504]))
        self._client = genai.Client(api_key=api_key, http_options=http)
        self.calls = 0
        self.cache_hits = 0

    def __repr__(self) -> str:  # never the key
        return (f"GeminiPageExtractor(model={self.model!r}, thinking_level={self.thinking_level!r}, "
                f"media_resolution={self.media_resolution!r}, api_key='***')")

    # -- request -------------------------------------------------------------------------------
    def config(self) -> Any:
        t = self._types
        kwargs: dict[str, Any] = dict(system_instruction=SYSTEM_INSTRUCTION, response_mime_type="application/json",
                                      response_schema=list[GrossTuple])
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.thinking_level:
            kwargs["thinking_config"] = t.ThinkingConfig(thinking_level=self.thinking_level)
        if self.media_resolution:
            mr = self.media_resolution.upper()
            kwargs["media_resolution"] = mr if mr.startswith("MEDIA_RESOLUTION_") else f"MEDIA_RESOLUTION_{mr}"
        return t.GenerateContentConfig(**kwargs)

    def contents(self, page: PageRef) -> list[Any]:
        t = self._types
        turns: list[Any] = []
        for n, (png, answer) in enumerate(self.examples, start=1):
            turns.append(t.Content(role="user", parts=[t.Part.from_text(text=EXAMPLE_PROMPT.format(n=n)),
                                                       t.Part.from_bytes(data=png, mime_type="image/png")]))
            turns.append(t.Content(role="model", parts=[t.Part.from_text(text=answer)]))
        turns.append(t.Content(role="user", parts=[t.Part.from_text(text=PAGE_PROMPT),
                                                   t.Part.from_bytes(data=page.image, mime_type=page.mime_type)]))
        return turns

    # -- cache ---------------------------------------------------------------------------------
    def cache_path(self, image_sha256: str) -> Path | None:
        if self.cache_dir is None:
            return None
        safe_model = self.model.replace("/", "_")
        return self.cache_dir / safe_model / PROMPT_VERSION / f"{image_sha256}.json"

    def _cache_get(self, sha: str) -> list[dict[str, Any]] | None:
        p = self.cache_path(sha)
        if p is None or not p.exists():
            return None
        try:
            return [t.model_dump() for t in _TUPLES.validate_json(p.read_bytes())]
        except ValidationError:
            return None  # a damaged cache entry is a miss

    def _cache_put(self, sha: str, tuples: list[GrossTuple]) -> None:
        p = self.cache_path(sha)
        if p is None:
            return
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump([t.model_dump() for t in tuples], fh, ensure_ascii=False)
        os.replace(tmp, p)

    # -- errors --------------------------------------------------------------------------------
    def _scrub(self, s: str) -> str:
        return s.replace(self._secret, "***") if self._secret else s

    def _error(self, page: PageRef, reason: str, detail: str) -> PageError:
        return PageError(page.item_id, page.issue_date, page.page, page.sha256, self.model, reason,
                         self._scrub(detail)[:300])

    @staticmethod
    def reason_for_exception(exc: BaseException) -> str:
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
        from extractors.gemini_curation import _is_transport_error

        return "transport_error" if _is_transport_error(exc) else "client_error"

    # -- one page ------------------------------------------------------------------------------
    def extract_page(self, page: PageRef) -> tuple[list[dict[str, Any]], PageError | None]:
        """Rows of one page, or ``([], error)``; a cached page makes no request."""
        cached = self._cache_get(page.sha256)
        if cached is not None:
            self.cache_hits += 1
            return rows_for(page, self.model, cached), None
        self.calls += 1
        try:
            resp = self._client.models.generate_content(model=self.model, contents=self.contents(page),
                                                        config=self.config())
        except Exception as exc:  # noqa: BLE001 - classified into a reason code
            reason = self.reason_for_exception(exc)
            log.warning("gemini page %s/%s failed: %s", page.item_id, page.page, reason)
            return [], self._error(page, reason, f"{type(exc).__name__}: {getattr(exc, 'message', '') or ''}")
        return self._from_response(page, resp)

    def _from_response(self, page: PageRef, resp: Any) -> tuple[list[dict[str, Any]], PageError | None]:
        if not getattr(resp, "candidates", None):
            return [], self._error(page, "blocked", "no candidate")
        try:
            text = resp.text
        except Exception:  # noqa: BLE001 - a candidate without text parts
            text = None
        tuples, reason = parse_answer(text)
        if tuples is None:
            assert reason is not None
            return [], self._error(page, reason, (text or "")[:120])
        self._cache_put(page.sha256, tuples)
        return rows_for(page, self.model, tuples), None

    # -- many pages ----------------------------------------------------------------------------
    def extract_pages(self, pages: Iterable[PageRef], *, errors_path: Path | str | None = None) -> ExtractionResult:
        """All pages on a bounded thread pool (``max_workers``), rows in input order; one request
        per distinct uncached image."""
        pages = list(pages)
        calls0, hits0 = self.calls, self.cache_hits
        uniq: dict[str, PageRef] = {}
        for p in pages:
            uniq.setdefault(p.sha256, p)
        with ThreadPoolExecutor(max_workers=self.max_workers) as pool:
            answers = dict(zip(uniq, pool.map(self.extract_page, uniq.values())))
        return self._collect(pages, answers, calls0, hits0, errors_path)

    def _collect(self, pages: list[PageRef], answers: dict[str, tuple[list[dict[str, Any]], PageError | None]],
                 calls0: int, hits0: int, errors_path: Path | str | None) -> ExtractionResult:
        rows: list[dict[str, Any]] = []
        errors: list[PageError] = []
        for p in pages:
            got, err = answers[p.sha256]
            if err is not None:
                errors.append(PageError(p.item_id, p.issue_date, p.page, err.image_sha256, err.model, err.reason,
                                        err.detail))
            else:
                rows += [{**r, "item_id": p.item_id, "issue_date": p.issue_date, "page": p.page} for r in got]
        if errors and errors_path is not None:
            path = Path(errors_path)
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as fh:
                for e in errors:
                    fh.write(json.dumps(asdict(e), ensure_ascii=False) + "\n")
        return ExtractionResult(rows, errors, self.calls - calls0, self.cache_hits - hits0)

    def extract_pages_batch(self, pages: Iterable[PageRef], *, poll_interval_s: float = 30.0,
                            timeout_s: float = 24 * 3600.0, errors_path: Path | str | None = None,
                            display_name: str = "cinesub-variety-pages") -> ExtractionResult:
        """One Batch API job (``client.batches.create`` with inline requests) for the uncached
        pages; polls ``client.batches.get`` until it ends. Inline requests suit modest volumes
        (the live API caps an inline batch at 20 MB); larger runs should be split by item."""
        t = self._types
        pages = list(pages)
        calls0, hits0 = self.calls, self.cache_hits
        answers: dict[str, tuple[list[dict[str, Any]], PageError | None]] = {}
        todo: dict[str, PageRef] = {}
        for p in pages:
            if p.sha256 in answers or p.sha256 in todo:
                continue
            cached = self._cache_get(p.sha256)
            if cached is not None:
                self.cache_hits += 1
                answers[p.sha256] = (rows_for(p, self.model, cached), None)
            else:
                todo[p.sha256] = p
        if todo:
            order = list(todo)
            src = [t.InlinedRequest(model=self.model, contents=self.contents(todo[s]), config=self.config(),
                                    metadata={"key": s}) for s in order]
            self.calls += 1
            try:
                job = self._client.batches.create(model=self.model, src=src,
                                                  config=t.CreateBatchJobConfig(display_name=display_name))
                deadline = time.monotonic() + timeout_s
                done = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"}
                while str(getattr(job.state, "value", job.state)) not in done and time.monotonic() < deadline:
                    time.sleep(poll_interval_s)
                    job = self._client.batches.get(name=job.name)
                state = str(getattr(job.state, "value", job.state))
            except Exception as exc:  # noqa: BLE001
                reason = self.reason_for_exception(exc)
                for s in order:
                    answers[s] = ([], self._error(todo[s], reason, f"batch: {type(exc).__name__}"))
                return self._collect(pages, answers, calls0, hits0, errors_path)
            inl = (job.dest.inlined_responses if job.dest is not None else None) or []
            if state != "JOB_STATE_SUCCEEDED" or len(inl) != len(order):
                for s in order:
                    answers[s] = ([], self._error(todo[s], "batch_failed", f"state {state}, {len(inl)} responses"))
            else:
                for s, r in zip(order, inl):
                    key = (r.metadata or {}).get("key", s) if isinstance(r.metadata, dict) else s
                    page = todo.get(key, todo[s])
                    if r.error is not None:
                        code = int(getattr(r.error, "code", 0) or 0)
                        reason = "quota" if code == 429 else "server_error" if code >= 500 else "bad_request"
                        answers[page.sha256] = ([], self._error(page, reason, f"batch item error {code}"))
                    else:
                        answers[page.sha256] = self._from_response(page, r.response)
        return self._collect(pages, answers, calls0, hits0, errors_path)


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
