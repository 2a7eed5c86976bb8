"""Where a build's outside world comes from, decided once when a flow starts.

An :class:`Environment` supplies everything that differs between a sample build (a generated
world served by loopback fixture servers) and a live build (real providers, the Internet
Archive, configured input files): endpoints, inputs, services, the subtitle providers, the IA
client, the Gemini endpoint and key, and the fingerprint material of remote inputs. Stages ask
the environment; none asks which one it is. :mod:`flows.env.sample` is the only production
module that imports ``fixtures/``.

Endpoints are secret-free (Prefect records task parameters); credentials are resolved where a
client is built.
"""

from __future__ import annotations

from typing import Any

from cinesub.settings import Settings
from flows.env.base import Environment, GeminiEndpoint, HollywoodInputs, dir_digest, file_digest

__all__ = ["Environment", "GeminiEndpoint", "HollywoodInputs", "dir_digest", "environment", "file_digest"]


def environment(settings: Settings, sample: bool, **options: Any) -> Environment:
    """The sample or the live environment (the one place the choice is made)."""
    if sample:
        from flows.env.sample import SampleEnvironment

        return SampleEnvironment(settings, **options)
    from flows.env.live import LiveEnvironment

    if options.get("faults"):
        from cinesub.errors import UsageError

        raise UsageError("faults are a sample-build option", "faults_need_sample")
    return LiveEnvironment(settings)
