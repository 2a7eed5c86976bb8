"""The fast-path check stops at the first cheap part of the fingerprint that differs from the
last build's record, before digesting the state DB (flows/kernel_fastpath.py,
docs/rebuilds.md "Fixed costs of a build"); equal cheap parts give the full material as before."""

from __future__ import annotations

import pytest

from cinesub.settings import load_settings
from cinesub.state import connect
from flows import kernel_fastpath as fp


class _Env:
    sample = True

    def __init__(self, inputs):
        self.inputs = inputs

    def rebuild_inputs(self):
        return self.inputs


@pytest.fixture
def settings(tmp_path, monkeypatch):
    for k in [k for k in __import__("os").environ if k.startswith("CINESUB_FAULT_")]:
        monkeypatch.delenv(k)
    s = load_settings(None, tmp_path / "home")
    with connect(s.state_db):
        pass
    return s


def test_a_changed_input_stops_before_the_state(settings, monkeypatch):
    material, why = fp.fingerprint_material(settings, _Env({"world": "a"}))
    assert why == "" and material is not None

    def no_state(path):
        raise AssertionError("the state DB was digested")

    monkeypatch.setattr(fp, "state_material", no_state)
    recorded = fp._as_recorded(material)
    assert fp.fingerprint_material(settings, _Env({"world": "b"}), recorded) == (None, "changed")
    assert fp.fingerprint(settings, _Env({"world": "b"}), recorded) == (None, "changed")


def test_equal_cheap_parts_give_the_full_fingerprint(settings):
    env = _Env({"world": "a", "n": 3})
    plain = fp.fingerprint(settings, env)
    material, _ = fp.fingerprint_material(settings, env)
    assert fp.fingerprint(settings, env, fp._as_recorded(material)) == plain
    assert plain[0] is not None
