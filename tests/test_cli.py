"""The CLI's contract on bad input: a clear message and a non-zero exit, nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, CINESUB_HOME=str(home))
    for k in list(env):
        if k.startswith("CINESUB_INPUTS"):
            env.pop(k)
    return subprocess.run([sys.executable, "-m", "cinesub.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


def test_missing_config_file_is_a_clear_error(tmp_path):
    p = _cli("build", "--config", str(tmp_path / "nope.toml"), home=tmp_path / "home")
    assert p.returncode == 2
    assert "config file not found" in p.stderr
    assert not (tmp_path / "home" / "state.duckdb").exists()


def test_live_build_without_inputs_is_a_clear_error(tmp_path):
    p = _cli("build", home=tmp_path / "home")
    assert p.returncode == 2
    assert "inputs.sources_dir" in p.stderr and "--sample" in p.stderr
    assert not (tmp_path / "home" / "state.duckdb").exists()


def test_config_file_sets_thresholds(tmp_path):
    from cinesub.settings import load_settings

    cfg = tmp_path / "c.toml"
    cfg.write_text('[thresholds]\nmax_candidates = 3\n[inputs]\nsources_dir = "/data/s"\n')
    s = load_settings(cfg, tmp_path / "h")
    assert s.thresholds.max_candidates == 3
    assert str(s.inputs.sources_dir) == "/data/s"
    assert s.home == (tmp_path / "h").resolve()
    yml = tmp_path / "c.yaml"
    yml.write_text("thresholds:\n  delayed_onset_min: 4\n")
    assert load_settings(yml).thresholds.delayed_onset_min == 4


def test_secrets_are_masked_and_excluded_from_config_hash(monkeypatch):
    from cinesub.settings import load_settings

    monkeypatch.setenv("CINESUB_PROVIDERS__OPENSUBTITLES_API_KEY", "sekrit-key-123")
    s = load_settings()
    assert "sekrit-key-123" not in repr(s)
    assert "sekrit-key-123" not in json.dumps(s.public_dict())
    assert s.providers.opensubtitles_api_key.get_secret_value() == "sekrit-key-123"
    monkeypatch.delenv("CINESUB_PROVIDERS__OPENSUBTITLES_API_KEY")
    assert load_settings().config_hash() == s.config_hash()


def test_sample_generate_command(tmp_path):
    p = _cli("sample", "generate", str(tmp_path / "w"), "--films", "20", "--json", home=tmp_path / "home")
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)
    assert info["films"] == 20
    assert (tmp_path / "w" / "manifest.json").exists()
