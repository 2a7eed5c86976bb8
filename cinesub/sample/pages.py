"""HTML pages and IMDb dataset rows of the sample world, shaped like the real sources.

* Kids-in-Mind review page (real markup: ``<title>Title [Year] [Rating] - S.V.L``, header line
  ``Title | Year | Rating | - S.V.L``, category blocks in ``div.et_pb_text_inner`` with an ``<h2>``
  or ``<span>`` heading; the LANGUAGE block carries counts) and per-letter index pages.
* Common Sense Media review page in layout C ("Parents' Guide to", ``span.rating__age``,
  ``Movie R 2003 100 minutes``) or B (bare bullets, parents'/kids' ages), IMDb link in an
  ``<a href>`` or only in the JSON-LD ``sameAs``.
* IMDb title page shaped on the real captures (MANIFEST section 3): JSON-LD in IMDb's key order
  (2020 shape with relative urls and string ratings for odd films, the newer absolute-url shape
  with HTML entities inside JSON strings for even ones), no countryOfOrigin/inLanguage, a cast
  section and a ``__NEXT_DATA__`` script (aboveTheFoldData / mainColumnData: countries, spoken
  languages, certificates, summaries/synopses/outlines, storylineKeywords); plot-summary page;
  parental-guide page (legacy ``#certificates`` HTML, or the labelled list plus the current
  ``__NEXT_DATA__`` contentData).
* The six IMDb non-commercial datasets (basics, ratings, crew, principals, akas, name.basics;
  IMDb's column layouts, ``\\N`` for null, bare JSON ``characters``, akas in string order).
"""

from __future__ import annotations

import json
from html import escape

from cinesub.sample.model import Film


def _e(s: str) -> str:
    return escape(s, quote=True)


# --------------------------------------------------------------------------------------------
# Kids-in-Mind (shapes: ../shared/realdata/live/MANIFEST.md §1, docs/sources.md "Kids-in-Mind")
# --------------------------------------------------------------------------------------------
KIM_TIME_URL = "http://content.time.com/time/specials/packages/article/0,28804,1949762_1949772_1950048,00.html"
#: where the fixture serves the KIM site (index and review links are root-relative, as on KIM)
KIM_PREFIX = "/kim"


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


def kim_rating(mpaa: str) -> str:
    """The rating as KIM prints it (``NR`` for unrated films)."""
    return "NR" if mpaa in ("Not Rated", "Unrated", "") else mpaa


def kim_svl(f: Film) -> str:
    return f"{f.kim_scores['sex']}.{f.kim_scores['violence']}.{f.kim_scores['language']}"


def _kim_banner() -> str:
    return f"""<div class="et_pb_row et_pb_row_0">
 <div class="et_pb_column et_pb_column_4_4 et_pb_column_0">
  <div class="et_pb_module et_pb_text et_pb_text_0 et_pb_text_align_center"><div class="et_pb_text_inner">
   <p><span style="font-size: 20px;">Movie Ratings That Actually Work</span></p>
   <p><a href="https://members.kids-in-mind.com/subscribe.htm" rel="noopener noreferrer" target="_blank">Become a Member</a></p>
   <p><span>&#8220;One of the 50 best websites&#8221; &#8212; <a href="{KIM_TIME_URL}" rel="noopener noreferrer" target="_blank">TIME</a></span></p>
  </div></div>
 </div>
</div>"""


def _kim_blocks(f: Film) -> str:
    """The six category blocks in one of the three reported markups (chosen by the film's index)."""
    s, v, lang = f.kim_scores["sex"], f.kim_scores["violence"], f.kim_scores["language"]
    blocks = [("sex", f"SEX/NUDITY {s}", f.kim_texts["sex"]),
              ("violence", f"VIOLENCE/GORE {v}", f.kim_texts["violence"]),
              ("language", f"LANGUAGE {lang}", kim_language_prose(f.kim_counts)),
              ("substance", "SUBSTANCE USE", f.kim_texts["substance"]),
              ("discussion", "DISCUSSION TOPICS", f.kim_texts["topics"]),
              ("message", "MESSAGE", f.kim_message)]
    style = f.idx % 3
    if style == 1:  # <h2 id="sex"> headings, the text in the next sibling (one container)
        inner = "\n".join(f'<h2 id="{key}">{_e(head)}</h2>\n<p>{_e(text)}</p>' for key, head, text in blocks)
        return f'<div class="et_pb_module et_pb_text et_pb_text_4"><div class="et_pb_text_inner">\n{inner}\n</div></div>'
    out = []
    for n, (key, head, text) in enumerate(blocks):
        heading = (f"<h2>{_e(head)}</h2>" if style == 0 else
                   f'<p><span style="font-weight: bold; letter-spacing: 1px;">{_e(head)}</span></p>')
        # paragraphs inside a block are separated by line breaks that start with a space
        body = _e(text).replace(". ", ".<br>\n ", 1) if key == "sex" else _e(text)
        out.append(f'<div class="et_pb_module et_pb_text et_pb_text_{4 + n}" id="{key}-block">'
                   f'<div class="et_pb_text_inner">{heading}\n<p>{body}</p></div></div>')
    return "\n".join(out)


def render_kim(f: Film) -> str:
    """A KIM review page: ``<title>Title [Year] [Rating] - S.V.L``, the header line
    ``Title | Year | Rating | - S.V.L``, the synopsis ending in ``[h:mm]``, the category blocks in
    ``div.et_pb_text_inner`` and the IMDb link."""
    rating, svl = kim_rating(f.mpaa), kim_svl(f)
    links = (f'<a href="{_e(f.kim_link)}" target="_blank" rel="noopener">IMDb</a> | ' if f.kim_link is not None else "")
    links += f'<a href="https://www.amazon.com/s?k={_e(f.title.replace(" ", "+"))}" rel="nofollow">Amazon</a>'
    h, m = divmod(f.runtime_min, 60)
    return f"""<!DOCTYPE html>
<html lang="en-US">
<head>
<meta charset="UTF-8">
<title>{_e(f.title)} [{f.year}] [{_e(rating)}] - {svl}</title>
<link rel="canonical" href="{_e(f.kim_url)}">
</head>
<body class="post-template-default single single-post et_pb_pagebuilder_layout et_divi_theme">
<div id="page-container"><div id="et-main-area"><div id="main-content">
<div class="et_pb_section et_pb_section_0 et_section_regular">
{_kim_banner()}
<div class="et_pb_row et_pb_row_1">
<div class="et_pb_column et_pb_column_3_4 et_pb_column_1">
<div class="et_pb_module et_pb_text et_pb_text_1"><div class="et_pb_text_inner"><h1 class="entry-title">{_e(f.title)} | {f.year} | {_e(rating)} | - {svl}</h1></div></div>
<div class="et_pb_module et_pb_text et_pb_text_2"><div class="et_pb_text_inner"><p>{_e(f.kim_texts['intro'])} Directed by {_e(", ".join(f.directors))}. [{h}:{m:02d}]</p></div></div>
<div class="et_pb_module et_pb_text et_pb_text_3"><div class="et_pb_text_inner"><p class="links">{links}</p></div></div>
{_kim_blocks(f)}
</div>
</div>
</div>
</div></div></div>
</body>
</html>
"""


def kim_letter(f: Film) -> str:
    return f.kim_id.split("/", 1)[0]


def render_kim_index(letter: str, films: list[Film], latest: list[Film]) -> str:
    """A KIM per-letter index page (``/kim/<letter>.htm``) in the real markup: letter buttons (the
    current one ``…_dark``), the latest-reviews sidebar (display titles, ``- S.V.L`` only), the
    header ``Movie Reviews by Title | X`` and one entry per film of the letter, by sort title:
    ``<a href="/kim/<letter>/<slug>.htm">Sort Title</a> [Year] [Rating] – S.V.L<br>`` (en dash;
    a hyphen on some entries, as on the real site)."""
    from cinesub.sample.films import kim_sort_title

    buttons = "\n".join(
        f'<div class="et_pb_button_module_wrapper et_pb_button_{i}_wrapper et_pb_module">'
        f'<a class="et_pb_button et_pb_button_{i} et_animated et_hover_enabled '
        f'et_pb_bg_layout_{"dark" if c == letter else "light"}" href="{KIM_PREFIX}/{c}.htm">{c.upper()}</a></div>'
        for i, c in enumerate("abcdefghijklmnopqrstuvwxyz"))
    side = "\n".join(f'<a href="{KIM_PREFIX}/{_e(x.kim_id)}.htm" rel="noopener" target="_blank">{_e(x.title)}</a> - {kim_svl(x)}<br/>'
                     for x in latest)
    entries = []
    for f in sorted(films, key=lambda x: (kim_sort_title(x.title).casefold(), x.year)):
        rel = "noopener" if f.idx % 2 else "noopener noreferrer"
        dash = "-" if f.idx % 7 == 3 else "\u2013"
        entries.append(f'<a href="{KIM_PREFIX}/{_e(f.kim_id)}.htm" rel="{rel}" target="_blank">{_e(kim_sort_title(f.title))}</a>'
                       f" [{f.year}] [{_e(kim_rating(f.mpaa))}] {dash} {kim_svl(f)}<br>")
    body = "\n\n".join(entries)
    up = letter.upper()
    return f"""<!DOCTYPE html>
<html lang="en-US">
<head>
<meta charset="UTF-8">
<title>Movie Reviews by Title | {up} | Kids-In-Mind.com</title>
</head>
<body class="page-template-default page et_pb_pagebuilder_layout et_divi_theme">
<div id="page-container"><div id="et-main-area"><div id="main-content">
<div class="et_pb_section et_pb_section_0 et_section_regular">
{_kim_banner()}
<div class="et_pb_row et_pb_row_2 btn-inline">
<div class="et_pb_column et_pb_column_4_4 et_pb_column_1 et_pb_css_mix_blend_mode_passthrough et-last-child">
{buttons}
</div>
</div>
<div class="et_pb_row et_pb_row_3">
<div class="et_pb_column et_pb_column_1_4 et_pb_column_2 et_pb_css_mix_blend_mode_passthrough">
<div class="et_pb_module et_pb_code et_pb_code_1 sidebar"><div class="et_pb_code_inner">
<span class="icon_film"></span><span style="font-weight: bold;">THIS WEEK</span><br/>
{side}
</div></div>
</div>
<div class="et_pb_column et_pb_column_1_2 et_pb_column_3 custom-row et_pb_css_mix_blend_mode_passthrough">
<div class="et_pb_module et_pb_text et_pb_text_1 sidebar et_pb_text_align_center et_pb_bg_layout_light"><div class="et_pb_text_inner">Movie Reviews by Title | {up}</div></div>
<div class="et_pb_module et_pb_text et_pb_text_2 sidebar et_pb_text_align_left et_pb_bg_layout_light"><div class="et_pb_text_inner">
{body}
</div></div>
</div>
</div>
</div>
</div></div></div>
</body>
</html>
"""


# --------------------------------------------------------------------------------------------
# Common Sense Media (no capture: the layouts the sources report, docs/sources.md)
# --------------------------------------------------------------------------------------------
_REVIEWERS = ["Sandie Angulo Chen", "Jeffrey M. Anderson", "Barbara Shulgasser-Parker", "Renee Longstreet"]


def _csm_other_ages(age: str) -> tuple[str, str]:
    """Parents' and kids' ages shown next to the CSM age: other numbers (no random draw)."""
    n = int(age.rstrip("+"))
    return f"{n + 1 if n < 18 else n - 1}+", f"{n - 1 if n > 2 else n + 1}+"


def _csm_ld(f: Film, with_same_as: bool) -> str:
    item: dict = {"@type": "Movie", "name": f.title}
    if with_same_as and f.csm_link:
        item["sameAs"] = [f.csm_link] if f.idx % 2 == 0 else f.csm_link
    ld = {"@context": "https://schema.org", "@type": "Review", "itemReviewed": item,
          "reviewBody": f.csm_one_liner, "datePublished": f.release_date,
          "author": {"@type": "Person", "name": _REVIEWERS[f.idx % len(_REVIEWERS)]},
          "publisher": {"@type": "Organization", "name": "Common Sense Media"}}
    return json.dumps(ld, ensure_ascii=False).replace("</", "<\\/")


def render_csm(f: Film) -> str:
    """A CSM review page in the newest layout (C, even index) or the one before it (B, odd
    index); every third page carries its IMDb link only in the JSON-LD ``sameAs``."""
    assert f.csm_url is not None
    ld_only = f.idx % 3 == 1
    link = (f'<li class="review-product-details__imdb"><a href="{_e(f.csm_link)}" rel="nofollow">IMDb</a></li>'
            if f.csm_link and not ld_only else "")
    parents_age, kids_age = _csm_other_ages(f.csm_age)
    reviewer = _REVIEWERS[f.idx % len(_REVIEWERS)]
    head = f"""<!DOCTYPE html>
<html lang="en" dir="ltr">
<head>
<meta charset="utf-8">
<title>{_e(f.title)} Movie Review | Common Sense Media</title>
<link rel="canonical" href="{_e(f.csm_url)}">
<script type="application/ld+json">{_csm_ld(f, ld_only or f.idx % 2 == 0)}</script>
</head>
<body class="path-node page-node-type-csm-review">
"""
    if f.idx % 2 == 0:  # (C) "Parents' Guide to", span.rating__age, "Movie R 2003 100 minutes"
        main = f"""<div class="review-product-summary">
  <h1 class="heading--page"><span class="review-product-summary__guide">Parents' Guide to</span><br><span class="review-product-summary__title">{_e(f.title)}</span></h1>
  <p class="review-product-summary__byline">By {_e(reviewer)}, Common Sense Media Reviewer</p>
  <div class="rating rating--inline"><span class="rating__age">age {_e(f.csm_age)}</span></div>
  <p class="review-product-summary__one-liner">{_e(f.csm_one_liner)}</p>
  <ul class="review-product-summary__details"><li>Movie</li><li>{_e(f.mpaa)}</li><li>{f.year}</li><li>{f.runtime_min} minutes</li></ul>
</div>
<section class="review-view-section"><h2>A Lot or a Little?</h2><p>{_e(f.csm_parents)}</p></section>
<section class="community-reviews"><h2>Community Reviews</h2>
  <div class="community-rating"><p>age {parents_age}</p><p>Based on 20 parent reviews</p></div>
</section>
<div class="review-view-content">
  <h2>Is It Any Good?</h2><p>Our review: {_e(f.csm_one_liner)}</p>
  <h3>What's the Story?</h3><p>{_e(f.storyline)}</p>
  <h3>Movie Details</h3>
  <ul class="review-product-details"><li><strong>Director:</strong> {_e(", ".join(f.directors))}</li>
  <li><strong>Cast:</strong> {_e(", ".join(c.actor for c in f.cast[:3]))}</li>
  {link}</ul>
</div>
<p>Parents say (20): age {parents_age} Kids say (86): age {kids_age}</p>
"""
    else:  # (B) bare bullets, "Parents say"/"Kids say" ages before the CSM age, no span.rating__age
        main = f"""<div class="review-product-summary">
  <h1 class="heading--page">{_e(f.title)}</h1>
  <p>Movie review by {_e(reviewer)}, Common Sense Media</p>
  <ul class="review-product-details"><li>{_e(f.mpaa)}</li><li>{f.year}</li><li>{f.runtime_min} minutes</li>{link}</ul>
  <div class="user-reviews"><div>Parents say <span>age {parents_age}</span> Based on 9 reviews</div>
  <div>Kids say <span>age {kids_age}</span> Based on 7 reviews</div></div>
  <div class="csm-age">age {_e(f.csm_age)}</div>
  <p class="review-product-summary__one-liner">{_e(f.csm_one_liner)}</p>
</div>
<section><h2>A lot or a little?</h2><p>Positive Messages: {_e(f.kim_message)}</p></section>
<section><h2>What parents need to know</h2><p>{_e(f.csm_parents)}</p></section>
<section><h2>What's the story?</h2><p>{_e(f.storyline)}</p></section>
"""
    return head + main + "</body>\n</html>\n"


# --------------------------------------------------------------------------------------------
# IMDb
# --------------------------------------------------------------------------------------------
def iso_duration(minutes: int) -> str:
    h, m = divmod(minutes, 60)
    return "PT" + (f"{h}H" if h else "") + (f"{m}M" if m else "")


#: ISO ids IMDb's ``__NEXT_DATA__`` gives for the sample world's countries and languages
_COUNTRY_IDS = {
    "United States": "US", "USA": "US", "United Kingdom": "GB", "UK": "GB", "France": "FR", "Germany": "DE",
    "West Germany": "XWG", "Romania": "RO", "Indonesia": "ID", "Iran": "IR", "Egypt": "EG", "Vietnam": "VN",
    "Canada": "CA", "South Korea": "KR", "Korea, South": "KR", "Spain": "ES", "Australia": "AU", "Brazil": "BR",
    "Sweden": "SE", "Finland": "FI", "Argentina": "AR", "Japan": "JP", "Portugal": "PT", "Ireland": "IE",
    "Norway": "NO", "India": "IN", "Iceland": "IS", "Malaysia": "MY", "Denmark": "DK", "Italy": "IT",
    "Mexico": "MX", "Philippines": "PH", "Netherlands": "NL", "Singapore": "SG", "Hong Kong": "HK",
}
_LANGUAGE_IDS = {"English": "en", "French": "fr", "German": "de", "Romanian": "ro", "Indonesian": "id",
                 "Persian": "fa", "Arabic": "ar", "Vietnamese": "vi", "Korean": "ko", "Spanish": "es"}


def nconst(f: Film, slot: int) -> str:
    """The sample person id of slot ``slot`` of film ``f`` (cast 0-49, directors 50-59, writers
    60-79); every fourth film's people have 8-digit ids, as IMDb's newer ones do."""
    base = (10_000_000 if f.idx % 4 == 0 else 1_000_000) + f.idx * 100
    return f"nm{base + slot:07d}"


def _people(f: Film) -> list[tuple[str, str, str]]:
    """(nconst, name, profession) of every credited person of ``f``."""
    out = [(nconst(f, i), c.actor, "actor") for i, c in enumerate(f.cast)]
    out += [(nconst(f, 50 + i), n, "director") for i, n in enumerate(f.directors)]
    out += [(nconst(f, 60 + i), n, "writer") for i, n in enumerate(f.writers)]
    return out


def _relative_style(f: Film) -> bool:
    """Half the sample films serve 2020-era JSON-LD (relative urls, ratings as strings, a single
    director as an object, a single genre as a string); the others the newer shape (absolute
    urls, numbers, lists, HTML entities inside JSON strings)."""
    return f.idx % 2 == 1


def _ld_person(f: Film, slot: int, name: str, relative: bool) -> dict:
    url = f"/name/{nconst(f, slot)}/"
    return {"@type": "Person", "url": url if relative else f"https://www.imdb.com{url}", "name": name}


def _one_or_list(items: list, relative: bool):
    return items[0] if relative and len(items) == 1 else items


def _review_body(f: Film) -> str:
    return (f'I went in expecting "just another {f.genres[0].lower()} picture" and it\'s far better than that. '
            f'{f.csm_one_liner} The "{f.title}" ending stays with you.')


def _json_ld(f: Film) -> str:
    """The title page's JSON-LD in IMDb's key order, without countryOfOrigin/inLanguage (IMDb's
    JSON-LD has neither; they are in ``__NEXT_DATA__``)."""
    rel = _relative_style(f)
    root = "" if rel else "https://www.imdb.com"
    url = f"{root}/title/{f.imdb_id}/"
    actors = [_ld_person(f, i, c.actor, rel) for i, c in enumerate(f.cast[:3])]
    directors = [_ld_person(f, 50 + i, n, rel) for i, n in enumerate(f.directors)]
    creator = [_ld_person(f, 60 + i, n, rel) for i, n in enumerate(f.writers)]
    creator.append({"@type": "Organization", "url": f"{root}/company/co{1_000_000 + f.idx:07d}/"})
    rating = ({"@type": "AggregateRating", "ratingCount": f.votes, "bestRating": "10.0", "worstRating": "1.0",
               "ratingValue": f"{f.imdb_rating:.1f}"} if rel else
              {"@type": "AggregateRating", "ratingCount": f.votes, "bestRating": 10, "worstRating": 1,
               "ratingValue": f.imdb_rating})
    body = _review_body(f)
    review = {"@type": "Review", "itemReviewed": {"@type": "CreativeWork" if rel else "Movie", "url": url},
              "author": {"@type": "Person", "name": f.summaries[0][1] if f.summaries else "imdb-user"}, "dateCreated": f.release_date,
              "inLanguage": "English", "name": f"A {f.genres[0].lower()} to remember",
              "reviewBody": body if rel else escape(body, quote=True).replace("&#x27;", "&apos;")}
    ld: dict = {"@context": "http://schema.org" if rel else "https://schema.org", "@type": "Movie", "url": url,
                "name": f.title, "image": f"https://m.media-amazon.com/images/M/{f.imdb_id}_poster.jpg"}
    if rel:
        ld.update(genre=_one_or_list(list(f.genres), rel), contentRating=f.mpaa, actor=actors,
                  director=_one_or_list(directors, rel), creator=creator)
        if f.description:
            ld["description"] = f.description
        ld.update(datePublished=f.release_date, keywords=",".join(f.keywords), aggregateRating=rating,
                  review=review, duration=iso_duration(f.runtime_min))
    else:
        if f.description:
            ld["description"] = f.description
        ld.update(review=review, aggregateRating=rating, contentRating=f.mpaa, genre=list(f.genres),
                  datePublished=f.release_date, keywords=",".join(f.keywords), actor=actors, director=directors,
                  creator=creator, duration=iso_duration(f.runtime_min))
    return json.dumps(ld, ensure_ascii=False, separators=(",", ":") if not rel else (", ", ": "))


def _cert_node(f: Film, i: int, raw: str) -> dict:
    country, label, note = _split_cert(raw)
    attrs = [{"text": note.strip("()"), "__typename": "DisplayableAttribute"}] if note else []
    return {"node": {"id": f"ce{f.idx:05d}{i:02d}", "attributes": attrs, "rating": label,
                     "ratingReason": None, "ratingsBody": None,
                     "country": {"id": _COUNTRY_IDS.get(country, "XX"), "text": country,
                                 "__typename": "DisplayableCountry"}, "__typename": "Certificate"},
            "__typename": "CertificatesEdge"}


def _plot_edges(texts: list[str], authors: list[str | None] | None = None) -> dict:
    edges = []
    for i, t in enumerate(texts):
        node: dict = {"plotText": {"plaidHtml": t, "__typename": "Markdown"}}
        if authors and authors[i]:
            node["author"] = authors[i]
        node["__typename"] = "Plot"
        edges.append({"node": node, "__typename": "PlotEdge"})
    return {"edges": edges, "__typename": "PlotConnection"}


def _next_data(f: Film) -> str:
    """The title page's ``__NEXT_DATA__`` shaped like IMDb's (aboveTheFoldData / mainColumnData):
    countries of origin (ids only above the fold; ids and names in countriesDetails for half the
    films), spoken languages, certificates, plots (``plaidHtml`` with entities), keywords."""
    origin = [{"id": _COUNTRY_IDS[c], "__typename": "CountryOfOrigin"} for c in f.countries]
    details = [{"id": _COUNTRY_IDS[c], "text": c, "__typename": "CountryOfOrigin"} for c in f.countries]
    languages = [{"id": _LANGUAGE_IDS[lang], "text": lang, "__typename": "SpokenLanguage"} for lang in f.languages]
    genres_above = {"genres": [{"genre": {"text": g, "__typename": "GenreItem"}, "__typename": "TitleGenre"}
                               for g in f.genres], "__typename": "TitleGenres"}
    above = {
        "id": f.imdb_id,
        "certificate": {"rating": "T", "__typename": "Certificate"},  # localised to the requester (Italy)
        "runtime": {"seconds": f.runtime_min * 60, "__typename": "Runtime"},
        "ratingsSummary": {"aggregateRating": f.imdb_rating, "voteCount": f.votes, "__typename": "RatingsSummary"},
        "titleGenres": genres_above,
        "titleText": {"text": f.title, "__typename": "TitleText"},
        "originalTitleText": {"text": f.title, "__typename": "TitleText"},
        "releaseYear": {"year": f.year, "endYear": None, "__typename": "YearRange"},
        "countriesOfOrigin": {"countries": origin, "__typename": "CountriesOfOrigin"},
        "__typename": "Title",
    }
    main: dict = {
        "id": f.imdb_id,
        "countriesOfOrigin": {"countries": origin, "__typename": "CountriesOfOrigin"},
        "summaries": _plot_edges([escape(t, quote=True) for t, _ in f.summaries], [a for _, a in f.summaries]),
        "outlines": _plot_edges([escape(f.description, quote=True)] if f.description else []),
        "synopses": _plot_edges(["<br/><br/>".join(escape(p, quote=True) for p in f.synopsis.split("\n\n"))]
                                if f.synopsis else []),
        "storylineKeywords": {"edges": [{"node": {"legacyId": k.replace(" ", "-"), "text": k,
                                                  "__typename": "TitleKeyword"}, "__typename": "TitleKeywordEdge"}
                                        for k in f.keywords], "total": len(f.keywords),
                              "__typename": "TitleKeywordConnection"},
        "certificates": {"total": len(f.certificates),
                         "edges": [_cert_node(f, i, raw) for i, raw in enumerate(f.certificates)],
                         "__typename": "CertificatesConnection"},
        "spokenLanguages": {"spokenLanguages": languages, "__typename": "SpokenLanguages"},
        "__typename": "Title",
    }
    if f.idx % 2 == 0:
        main["countriesDetails"] = {"countries": details, "__typename": "CountriesOfOrigin"}
    data = {"props": {"pageProps": {"tconst": f.imdb_id, "aboveTheFoldData": above, "mainColumnData": main},
                      "__N_SSP": True},
            "page": "/title/[tconst]", "query": {"tconst": f.imdb_id}, "buildId": "sample", "isFallback": False,
            "gssp": True, "locale": "en-US", "locales": ["en-US"], "defaultLocale": "en-US", "scriptLoader": []}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


def render_imdb_index(f: Film) -> str:
    cast_items = []
    for i, c in enumerate(f.cast):
        chars = "".join(
            f'<li><a class="title-cast-item__char" data-testid="cast-item-characters-link" href="/title/{f.imdb_id}/characters/{nconst(f, i)}"><span>{_e(ch)}</span></a></li>'
            for ch in c.characters
        )
        extra = "".join(f'<span class="title-cast-item__attribute">{_e(a)}</span>' for a in c.additional)
        cast_items.append(
            f'<div class="title-cast-item" data-testid="title-cast-item">'
            f'<a data-testid="title-cast-item__actor" href="/name/{nconst(f, i)}/">{_e(c.actor)}</a>'
            f'<ul class="title-cast-item__characters">{chars}</ul>{extra}</div>'
        )
    cast_html = "\n".join(cast_items)
    return f"""<!DOCTYPE html>
<html lang="en-US">
<head>
<meta charset="utf-8">
<title>{_e(f.title)} ({f.year}) - IMDb</title>
<meta property="og:title" content="{_e(f.title)} ({f.year}) ⭐ {f.imdb_rating} | {_e(", ".join(f.genres))}">
<script type="application/ld+json">{_json_ld(f)}</script>
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
<script id="__NEXT_DATA__" type="application/json">{_next_data(f)}</script>
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


def _guide_next_data(f: Film) -> str:
    """The current parental-guide page's ``__NEXT_DATA__``: ``contentData.certificates[*]
    {country, ratings[*]{rating, extraInformation}}`` and the MPA reason (the shape cinemagoerng's
    spec reads; ``extraInformation`` for the note is an assumption, see docs/sources.md)."""
    by_country: dict[str, list[dict]] = {}
    for raw in f.certificates:
        country, label, note = _split_cert(raw)
        r: dict = {"rating": label}
        if note:
            r["extraInformation"] = note
        by_country.setdefault(country, []).append(r)
    content = {
        "entityMetadata": {"id": f.imdb_id, "titleText": {"text": f.title}, "certificate": {"rating": f.mpaa}},
        "contentRatingData": {"ratingReason": f"Rated {f.mpaa} for some content" if f.mpaa != "Not Rated" else None},
        "certificates": [{"country": c, "ratings": rs} for c, rs in by_country.items()],
        "categories": [
            {"id": "NUDITY", "title": "Sex & Nudity", "items": [{"text": f.kim_texts["sex"], "isSpoiler": False}]},
            {"id": "VIOLENCE", "title": "Violence & Gore", "items": [{"text": f.kim_texts["violence"], "isSpoiler": False}]},
        ],
    }
    data = {"props": {"pageProps": {"contentData": content}}, "page": "/title/[tconst]/parentalguide",
            "query": {"tconst": f.imdb_id}, "buildId": "sample"}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


def render_parentalguide(f: Film) -> str:
    next_data = ""
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
        # the current (Next.js) page carries the same data in __NEXT_DATA__; half of these films
        # serve only that (the HTML list is then rendered client-side)
        next_data = f'<script id="__NEXT_DATA__" type="application/json">{_guide_next_data(f)}</script>\n'
        if f.idx % 2 == 0:
            certs = '<section data-testid="certificates"><h3 class="ipc-title__text">Certification</h3></section>'
    else:
        lis = []
        for raw in f.certificates:
            country, label, note = _split_cert(raw)
            lis.append(
                f'<li class="ipl-inline-list__item">\n    <a href="/search/title?certificates={_e(country[:2].upper())}:{_e(label)}">{_e(country)}:{_e(label)}</a>'
                + (f"\n        {_e(note)}" if note else "")
                + "\n</li>"
            )
        certs = (
            '<section class="article listo content-advisories-index">\n<section id="certificates">\n'
            '<header class="ipl-header"><div class="ipl-header__content"><h4 class="ipl-header__content ipl-list-title">Certification</h4></div></header>\n'
            '<table class="ipl-zebra-list row"><tbody><tr class="ipl-zebra-list__item" id="certifications-list">'
            '<td class="ipl-zebra-list__label">Certification</td>'
            '<td><ul class="ipl-inline-list">\n' + "\n".join(lis) + "\n</ul></td></tr></tbody></table>\n</section>\n</section>"
        )
    return f"""<!DOCTYPE html>
<html lang="en-US">
<head><meta charset="utf-8"><title>{_e(f.title)} ({f.year}) - Parents guide - IMDb</title></head>
<body>
<h2 data-testid="subtitle">Parents guide</h2>
{certs}
<section data-testid="content-rating"><h3 class="ipc-title__text">Sex &amp; Nudity</h3><div class="ipc-html-content-inner-div">{_e(f.kim_texts['sex'])}</div></section>
<section data-testid="content-rating"><h3 class="ipc-title__text">Violence &amp; Gore</h3><div class="ipc-html-content-inner-div">{_e(f.kim_texts['violence'])}</div></section>
{next_data}</body>
</html>
"""


# --------------------------------------------------------------------------------------------
# IMDb non-commercial datasets (the six files, IMDb's exact column layouts)
# --------------------------------------------------------------------------------------------
BASICS_HEADER = "tconst\ttitleType\tprimaryTitle\toriginalTitle\tisAdult\tstartYear\tendYear\truntimeMinutes\tgenres"
RATINGS_HEADER = "tconst\taverageRating\tnumVotes"
CREW_HEADER = "tconst\tdirectors\twriters"
PRINCIPALS_HEADER = "tconst\tordering\tnconst\tcategory\tjob\tcharacters"
AKAS_HEADER = "titleId\tordering\ttitle\tregion\tlanguage\ttypes\tattributes\tisOriginalTitle"
NAMES_HEADER = "nconst\tprimaryName\tbirthYear\tdeathYear\tprimaryProfession\tknownForTitles"


def _n(v) -> str:
    return "\\N" if v is None or v == "" else str(v)


def basics_row(tconst: str, title_type: str, primary: str, original: str, start: int | None,
               end: int | None, runtime: int | None, genres: list[str]) -> str:
    return "\t".join([tconst, title_type, primary, original, "0", _n(start), _n(end), _n(runtime),
                      ",".join(genres) if genres else "\\N"])


def ratings_row(tconst: str, rating: float, votes: int) -> str:
    return f"{tconst}\t{rating:.1f}\t{votes}"


def crew_row(f: Film) -> str:
    directors = ",".join(nconst(f, 50 + i) for i in range(len(f.directors))) or "\\N"
    writers = ",".join(nconst(f, 60 + i) for i in range(len(f.writers))) or "\\N"
    return f"{f.imdb_id}\t{directors}\t{writers}"


def principals_rows(f: Film) -> list[str]:
    """Up to ten principals as IMDb lists them: the top four cast, then the directors and writers,
    then more cast up to ordering 10 (``characters`` a bare JSON array, ``\\N`` for crew)."""
    rows: list[tuple[int, str, str, str, str]] = []  # ordering, nconst, category, job, characters

    def cast(i: int) -> None:
        c = f.cast[i]
        cat = "actress" if (f.idx + i) % 2 else "actor"
        rows.append((len(rows) + 1, nconst(f, i), cat, "\\N", json.dumps(c.characters, ensure_ascii=False)))

    for i in range(min(4, len(f.cast))):
        cast(i)
    for i in range(len(f.directors)):
        rows.append((len(rows) + 1, nconst(f, 50 + i), "director", "\\N", "\\N"))
    for i in range(len(f.writers)):
        rows.append((len(rows) + 1, nconst(f, 60 + i), "writer", "screenplay" if i == 0 else "story", "\\N"))
    i = 4
    while len(rows) < 10 and i < len(f.cast):
        cast(i)
        i += 1
    return [f"{f.imdb_id}\t{o}\t{n}\t{cat}\t{job}\t{ch}" for o, n, cat, job, ch in rows]


def akas_rows(f: Film) -> list[str]:
    """The original title, the US display title and a working title (ordering 10: the file lists
    orderings in string order, 1, 10, 2, as IMDb's does)."""
    return [
        f"{f.imdb_id}\t1\t{f.title}\t\\N\t\\N\toriginal\t\\N\t1",
        f"{f.imdb_id}\t10\t{f.title}: The Movie\tXWW\ten\tworking\t\\N\t0",
        f"{f.imdb_id}\t2\t{f.title}\tUS\t\\N\timdbDisplay\t\\N\t0",
    ]


def name_rows(f: Film) -> list[str]:
    return [f"{n}\t{name}\t\\N\t\\N\t{prof}\t{f.imdb_id}" for n, name, prof in _people(f)]
