"""HTML pages and IMDb dataset rows of the sample world, shaped like the real sources.

* Kids-in-Mind review page: title, ``SEX/NUDITY n - VIOLENCE/GORE n - LANGUAGE n``, an "IMDb" link,
  per-category prose (the LANGUAGE paragraph carries counts) and a ``MESSAGE:`` line.
* Common Sense Media review page: title, ``age 13+`` label, "Parents Need to Know", "What's the
  Story?" (storyline) and movie details with an embedded IMDb link.
* IMDb title page (JSON-LD block plus a cast section), plot-summary page (summaries + synopsis)
  and parental-guide page (certificates as ``Country:Label`` strings with notes).
* IMDb non-commercial dataset rows (title.basics / title.ratings TSV, ``\\N`` for null).
"""

from __future__ import annotations

import json
from html import escape

from cinesub.sample.model import Film


def _e(s: str) -> str:
    return escape(s, quote=True)


# --------------------------------------------------------------------------------------------
# Kids-in-Mind
# --------------------------------------------------------------------------------------------
def kim_language_prose(counts: dict[str, int]) -> str:
    parts = []
    if counts.get("f_words"):
        parts.append(f"about {counts['f_words']} F-words and its derivatives")
    if counts.get("scatological"):
        parts.append(f"{counts['scatological']} scatological terms")
    if counts.get("anatomical"):
        parts.append(f"{counts['anatomical']} anatomical terms")
    if counts.get("mild"):
        parts.append(f"{counts['mild']} mild obscenities")
    parts.append("name-calling (stupid, liar, idiot, jerk)")
    if counts.get("religious"):
        parts.append(f"{counts['religious']} religious exclamations (e.g. Oh My God, Jesus, For God's Sake)")
    return ", ".join(parts) + "."


def render_kim(f: Film) -> str:
    s, v, lang = f.kim_scores["sex"], f.kim_scores["violence"], f.kim_scores["language"]
    link = (
        f'<p class="links"><a href="{_e(f.kim_link)}" target="_blank" rel="noopener">IMDb</a> | '
        f'<a href="https://www.amazon.com/s?k={_e(f.title.replace(" ", "+"))}" rel="nofollow">Amazon</a></p>\n'
        if f.kim_link is not None
        else '<p class="links"><a href="https://www.amazon.com/s?k=dvd" rel="nofollow">Amazon</a></p>\n'
    )
    return f"""<!DOCTYPE html>
<html lang="en-US">
<head>
<meta charset="UTF-8">
<title>{_e(f.title)} [{f.year}] [{_e(f.mpaa)}] - {s}.{v}.{lang} | Parents Guide &amp; Movie Review | Kids-In-Mind.com</title>
<link rel="canonical" href="{_e(f.kim_url)}">
</head>
<body class="post-template-default single single-post">
<div id="page-container"><div id="main-content">
<article class="post type-post">
<h1 class="entry-title">{_e(f.title)} ({f.year}) [{_e(f.mpaa)}]</h1>
<div class="et_pb_text_inner">
<p class="ratings"><strong>SEX/NUDITY {s} - VIOLENCE/GORE {v} - LANGUAGE {lang}</strong></p>
<p>{_e(f.kim_texts['intro'])} Directed by {_e(", ".join(f.directors))}. [{f.runtime_min} min]</p>
{link}<p><strong>SEX/NUDITY {s}</strong> - {_e(f.kim_texts['sex'])}</p>
<p><strong>VIOLENCE/GORE {v}</strong> - {_e(f.kim_texts['violence'])}</p>
<p><strong>LANGUAGE {lang}</strong> - {_e(kim_language_prose(f.kim_counts))}</p>
<p><strong>SUBSTANCE USE</strong> - {_e(f.kim_texts['substance'])}</p>
<p><strong>DISCUSSION TOPICS</strong> - {_e(f.kim_texts['topics'])}</p>
<p><strong>MESSAGE:</strong> {_e(f.kim_message)}</p>
</div>
</article>
</div></div>
</body>
</html>
"""


# --------------------------------------------------------------------------------------------
# Common Sense Media
# --------------------------------------------------------------------------------------------
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"]


def _long_date(iso: str) -> str:
    y, m, d = iso.split("-")
    return f"{_MONTHS[int(m) - 1]} {int(d)}, {y}"


def render_csm(f: Film) -> str:
    assert f.csm_url is not None
    link = f'<li class="review-product-details__imdb"><a href="{_e(f.csm_link)}" rel="nofollow">IMDb</a></li>\n' if f.csm_link else ""
    return f"""<!DOCTYPE html>
<html lang="en" dir="ltr">
<head>
<meta charset="utf-8">
<title>{_e(f.title)} Movie Review | Common Sense Media</title>
<link rel="canonical" href="{_e(f.csm_url)}">
</head>
<body class="path-node page-node-type-csm-review">
<div class="review-product-summary">
  <h1 class="heading--page">{_e(f.title)}</h1>
  <div class="rating rating--inline"><span class="rating__age">age {_e(f.csm_age)}</span></div>
  <p class="review-product-summary__one-liner">{_e(f.csm_one_liner)}</p>
</div>
<section id="review-view-parents-need-to-know" class="review-view-section">
  <h2 class="heading--section">Parents Need to Know</h2>
  <div class="review-view-parents-need-to-know"><p>{_e(f.csm_parents)}</p></div>
</section>
<section id="review-view-story" class="review-view-section">
  <h2 class="heading--section">What's the Story?</h2>
  <div class="review-view-story"><p>{_e(f.storyline)}</p></div>
</section>
<section id="review-view-details" class="review-view-section">
  <h2 class="heading--section">Movie Details</h2>
  <ul class="review-product-details">
    <li><strong>In theaters:</strong> {_long_date(f.release_date)}</li>
    <li><strong>Cast:</strong> {_e(", ".join(c.actor for c in f.cast[:3]))}</li>
    <li><strong>Director:</strong> {_e(", ".join(f.directors))}</li>
    <li><strong>Genre:</strong> {_e(f.genres[0])}</li>
    <li><strong>Run time:</strong> {f.runtime_min} minutes</li>
    <li><strong>MPAA rating:</strong> {_e(f.mpaa)}</li>
    {link}  </ul>
</section>
</body>
</html>
"""


# --------------------------------------------------------------------------------------------
# IMDb
# --------------------------------------------------------------------------------------------
def iso_duration(minutes: int) -> str:
    h, m = divmod(minutes, 60)
    return "PT" + (f"{h}H" if h else "") + (f"{m}M" if m else "")


def _person_ids(names: list[str], base: int) -> list[dict]:
    return [{"@type": "Person", "url": f"https://www.imdb.com/name/nm{base + i:07d}/", "name": n} for i, n in enumerate(names)]


def render_imdb_index(f: Film) -> str:
    base = 1_000_000 + f.idx * 100
    ld: dict = {
        "@context": "https://schema.org",
        "@type": "Movie",
        "url": f"https://www.imdb.com/title/{f.imdb_id}/",
        "name": f.title,
        "image": f"https://m.media-amazon.com/images/M/{f.imdb_id}_poster.jpg",
    }
    if f.description:
        ld["description"] = f.description
    ld["aggregateRating"] = {
        "@type": "AggregateRating", "ratingCount": f.votes, "bestRating": 10, "worstRating": 1,
        "ratingValue": f.imdb_rating,
    }
    ld["contentRating"] = f.mpaa
    ld["genre"] = f.genres
    ld["datePublished"] = f.release_date
    ld["keywords"] = ",".join(f.keywords)
    ld["actor"] = _person_ids([c.actor for c in f.cast[:3]], base)
    ld["director"] = _person_ids(f.directors, base + 50)
    ld["creator"] = [
        {"@type": "Organization", "url": f"https://www.imdb.com/company/co{base:07d}/"},
        *_person_ids(f.writers, base + 60),
    ]
    ld["duration"] = iso_duration(f.runtime_min)
    ld["countryOfOrigin"] = [{"@type": "Country", "name": c} for c in f.countries]
    ld["inLanguage"] = [{"@type": "Language", "name": lang} for lang in f.languages]
    cast_items = []
    for i, c in enumerate(f.cast):
        chars = "".join(
            f'<li><a class="title-cast-item__char" data-testid="cast-item-characters-link" href="/title/{f.imdb_id}/characters/nm{base + i:07d}"><span>{_e(ch)}</span></a></li>'
            for ch in c.characters
        )
        extra = "".join(f'<span class="title-cast-item__attribute">{_e(a)}</span>' for a in c.additional)
        cast_items.append(
            f'<div class="title-cast-item" data-testid="title-cast-item">'
            f'<a data-testid="title-cast-item__actor" href="/name/nm{base + i:07d}/">{_e(c.actor)}</a>'
            f'<ul class="title-cast-item__characters">{chars}</ul>{extra}</div>'
        )
    cast_html = "\n".join(cast_items)
    return f"""<!DOCTYPE html>
<html lang="en-US">
<head>
<meta charset="utf-8">
<title>{_e(f.title)} ({f.year}) - IMDb</title>
<meta property="og:title" content="{_e(f.title)} ({f.year}) ⭐ {f.imdb_rating} | {_e(", ".join(f.genres))}">
<script type="application/ld+json">{json.dumps(ld, ensure_ascii=False)}</script>
</head>
<body>
<section data-testid="hero-parent">
<h1 data-testid="hero__pageTitle"><span class="hero__primary-text">{_e(f.title)}</span></h1>
<ul><li>{f.year}</li><li>{_e(f.mpaa)}</li><li>{f.runtime_min // 60}h {f.runtime_min % 60}m</li></ul>
</section>
<section data-testid="title-cast" class="ipc-page-section">
<h3 class="ipc-title__text">Top cast</h3>
{cast_html}
</section>
</body>
</html>
"""


def render_plotsummary(f: Film) -> str:
    if f.summaries:
        items = "\n".join(
            f'<li class="ipc-metadata-list__item" data-testid="list-item"><div class="ipc-html-content ipc-html-content--base">'
            f'<div class="ipc-html-content-inner-div" role="presentation">{_e(t)}</div></div>'
            f'<div class="ipc-metadata-list-item__author">—{_e(a)}</div></li>'
            for t, a in f.summaries
        )
        summaries = f'<ul class="ipc-metadata-list">\n{items}\n</ul>'
    else:
        summaries = '<div class="ipc-metadata-list--empty">It looks like we don\'t have any Plot Summaries for this title yet. <a href="/contribute">Be the first to contribute.</a></div>'
    if f.synopsis:
        paras = "<br/><br/>".join(_e(p) for p in f.synopsis.split("\n\n"))
        synopsis = (
            '<ul class="ipc-metadata-list"><li class="ipc-metadata-list__item" data-testid="list-item">'
            '<div class="ipc-html-content ipc-html-content--base">'
            f'<div class="ipc-html-content-inner-div" role="presentation">{paras}</div></div></li></ul>'
        )
    else:
        synopsis = '<div class="ipc-metadata-list--empty">It looks like we don\'t have a Synopsis for this title yet. <a href="/contribute">Be the first to contribute.</a></div>'
    return f"""<!DOCTYPE html>
<html lang="en-US">
<head><meta charset="utf-8"><title>{_e(f.title)} ({f.year}) - Plot - IMDb</title></head>
<body>
<h2 data-testid="subtitle">Plot</h2>
<section class="ipc-page-section" data-testid="sub-section-summaries">
<h3 class="ipc-title__text">Summaries</h3>
{summaries}
</section>
<section class="ipc-page-section" data-testid="sub-section-synopsis">
<h3 class="ipc-title__text">Synopsis</h3>
{synopsis}
</section>
</body>
</html>
"""


def _split_cert(raw: str) -> tuple[str, str, str | None]:
    main, _, note = raw.partition("::")
    country, _, label = main.partition(":")
    return country, label, note or None


def render_parentalguide(f: Film) -> str:
    if not f.certificates:
        certs = '<section data-testid="certificates"><h3 class="ipc-title__text">Certification</h3><div class="ipc-metadata-list--empty">No certification data available.</div></section>'
    elif f.cert_style == "modern":
        by_country: dict[str, list[tuple[str, str | None]]] = {}
        for raw in f.certificates:
            country, label, note = _split_cert(raw)
            by_country.setdefault(country, []).append((label, note))
        items = []
        for country, labels in by_country.items():
            lis = "".join(
                f'<li class="ipc-inline-list__item"><a class="ipc-metadata-list-item__list-content-item" href="/search/title/?certificates={_e(country[:2].upper())}%3A{_e(label)}">{_e(label)}</a>'
                + (f'<span class="ipc-metadata-list-item__list-content-item--subText">{_e(note)}</span>' if note else "")
                + "</li>"
                for label, note in labels
            )
            items.append(
                f'<li class="ipc-metadata-list__item" data-testid="certificates-item"><span class="ipc-metadata-list-item__label">{_e(country)}</span>'
                f'<div class="ipc-metadata-list-item__content-container"><ul class="ipc-inline-list">{lis}</ul></div></li>'
            )
        certs = '<section data-testid="certificates"><h3 class="ipc-title__text">Certification</h3><ul class="ipc-metadata-list">' + "\n".join(items) + "</ul></section>"
    else:
        lis = []
        for raw in f.certificates:
            country, label, note = _split_cert(raw)
            lis.append(
                f'<li class="ipl-inline-list__item"><a href="/search/title?certificates={_e(country[:2].upper())}:{_e(label)}">{_e(country)}:{_e(label)}</a>'
                + (f" {_e(note)}" if note else "")
                + "</li>"
            )
        certs = (
            '<section class="article listo content-advisories-index"><table class="ipl-zebra-list">'
            '<tr class="ipl-zebra-list__item" id="certificates"><td class="ipl-zebra-list__label">Certification</td>'
            '<td><ul class="ipl-inline-list">' + "\n".join(lis) + "</ul></td></tr></table></section>"
        )
    return f"""<!DOCTYPE html>
<html lang="en-US">
<head><meta charset="utf-8"><title>{_e(f.title)} ({f.year}) - Parents guide - IMDb</title></head>
<body>
<h2 data-testid="subtitle">Parents guide</h2>
{certs}
<section data-testid="content-rating"><h3 class="ipc-title__text">Sex &amp; Nudity</h3><div class="ipc-html-content-inner-div">{_e(f.kim_texts['sex'])}</div></section>
<section data-testid="content-rating"><h3 class="ipc-title__text">Violence &amp; Gore</h3><div class="ipc-html-content-inner-div">{_e(f.kim_texts['violence'])}</div></section>
</body>
</html>
"""


BASICS_HEADER = "tconst\ttitleType\tprimaryTitle\toriginalTitle\tisAdult\tstartYear\tendYear\truntimeMinutes\tgenres"
RATINGS_HEADER = "tconst\taverageRating\tnumVotes"


def _n(v) -> str:
    return "\\N" if v is None or v == "" else str(v)


def basics_row(tconst: str, title_type: str, primary: str, original: str, start: int | None,
               end: int | None, runtime: int | None, genres: list[str]) -> str:
    return "\t".join([tconst, title_type, primary, original, "0", _n(start), _n(end), _n(runtime),
                      ",".join(genres) if genres else "\\N"])


def ratings_row(tconst: str, rating: float, votes: int) -> str:
    return f"{tconst}\t{rating:.1f}\t{votes}"
