"""``cinesub inspect`` (issue 3): the real command on files written here -- the JSON contract,
exit codes, ``--dump-entries``, runtime and English-audit options, sanitization actions --
agreement with the pipeline's ``process_bytes``, and every real file of ../shared/realdata."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

CONTRACT = {"encoding", "decoder", "status", "entries", "repairs", "errors", "flags", "sanitization"}

AR = [
    "مرحباً، كيف حالك اليوم يا صديقي؟", "أنا بخير، شكراً لسؤالك.", "هل رأيت السيارة الحمراء في الشارع؟",
    "لا، لم أرها. أين كانت؟", "كانت بجانب المدرسة القديمة.", "يجب أن نذهب الآن قبل أن يتأخر الوقت.",
    "انتظرني عند الباب، سأعود بعد قليل.", "لماذا لا تخبرني بالحقيقة؟", "لأنني لا أريد أن أخيفك.",
    "سنتحدث عن هذا غداً في الصباح.", "الجو بارد جداً هذه الليلة.", "أين وضعت المفاتيح؟",
]
EN = [
    "Where were you last night?", "I was at home, reading a book by the fire.",
    "Nobody saw you there, and your car was gone.", "I lent it to my brother for the weekend.",
    "Your brother has been in prison for two years.", "Then somebody must have stolen it.",
    "Why didn't you call the police?", "Because I didn't know it was missing.",
    "You expect me to believe that story?", "I expect you to find the person who took it.",
    "We will talk again tomorrow morning.", "Don't leave the city until we do.",
    "Is that a threat, detective?", "It is a friendly piece of advice.",
    "I have told you everything I know.", "Then you have nothing to worry about.",
    "My lawyer will hear about this.", "Tell him to bring a good coat, it's cold downtown.",
    "Are we done here?", "For now, yes. You can go.",
]


def ts(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d},000"


def srt_text(lines: list[str], start_s: int = 1, step_s: int = 4, eol: str = "\n") -> str:
    blocks = [f"{i}{eol}{ts(start_s + (i - 1) * step_s)} --> {ts(start_s + (i - 1) * step_s + 2)}{eol}{t}"
              for i, t in enumerate(lines, 1)]
    return (eol * 2).join(blocks) + eol


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CINESUB_")}
    return subprocess.run([sys.executable, "-m", "cinesub.cli", "inspect", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=180)


def inspect_json(path: Path, *args: str, code: int = 0) -> dict:
    p = cli(str(path), "--json", *args)
    assert p.returncode == code, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    report = json.loads(p.stdout)
    assert CONTRACT <= set(report)
    return report


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# --------------------------------------------------------------------------------------------
# clean files: UTF-8 and cp1256, dump-entries
# --------------------------------------------------------------------------------------------
def test_clean_utf8_file_ok_with_dump_entries(tmp_path):
    lines = list(AR)
    lines[3] = "<i>لا، لم أرها.</i>\nأين كانت؟"  # tags kept, two-line payload
    path = write(tmp_path, "ar.srt", srt_text(lines).encode("utf-8"))
    dump = tmp_path / "entries.jsonl"
    r = inspect_json(path, "--language", "ar", "--dump-entries", str(dump))
    assert (r["encoding"], r["decoder"], r["status"], r["entries"]) == ("utf-8", "utf-8", "ok", 12)
    assert r["repairs"] == [] and r["errors"] == [] and r["flags"] == [] and r["layers"] == []
    assert r["checks"]["evaluated"] == ["index_duplicate", "chronology", "block_lifespan", "delayed_onset", "macro_interval",
                                        "language_mismatch"]  # no runtime: no runtime_coverage
    assert r["sanitization"]["actions"] == [] and r["sanitization"]["removed"] == 0
    assert r["dumped_entries"] == 12 and "audit" not in r
    rows = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 12
    assert rows[0] == {"index": 1, "timeframe": "00:00:01,000 --> 00:00:03,000", "start_ms": 1000,
                       "end_ms": 3000, "content": AR[0]}
    assert rows[3]["content"] == "<i>لا، لم أرها.</i>\nأين كانت؟"
    assert rows[11] == {"index": 12, "timeframe": "00:00:45,000 --> 00:00:47,000", "start_ms": 45000,
                        "end_ms": 47000, "content": AR[11]}


def test_cp1256_crlf_file_decoded_by_candidate(tmp_path):
    text = srt_text(AR, eol="\r\n")
    path = write(tmp_path, "ar_cp1256.srt", text.encode("cp1256"))
    dump = tmp_path / "e.jsonl"
    r = inspect_json(path, "--language", "ar", "--dump-entries", str(dump))
    assert (r["encoding"], r["decoder"], r["status"], r["entries"]) == ("cp1256", "candidate:cp1256", "ok", 12)
    assert r["bytes"] == len(text.encode("cp1256"))
    assert [json.loads(x)["content"] for x in dump.read_text(encoding="utf-8").splitlines()] == AR


def test_repaired_ms_separator_is_reported_and_accepted(tmp_path):
    text = srt_text(EN[:8]).replace("00:00:05,000 --> 00:00:07,000", "00:00:05.000 --> 00:00:07,000")
    r = inspect_json(write(tmp_path, "en.srt", text.encode()), "--language", "en")
    assert r["status"] == "ok" and r["entries"] == 8
    assert r["repairs"] == [{"line": 6, "before": "00:00:05.000 --> 00:00:07,000",
                             "after": "00:00:05,000 --> 00:00:07,000", "kind": "ms_separator"}]


# --------------------------------------------------------------------------------------------
# rejected: error page, malformed timestamp, paper policy's silent mis-decode
# --------------------------------------------------------------------------------------------
def test_error_page_rejected_exit_1(tmp_path):
    page = b"<!DOCTYPE html><html><head><title>Attention Required! | Cloudflare</title></head><body></body></html>"
    dump = tmp_path / "e.jsonl"
    r = inspect_json(write(tmp_path, "x.srt", page), "--language", "fa", "--dump-entries", str(dump), code=1)
    assert (r["status"], r["encoding"], r["entries"]) == ("rejected", None, 0)
    assert [(f["layer"], f["severity"]) for f in r["flags"]] == [("provider_body", "stop")]
    assert r["sanitization"] is None and r["checks"]["evaluated"] == []
    assert dump.read_text() == ""


def test_malformed_timestamp_rejected_with_line_and_text(tmp_path):
    text = srt_text(EN[:5]).replace("00:00:09,000 --> 00:00:11,000", "00:00:09,00 --> 00:00:11,000")
    dump = tmp_path / "e.jsonl"
    r = inspect_json(write(tmp_path, "bad.srt", text.encode()), "--language", "en", "--dump-entries", str(dump),
                     code=1)
    assert r["status"] == "rejected" and r["entries"] == 2  # the blocks before the stop
    assert r["errors"] == [{"line": 10, "text": "00:00:09,00 --> 00:00:11,000", "layer": "timestamp_syntax",
                            "detail": "header does not match HH:MM:SS,mmm --> HH:MM:SS,mmm"}]
    flag = r["flags"][0]
    assert (flag["layer"], flag["severity"], flag["evidence"]["line"]) == ("timestamp_syntax", "stop", 10)
    assert "00:00:09,00 --> 00:00:11,000" in flag["detail"]
    assert [json.loads(x)["index"] for x in dump.read_text().splitlines()] == [1, 2]
    assert r["sanitization"] is None


def test_missing_blank_line_is_a_structure_stop(tmp_path):
    text = srt_text(EN[:4]).replace(f"{EN[1]}\n\n3", f"{EN[1]}\n3")
    r = inspect_json(write(tmp_path, "s.srt", text.encode()), "--language", "en", code=1)
    # "3" continues block 2's payload; its header is the line the grammar stops at
    assert r["errors"][0]["layer"] == "structure" and r["errors"][0]["line"] == 9
    assert r["errors"][0]["text"] == "00:00:09,000 --> 00:00:11,000" and r["entries"] == 1
    assert r["layers"] == ["structure"]


def test_paper_policy_reproduces_the_silent_utf16_misdecode(tmp_path):
    text = srt_text(["Don\u2019t move.", "I won\u2019t tell anyone, I promise."] + EN[:6])
    raw = text.encode("cp1252")
    raw += b"\n" * (len(raw) % 2)  # even length: the paper cascade's utf-16 "decodes" it
    path = write(tmp_path, "en1252.srt", raw)
    r = inspect_json(path, "--language", "en")
    assert (r["encoding"], r["status"], r["entries"]) == ("cp1252", "ok", 8)
    p = inspect_json(path, "--language", "en", "--policy", "paper", code=1)
    assert (p["decoder"], p["policy"], p["status"]) == ("paper:utf-16", "paper", "rejected")
    assert p["errors"][0]["layer"] == "structure"


# --------------------------------------------------------------------------------------------
# verification layers: late onset with --runtime, the English audit
# --------------------------------------------------------------------------------------------
def test_late_onset_and_runtime_coverage(tmp_path):
    path = write(tmp_path, "late.srt", srt_text(EN[:10], start_s=420, step_s=20).encode())
    r = inspect_json(path, "--language", "en", "--runtime", "90")
    assert r["status"] == "flagged" and r["runtime_min"] == 90
    assert r["layers"] == ["delayed_onset", "runtime_coverage"]
    flags = {f["layer"]: f for f in r["flags"]}
    onset = flags["delayed_onset"]
    assert (onset["severity"], onset["value"], onset["threshold"]) == ("review", 7.0, 5.0)
    assert onset["evidence"] == {"index": 1, "first_start_ms": 420_000, "threshold_ms": 300_000}
    cov = flags["runtime_coverage"]
    assert cov["value"] == pytest.approx(602 / 5400) and cov["threshold"] == pytest.approx(2 / 3)
    assert cov["evidence"]["last_end_ms"] == 602_000 and cov["evidence"]["runtime_ms"] == 5_400_000
    assert "runtime_coverage" in r["checks"]["evaluated"]
    # without --runtime the coverage layer is not evaluated; exit 0 for flagged
    r = inspect_json(path, "--language", "en")
    assert r["layers"] == ["delayed_onset"] and "runtime_coverage" not in r["checks"]["evaluated"]


def test_english_audit_ratios(tmp_path):
    english = write(tmp_path, "en.srt", srt_text(EN, start_s=60, step_s=30).encode())
    track = write(tmp_path, "ar.srt", srt_text(AR[:10], start_s=60, step_s=60).encode())
    r = inspect_json(track, "--language", "ar", "--english", str(english), "--runtime", "12")
    assert r["status"] == "flagged"
    assert r["layers"] == ["entry_ratio", "token_ratio"]
    flags = {f["layer"]: f for f in r["flags"]}
    assert flags["entry_ratio"]["value"] == 0.5 and flags["entry_ratio"]["threshold"] == 0.7
    ar_tokens, en_tokens = sum(len(t.split()) for t in AR[:10]), sum(len(t.split()) for t in EN)
    assert flags["token_ratio"]["value"] == pytest.approx(ar_tokens / en_tokens)
    audit = r["audit"]
    assert audit["evaluated"] == ["span_ratio", "token_ratio", "entry_ratio", "span_vs_english"]
    assert audit["english"] == {"file": str(english), "status": "ok", "first_start_ms": 60_000,
                                "last_end_ms": 632_000, "n_entries": 20, "n_tokens": en_tokens}
    assert audit["track"] == {"first_start_ms": 60_000, "last_end_ms": 602_000,
                              "n_entries": 10, "n_tokens": ar_tokens}
    # the same track against itself raises no audit flag
    same = inspect_json(track, "--language", "ar", "--english", str(english.with_name("ar.srt")))
    assert same["status"] == "ok" and same["flags"] == []


def test_english_file_rejected_skips_the_audit(tmp_path):
    english = write(tmp_path, "en.srt", b"<html><body>You have to log in to download</body></html>")
    track = write(tmp_path, "ar.srt", srt_text(AR).encode())
    r = inspect_json(track, "--language", "ar", "--english", str(english))
    assert r["status"] == "ok" and r["audit"]["evaluated"] == []
    assert r["audit"]["english"]["status"] == "rejected"


# --------------------------------------------------------------------------------------------
# sanitization: actions by index and reason, never the removed text
# --------------------------------------------------------------------------------------------
def test_sanitization_actions_without_text(tmp_path):
    lines = ["Subtitles by DrBob", *EN[:8], "Write to john.doe@example.com if you see him.", *EN[8:12]]
    path = write(tmp_path, "san.srt", srt_text(lines).encode())
    dump = tmp_path / "e.jsonl"
    p = cli(str(path), "--language", "en", "--json", "--dump-entries", str(dump))
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    san = r["sanitization"]
    assert (san["removed"], san["modified"]) == (1, 1) and san["version"]
    assert san["actions"] == [{"index": 1, "action": "removed", "reasons": "credit"},
                              {"index": 10, "action": "modified", "reasons": "email"}]
    assert "DrBob" not in p.stdout and "john.doe" not in p.stdout
    assert r["entries"] == 14 and r["status"] == "ok"
    # --dump-entries is the parsed file as found (sanitization never changes the entries)
    assert json.loads(dump.read_text().splitlines()[0])["content"] == "Subtitles by DrBob"


# --------------------------------------------------------------------------------------------
# human output and usage errors
# --------------------------------------------------------------------------------------------
def test_human_summary(tmp_path):
    path = write(tmp_path, "late.srt", srt_text(EN[:10], start_s=420, step_s=20).encode())
    p = cli(str(path), "--language", "en")
    assert p.returncode == 0, p.stderr
    assert "status: flagged" in p.stdout and "delayed_onset" in p.stdout and "entries: 10" in p.stdout
    bad = write(tmp_path, "bad.srt", b"1\n0:00:01,000 --> 0:00:02,000\nHi\n")
    p = cli(str(bad), "--language", "en")
    assert p.returncode == 1 and "status: rejected" in p.stdout and "line 2 (timestamp_syntax)" in p.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["{missing}", "--language", "en"], "not found"),
        (["{ok}", "--language", "xx"], "unknown language"),
        (["{ok}", "--language", "en", "--policy", "chardet"], "unknown policy"),
        (["{ok}", "--language", "en", "--runtime", "0"], "--runtime"),
        (["{ok}", "--language", "en", "--english", "{missing}"], "English file not found"),
        (["{ok}"], "--language"),
    ],
)
def test_usage_errors_exit_2(tmp_path, args, message):
    ok = write(tmp_path, "ok.srt", srt_text(EN[:3]).encode())
    p = cli(*[a.format(missing=tmp_path / "nope.srt", ok=ok) for a in args])
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert message in p.stderr
    assert p.stdout == ""


# --------------------------------------------------------------------------------------------
# the command's function agrees with the pipeline (validators.candidate.process_bytes)
# --------------------------------------------------------------------------------------------
def test_inspect_file_agrees_with_process_bytes():
    from cinesub.settings import Thresholds
    from validators.inspect_report import inspect_file
    from validators.candidate import process_bytes

    th = Thresholds()
    cases = [
        (srt_text(AR).encode("utf-8"), "ar", None),
        (srt_text(AR, eol="\r\n").encode("cp1256"), "ar", 30),  # ends at 47 s of 30 min: coverage
        (srt_text(EN[:10], start_s=420, step_s=20).encode(), "en", 90),
        (srt_text(["Subtitles by DrBob", *EN, "Mail john.doe@example.com now."]).encode(), "en", None),
        (srt_text(EN[:5]).replace("00:00:09,000", "00:00:09,00").encode(), "en", None),
        (srt_text(EN[:5]).encode(), "ar", None),  # English text where Arabic is expected
        (b"<html><head><title>Attention Required! | Cloudflare</title></head></html>", "fa", None),
    ]
    for raw, lang, runtime in cases:
        out = process_bytes(raw, lang, runtime, th)
        res = inspect_file(raw, lang, runtime_min=runtime, thresholds=th)
        r = res.report
        assert (r["status"], r["encoding"], r["decoder"]) == (out.status, out.encoding, out.decoder)
        assert r["flags"] == [f.model_dump() for f in out.flags]
        assert r["layers"] == out.reasons
        assert len(r["repairs"]) == out.n_repairs and r["errors"] == out.errors
        if out.entries is None:
            assert r["sanitization"] is None
            continue
        kept = out.entries.drop("position")  # the pipeline's entries key (its place in the file)
        assert res.entries.select(kept.columns).equals(kept)
        assert out.entries["position"].to_list() == list(range(out.entries.height))
        assert r["sanitization"]["actions"] == out.sanitization.select("index", "action", "reasons").to_dicts()
    statuses = [process_bytes(raw, lang, runtime, th).status for raw, lang, runtime in cases]
    assert statuses == ["ok", "flagged", "flagged", "ok", "rejected", "flagged", "rejected"]


def test_entries_frame_is_chunked_for_parallel_kernels():
    from validators.inspect_report import CHUNK_ROWS, inspect_file

    n = CHUNK_ROWS * 2 + 10
    text = "\n\n".join(f"{i}\n{ts(i)} --> {ts(i + 1)}\n{EN[i % len(EN)]}" for i in range(1, n + 1)) + "\n"
    res = inspect_file(text.encode(), "en", sanitize=False)
    assert res.report["entries"] == n and res.report["sanitization"] is None
    assert res.entries.n_chunks() == 3
    assert res.entries["index"].to_list() == list(range(1, n + 1))


# --------------------------------------------------------------------------------------------
# every real file
# --------------------------------------------------------------------------------------------
_INDEX_CODEC = {"cp1256": "cp1256", "cp1252": "cp1252", "UTF-8 with BOM": "utf-8-sig",
                "UTF-16LE with BOM": "utf-16-le", "UTF-8 (no BOM)": "utf-8"}
#: real files that are flagged, and why (both visible in INDEX.json)
_FLAGGED = {
    # last cue 02:32:46,000 --> 03:32:46,000: one block lasting an hour
    "vi/vi__blade_runner_2049_2017__utf8sig_crlf.srt": ["block_lifespan"],
    # 2 start times going backwards: a 30-minute jump between adjacent blocks in file order
    "id/id__fireworks_2017__utf8sig_crlf.srt": ["macro_interval"],
    # SRT indices that repeat (kept as found): 1023 and 1152 twice; 1, 23, 24, 628 twice, 1257 thrice
    "ar/ar__this_means_war_2012__cp1256_ORIGINAL.srt": ["index_duplicate"],
    "ar/ar__this_means_war_2012__utf8_CONVERTED_same_sub.srt": ["index_duplicate"],
    "fa/fa__manhunt_2017__utf16le_bom.srt": ["index_duplicate"],
}


@pytest.mark.realdata
def test_every_real_file_inspected(realdata_dir, tmp_path):
    from typer.testing import CliRunner

    from cinesub.cli import app

    index = json.loads((realdata_dir / "srt" / "INDEX.json").read_text())
    runner = CliRunner()
    seen = {}
    for row in index:
        lang = row["lang"]
        if lang not in ("ar", "en", "fa", "id", "ro", "vi"):
            continue
        path = realdata_dir / "srt" / row["file"]
        dump = tmp_path / "entries.jsonl"
        res = runner.invoke(app, ["inspect", str(path), "--language", lang, "--json", "--dump-entries", str(dump)])
        assert res.exit_code == 0, (row["file"], res.output[-2000:])
        r = json.loads(res.stdout)
        codec = next(c for prefix, c in _INDEX_CODEC.items() if row["encoding"].startswith(prefix))
        assert r["encoding"] == codec, row["file"]
        assert r["entries"] == row["entries"] and r["errors"] == [], row["file"]
        expected = _FLAGGED.get(row["file"], [])
        assert r["status"] == ("flagged" if expected else "ok"), (row["file"], r["flags"])
        assert r["layers"] == expected, row["file"]
        rows = dump.read_text(encoding="utf-8").splitlines()
        assert len(rows) == row["entries"]
        assert json.loads(rows[0])["timeframe"] == row["first_time"]
        assert json.loads(rows[-1])["timeframe"] == row["last_time"]
        seen[lang] = seen.get(lang, 0) + 1
    assert seen == {"ar": 8, "en": 5, "fa": 6, "id": 3, "ro": 2, "vi": 4}
    r = json.loads(runner.invoke(app, ["inspect", str(realdata_dir / "srt" / next(iter(_FLAGGED))),
                                       "--language", "vi", "--json"]).stdout)
    assert r["flags"][0]["evidence"]["indices"] == [995] and r["flags"][0]["value"] == 60.0
