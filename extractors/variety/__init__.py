"""Variety box office (SPEC B1): page filter, offline OCR-text extractor, city normalisation."""
