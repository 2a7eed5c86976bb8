"""Parsers for the metadata sources of SPEC A1: Kids-in-Mind and Common Sense Media review pages,
IMDb non-commercial datasets and IMDb title pages. Pure functions: text in, records out."""
