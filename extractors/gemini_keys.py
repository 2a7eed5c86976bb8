"""Where the Gemini key comes from (never logged, never in a job's parameters in clear): the
settings (``curation.gemini_api_key`` or its Prefect Secret block), else the environment
(``CINESUB_GEMINI_API_KEY``, ``GEMINI_API_KEY``, ``GOOGLE_API_KEY``). Used by the coordinator
(:func:`resolve_api_key`) and by item-job workers (:class:`GeminiKeyRef`, resolved there)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class GeminiKeyRef:
    """Where an item job's worker finds the Gemini key, so that the key itself never travels in
    a job or a task's parameters in clear: a Prefect Secret block name (resolved in the worker),
    the environment variables, or a key set in the settings (``SecretStr``: masked in every repr
    and log line). :meth:`resolve` gives the plain key to the client only."""

    inline: Any = field(default=None, repr=False)  # SecretStr | None
    block: str | None = None

    def resolve(self) -> str | None:
        from cinesub.settings import resolve_secret

        key = resolve_secret(self.inline, self.block, "CINESUB_GEMINI_API_KEY")
        if key:
            return key
        for var in ("CINESUB_GEMINI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
            if os.environ.get(var):
                return os.environ[var]
        return None


def resolve_api_key(settings: Any = None) -> str | None:
    """The Gemini key: ``settings.curation.gemini_api_key`` (or its Prefect Secret block), else
    ``CINESUB_GEMINI_API_KEY``, ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY`` from the environment."""
    cur = getattr(settings, "curation", None) if settings is not None else None
    if cur is None:
        return GeminiKeyRef().resolve()
    return GeminiKeyRef(cur.gemini_api_key, cur.gemini_api_key_block).resolve()
