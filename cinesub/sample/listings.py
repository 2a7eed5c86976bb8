"""Search-only OpenSubtitles listings of the sample world (issue 16 point 5): subtitle items in
languages outside the six, metadata only (never downloaded), that the build's availability survey
counts (stage ``survey``, docs/coverage.md "Selection run by the build"). Written by
:func:`cinesub.sample.generate.generate` to :data:`LISTINGS_FILE`; served by the OpenSubtitles
emulation only (fixtures/opensubtitles_server.py).

The plan (:func:`listing_plan`): over the N films past gate 4 the six languages keep N-1 films (the
film without fa candidates lacks :data:`SURVEY_ALSO_MISSING` too), while :data:`SURVEY_RIVAL` is
listed on N-1 films (that film included, the first passing film excluded). Its name sorts before
"fa", so at equal frequency it ranks above fa and vi: the K=6 frequency prefix is
{en, ar, id, ro, es, fa} with N-2 films, while the exact optimum stays the six with N-1. The
:data:`SURVEY_EXTRA` languages are rarer (at most N-3 films each): the pool holds 12 languages and
the K=6 optimum is unchanged. Pure function of the seed; its own RNG streams.
"""

from __future__ import annotations

from cinesub.sample.films import seeded_rng
from cinesub.sample.model import Film

LISTINGS_FILE = "opensubtitles_listings.json"
#: the language the film without fa candidates lacks as well
SURVEY_ALSO_MISSING = "vi"
#: the frequent language anti-correlated with the six
SURVEY_RIVAL = "es"
#: rarer surveyed languages: (code, share of the films past gate 4), each on at most N-3 films
SURVEY_EXTRA: tuple[tuple[str, float], ...] = (("fr", 0.7), ("pt-br", 0.6), ("tr", 0.5), ("he", 0.4), ("cs", 0.3))


def listing_plan(films: list[Film], seed: int) -> list[tuple[Film, str]]:
    """(film, language) of every planted listing (module docstring); empty for a tiny world."""
    eligible = [f for f in films if f.expected_drop_gate in (None, "language_coverage", "country_coverage")]
    passing = [f for f in eligible if f.expected_drop_gate is None]
    if len(eligible) < 4 or not passing:
        return []
    gap = passing[0]  # the film with all six that lacks the rival
    plan = [(f, SURVEY_RIVAL) for f in eligible if f is not gap]
    cap = len(eligible) - 3
    for lang, share in SURVEY_EXTRA:
        rng = seeded_rng(seed, "listing-films", lang)
        plan += [(f, lang) for f in [f for f in eligible if rng.random() < share][:cap]]
    return plan


def manifest_entry() -> dict:
    return {"rival": SURVEY_RIVAL, "also_missing": SURVEY_ALSO_MISSING, "extra": [lang for lang, _ in SURVEY_EXTRA]}
