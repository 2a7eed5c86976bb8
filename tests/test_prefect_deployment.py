"""The Prefect deployment end to end, with the real CLI (issue 2, point 5).

Starts a real Prefect server on a free loopback port (one for the module's tests), creates the
`cinesub-process` work pool, deploys from the repository's `prefect.yaml` with `prefect deploy
--all`, runs `prefect deployment run build-cinesub/sample` (output into a temporary CINESUB_HOME), starts a
real process worker *outside* the repository (so the deployment's pull step is what finds the
code), and waits, bounded, for the flow run to reach Completed and for the release to exist.
Server, worker and flow-run processes are torn down even when the test fails; their logs are
printed on failure.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

try:
    from tests import prefect_harness as ph
except ImportError:  # tests/ not importable as a package (plain `pytest` without the root on sys.path)
    import prefect_harness as ph
from _cli_runner import seed_sample_world

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
POOL = "cinesub-process"
FLOW_TIMEOUT_S = 480  # the sample build takes 1-3 minutes
SET_WD = "prefect.deployments.steps.set_working_directory"


def _deployment(api_url: str, name: str) -> dict:
    return ph.api(api_url, f"/deployments/name/build-cinesub/{name}")


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> tuple[str, dict[str, str], Path]:
    """A real Prefect server on a free loopback port with the `cinesub-process` work pool, shared by
    the module's tests (each deploys from prefect.yaml itself): (API URL, environment, server log).
    Torn down after the module even when a test fails."""
    root = tmp_path_factory.mktemp("prefect-server")
    port = ph.free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    env = ph.prefect_env(root / "prefect-home", api_url)
    server_log = root / "server.log"
    with ph.background(
        [*ph.prefect_cli(), "server", "start", "--host", "127.0.0.1", "--port", str(port),
         "--no-ui", "--analytics-off"],
        env=env, cwd=root, log=server_log,
    ) as proc:
        ph.wait_healthy(api_url, proc, server_log, timeout=120)
        ph.run_cli(["--no-prompt", "work-pool", "create", POOL, "--type", "process"], env=env, cwd=REPO)
        yield api_url, env, server_log


def test_sample_deployment_completes_on_a_process_worker(server, tmp_path: Path) -> None:
    api_url, env, server_log = server
    home = tmp_path / "cinesub-home"
    seed_sample_world(home, films=40)  # the deployment's default world, generated once per test run
    worker_log = tmp_path / "logs" / "worker.log"
    timings: dict[str, float] = {}
    t0 = time.monotonic()

    def lap(name: str) -> None:
        timings[name] = round(time.monotonic() - t0 - sum(timings.values()), 1)

    try:
        ph.run_cli(["--no-prompt", "deploy", "--all"], env=env, cwd=REPO)
        lap("deploy")

        # What prefect.yaml declared reached the server.
        sample, live = _deployment(api_url, "sample"), _deployment(api_url, "live")
        for dep in (sample, live):
            assert dep["entrypoint"] == "flows/build.py:build_cinesub"
            assert dep["work_pool_name"] == POOL
            # default working directory: where `prefect deploy` ran (CINESUB_REPO unset)
            assert dep["pull_steps"] == [{SET_WD: {"directory": str(REPO.resolve())}}]
        for name in ("hollywood-sample", "hollywood-live"):
            dep = ph.api(api_url, f"/deployments/name/build-hollywood/{name}")
            assert dep["entrypoint"] == "flows/hollywood.py:build_hollywood" and dep["work_pool_name"] == POOL
        assert sample["parameters"] == {"sample": True}
        assert sample["schedules"] == []
        assert live["parameters"] == {"sample": False}
        [sched] = live["schedules"]
        assert sched["active"] is False  # live schedules stay off until a curator resumes them
        assert sched["schedule"]["cron"] == "0 3 * * 1"
        assert sched["schedule"]["timezone"] == "UTC"

        # CINESUB_REPO set in the deploying shell overrides the directory.
        elsewhere = tmp_path / "checkout-elsewhere"
        ph.run_cli(["--no-prompt", "deploy", "--name", "live"],
                   env={**env, "CINESUB_REPO": str(elsewhere)}, cwd=REPO)
        assert _deployment(api_url, "live")["pull_steps"] == [{SET_WD: {"directory": str(elsewhere)}}]
        assert _deployment(api_url, "sample")["pull_steps"] == sample["pull_steps"]
        lap("check_deployments")

        out = ph.run_cli(
            ["--no-prompt", "deployment", "run", "build-cinesub/sample",
             "--params", json.dumps({"home": str(home)})],
            env=env, cwd=REPO,
        )
        m = re.search(r"UUID:\s*([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", out)
        assert m, f"no flow run id in `prefect deployment run` output:\n{out}"
        flow_run_id = m.group(1)
        created = ph.api(api_url, f"/flow_runs/{flow_run_id}")
        assert created["parameters"] == {"sample": True, "home": str(home)}

        # The worker runs outside the repository: only the pull step can lead it to the code.
        worker_dir = tmp_path / "worker-cwd"
        worker_dir.mkdir()
        with ph.background(
            [*ph.prefect_cli(), "--no-prompt", "worker", "start", "--pool", POOL, "--run-once",
             "--install-policy", "never", "--name", "cinesub-test-worker"],
            env=env, cwd=worker_dir, log=worker_log,
        ) as worker:
            run = ph.wait_flow_run(api_url, flow_run_id, worker, timeout=FLOW_TIMEOUT_S)
        lap("flow_run")

        state = run.get("state") or {}
        assert run.get("state_type") == "COMPLETED", (
            f"flow run {flow_run_id} ended {run.get('state_type')} ({state.get('message')}) "
            f"after {timings['flow_run']}s (worker and server logs below)"
        )
        assert run["deployment_id"] == sample["id"]

        # The release landed under the temporary CINESUB_HOME passed as a parameter.
        releases = home / "releases"
        assert (releases / "LATEST").is_file(), f"no release under {home}: {sorted(p.name for p in home.iterdir())}"
        version = (releases / "LATEST").read_text().strip()
        release = releases / version
        manifest = json.loads((release / "manifest.json").read_text())
        assert manifest["version"] == version
        for name in manifest["files"]:
            assert (release / name).is_file(), name
        assert (release / "films.parquet").is_file()
        lap("checks")
        print(f"prefect deployment test timings (s): {timings}")
    except BaseException:
        print(f"timings so far (s): {timings}")
        for log in (server_log, worker_log):
            if log.exists():
                print(f"\n===== {log.name} =====\n{ph.tail(log)}")
        raise


LIVE = {"build-cinesub/live": ("0 3 * * 1", "build-cinesub", "live"),
        "build-hollywood/hollywood-live": ("0 4 1 * *", "build-hollywood", "hollywood-live")}


def _schedules(api_url: str, flow: str, name: str) -> list[dict]:
    return ph.api(api_url, f"/deployments/name/{flow}/{name}")["schedules"]


def _active(api_url: str) -> dict[str, list[bool]]:
    """Per deployment of the server, the ``active`` flag of each of its schedules."""
    deps = ph.api(api_url, "/deployments/filter", body={"limit": 200})
    flows = {f["id"]: f["name"] for f in ph.api(api_url, "/flows/filter", body={"limit": 200})}
    return {f"{flows[d['flow_id']]}/{d['name']}": [s["active"] for s in d["schedules"]] for d in deps}


def test_deploy_all_leaves_no_live_schedule_active(server) -> None:
    """`prefect deploy --all` from the quick start, on a machine with only the sample world,
    starts no schedule; a curator resumes the live ones with the Prefect CLI, and a redeploy
    puts them back to what prefect.yaml says (off)."""
    api_url, env, server_log = server
    try:
        ph.run_cli(["--no-prompt", "deploy", "--all"], env=env, cwd=REPO)

        active = _active(api_url)
        assert set(LIVE) | {"build-cinesub/sample", "build-hollywood/hollywood-sample"} <= set(active)
        for name, (cron, flow, dep) in LIVE.items():
            [sched] = _schedules(api_url, flow, dep)
            assert sched["schedule"]["cron"] == cron and sched["schedule"]["timezone"] == "UTC"
        # no schedule of any deployment is active
        assert not any(any(flags) for flags in active.values()), active
        listed = ph.run_cli(["--no-prompt", "deployment", "schedule", "ls", "build-cinesub/live"],
                            env=env, cwd=REPO)
        assert "0 3 * * 1" in listed

        # what docs/prefect.md tells a curator with real inputs to run
        for name, (_, flow, dep) in LIVE.items():
            [sched] = _schedules(api_url, flow, dep)
            assert sched["id"] in ph.run_cli(["--no-prompt", "deployment", "schedule", "ls", name],
                                             env=env, cwd=REPO)
            ph.run_cli(["--no-prompt", "deployment", "schedule", "resume", name, sched["id"]],
                       env=env, cwd=REPO)
        assert all(_schedules(api_url, flow, dep)[0]["active"] is True for _, flow, dep in LIVE.values())
        # the sample deployments have no schedule to resume
        assert _active(api_url)["build-cinesub/sample"] == []

        # a redeploy re-applies prefect.yaml: the live schedules are off again
        ph.run_cli(["--no-prompt", "deploy", "--all"], env=env, cwd=REPO)
        assert not any(any(flags) for flags in _active(api_url).values()), _active(api_url)
    except BaseException:
        if server_log.exists():
            print(f"\n===== {server_log.name} =====\n{ph.tail(server_log)}")
        raise
