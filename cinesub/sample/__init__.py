"""The deterministic sample world: review pages, IMDb data and subtitle candidates with planted
cases for every funnel gate, verification layer and sanitization rule (see docs/sample_world.md)."""

from cinesub.sample.generate import GATES, generate

__all__ = ["GATES", "generate"]
