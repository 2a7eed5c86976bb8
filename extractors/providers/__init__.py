"""Subtitle providers: search candidates for a film and language, download raw bytes."""
