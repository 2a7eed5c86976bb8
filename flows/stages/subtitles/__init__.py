"""The stages of the ``build-cinesub`` flow (declared in flows/build.py, in order)."""
