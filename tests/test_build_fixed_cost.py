"""Fixed costs of a ``cinesub build`` outside its stages (issue 18 point 4, docs/rebuilds.md
"Fixed costs of a build"): a sample build runs its Prefect flow without flow-run heartbeats (whose
thread the engine joins at the end, after its current one-second sleep) unless the environment
asks for them; live builds keep Prefect's default."""

from __future__ import annotations

import pytest
from prefect import flow
from prefect.flow_engine import FlowRunEngine

from flows.build import HEARTBEAT_SETTING, cli_run_settings


@flow
def _noop() -> None:
    pass


def _heartbeat_seconds() -> int | None:
    """What Prefect's flow engine would use for a flow run started now."""
    return FlowRunEngine(flow=_noop).heartbeat_seconds


def test_a_sample_build_runs_without_heartbeats_and_restores_the_setting(monkeypatch):
    monkeypatch.delenv(HEARTBEAT_SETTING, raising=False)
    before = _heartbeat_seconds()
    assert before is not None  # Prefect's default sends them
    with cli_run_settings(sample=True):
        assert _heartbeat_seconds() is None
    assert _heartbeat_seconds() == before


@pytest.mark.parametrize("sample,env", [(False, None), (True, "60")], ids=["live_build", "asked_for"])
def test_heartbeats_stay_for_live_builds_and_when_asked_for(monkeypatch, sample, env):
    if env is None:
        monkeypatch.delenv(HEARTBEAT_SETTING, raising=False)
    else:
        monkeypatch.setenv(HEARTBEAT_SETTING, env)
    before = _heartbeat_seconds()
    with cli_run_settings(sample=sample):
        assert _heartbeat_seconds() == before is not None
