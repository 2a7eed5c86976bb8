"""Extractors: turn raw provider bytes and pages into records.

* :mod:`extractors.decode` — bytes + expected language -> text (policies ``default`` and ``paper``).
* :mod:`extractors.decode_verify` — provider error bodies and the verification of a decoded text (for the decoder).
* :mod:`extractors.archive` — the one gzip/zip reader (decoder and SubDL ZIPs), capped while streaming.
* :mod:`extractors.codepages` — evidence between code pages that both decode a file.
* :mod:`extractors.srt` — strict SRT ingestion (``parse``, ``parse_to_arrow``, ``compose``).
* :mod:`extractors.langid` — language identification helper (script pre-checks + the bundled fastText lid.176 model).
"""
