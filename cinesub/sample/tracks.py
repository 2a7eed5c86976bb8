"""Subtitle tracks of the sample world: dialogue sequences, timelines, SRT text, planted defects.

A film's dialogue is one sequence of *units* (one or two phrase rows, optionally italic) shared by
all of its tracks, so every language has the same number of entries. Each candidate file gets its
own timeline (different release, different sync) laid out over the film's runtime.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from cinesub.sample.phrases import (
    DIALOGUE_IDS,
    PHRASES,
    PROFANITY_IDS,
    STAGE_IDS,
    TRAP_IDS,
)

MIN = 60_000


@dataclass(frozen=True)
class Unit:
    pids: tuple[int, ...]
    italic: bool = False

    def text(self, lang: str) -> str:
        if len(self.pids) == 1:
            body = PHRASES[self.pids[0]].text[lang]
        else:
            body = "\n".join(f"- {PHRASES[p].text[lang]}" for p in self.pids)
        return f"<i>{body}</i>" if self.italic else body

    @property
    def kind(self) -> str:
        return PHRASES[self.pids[0]].kind if len(self.pids) == 1 else "dialogue"


def profanity_units(rng: random.Random, counts: dict[str, int]) -> list[Unit]:
    """Units whose English text carries exactly ``counts`` occurrences per KIM category."""
    units: list[Unit] = []
    for cat in sorted(counts):
        left = counts[cat]
        ids = PROFANITY_IDS[cat]
        while left > 0:
            fitting = [p for p in ids if PHRASES[p].tags[cat] <= left]
            pid = rng.choice(fitting)
            left -= PHRASES[pid].tags[cat]
            units.append(Unit((pid,), italic=rng.random() < 0.05))
    return units


def build_dialogue(
    rng: random.Random, n: int, profanity: dict[str, int], email_pid: int | None
) -> list[Unit]:
    """A film's dialogue: ``n`` units with profanity, traps, stage directions and an e-mail line."""
    special: list[Unit] = profanity_units(rng, profanity)
    special += [Unit((rng.choice(TRAP_IDS),)) for _ in range(rng.randint(2, 6))]
    special += [Unit((rng.choice(STAGE_IDS),)) for _ in range(rng.randint(0, 4))]
    if email_pid is not None:
        special.append(Unit((email_pid,)))
    if len(special) > n - 10:
        raise ValueError("too many special lines for the track length")
    positions = rng.sample(range(5, n - 5), len(special))
    placed = dict(zip(positions, special))
    units: list[Unit] = []
    prev: int | None = None
    for i in range(n):
        if i in placed:
            units.append(placed[i])
            prev = None
            continue
        pid = rng.choice(DIALOGUE_IDS)
        while pid == prev:
            pid = rng.choice(DIALOGUE_IDS)
        if rng.random() < 0.10:
            other = rng.choice(DIALOGUE_IDS)
            while other == pid:
                other = rng.choice(DIALOGUE_IDS)
            units.append(Unit((pid, other), italic=rng.random() < 0.04))
        else:
            units.append(Unit((pid,), italic=rng.random() < 0.06))
        prev = pid
    return units


def reading_ms(rng: random.Random, text: str) -> int:
    """A realistic on-screen duration for ``text``: 1 to 6 seconds, longer for longer lines."""
    d = 700 + 55 * len(text) + rng.randint(-200, 400)
    return max(1000, min(6000, d))


def reading_durations(rng: random.Random, texts: list[str]) -> list[int]:
    """``[reading_ms(rng, t) for t in texts]``, the same numbers from the same draws:
    ``randint(-200, 400)`` is ``_randbelow(601) - 200`` (CPython's ``randrange``), without its
    argument checks — the sample world draws this once per entry, 700k times for 40 films."""
    below = rng._randbelow
    return [max(1000, min(6000, 500 + 55 * len(t) + below(601))) for t in texts]


def layout(
    rng: random.Random,
    durs: list[int],
    first_start: int,
    last_end: int,
    fixed_gaps: dict[int, int] | None = None,
    fixed_durs: dict[int, int] | None = None,
    max_gap: int = 8 * MIN,
    min_gap: int = 120,
) -> tuple[list[int], list[int]]:
    """Start and end times (ms) for blocks of the given durations over [first_start, last_end].

    ``fixed_gaps[i]`` is the exact gap between block i's end and block i+1's start;
    ``fixed_durs[i]`` the exact duration of block i. Other gaps are random (mostly short, a few
    scene breaks), never longer than ``max_gap``; durations shrink (to >= 1 s) when the span is short.
    The last block ends exactly at ``last_end``.
    """
    fixed_gaps = fixed_gaps or {}
    fixed_durs = fixed_durs or {}
    n = len(durs)
    durs = list(durs)
    for i, d in fixed_durs.items():
        durs[i] = d
    free = [i for i in range(n - 1) if i not in fixed_gaps]
    var = [i for i in range(n) if i not in fixed_durs]
    budget = last_end - first_start - sum(fixed_gaps.values()) - sum(fixed_durs.values())
    var_total = sum(durs[i] for i in var)
    allowed = budget - max(min_gap * len(free), budget // 4)
    if var_total > allowed:
        scale = allowed / var_total
        for i in var:
            durs[i] = max(1000, int(durs[i] * scale))
        var_total = sum(durs[i] for i in var)
    gap_total = budget - var_total
    rest = gap_total - min_gap * len(free)
    if rest < 0:
        raise ValueError("the track does not fit in its span")
    weights = [rng.expovariate(1.0) + 0.05 for _ in free]
    for k in range(len(weights)):
        if rng.random() < 0.012:
            weights[k] *= rng.uniform(8.0, 20.0)
    wsum = sum(weights)
    extra = [rest * w / wsum for w in weights]
    cap = max_gap - min_gap
    for _ in range(50):
        over = [k for k, g in enumerate(extra) if g > cap]
        if not over:
            break
        excess = sum(extra[k] - cap for k in over)
        for k in over:
            extra[k] = cap
        under = [k for k, g in enumerate(extra) if g < cap]
        usum = sum(weights[k] for k in under)
        for k in under:
            extra[k] += excess * weights[k] / usum
    ints = [int(x) for x in extra]
    remainder = rest - sum(ints)
    order = sorted(range(len(extra)), key=lambda k: extra[k] - ints[k], reverse=True)
    for k in order[:remainder]:
        ints[k] += 1
    gaps = dict(fixed_gaps)
    for k, i in enumerate(free):
        gaps[i] = min_gap + ints[k]
    starts, ends = [], []
    t = first_start
    for i in range(n):
        starts.append(t)
        t += durs[i]
        ends.append(t)
        if i < n - 1:
            t += gaps[i]
    assert ends[-1] == last_end, (ends[-1], last_end)
    return starts, ends


#: "HH:MM:SS" of every second of the first 10 hours (tracks never run longer): :func:`ts` is
#: called twice per entry, millions of times per sample world
_HMS = [f"{h:02d}:{m:02d}:{s:02d}" for h in range(10) for m in range(60) for s in range(60)]
_MILLI = [f"{n:03d}" for n in range(1000)]


def ts(ms: int, sep: str = ",") -> str:
    sec, milli = divmod(ms, 1000)
    if 0 <= sec < len(_HMS):
        return f"{_HMS[sec]}{sep}{_MILLI[milli]}"
    h, r = divmod(ms, 3_600_000)
    m, r = divmod(r, 60_000)
    s, milli = divmod(r, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{milli:03d}"


def header(start: int, end: int, sep: str = ",") -> str:
    return f"{ts(start, sep)} --> {ts(end, sep)}"


def headers(starts: list[int], ends: list[int]) -> list[str]:
    """``[header(s, e) for s, e in zip(starts, ends)]`` (separator ","), in one pass."""
    hms, milli, limit = _HMS, _MILLI, len(_HMS) * 1000
    out = []
    for s, e in zip(starts, ends, strict=True):
        if 0 <= s < limit and 0 <= e < limit:
            out.append(f"{hms[s // 1000]},{milli[s % 1000]} --> {hms[e // 1000]},{milli[e % 1000]}")
        else:
            out.append(header(s, e))
    return out


def render_srt(headers: list[str], texts: list[str], eol: str) -> tuple[str, list[int]]:
    """SRT text (blocks numbered from 1) and the 1-based line number of every header."""
    parts: list[str] = []
    header_lines: list[int] = []
    line = 1
    for i, (h, t) in enumerate(zip(headers, texts, strict=True), start=1):
        parts.append(f"{i}\n{h}\n{t}\n\n")
        header_lines.append(line + 1)
        line += 3 + t.count("\n") + 1  # index, header, text lines, blank
    text = "".join(parts)
    if eol == "crlf":
        text = text.replace("\n", "\r\n")
    return text, header_lines


# --------------------------------------------------------------------------------------------
# Provider bodies (SPEC A5 provider-body integrity): what a provider returns instead of a file.
# --------------------------------------------------------------------------------------------
def cloudflare_page(rng: random.Random) -> str:
    ray = "".join(rng.choice("0123456789abcdef") for _ in range(16))
    return f"""<!DOCTYPE html>
<!--[if lt IE 7]> <html class="no-js ie6 oldie" lang="en-US"> <![endif]-->
<!--[if gt IE 8]><!--> <html class="no-js" lang="en-US"> <!--<![endif]-->
<head>
<title>dl.opensubtitles.com | 520: Web server is returning an unknown error</title>
<meta charset="UTF-8" />
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
<meta name="robots" content="noindex, nofollow" />
<meta name="viewport" content="width=device-width,initial-scale=1" />
</head>
<body>
<div id="cf-wrapper">
  <div id="cf-error-details" class="p-0">
    <header class="mx-auto pt-10 lg:pt-6 lg:px-8 w-240 lg:w-full mb-8">
      <h1 class="inline-block sm:block sm:mb-2 font-light text-60 lg:text-4xl text-black-dark leading-tight mr-2">
        <span class="inline-block">Web server is returning an unknown error</span>
        <span class="code-label">Error code 520</span>
      </h1>
    </header>
    <div class="my-8 bg-gradient-gray">
      <p>There is an unknown connection issue between Cloudflare and the origin web server.
      As a result, the web page can not be displayed.</p>
    </div>
    <div class="cf-error-footer cf-wrapper w-240 lg:w-full py-10 sm:py-4 sm:px-8 mx-auto text-center sm:text-left border-solid border-0 border-t border-gray-300">
      <p class="text-13">
        <span class="cf-footer-item sm:block sm:mb-1">Cloudflare Ray ID: <strong class="font-semibold">{ray}</strong></span>
        <span class="cf-footer-separator sm:hidden">&bull;</span>
        <span class="cf-footer-item sm:block sm:mb-1"><span>Performance &amp; security by</span> <a rel="noopener noreferrer" href="https://www.cloudflare.com/5xx-error-landing" id="brand_link" target="_blank">Cloudflare</a></span>
      </p>
    </div>
  </div>
</div>
</body>
</html>
"""


def quota_json(rng: random.Random) -> str:
    hours, minutes = rng.randint(1, 23), rng.randint(0, 59)
    ts_ = 1714000000 + rng.randint(0, 9_000_000)
    return (
        '{\n  "requests": 20,\n  "remaining": 0,\n'
        f'  "message": "You have downloaded your allowed 20 subtitles for 24h.Your quota will be renewed in {hours:02d} hours and {minutes:02d} minutes (2024-06-0{rng.randint(1, 9)} 23:59:59 UTC) ts={ts_} ",\n'
        f'  "reset_time": "{hours:02d} hours and {minutes:02d} minutes",\n'
        f'  "reset_time_utc": "2024-06-0{rng.randint(1, 9)}T23:59:59.000Z"\n}}\n'
    )


def varnish_503_page(xid: int) -> str:
    """Varnish's 503 "Guru Meditation" error page (what a provider's cache serves when its backend
    fails), with transaction id ``xid``."""
    return f"""<!DOCTYPE html>
<html>
  <head>
    <title>503 Backend fetch failed</title>
  </head>
  <body>
    <h1>Error 503 Backend fetch failed</h1>
    <p>Backend fetch failed</p>
    <h3>Guru Meditation:</h3>
    <p>XID: {xid}</p>
    <hr>
    <p>Varnish cache server</p>
  </body>
</html>
"""


def guru_meditation(rng: random.Random) -> str:
    return varnish_503_page(rng.randint(10_000_000, 99_999_999))


PROVIDER_BODIES = {
    "cloudflare_html": cloudflare_page,
    "json_quota_error": quota_json,
    "guru_meditation": guru_meditation,
}

#: A run of bytes that is invalid UTF-8 and partly undefined in cp1252 (0x81, 0x8D, 0x8F, 0x90, 0x9D).
INVALID_RUN = bytes([0xC3, 0x28, 0xA0, 0xA1, 0xE2, 0x28, 0xA1, 0xF0, 0x28, 0x8C, 0xBC, 0x81, 0x8D, 0x8F, 0x90, 0x9D, 0xFE, 0xFF])


def corrupt_utf8(rng: random.Random, raw: bytes, share: float = 0.12) -> bytes:
    """Splice INVALID_RUN into about ``share`` of the text lines of a UTF-8 SRT (headers untouched)."""
    lines = raw.split(b"\n")
    out = []
    for ln in lines:
        s = ln.strip()
        is_text = bool(s) and not s.isdigit() and b"-->" not in s
        if is_text and rng.random() < share:
            cut = rng.randint(0, len(ln.rstrip(b"\r")))
            ln = ln[:cut] + INVALID_RUN + ln[cut:]
        out.append(ln)
    return b"\n".join(out)
