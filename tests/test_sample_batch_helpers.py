"""The sample world's batch helpers give what the per-entry ones give, from the same random
draws (cinesub/sample/tracks.py): the world's bytes do not change with them."""

from __future__ import annotations

import random

from cinesub.sample import tracks


def test_reading_durations_are_reading_ms_draw_for_draw():
    texts = ["", "a", "- Hi.\n- Hello there.", "x" * 40, "y" * 200] * 50
    a, b = random.Random(11), random.Random(11)
    assert tracks.reading_durations(b, texts) == [tracks.reading_ms(a, t) for t in texts]
    assert a.random() == b.random()  # the stream stands at the same place afterwards


def test_headers_are_header_also_beyond_ten_hours():
    starts = [0, 999, 1_000, 59_999, 3_599_999, 35_999_999, 36_000_000, 123_456_789]
    ends = [s + 1_234 for s in starts]
    assert tracks.headers(starts, ends) == [tracks.header(s, e) for s, e in zip(starts, ends)]
