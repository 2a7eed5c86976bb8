"""cinesub: builds, audits and publishes research corpora about films."""

__version__ = "0.1.0"
