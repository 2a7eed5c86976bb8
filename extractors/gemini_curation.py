"""Optional Gemini-assisted pass of task-reference curation (SPEC A10; seed 000, Appendix A.7).

:class:`GeminiCurator` asks a Gemini model (through ``google-genai``) to remove material external
to the film narrative from a ``plot``/``synopsis``/``storyline`` text and to answer JSON with the
schema :class:`GeminiCleaned` (``{clean, removed[{text, reason}]}``). It is an *assist*: any failure
(HTTP error, transport error, malformed or off-schema JSON, an answer not grounded in the input, a
blocked prompt) gives ``(None, reason_code)`` and the rule-based result of
:func:`validators.curation.clean_reference` stands (:func:`assisted_clean`).

Results are cached by ``(model, field, sha256(text))`` in memory or in a dict passed in (only
successes are cached). ``base_url`` points the real client at another host (the loopback fixture
``fixtures/gemini_server.py`` in tests). The API key is never logged nor shown in ``repr``.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any, MutableMapping

from pydantic import BaseModel, Field, ValidationError

from extractors.http_client import RetryPolicy, genai_http_options, genai_policy, is_transport_error
from validators.curation import CURATED_FIELDS, STATUS_CLEANED, STATUS_EMPTIED, CurationResult, clean_reference

log = logging.getLogger(__name__)

DEFAULT_MODEL = "gemini-2.5-flash"

#: reason codes of a failed pass (``http_<status>`` besides these)
REASONS = ("empty_input", "unknown_field", "transport_error", "blocked", "no_text", "malformed_json",
           "schema_mismatch", "not_grounded", "client_error")

SYSTEM_INSTRUCTION = (
    "You curate reference texts of a film benchmark. Remove only material external to the film's "
    "narrative: production history (filming, locations, budget, premieres, release, box office), "
    "remake notes, franchise context (sequels, prequels, series position, source adaptations) and "
    "database editorial text (author credits, 'See full summary', labels, copyright lines). Keep "
    "every narrative sentence verbatim; do not paraphrase, summarise or add anything. Answer JSON: "
    "'clean' is the kept text, 'removed' lists each removed passage verbatim with a short reason."
)


class RemovedPassage(BaseModel):
    text: str = Field(description="the removed passage, verbatim from the input")
    reason: str = Field(description="why it is external to the film narrative")


class GeminiCleaned(BaseModel):
    clean: str = Field(description="the input with external material removed, otherwise verbatim")
    removed: list[RemovedPassage] = Field(default_factory=list)


def _norm(s: str) -> str:
    return " ".join(s.split())


def cache_key(model: str, field: str, text: str) -> tuple[str, str, str]:
    return (model, field, hashlib.sha256(text.encode("utf-8")).hexdigest())


def build_prompt(field: str, text: str) -> str:
    return (f"Field: {field}\nClean the reference text between the markers.\n"
            f"<<<REFERENCE\n{text}\nREFERENCE>>>")


class GeminiCurator:
    """``clean(field, text) -> (result | None, reason | None)``; ``result`` is ``{clean, removed}``
    (``removed``: ``[{text, reason}]``)."""

    def __init__(self, api_key: str, model: str = DEFAULT_MODEL, base_url: str | None = None,
                 thinking_level: str | None = None, *, cache: MutableMapping[Any, dict[str, Any]] | None = None,
                 timeout_s: float = 60.0, attempts: int = 3, retry_initial_delay_s: float = 1.0,
                 api_version: str | None = None, retry: RetryPolicy | None = None):
        if not api_key:
            raise ValueError("GeminiCurator needs an API key")
        from google import genai
        from google.genai import types

        self.model = model
        self.thinking_level = thinking_level
        self.cache: MutableMapping[Any, dict[str, Any]] = cache if cache is not None else {}
        self.calls = 0  # requests sent (cache misses), for tests and reports
        self._types = types
        self.retry = retry or genai_policy(attempts, retry_initial_delay_s, 4.0)
        http = genai_http_options(self.retry, base_url=base_url, api_version=api_version, timeout_s=timeout_s)
        self._client = genai.Client(api_key=api_key, http_options=http)

    def __repr__(self) -> str:  # never the key
        return f"GeminiCurator(model={self.model!r}, thinking_level={self.thinking_level!r}, api_key='***')"

    def _config(self) -> Any:
        t = self._types
        kwargs: dict[str, Any] = dict(
            system_instruction=SYSTEM_INSTRUCTION,
            response_mime_type="application/json",
            response_schema=GeminiCleaned,
            temperature=0.0,
        )
        if self.thinking_level:
            kwargs["thinking_config"] = t.ThinkingConfig(thinking_level=self.thinking_level)
        return t.GenerateContentConfig(**kwargs)

    def clean(self, field: str, text: str | None) -> tuple[dict[str, Any] | None, str | None]:
        if field not in CURATED_FIELDS:
            return None, "unknown_field"
        if text is None or not text.strip():
            return None, "empty_input"
        key = cache_key(self.model, field, text)
        if key in self.cache:
            return self.cache[key], None
        from google.genai import errors

        self.calls += 1
        try:
            resp = self._client.models.generate_content(model=self.model, contents=build_prompt(field, text),
                                                        config=self._config())
        except errors.APIError as exc:
            reason = f"http_{exc.code}"
            log.warning("gemini curation failed for %s: %s", field, reason)
            return None, reason
        except Exception as exc:  # httpx transport errors, timeouts, client-side validation
            reason = "transport_error" if is_transport_error(exc) else "client_error"
            log.warning("gemini curation failed for %s: %s (%s)", field, reason, type(exc).__name__)
            return None, reason
        if not resp.candidates:
            return None, "blocked"
        try:
            body = resp.text
        except Exception:  # noqa: BLE001 - a candidate without text parts
            body = None
        if not body:
            return None, "no_text"
        try:
            parsed = GeminiCleaned.model_validate_json(body)
        except ValidationError as exc:
            kinds = {e.get("type") for e in exc.errors()}
            return None, "malformed_json" if kinds & {"json_invalid", "json_type"} else "schema_mismatch"
        reason = _grounding_problem(text, parsed)
        if reason:
            return None, reason
        result = {"clean": parsed.clean.strip(), "removed": [r.model_dump() for r in parsed.removed]}
        self.cache[key] = result
        return result, None


def _grounding_problem(raw: str, parsed: GeminiCleaned) -> str | None:
    """The model may only delete: every removed passage occurs in the input and the clean text is
    the input's words in order (a subsequence of its tokens)."""
    raw_n = _norm(raw)
    for r in parsed.removed:
        if _norm(r.text) and _norm(r.text) not in raw_n:
            return "not_grounded"
    raw_tokens = raw_n.split()
    it = iter(raw_tokens)
    if not all(tok in it for tok in _norm(parsed.clean).split()):
        return "not_grounded"
    return None


def assisted_clean(field: str, text: str | None, curator: GeminiCurator | None) -> tuple[CurationResult, str | None]:
    """Rules first, then (when a curator is given) the Gemini pass over the rule-cleaned text.

    Returns the result and the Gemini reason code (``None`` when it succeeded or was not asked).
    On failure the rule-based result stands unchanged. Removed passages found by Gemini are
    located in the raw text (``span`` offsets) with ``rule: "gemini"``."""
    base = clean_reference(field, text)
    if curator is None or not base.clean:
        return base, None
    got, reason = curator.clean(field, base.clean)
    if got is None:
        return base, reason
    raw = base.raw or ""
    removed = list(base.removed)
    for r in got["removed"]:
        passage = r["text"].strip()
        start = raw.find(passage) if passage else -1
        span = [start, start + len(passage)] if start >= 0 else None
        removed.append({"span": span, "text": passage, "rule": "gemini", "category": "gemini",
                        "reason": r["reason"]})
    removed.sort(key=lambda x: x["span"][0] if x["span"] else len(raw))
    clean = got["clean"]
    status = base.status if not got["removed"] else (STATUS_CLEANED if clean else STATUS_EMPTIED)
    return CurationResult(field, base.raw, clean, removed, status, base.rules_version,
                          method=f"rules+gemini:{curator.model}"), None
