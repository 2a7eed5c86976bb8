"""Errors raised by subtitle providers, with a machine-readable reason code.

Reason codes used so far: ``invalid_query`` (the request itself is unusable, e.g. a malformed
IMDb id), ``not_found`` (the file or directory is gone), ``unreadable`` (I/O or permission error
on a local file), ``bad_sidecar`` (a metadata sidecar that is not the expected JSON object).
Network providers add their own (``rate_limited``, ``quota_exhausted``, ``server_error``, ...);
:data:`REASON_CODES` lists every code with its meaning (``docs/providers.md`` says which are
retryable and what the acquire stage should do with each).
"""

from __future__ import annotations


class ProviderError(Exception):
    """A provider could not answer; ``reason_code`` says why, ``detail`` says where."""

    def __init__(self, reason_code: str, detail: str, *, retryable: bool = False):
        super().__init__(f"{reason_code}: {detail}")
        self.reason_code = reason_code
        self.detail = detail
        self.retryable = retryable


#: Every reason code a provider may raise, with its meaning.
REASON_CODES: dict[str, str] = {
    # local and generic
    "invalid_query": "the request itself is unusable (malformed IMDb id, language code, file id)",
    "not_found": "the file, link or directory is gone (HTTP 404/410 for network providers)",
    "unreadable": "I/O or permission error on a local file",
    "bad_sidecar": "a metadata sidecar that is not the expected JSON object",
    "too_large": "a local file above the provider's size limit (never read into memory)",
    # network providers
    "auth_failed": "API key, username/password or token refused (HTTP 401/403; for SubDL also 402 and "
                   "any 403 with a text body); not retried, the provider is off for the run",
    "rate_limited": "HTTP 429 beyond the bounded retries, or a Retry-After longer than allowed",
    "quota_exhausted": "the daily download quota is spent (OpenSubtitles: HTTP 406/407 or remaining == 0; "
                       "SubDL: an answer naming its daily limit); the detail names the reset time; no "
                       "request until it",
    "server_error": "HTTP 5xx still failing after the bounded retries",
    "timeout": "connect/read timeout still failing after the bounded retries",
    "network": "connection refused/reset still failing after the bounded retries",
    "truncated": "a body shorter than its Content-Length still failing after the bounded retries",
    "provider_body": "an HTML/Cloudflare page (or other non-JSON body) where the API returns JSON",
    "bad_response": "JSON of an unexpected shape, or an HTTP status the client does not handle",
    "provider_error": "the provider answered with an explicit error object (e.g. SubDL status:false)",
    # archives (SubDL ZIPs, extractors.providers.safezip)
    "zip_corrupt": "not a readable ZIP (bad header, CRC mismatch, encrypted member)",
    "zip_too_many": "more members than allowed",
    "zip_slip": "a member with an absolute path, a '..' component, a drive letter or a symlink",
    "zip_nested": "a member that is itself an archive (by name or magic bytes)",
    "zip_bomb": "a member or the total above the size limits, or a compression ratio above the limit",
    "zip_no_srt": "no .srt member in the archive",
    "ass_only": "an archive whose only subtitle members are .ass/.ssa (the corpus holds SRT; nothing converted)",
    # multi-part uploads (validators.multipart)
    "multi_part": "an upload of several parts (OpenSubtitles files with cd_number 1..n, a CD1/CD2 ZIP) that "
                  "is not joined: its metadata shows other languages/bonus files/a count mismatch (refused "
                  "at search, no quota spent), or a part restarts its timestamps, reads as another "
                  "language or does not parse (refused after the download); the next candidate is tried",
    "quota_insufficient": "a multi-part item needs more downloads than the quota has left today; tried "
                          "again after the reset (retryable, nothing downloaded)",
}
