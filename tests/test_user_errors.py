"""Every user error is one line and a documented exit code, across every command (issue 14
point 5): the real CLI in a subprocess, its exit code, one line on stderr, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def cli(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith("CINESUB_") and k != "PREFECT_API_URL"}
    e.update(CINESUB_HOME=str(tmp_path / "home"), **(env or {}))
    return subprocess.run([sys.executable, "-m", "cinesub.cli", *args], cwd=REPO, env=e, capture_output=True,
                          text=True, timeout=300)


def one_line(p: subprocess.CompletedProcess, code: int, *needles: str) -> str:
    assert "Traceback" not in p.stderr + p.stdout, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    assert p.returncode == code, (p.returncode, p.stderr)
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    srt = tmp_path / "a.srt"
    srt.write_text("1\n00:00:01,000 --> 00:00:02,000\nHello there.\n\n", encoding="utf-8")
    out = {"srt": srt, "file": tmp_path / "plain-file"}
    out["file"].write_text("x")
    for name, text in {
        "typo.toml": "[thresholds]\nmax_candidtes = 3\n",
        "top.toml": "[threshold]\nmax_candidates = 3\n",
        "nested.yaml": "thresholds:\n  delayed_onset_mins: 4\n",
        "negative.toml": "[thresholds]\nmax_candidates = -3\n",
        "type.yaml": "workers: many\n",
        "share.toml": "[thresholds]\nlanguage_min_share = 1.5\n",
        "broken.toml": "[inputs]\nsources_dir = \"/data\n",
        "broken.yaml": "thresholds:\n  max_candidates: [1\n  delayed_onset_min: 2\n",
    }.items():
        (tmp_path / name).write_text(text)
        out[name] = tmp_path / name
    return out


# -- config files and settings -----------------------------------------------------------------
@pytest.mark.parametrize("name, needles", [
    ("typo.toml", ["unknown config key 'thresholds.max_candidtes'", "did you mean 'thresholds.max_candidates'",
                   "config_unknown_key"]),
    ("top.toml", ["unknown config key 'threshold'", "did you mean 'thresholds'"]),
    ("nested.yaml", ["'thresholds.delayed_onset_mins'", "did you mean 'thresholds.delayed_onset_min'"]),
    ("negative.toml", ["thresholds.max_candidates", "-3", "greater than or equal to 1", "config_invalid"]),
    ("type.yaml", ["'workers'", "'many'", "integer"]),
    ("share.toml", ["thresholds.language_min_share", "1.5", "less than or equal to 1"]),
    ("broken.toml", ["malformed TOML", "line 2", "config_malformed"]),
    ("broken.yaml", ["malformed YAML", "line 3", "config_malformed"]),
])
def test_bad_config_is_one_line_naming_key_and_value(tmp_path, files, name, needles):
    p = cli(tmp_path, "build", "--sample", "--config", str(files[name]))
    one_line(p, 2, *needles)
    assert not (tmp_path / "home" / "state.duckdb").exists()


def test_bad_config_in_other_commands(tmp_path, files):
    p = cli(tmp_path, "hollywood", "build", "--sample", "--config", str(files["typo.toml"]))
    one_line(p, 2, "did you mean 'thresholds.max_candidates'")
    p = cli(tmp_path, "inspect", str(files["srt"]), "-l", "en", "--config", str(files["negative.toml"]))
    one_line(p, 2, "thresholds.max_candidates", "-3")


def test_env_var_typos_are_errors_with_a_suggestion(tmp_path):
    p = cli(tmp_path, "build", "--sample", env={"CINESUB_THRESHOLDS__MAX_CANDIDTES": "3"})
    one_line(p, 2, "CINESUB_THRESHOLDS__MAX_CANDIDTES", "did you mean CINESUB_THRESHOLDS__MAX_CANDIDATES")
    p = cli(tmp_path, "build", "--sample", env={"CINESUB_WORKER": "3"})
    one_line(p, 2, "did you mean CINESUB_WORKERS")
    p = cli(tmp_path, "build", "--sample", env={"CINESUB_THRESHOLDS__MAX_CANDIDATES": "0"})
    one_line(p, 2, "thresholds.max_candidates", "0", "greater than or equal to 1")


def test_settings_errors_in_process(tmp_path, files, monkeypatch):
    from cinesub.errors import ConfigError
    from cinesub.settings import load_settings

    for k in [k for k in os.environ if k.startswith("CINESUB_")]:
        monkeypatch.delenv(k)
    with pytest.raises(ConfigError, match="did you mean 'thresholds.max_candidates'") as e:
        load_settings(files["typo.toml"])
    assert e.value.reason == "config_unknown_key" and isinstance(e.value, ValueError)
    cfg = tmp_path / "inf.toml"
    cfg.write_text("[thresholds]\ndelayed_onset_min = inf\n")
    with pytest.raises(ConfigError, match="delayed_onset_min"):
        load_settings(cfg)
    cfg.write_text("decoder_policy = 'paperr'\n")
    with pytest.raises(ConfigError, match="decoder_policy"):
        load_settings(cfg)
    cfg.write_text("[cinesub.thresholds]\nmax_candidates = 2\n")  # the optional [cinesub] wrapper
    assert load_settings(cfg).thresholds.max_candidates == 2


# -- paths and values ---------------------------------------------------------------------------
def test_home_on_a_file(tmp_path, files):
    home = str(files["file"])
    for args in (["build", "--sample", "--home", home], ["hollywood", "build", "--sample", "--home", home],
                 ["release", "list", "--home", home], ["review", "list", "--home", home]):
        one_line(cli(tmp_path, *args), 2, "not a directory")


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0"])
def test_inspect_runtime_must_be_positive_and_finite(tmp_path, files, value):
    p = cli(tmp_path, "inspect", str(files["srt"]), "-l", "en", "--runtime", value)
    one_line(p, 2, "--runtime")


def test_dump_entries_into_a_missing_folder(tmp_path, files):
    target = tmp_path / "missing" / "entries.jsonl"
    p = cli(tmp_path, "inspect", str(files["srt"]), "-l", "en", "--dump-entries", str(target))
    one_line(p, 2, "does not exist")
    assert not target.parent.exists()


def test_too_few_sample_films(tmp_path):
    one_line(cli(tmp_path, "sample", "generate", str(tmp_path / "w"), "--films", "3"), 2, "--films 3", "17")
    assert not (tmp_path / "w").exists()
    one_line(cli(tmp_path, "build", "--sample", "--films", "3"), 2, "--films 3", "17")


def test_too_many_sample_films(tmp_path):
    """The sample world's titles run out at 160 films: a one-line usage error, not an internal error."""
    one_line(cli(tmp_path, "sample", "generate", str(tmp_path / "w"), "--films", "161"), 2, "--films 161", "160")
    one_line(cli(tmp_path, "build", "--sample", "--films", "200"), 2, "--films 200", "160")


def test_usage_errors_are_one_line(tmp_path, files):
    one_line(cli(tmp_path, "build", "--bogus"), 2, "--bogus", "[usage]")
    one_line(cli(tmp_path, "inspect"), 2, "Missing argument")
    one_line(cli(tmp_path, "build", "--films", "many"), 2, "--films")
    one_line(cli(tmp_path, "nosuchcommand"), 2, "nosuchcommand")
    one_line(cli(tmp_path, "build", "--sample", "--wait-timeout", "inf"), 2, "--wait-timeout")


def test_damaged_release_manifest(tmp_path):
    rel = tmp_path / "home" / "releases" / "1.0.0"
    rel.mkdir(parents=True)
    (rel / "manifest.json").write_text("{oops")
    (rel.parent / "LATEST").write_text("1.0.0\n")
    for args in (["release", "list"], ["release", "show", "latest"], ["release", "withdraw", "tt0000001",
                                                                      "--reason", "asked"]):
        one_line(cli(tmp_path, *args), 2, "manifest_damaged")


def test_unreadable_tsv_in_boxoffice(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_bytes(b"imdb\ttitle\tyear\n\xff\xfe\x00")
    p = cli(tmp_path, "boxoffice", "resolve-aliases", "--catalog", str(bad), "--aliases", str(bad))
    one_line(p, 2, "cannot read")


# -- the top-level handler ----------------------------------------------------------------------
def test_version(tmp_path):
    from importlib.metadata import version

    p = cli(tmp_path, "--version")
    assert p.returncode == 0 and p.stdout.strip() == f"cinesub {version('cinesub')}", p.stdout


def test_unexpected_exception_is_one_line_and_a_log(tmp_path, capsys, monkeypatch):
    import typer

    from cinesub.cli_errors import run_guarded

    app = typer.Typer()

    @app.command()
    def boom(home: str = typer.Option(None, "--home")) -> None:
        raise RuntimeError("kaputt\nsecond line")

    monkeypatch.delenv("CINESUB_DEBUG", raising=False)
    code = run_guarded(typer.main.get_command(app).main, ["--home", str(tmp_path / "h")])
    err = capsys.readouterr().err
    assert code == 70
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "internal error: RuntimeError: kaputt second line" in lines[0]
    assert "please report" in lines[0] and "Traceback" not in err
    logs = list((tmp_path / "h" / "logs").glob("error-*.log"))
    assert len(logs) == 1 and str(logs[0]) in lines[0]
    assert "Traceback" in logs[0].read_text() and "kaputt" in logs[0].read_text()

    @app.command()
    def disk(home: str = typer.Option(None, "--home")) -> None:
        raise OSError(28, "No space left on device")

    assert run_guarded(typer.main.get_command(app).main, ["disk", "--home", str(tmp_path / "h")]) == 7
    monkeypatch.setenv("CINESUB_DEBUG", "1")
    with pytest.raises(RuntimeError):
        run_guarded(typer.main.get_command(app).main, ["boom", "--home", str(tmp_path / "h")])


def test_library_code_raises_no_systemexit():
    """Typed errors, not SystemExit / typer.Exit, outside the command-line modules."""
    offenders = []
    for folder in ("cinesub", "flows", "extractors", "validators", "warehouse", "fixtures"):
        for path in (REPO / folder).rglob("*.py"):
            if path.name.startswith("cli") or path.name == "__main__.py":
                continue
            text = path.read_text(encoding="utf-8")
            if "raise SystemExit" in text or "typer.Exit" in text:
                offenders.append(str(path.relative_to(REPO)))
    assert offenders == []


def test_runtime_failures_map_to_their_codes(capsys):
    """A state DB held by another process → 6; a provider that stays unreachable → 5."""
    import duckdb

    from cinesub.cli_errors import exit_code_for
    from extractors.providers.errors import ProviderError

    exc = duckdb.IOException('IO Error: Could not set lock on file "/h/state.duckdb": Conflicting lock is held')
    assert exit_code_for(exc, []) == 6
    assert "state_db_locked" in capsys.readouterr().err
    try:
        raise ProviderError("network_unreachable", "archive.org did not answer")
    except ProviderError as e:
        pe = e
    assert exit_code_for(pe, []) == 5
    assert "network_unreachable" in capsys.readouterr().err
