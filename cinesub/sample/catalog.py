"""Invented film metadata for the sample world: titles, people, plots and certificate ladders.

Nothing here is copied from the real sources; the *forms* follow them (IMDb genre and country
names, the certificate strings IMDb really shows — see ``../shared/realdata/certificates`` — and the
age labels of Common Sense Media).
"""

from __future__ import annotations

import random
import re

TITLES: list[str] = [
    "The Harbour Lights", "Winter at Calder Point", "Salt and Iron", "The Quiet Orchard",
    "A House of Paper Birds", "The Last Ferry", "Glass Rivers", "Midnight at the Empire Hotel",
    "The Cartographer's Daughter", "Ashes of August", "Borrowed Time", "The Lantern Keeper",
    "Dust Road", "The Silver Coast", "Seven Bridges", "Paper Moon Motel", "The Long Thaw",
    "Under the Copper Sky", "Wolves of Marrow Hill", "The Ninth Floor", "Greenwater",
    "The Clockmaker's Apprentice", "Night Train to Varna", "Echo Valley", "The Weight of Snow",
    "Lighthouse Road", "Falling Embers", "The Accidental Heir", "Hollow Creek",
    "Sundown Boulevard", "The Tin Soldier", "Iron Meadows", "The Pale Horizon", "The Map Room",
    "Riverside Nocturne", "Stormbreak", "The Glass Garden", "Two Moons Over Lisbon",
    "The Final Draft", "Cold Harbor Blues", "The Ferryman's Promise", "Red Lantern Alley",
    "After the Parade", "The Beekeeper's Secret", "Summer of the Comet", "Broken Compass",
    "The Night Gardener", "Halfway to Nowhere", "The Wandering Tide", "Eastern Wind",
    "The Forgotten Station", "Ink and Bone", "A Season in Brasov", "The Saffron Road",
    "Letters from Hanoi", "The Tehran Tapes", "Monsoon Hearts", "The Orchard Thieves",
    "Blackwater Junction", "The Kite Maker",
]
_ADJ = ["Silent", "Crimson", "Hidden", "Northern", "Burning", "Golden", "Lonely", "Restless", "Frozen", "Distant"]
_NOUN = ["Harbor", "Canyon", "Signal", "Garden", "Empire", "Frontier", "Island", "Archive", "Meadow", "Tower"]

FIRST = [
    "Anna", "Daniel", "Maria", "Thomas", "Leila", "Samir", "Ioana", "Mihai", "Linh", "Minh", "Sari",
    "Budi", "Reza", "Nasrin", "Claire", "Hugo", "Greta", "Jonas", "Priya", "Omar", "Elena", "Victor",
    "Hannah", "Marcus", "Sofia", "Lucas", "Yasmin", "Kai", "Nora", "Felix", "Amira", "Tomasz",
    "Isabel", "Rafael", "Dewi", "Arash", "Mai", "Andrei", "Lucia", "Walter",
]
LAST = [
    "Calder", "Moreau", "Hartono", "Popescu", "Nguyen", "Rahimi", "Haddad", "Lindqvist", "Okafor",
    "Brennan", "Varga", "Kowalski", "Santos", "Fischer", "Tanaka", "Ionescu", "Tran", "Karimi",
    "Mansour", "Whitlock", "Delgado", "Novak", "Ashford", "Petrov", "Sutanto", "Ferrante",
    "Holloway", "Marsh", "Quinn", "Abbasi", "Dumitru", "Pham", "Wiryawan", "Ellery", "Stroud",
]
JOBS = [
    "lighthouse keeper", "night-shift nurse", "retired detective", "ferry captain", "young lawyer",
    "struggling painter", "schoolteacher", "cartographer", "mechanic", "radio host", "beekeeper",
    "journalist", "chef", "architect", "taxi driver", "violinist",
]
PLACES = [
    "a fishing town on the Baltic coast", "a snowbound mountain village", "1970s Bucharest",
    "a small town in Maine", "the outskirts of Jakarta", "a crumbling hotel in Lisbon",
    "present-day Hanoi", "a border town in the desert", "post-war Vienna", "a river port in Ohio",
    "a tea plantation in Java", "an island off the Scottish coast",
]
INCIDENTS = [
    "finds a stranger's letter hidden in a library book", "witnesses a robbery that no one else believes",
    "inherits a house with a locked room", "is asked to find a missing teenager",
    "discovers that a childhood friend has returned under a false name",
    "receives a box of photographs from a father long believed dead",
    "agrees to drive a dying woman across the country", "uncovers a smuggling ring at the docks",
    "must keep a failing family business afloat", "falls for the one person who can ruin them",
]
GOALS = [
    "uncover the truth before the storm season ends", "protect the family from a dangerous debt",
    "reunite with an estranged brother", "clear their name", "finish one last job",
    "win back the trust of their daughter", "keep a promise made years ago",
]
ENDINGS = [
    "In the end, {a} confesses everything to {b}, and the two part as friends.",
    "{b} is arrested at the harbour while {a} watches from the ferry.",
    "{a} burns the letters and leaves town at dawn with {c}.",
    "The final scene shows {a} and {b} rebuilding the house together a year later.",
    "{c} survives, and {a} finally tells the truth at the trial.",
]
SYN_MIDDLE = [
    "{a} first meets {b} at a funeral, where {b} claims to have known {a}'s mother.",
    "Suspicious, {a} follows {b} to an abandoned warehouse and overhears a deal being made.",
    "{c} warns {a} to stay away, but {a} keeps digging through old police records.",
    "A fire destroys the archive, and {a} realises that someone close is covering the past.",
    "{b} admits that the money was borrowed from a dangerous lender years ago.",
    "During a storm, {a} and {c} are trapped in the lighthouse and share their secrets.",
    "{a} discovers a photograph proving that {b} was in the town on the night of the accident.",
    "The lender's men threaten {c}, forcing {a} to choose between loyalty and safety.",
    "{a} travels to the capital to find the only witness still alive.",
    "The witness reveals that {c} had tried to stop the crime and was silenced.",
]
KEYWORDS = [
    "small town", "family secret", "betrayal", "road trip", "friendship", "revenge", "lighthouse",
    "storm", "investigation", "coming of age", "debt", "letter", "photograph", "grief", "redemption",
    "island", "smuggling", "inheritance", "journalist", "trial",
]
GENRES = [
    "Action", "Adventure", "Biography", "Comedy", "Crime", "Drama", "Family", "Fantasy", "History",
    "Horror", "Music", "Mystery", "Romance", "Sci-Fi", "Thriller", "War",
]
ORIGIN_COUNTRIES = [
    ("United States", "English"), ("United Kingdom", "English"), ("France", "French"),
    ("Germany", "German"), ("Romania", "Romanian"), ("Indonesia", "Indonesian"),
    ("Iran", "Persian"), ("Egypt", "Arabic"), ("Vietnam", "Vietnamese"), ("Canada", "English"),
    ("South Korea", "Korean"), ("Spain", "Spanish"),
]

#: Certificate ladders per target country: for each severity level 0..4 the raw labels IMDb shows
#: (as (raw, normalised SPEC A8 label) pairs; several spellings of one class are real).
LADDER: dict[str, list[list[tuple[str, str]]]] = {
    "Australia": [[("G", "G")], [("PG", "PG")], [("M", "M")], [("MA15+", "MA15+")], [("MA15+", "MA15+"), ("R18+", "R18+")]],
    "Brazil": [[("Livre", "Livre"), ("L", "Livre")], [("10", "10")], [("12", "12")], [("14", "14"), ("16", "16")], [("16", "16"), ("18", "18")]],
    "France": [[("Tous publics", "Tous publics"), ("U", "Tous publics"), ("Tous Public", "Tous publics")],
               [("Tous publics", "Tous publics"), ("Tous publics avec avertissement", "Tous publics")],
               [("Tous publics", "Tous publics"), ("12", "12"), ("-12", "12")],
               [("12", "12"), ("12 avec avertissement", "12"), ("16", "16")],
               [("16", "16"), ("-16", "16"), ("18", "18")]],
    "Germany": [[("o.Al.", "0"), ("0", "0")], [("6", "6")], [("12", "12")], [("16", "16")], [("18", "18")]],
    "Netherlands": [[("AL", "AL")], [("6", "6"), ("AL", "AL")], [("12", "12"), ("9", "9")], [("16", "16"), ("14", "14")], [("16", "16"), ("18", "18")]],
    "Singapore": [[("G", "G")], [("PG", "PG")], [("PG13", "PG13")], [("NC16", "NC16"), ("NC-16", "NC16"), ("M18", "M18")], [("M18", "M18"), ("R21", "R21")]],
    "South Korea": [[("All", "All")], [("All", "All"), ("12", "12")], [("12", "12"), ("15", "15")], [("15", "15")], [("18", "19"), ("19", "19")]],
    "Sweden": [[("Btl", "Btl")], [("7", "7")], [("11", "11")], [("15", "15")], [("15", "15")]],
    "United Kingdom": [[("U", "U")], [("PG", "PG")], [("12A", "12"), ("12", "12")], [("15", "15")], [("18", "18")]],
    "United States": [[("G", "G")], [("PG", "PG")], [("PG-13", "PG-13")], [("R", "R")], [("R", "R")]],
}
#: Same-class re-ratings (a second entry for the country that normalises to the same label).
RERATING: dict[tuple[str, str], str] = {
    ("United Kingdom", "12A"): "12", ("Germany", "o.Al."): "0", ("Brazil", "Livre"): "L",
    ("Singapore", "NC16"): "NC-16", ("France", "Tous publics"): "Tous Publics", ("South Korea", "18"): "19",
}
OLD_COUNTRY_NAMES = {"United Kingdom": "UK", "United States": "USA"}
TV_RATINGS = ["TV-PG", "TV-14", "TV-MA", "TV-G"]
OTHER_CERTS = [
    "Canada:14A::(Alberta)", "Canada:PG::(Manitoba)", "Finland:K-12", "Argentina:13", "Japan:G",
    "Portugal:M/12", "Spain:12", "Ireland:12A", "Norway:12", "India:UA", "Iceland:L",
    "Malaysia:(Banned)", "Denmark:11", "Italy:T", "Mexico:B", "Philippines:R-13",
]
NOTES = ["(Blu-ray rating)", "(DVD rating)", "(DVD and Blu-ray rating)", "(re-rating)"]
CSM_AGE = [["6+", "7+"], ["8+", "10+"], ["12+", "13+"], ["14+", "15+"], ["16+", "17+", "18+"]]


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower().replace("'", "")).strip("-")


def max_films() -> int:
    """How many distinct titles (so films) a sample world can have."""
    return len(TITLES) + len(_ADJ) * len(_NOUN)


def titles(rng: random.Random, n: int) -> list[str]:
    pool = list(TITLES)
    rng.shuffle(pool)
    extra = [f"The {a} {b}" for a in _ADJ for b in _NOUN]
    rng.shuffle(extra)
    out = (pool + extra)[:n]
    if len(out) < n:
        raise ValueError(f"at most {len(pool) + len(extra)} films are supported")
    return out


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def people(rng: random.Random, k: int) -> list[str]:
    seen: list[str] = []
    while len(seen) < k:
        p = person(rng)
        if p not in seen:
            seen.append(p)
    return seen
