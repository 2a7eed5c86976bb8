"""The stages of the ``build-hollywood`` flow (declared in flows/hollywood.py, in order)."""
