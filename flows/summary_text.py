"""The build summary as the CLI prints it (apart from flows/build.py, which imports Prefect:
the "nothing changed" fast path prints it without starting Prefect)."""

from __future__ import annotations

from typing import Any


def format_summary(s: dict[str, Any]) -> str:
    rel = s["release"]
    lines = [
        f"release {rel['version']} at {rel['path']}"
        + (" (new, " + str(rel["change"]) + ")" if rel["new"] else " (unchanged: data identical, no new version)"),
        f"films {s['films']}  tracks {s['tracks']}  entries {s['entries']}",
        "flags by layer: " + (", ".join(f"{k} {v}" for k, v in s["flags_by_layer"].items()) or "none"),
        "funnel: " + " → ".join(f"{g['gate']} {g['kept']}" for g in s["funnel"]),
    ]
    rep = s.get("report")
    if rep:
        lines.append(f"flagged-track report: {rep['path']} ({rep['flagged_tracks']} flagged, "
                     f"{rep['rejected_tracks']} rejected tracks)")
    w = s["work"]
    lines.append(
        f"work: {w['downloaded']} downloaded, {w['reused_raw_bytes']} reused from the raw store, "
        f"{w['tracks_processed']} tracks processed in {w['rounds']} rounds "
        f"({w['tracks_in_state'] - w['tracks_processed']} processed tracks and "
        f"{w['raw_files_in_store'] - w['downloaded']} raw files reused from earlier builds); "
        f"stages reused: {', '.join(w['reused_stages']) or 'none'}"
    )
    if w.get("refused_at_search"):
        lines.append(f"refused at search: {w['refused_at_search']} provider entries, each with its reason "
                     "(state table attempts, outcome search_rejected)")
    return "\n".join(lines)
