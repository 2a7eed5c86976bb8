"""Errors raised by subtitle providers, with a machine-readable reason code.

Reason codes used so far: ``invalid_query`` (the request itself is unusable, e.g. a malformed
IMDb id), ``not_found`` (the file or directory is gone), ``unreadable`` (I/O or permission error
on a local file), ``bad_sidecar`` (a metadata sidecar that is not the expected JSON object).
Network providers add their own (``rate_limited``, ``quota_exhausted``, ``server_error``, ...).
"""

from __future__ import annotations


class ProviderError(Exception):
    """A provider could not answer; ``reason_code`` says why, ``detail`` says where."""

    def __init__(self, reason_code: str, detail: str, *, retryable: bool = False):
        super().__init__(f"{reason_code}: {detail}")
        self.reason_code = reason_code
        self.detail = detail
        self.retryable = retryable
