"""Facts about processes that the home lock, the temp-file sweep and the watchdog share."""

from __future__ import annotations

import os
from pathlib import Path


def start_ticks(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks since boot, /proc/<pid>/stat field 22);
    None when unknown (no /proc, or no such process). Tells a reused PID apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(stat[stat.rindex(")") + 2:].split()[19])  # 3 fields precede this slice
    except (ValueError, IndexError):
        return None


def pid_alive(pid: int) -> bool:
    """True when a process ``pid`` exists (owned by anyone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
