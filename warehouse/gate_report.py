"""The report of the release consistency gate (validators/release_gate.py): ``gate_report.json`` (deterministic: sorted
keys and failures) and ``gate_report.html`` (rendered from warehouse/templates/gate_report.html.j2,
every value escaped)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from validators.release_gate_rules import CODES, GateFailure, sort_key
from warehouse.render import render


def write_gate_report(summary: dict, failures: list[GateFailure], out_dir: Path) -> Path:
    """Write ``gate_report.json`` (deterministic: sorted keys and failures) and a self-contained
    ``gate_report.html`` (one table per check, all text escaped) into ``out_dir``; return the JSON path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ordered = sorted(failures, key=sort_key)
    payload = {"summary": summary, "failures": [asdict(f) for f in ordered]}
    json_path = out_dir / "gate_report.json"
    json_path.write_text(json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")

    by_check: dict[str, list[GateFailure]] = {}
    for f in ordered:
        by_check.setdefault(f.check, []).append(f)
    checks = sorted(by_check, key=lambda c: list(CODES).index(c) if c in CODES else len(CODES))
    page = render("gate_report.html.j2", passed=bool(summary.get("passed")),
                  n_failures=summary.get("n_failures", 0), n_entities=summary.get("n_entities", 0),
                  counts=[(check, code, n) for check, codes in sorted((summary.get("counts") or {}).items())
                          for code, n in sorted(codes.items())],
                  by_check=[(c, by_check[c]) for c in checks])
    (out_dir / "gate_report.html").write_text(page, encoding="utf-8")
    return json_path
