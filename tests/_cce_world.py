"""The sample CCE world (seed 1934) and its IA fixture server, module-scoped: imported by the test
modules that run the CCE stages (``from tests._cce_world import ia, world``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cinesub.sample.cce import generate_cce_world
from fixtures.ia_server import IAFixture


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cce-world")
    generate_cce_world(root, seed=1934)
    return root


@pytest.fixture(scope="module")
def ia(world):
    with IAFixture(world) as srv:
        yield srv
