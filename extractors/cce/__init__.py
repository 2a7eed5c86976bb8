"""Catalog of Copyright Entries (CCE) extraction: OCR-text parsing and normalisation (SPEC B2).

``normalize`` turns OCR'd registration numbers, renewal numbers and ``DMonYY`` dates into
canonical values with candidates, confidences and reason codes; ``parse`` reads printed renewal
and registration entries, Archive-Watch style records and CPRS/NYPL exports.
"""
