"""What a build does first: tie the processes it starts to its own life, and remove what a
killed build left behind.

* :func:`cinesub.watchdog.guard`: the Prefect ephemeral API server, the resource tracker, pool
  workers and any other process the build starts end with the build, even a ``kill -9``.
* :func:`cinesub.tmpfiles.sweep` over ``CINESUB_HOME`` (not Prefect's own ``prefect/``): the
  temporaries of atomic writers whose process is gone — a ``.tmp-release-*`` of either corpus,
  ``.tmp-latest-*``, a half-written sample world, raw-store temp files, cache temp files.
  It runs under the home lock (one build per home), and a temporary named after a live process
  is never touched.
"""

from __future__ import annotations

from pathlib import Path

from cinesub import tmpfiles
from cinesub.watchdog import guard

#: top-level folders of CINESUB_HOME the sweep leaves alone (Prefect's home)
SKIP = ("prefect",)


def begin_build(home: Path) -> list[str]:
    """Start this process's watchdog and sweep ``home``; return the removed paths (relative)."""
    guard()
    home = Path(home)
    return sorted(str(p.relative_to(home)) for p in tmpfiles.sweep(home, recursive=True, skip=SKIP))


def log_removed(removed: list[str]) -> None:
    if not removed:
        return
    try:
        from prefect import get_run_logger

        get_run_logger().info("removed %d leftovers of an interrupted build: %s", len(removed),
                              ", ".join(removed[:20]) + (" …" if len(removed) > 20 else ""))
    except Exception:  # outside a run context
        pass
