"""The films of the sample world: identities, review-site facts, certificates and the funnel
cases planted in them (see :mod:`cinesub.sample.generate` and ``docs/sample_world.md``). Pure
functions of the seed; no I/O.
"""

from __future__ import annotations

import random
import re

import cinesub.sample.catalog as catalog
from cinesub.sample.model import CastEntry, Film
from cinesub.sample.tracks import build_dialogue
from cinesub.settings import COUNTRIES

GATES: list[tuple[int, str]] = [
    (1, "source_crawl"),
    (2, "imdb_link"),
    (3, "entity_link"),
    (4, "metadata"),
    (5, "language_coverage"),
    (6, "country_coverage"),
]

#: Funnel cases: (case, gate, reason code, human detail). One film each.
GATE_CASES: list[tuple[str, str, str, str]] = [
    ("kim_no_link", "imdb_link", "imdb_link_missing", "the Kids-in-Mind page has no IMDb link"),
    ("kim_short_id", "imdb_link", "imdb_id_malformed", "IMDb link with a 5-digit id (tt12345 form)"),
    ("kim_long_id", "imdb_link", "imdb_id_malformed", "IMDb link with an 11-digit id"),
    ("kim_search_url", "imdb_link", "imdb_id_malformed", "IMDb search URL instead of a title link"),
    ("csm_other_film", "entity_link", "csm_link_mismatch", "the CSM page's IMDb link names a namesake film of another year"),
    ("csm_missing", "entity_link", "csm_page_missing", "no Common Sense Media page for the film"),
    ("no_synopsis", "metadata", "synopsis_missing", "IMDb has no synopsis"),
    ("no_plot", "metadata", "plot_missing", "IMDb has no plot summary"),
    ("no_certificates", "metadata", "certificates_missing", "IMDb lists no certificates"),
    ("language_absent", "language_coverage", "language_missing", "no candidates in fa"),
    ("language_unusable", "language_coverage", "language_unusable", "every ro candidate is defective"),
    ("country_absent", "country_coverage", "country_missing", "no rating for Sweden"),
    ("country_unrated_only", "country_coverage", "country_unrated_only", "the only United States entry is Not Rated"),
]
MIN_FILMS = len(GATE_CASES) + 4

#: material external to the film planted in synopses (SPEC A10), removed by curation
EXTERNAL_SENTENCES = (
    "Filming began in March 2012 in Vancouver.",
    "It was made on a budget of $15 million.",
    "It premiered at the 2015 Sundance Film Festival.",
)


def seeded_rng(seed: int, *scope: object) -> random.Random:
    """The random stream of one scope of the world (a pure function of seed and scope)."""
    return random.Random("cinesub-sample/" + "/".join(str(s) for s in (seed, *scope)))


# --------------------------------------------------------------------------------------------
# Films
# --------------------------------------------------------------------------------------------
def imdb_id(rng: random.Random, year: int, used: set[str]) -> str:
    while True:
        if year >= 2019:
            tt = f"tt{rng.randint(10_000_000, 29_999_999)}"
        else:
            y = max(1970, year) - 1970
            tt = f"tt{rng.randint(60_000 + y * 40_000, 90_000 + y * 45_000):07d}"
        if tt not in used:
            used.add(tt)
            return tt


def _profanity(rng: random.Random, level: int) -> dict[str, int]:
    ranges = [
        {"f_words": (0, 0), "scatological": (0, 0), "anatomical": (0, 0), "mild": (0, 2), "religious": (0, 3)},
        {"f_words": (0, 0), "scatological": (0, 2), "anatomical": (0, 1), "mild": (1, 6), "religious": (1, 8)},
        {"f_words": (0, 1), "scatological": (1, 6), "anatomical": (0, 3), "mild": (4, 15), "religious": (3, 15)},
        {"f_words": (4, 30), "scatological": (3, 12), "anatomical": (1, 6), "mild": (6, 20), "religious": (5, 20)},
        {"f_words": (25, 60), "scatological": (6, 20), "anatomical": (3, 10), "mild": (8, 25), "religious": (8, 25)},
    ][level]
    return {k: rng.randint(a, b) for k, (a, b) in ranges.items()}


def _kim_counts(rng: random.Random, true: dict[str, int]) -> dict[str, int]:
    """What the KIM reviewer printed: usually the true count, sometimes off (never forced to agree)."""
    r = rng.random()
    if r < 0.70:
        return dict(true)
    if r < 0.95:
        return {k: max(0, v + rng.randint(-2, 2)) if v else v for k, v in true.items()}
    out = dict(true)
    out["f_words"] = true["f_words"] + rng.randint(10, 20)
    return out


def _language_score(true: dict[str, int]) -> int:
    f = true["f_words"]
    if f >= 40:
        return 10
    if f >= 20:
        return 9
    if f >= 10:
        return 8
    if f >= 1:
        return 6
    return min(5, 1 + (true["scatological"] + true["anatomical"] + true["mild"] + true["religious"]) // 8)


def _certificates(
    rng: random.Random, level: int, old_names: bool, drop_country: str | None, unrated_only: str | None
) -> tuple[list[str], list[dict]]:
    entries: list[str] = []
    primary: list[dict] = []
    names = {c: (catalog.OLD_COUNTRY_NAMES.get(c, c) if old_names else c) for c in COUNTRIES}
    for country in COUNTRIES:
        name = names[country]
        if country == drop_country:
            continue
        if country == unrated_only:
            raw = f"{name}:Not Rated"
            entries.append(raw)
            primary.append({"country": country, "raw": raw, "label": None})
            continue
        lvl = min(4, max(0, level + rng.choice([-1, 0, 0, 0, 1])))
        label_raw, label = rng.choice(catalog.LADDER[country][lvl])
        raw = f"{name}:{label_raw}"
        entries.append(raw)
        primary.append({"country": country, "raw": raw, "label": label})
        if rng.random() < 0.25:
            again = catalog.RERATING.get((country, label_raw), label_raw)
            entries.append(f"{name}:{again}::{rng.choice(catalog.NOTES)}")
    us = names["United States"]
    if unrated_only != "United States" and drop_country != "United States":
        if rng.random() < 0.35:
            entries.append(f"{us}:{rng.choice(catalog.TV_RATINGS)}::(TV rating)")
        if rng.random() < 0.15:
            entries.append(f"{us}:Unrated::(unrated version)")
    if rng.random() < 0.12 and drop_country != "Germany" and unrated_only != "Germany":
        entries.append(f"{names['Germany']}:Not Rated::(director's cut)")
    entries += rng.sample(catalog.OTHER_CERTS, rng.randint(2, 5))
    entries.sort(key=lambda e: e.split(":", 1)[0])  # IMDb lists countries alphabetically
    return entries, primary


def _kim_link(rng: random.Random, tt: str) -> str:
    forms = [
        f"https://www.imdb.com/title/{tt}/",
        f"http://www.imdb.com/title/{tt}",
        f"https://m.imdb.com/title/{tt}/?ref_=fn_al_tt_1",
        f"https://www.imdb.com/title/{tt}/parentalguide",
        f"http://imdb.com/title/{tt}/reviews?ref_=tt_urv",
    ]
    return rng.choice(forms)


_LEADING_ARTICLE = re.compile(r"^(The|A|An)\s+(.+)$")


def kim_sort_title(title: str) -> str:
    """The title as KIM's index lists it: a leading article goes last ("The Order" → "Order, The")."""
    m = _LEADING_ARTICLE.match(title)
    return f"{m.group(2)}, {m.group(1)}" if m else title


def kim_review_id(title: str, year: int, idx: int) -> str:
    """``"<letter>/<slug>"`` in one of the real slug styles (chosen by index, no random draw): the
    folder is the sort title's first letter; squashed (``o/order``), hyphens with the
    ``-parents-guide-movie-review-rating`` suffix, or the old ``title_YYYY__NNN``."""
    m = _LEADING_ARTICLE.match(title)
    base = (m.group(2) if m else title).lower().replace("'", "")
    letter = base[0] if base[0].isascii() and base[0].isalnum() else "0"
    style = idx % 3
    if style == 0:
        slug = re.sub(r"[^a-z0-9]+", "", base)
    elif style == 1:
        slug = re.sub(r"[^a-z0-9]+", "-", base).strip("-") + "-parents-guide-movie-review-rating"
    else:
        slug = re.sub(r"[^a-z0-9]+", "_", base).strip("_") + f"_{year}__{(idx * 37 + 11) % 1000:03d}"
    return f"{letter}/{slug}"


def make_film(idx: int, title: str, case: str | None, seed: int, used_ids: set[str], email_pid: int | None) -> Film:
    rng = seeded_rng(seed, "film", idx)
    year = rng.randint(1977, 2024)
    month, day = rng.randint(1, 12), rng.randint(1, 28)
    runtime = rng.randint(85, 150)
    tt = imdb_id(rng, year, used_ids)
    level = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4])
    slug = catalog.slugify(title)
    kim_id = kim_review_id(title, year, idx)
    kim_url = f"https://kids-in-mind.com/{kim_id}.htm"
    kim_link: str | None = _kim_link(rng, tt)
    if case is None and len(tt) == 9 and rng.random() < 0.1:
        kim_link = f"http://www.imdb.com/Title?{tt[2:]}"  # legacy IMDb title URL form
    csm_id: str | None = slug
    csm_link: str | None = rng.choice([f"https://www.imdb.com/title/{tt}/", f"http://www.imdb.com/title/{tt}/?ref_=nv_sr_1"])
    genres = sorted(rng.sample(catalog.GENRES, rng.randint(1, 3)))
    origin = [rng.choice(catalog.ORIGIN_COUNTRIES[:2]) if rng.random() < 0.6 else rng.choice(catalog.ORIGIN_COUNTRIES)]
    if rng.random() < 0.3:
        extra = rng.choice(catalog.ORIGIN_COUNTRIES)
        if extra not in origin:
            origin.append(extra)
    countries = [c for c, _ in origin]
    languages: list[str] = []
    for _, lang in origin:
        if lang not in languages:
            languages.append(lang)
    names = catalog.people(rng, 20)
    directors, writers = names[:rng.randint(1, 2)], names[2:2 + rng.randint(1, 3)]
    cast: list[CastEntry] = []
    actors = names[5:5 + rng.randint(6, 12)]
    char_first = rng.sample(catalog.FIRST, len(actors))
    for actor, first in zip(actors, char_first):
        char = first + " " + rng.choice(catalog.LAST)
        chars = [char] if rng.random() > 0.1 else [char, f"Young {char.split()[0]}"]
        additional = [rng.choice(["(voice)", "(uncredited)", f"(as {actor.split()[0][0]}. {actor.split()[1]})"])] if rng.random() < 0.15 else []
        cast.append(CastEntry(actor, chars, additional))
    a, b, c = (x.characters[0].split()[0] for x in cast[:3])
    job, place = rng.choice(catalog.JOBS), rng.choice(catalog.PLACES)
    incident, goal = rng.choice(catalog.INCIDENTS), rng.choice(catalog.GOALS)
    plot = f"{a}, a {job} in {place}, {incident} and must {goal}."
    summaries = [(plot, catalog.person(rng))]
    if rng.random() < 0.7:
        summaries.append((f"When {a} {incident}, old loyalties are tested as {b} and {c} are drawn into a secret that could destroy them all.", catalog.person(rng)))
    middle = rng.sample(catalog.SYN_MIDDLE, rng.randint(4, 7))
    sentences = [f"The film opens in {place}, where {a} works as a {job}."] + [s.format(a=a, b=b, c=c) for s in middle]
    sentences.append(rng.choice(catalog.ENDINGS).format(a=a, b=b, c=c))
    half = len(sentences) // 2
    synopsis: str | None = " ".join(sentences[:half]) + "\n\n" + " ".join(sentences[half:])
    # SPEC A10: every fifth film's synopsis carries a production-history sentence that curation
    # must remove (chosen by index, so the random stream and the rest of the world are unchanged)
    planted_external = None
    if idx % 5 == 0:
        planted_external = EXTERNAL_SENTENCES[(idx // 5) % len(EXTERNAL_SENTENCES)]
        synopsis = synopsis + " " + planted_external
    description: str | None = plot
    old_names = rng.random() < 0.15
    cert_style = "modern" if rng.random() < 0.25 else "inline"
    drop_country = "Sweden" if case == "country_absent" else None
    unrated_only = "United States" if case == "country_unrated_only" else None
    certificates, ratings = _certificates(rng, level, old_names, drop_country, unrated_only)
    mpaa = next((r["raw"].split(":", 1)[1] for r in ratings if r["country"] == "United States"), "Not Rated")
    true_counts = _profanity(rng, level)
    kim_counts = _kim_counts(rng, true_counts)
    n_entries = max(1000 + rng.randint(0, 60), round(runtime * rng.uniform(9.5, 11.0)))
    film = Film(
        idx=idx, title=title, year=year, release_date=f"{year}-{month:02d}-{day:02d}", runtime_min=runtime,
        imdb_id=tt, level=level, kim_id=kim_id, kim_url=kim_url, kim_link=kim_link, csm_id=csm_id,
        csm_url=f"https://www.commonsensemedia.org/movie-reviews/{slug}", csm_link=csm_link, genres=genres,
        countries=countries, languages=languages, directors=directors, writers=writers, cast=cast,
        keywords=sorted(rng.sample(catalog.KEYWORDS, rng.randint(3, 7))), summaries=summaries,
        synopsis=synopsis, description=description, certificates=certificates, cert_style=cert_style,
        planted_external=planted_external,
        ratings=ratings, imdb_rating=round(rng.uniform(4.5, 8.9), 1), votes=rng.randint(1_000, 900_000),
        mpaa=mpaa,
        kim_scores={"sex": min(10, max(0, level * 2 + rng.randint(-1, 2))),
                    "violence": min(10, max(0, level * 2 + rng.randint(-1, 2))),
                    "language": _language_score(true_counts)},
        kim_counts=kim_counts, true_counts=true_counts,
        kim_message=rng.choice([
            "Telling the truth is harder than hiding it, but it is the only way to heal.",
            "Family is what you build, not only what you are born into.",
            "Courage means standing by the people who depend on you.",
            "Revenge hurts the one who seeks it more than the one it targets.",
            "It is never too late to make amends.",
        ]),
        kim_texts={
            "intro": f"{a}, a {job} in {place}, {incident}. With {', '.join(x.actor for x in cast[:3])}.",
            "sex": rng.choice(["A man and a woman kiss briefly.", "A couple kisses in bed; no nudity is shown.",
                               "A woman wears a low-cut dress at a party.", "No sexual content."]),
            "violence": rng.choice(["A man is punched in the face and falls.", "A car crashes into a wall; a man is injured.",
                                    "A man is shot in the shoulder; we see blood on his shirt.", "Two men argue and shove each other."]),
            "substance": rng.choice(["People drink wine at dinner.", "A man smokes cigarettes throughout.",
                                     "A man drinks heavily and passes out.", "No substance use."]),
            "topics": rng.choice(["grief, family secrets, loyalty", "debt, crime, forgiveness", "friendship, betrayal, trust"]),
        },
        csm_age=rng.choice(catalog.CSM_AGE[level]),
        csm_one_liner=rng.choice(["Moving drama about family and forgiveness.", "Tense thriller with some strong language.",
                                  "Gentle story of second chances.", "Atmospheric mystery with mild peril."]),
        csm_parents=(
            f"Parents need to know that {title} is a {genres[0].lower()} film about {a}, a {job} who {incident}. "
            f"Expect {'frequent strong language' if level >= 3 else 'some mild language'} and "
            f"{'scenes of violence' if level >= 2 else 'little violence'}."
        ),
        storyline=f"In {title.upper()}, {a} ({cast[0].actor}) is a {job} in {place} who {incident}. "
                  f"Helped by {b} ({cast[1].actor}), {a} must {goal}.",
        n_entries=n_entries,
    )
    film.dialogue = build_dialogue(seeded_rng(seed, "dialogue", idx), n_entries, true_counts, email_pid)
    # -- the funnel case ---------------------------------------------------------------------
    if case is not None:
        _, gate, reason, detail = next(g for g in GATE_CASES if g[0] == case)
        film.expected_drop_gate, film.expected_drop_reason, film.expected_drop_detail = gate, reason, detail
    if case == "kim_no_link":
        film.kim_link = None
    elif case == "kim_short_id":
        film.kim_link = f"https://www.imdb.com/title/tt{tt[2:7]}/"
    elif case == "kim_long_id":
        film.kim_link = "https://www.imdb.com/title/tt12345678901/"
    elif case == "kim_search_url":
        film.kim_link = f"https://www.imdb.com/find?q={slug.replace('-', '+')}+{year}&s=tt&ref_=fn_al_tt_mr"
    elif case == "csm_missing":
        film.csm_id = film.csm_url = film.csm_link = None
    elif case == "no_synopsis":
        film.synopsis = None
    elif case == "no_plot":
        film.summaries, film.description = [], None
    elif case == "no_certificates":
        film.certificates, film.ratings = [], []
    elif case == "language_absent":
        film.missing_language = "fa"
    elif case == "language_unusable":
        film.unusable_language = "ro"
    film.has_subtitles = not (case or "").startswith("kim_")
    return film
