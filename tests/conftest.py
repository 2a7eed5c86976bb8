"""Shared fixtures. Tests that read ../shared/realdata carry the ``realdata`` marker; when
../shared is absent they are deselected with a one-line notice (CI always has it)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import _cli_runner
import prefect_harness

# one module object whichever name a test imports them under (the session server lives in it)
sys.modules.setdefault("tests._cli_runner", _cli_runner)
sys.modules.setdefault("tests.prefect_harness", prefect_harness)

# the kernel checks every stage's declared reads/writes (flows/kernel_exec.py): a violation fails the suite
os.environ.setdefault("CINESUB_CHECK_CONTRACTS", "1")

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("CINESUB_SHARED", REPO.parent / "shared"))
REALDATA = SHARED / "realdata"


#: the modules with builds, slowest first (measured): `make test` runs them first
#: (``--dist loadfile --no-loadscope-reorder`` keeps this order), so that the two xdist workers
#: do not end on one long module each; modules that share a build (tests/_cli_runner.py
#: shared_build) are spread so that the second one rarely waits for the first
SLOW_FIRST = (
    "test_acquisition_faults.py", "test_build_sample.py", "test_hollywood_flow.py", "test_resume.py",
    "test_poison_build.py", "test_crash_cleanup.py", "test_prefect_deployment.py", "test_review.py",
    "test_dask_runner.py", "test_local_build.py", "test_release_e2e.py", "test_home_lock.py", "test_report.py",
    "test_safety_reference.py", "test_curation_flow.py", "test_live_replay.py", "test_sources_mirror.py",
)


def _slow_first(items) -> None:
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    order = {id(item): n for n, item in enumerate(items)}
    items.sort(key=lambda item: (rank.get(item.path.name, len(rank)), order[id(item)]))


def pytest_collection_modifyitems(config, items):
    _slow_first(items)
    if REALDATA.is_dir():
        return
    kept, dropped = [], []
    for item in items:
        (dropped if item.get_closest_marker("realdata") else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
        print(f"\nNOTICE: {len(dropped)} realdata tests deselected: {REALDATA} not found")


@pytest.fixture(scope="session", autouse=True)
def _test_run_cache(tmp_path_factory):
    """A folder for this test run's caches (sample worlds, shared builds), shared by the xdist
    workers (their base temp folders sit side by side in one run folder); the session Prefect
    server of this process is stopped at the end."""
    base = tmp_path_factory.getbasetemp()
    run_dir = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    cache = run_dir / "cinesub-cache"
    cache.mkdir(parents=True, exist_ok=True)
    os.environ[_cli_runner.CACHE_ENV] = str(cache)
    yield cache
    _cli_runner.stop_prefect_server()


@pytest.fixture(scope="session")
def realdata_dir() -> Path:
    return REALDATA


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """A small sample world (17 films, the generator's minimum) for provider and fixture tests: a
    private copy of the one generated once per test run."""
    import shutil

    root = tmp_path_factory.mktemp("world")
    shutil.copytree(_cli_runner.cached_sample_world(films=17), root, dirs_exist_ok=True)
    return root


@pytest.fixture(scope="module")
def manifest(world) -> dict:
    import json

    return json.loads((world / "manifest.json").read_text())
