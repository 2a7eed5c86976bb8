"""Shared fixtures. Tests that read ../shared/realdata carry the ``realdata`` marker; when
../shared is absent they are deselected with a one-line notice (CI always has it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("CINESUB_SHARED", REPO.parent / "shared"))
REALDATA = SHARED / "realdata"


def pytest_collection_modifyitems(config, items):
    if REALDATA.is_dir():
        return
    kept, dropped = [], []
    for item in items:
        (dropped if item.get_closest_marker("realdata") else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
        print(f"\nNOTICE: {len(dropped)} realdata tests deselected: {REALDATA} not found")


@pytest.fixture(scope="session")
def realdata_dir() -> Path:
    return REALDATA


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """A small sample world (17 films, the generator's minimum) for provider and fixture tests."""
    from cinesub.sample.generate import generate

    root = tmp_path_factory.mktemp("world")
    generate(root, n_films=17)
    return root


@pytest.fixture(scope="module")
def manifest(world) -> dict:
    import json

    return json.loads((world / "manifest.json").read_text())
