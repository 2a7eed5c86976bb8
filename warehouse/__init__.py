"""Versioned releases: write, manifest, diff, withdraw."""
