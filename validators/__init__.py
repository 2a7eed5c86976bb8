"""Verification and sanitization of parsed subtitle tracks (SPEC A5, A6).

Modules (all pure functions over polars frames of entries; no I/O except
:mod:`validators.sanitize` reading its own versioned pattern file):

- :mod:`validators.checks` -- the structure layer ``index_duplicate`` (an SRT index that repeats),
  timing layers (chronology, block lifespan, delayed onset, runtime
  coverage, macro-intervals) and the language-consistency layer, one :class:`~cinesub.records.Flag`
  per layer per track.
- :mod:`validators.language` -- deterministic, chunked language identification with script-based
  disambiguation (Arabic/Persian, Indonesian/Malay, Vietnamese, Romanian).
- :mod:`validators.duration_audit` -- the duration-coverage audit against the English track.
- :mod:`validators.sanitize` -- removal of distribution artifacts and e-mail redaction, with an
  audit log and a residual scan.
"""
