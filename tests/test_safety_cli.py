"""``cinesub safety scan PATH.srt [--json]`` (SPEC A9) on files written to tmp_path: decode +
strict parse, the four categories with exact counts and indices, exit 1 on a rejected file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cinesub.cli_safety import scan_file
from validators.safety import CATEGORIES

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "cinesub.cli", "safety", "scan"]


def _srt(texts: list[str], first: int = 1) -> str:
    blocks = []
    for k, text in enumerate(texts):
        s = 2 * k + 1
        blocks.append(f"{first + k}\n00:00:{s:02d},000 --> 00:00:{s + 1:02d},000\n{text}\n")
    return "\n".join(blocks)


# Entries numbered from 101 so indices cannot be confused with positions.
TRACK = [
    "Where are you going?",                               # 101 nothing
    "What the fuck? Fucking hell.",                       # 102 strong x2
    "<i>You motherfucker.</i>",                           # 103 strong x1 (markup stripped)
    "Pass the chicken breast, please.",                   # 104 excluded (food)
    "It sank to the bottom of the lake.",                 # 105 excluded (spatial)
    "Dick Morgan is waiting outside.",                    # 106 excluded (personal name)
    "[SHOUTS] Damn it!\nThis is shit.",                   # 107 mild x1, crude x1
    "Oh my God!",                                         # 108 religious x1
    "We pray to God every Sunday morning.",               # 109 excluded (ordinary religious dialogue)
    "GUNSHOT",                                            # 110 stage direction
    "(fuck) Just go.",                                    # 111 bracketed direction: nothing
    "Move your ass, you're fuckin' late.",                # 112 crude x1, strong x1 (apostrophe form)
]
EXPECTED = {
    "strongProfanity": {"occurrenceCount": 4, "evidenceLineCount": 3, "evidenceSubtitleIndices": [102, 103, 112]},
    "crudeBodilyLanguage": {"occurrenceCount": 2, "evidenceLineCount": 2, "evidenceSubtitleIndices": [107, 112]},
    "mildObscenity": {"occurrenceCount": 1, "evidenceLineCount": 1, "evidenceSubtitleIndices": [107]},
    "religiousProfanityAndExclamation": {"occurrenceCount": 1, "evidenceLineCount": 1,
                                         "evidenceSubtitleIndices": [108]},
}


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(CLI + list(args), cwd=REPO, capture_output=True, text=True, timeout=120)


@pytest.fixture()
def track(tmp_path: Path) -> Path:
    path = tmp_path / "film.en.srt"
    path.write_text(_srt(TRACK, first=101), encoding="utf-8")
    return path


def test_scan_json_counts_and_indices_exact(track: Path):
    proc = _run(str(track), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["status"] == "ok"
    assert out["entries"] == len(TRACK)
    assert list(out["categories"]) == list(CATEGORIES)
    assert out["categories"] == EXPECTED


def test_scan_text_output_lists_the_four_categories(track: Path):
    proc = _run(str(track))
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.split(":", 1)[0] in CATEGORIES]
    assert [line.split(":", 1)[0] for line in lines] == list(CATEGORIES)
    assert lines[0] == ("strongProfanity: occurrenceCount 4, evidenceLineCount 3, "
                        "evidenceSubtitleIndices [102, 103, 112]")
    assert lines[2] == "mildObscenity: occurrenceCount 1, evidenceLineCount 1, evidenceSubtitleIndices [107]"
    assert lines[3] == ("religiousProfanityAndExclamation: occurrenceCount 1, evidenceLineCount 1, "
                        "evidenceSubtitleIndices [108]")


def test_scan_decodes_legacy_and_utf16_files(tmp_path: Path):
    # curly apostrophe in cp1252 (0x92), CRLF line ends; the same track as UTF-16 with a BOM
    texts = ["Hello there, my friend, how are you today?", "You\u2019re fuckin\u2019 kidding me.",
             "Holy shit, that hurt a lot more than I thought."]
    cp = tmp_path / "cp1252.srt"
    cp.write_bytes(_srt(texts).replace("\n", "\r\n").encode("cp1252"))
    u16 = tmp_path / "utf16.srt"
    u16.write_bytes(b"\xff\xfe" + _srt(texts).encode("utf-16-le"))
    for path in (cp, u16):
        report, code = scan_file(path)
        assert code == 0 and report["status"] != "rejected", report
        cats = report["categories"]
        assert cats["strongProfanity"] == {"occurrenceCount": 1, "evidenceLineCount": 1,
                                           "evidenceSubtitleIndices": [2]}, path.name
        assert cats["crudeBodilyLanguage"]["evidenceSubtitleIndices"] == [3], path.name
        assert cats["mildObscenity"]["occurrenceCount"] == 0


def test_clean_file_has_zero_counts(tmp_path: Path):
    path = tmp_path / "clean.srt"
    path.write_text(_srt(["Good morning.", "The bottom of the drawer.", "Chicken breast for dinner."]),
                    encoding="utf-8")
    report, code = scan_file(path)
    assert code == 0
    assert all(c == {"occurrenceCount": 0, "evidenceLineCount": 0, "evidenceSubtitleIndices": []}
               for c in report["categories"].values())


def test_rejected_file_exits_1(tmp_path: Path):
    path = tmp_path / "broken.srt"
    path.write_text("1\n00:00:01,000 -> garbage\nWhat the fuck?\n\n2\nxx\n", encoding="utf-8")
    proc = _run(str(path), "--json")
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert out["status"] == "rejected" and out["categories"] is None
    assert out["errors"] and out["errors"][0]["layer"] == "timestamp_syntax"
    assert "rejected" in proc.stderr
    proc = _run(str(path))
    assert proc.returncode == 1
    assert "strongProfanity" not in proc.stdout


def test_undecodable_file_exits_1(tmp_path: Path):
    path = tmp_path / "binary.srt"
    path.write_bytes(bytes(range(256)) * 40)
    report, code = scan_file(path)
    assert code == 1 and report["status"] == "rejected" and report["categories"] is None
    assert _run(str(path)).returncode == 1


def test_missing_file_is_a_usage_error(tmp_path: Path):
    proc = _run(str(tmp_path / "nope.srt"))
    assert proc.returncode == 2
