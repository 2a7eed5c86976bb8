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
- :mod:`validators.candidate` -- the one processing path of a subtitle candidate (decode, strict
  parse, the layers above, sanitization), run by the ``process`` stage and ``cinesub inspect``.
- :mod:`validators.inspect_report` -- the JSON report of ``cinesub inspect`` over that path.
- :mod:`validators.coverage_optimizer` -- the exact complete-coverage optimum per K (SPEC A7).
- :mod:`validators.boxoffice_ranking` -- Variety tuples → weekly totals → yearly top 100 (SPEC B1).
- :mod:`validators.extraction_metrics` -- box-office extraction accuracy against gold pages.
"""
