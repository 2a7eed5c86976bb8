"""A deterministic synthetic *Catalog of Copyright Entries* world (issue 10): registration and
renewal pages laid out as Internet Archive items, a CPRS-like export of post-1978 renewals, and a
ground-truth manifest of every planted case's expected copyright status (SPEC B2).

``generate_cce_world(out_dir, seed) -> manifest`` writes (a pure function of ``seed``)::

    out_dir/
      manifest.json                       the returned manifest (below)
      afi_based_on.tsv                    source works (AFI "based on"): film_reg_id film_reg_date
                                          source_title renewed(yes/no/unknown) renewal_id
      cprs_export.tsv                     CPRS-like export (the columns of NYPL's 1978-from-db.tsv:
                                          entry_id volume part number page auth titl oreg odat id
                                          dreg claimants new_matter see_also_ren see_also_reg note
                                          full_text); RE renewal numbers, ISO dates
      ia/<identifier>/                    one IA texts item per CCE volume (fixtures/ia_server.py)
          _item.json                      the metadata dict (title "Catalog of Copyright Entries …
                                          Motion Pictures …", collection copyrightrecords)
          <identifier>_hocr_*.gz          OCR text + hOCR page index (``cinesub.sample.scans.page_derivatives``;
                                          also ``_djvu.txt`` without page marker, scan data), planted
                                          OCR damage included; absent for the image-only volume
          <identifier>.pdf                the page images as a PDF (pdf2image renders them; the
                                          PDF itself has no text layer)
      gold/<identifier>/<leaf:04d>.json   per page: {item_id, page, kind, layout, text (clean),
                                          entries[{title, reg_id, reg_date, …}]}

Printed layouts (shapes copied from ``realdata/cce/raw_entry_examples.txt``):

* registrations (cumulative 1912–1939 / 1950–1959 / 1960–1969 and the 1977/1978 annuals):
  ``TITLE. N reels. © Claimant; 15Jan34; LP4520.``
* renewals, 1950 list: ``TITLE, a photoplay in six reels by Company. © 7Feb23, L18801. R58700,
  17Feb50, Claimant (PWH)`` (commas; non-film classes mixed in);
* renewals, 1954 on: ``TITLE, a photoplay in seven reels by Company. © 18Apr30; LP1380. Claimant
  (PWH); 10Jan58; R210877.`` (semicolons).

One volume has no text layer (:data:`IMAGE_ONLY_VOLUME`, the cumulative 1960–1969 registrations:
no ``_djvu.txt``, manifest ``text_layer: false``), as many IA scans have none: its two cases (the
1963/1964 boundary) can only be read from the page images, by the Gemini page extractor.

Planted cases (``manifest["cases"]``, each with its expected ``status`` as of 2026-01-01 and the
reason): published before 1931 (one of them renewed: still public domain; the 1930 film turns
``protected`` with as_of 2025-12-31), renewed / unrenewed 1931–1963 films, a renewal whose
original number is OCR-damaged but normalisable (``1P4412``), a renewal with a damaged month
(``220ct34``) and a 7th digit in its R number, a renewal whose number cannot be matched (a
transposition; title and date agree → ``needs_review``), a registration number used twice in
different series (LP4701 in 1934, not renewed, and in 1954, renewed through CPRS), the 1963/1964
and 1977/1978 boundaries, and source works (``afi_based_on.tsv``, AFI "based on", columns
``film_reg_id film_reg_date source_title renewed renewal_id``): Winter Orchard, an unrenewed 1934
film based on a novel whose copyright was renewed (``protected``, rule R5 — excluded from the
collection), Gone with the Tempest based on an unrenewed story (stays in), and River of Regret,
based on a story of unknown renewal (``needs_review``). The Variety films of
:mod:`cinesub.sample.variety` are among them, so
``manifest["collection"]`` (Variety top-100 ∩ public domain or likely public domain ∩ sound film on
IA) is non-empty and lists what each excluded film fails (renewed, silent, not on IA, review).
"""

from __future__ import annotations

import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cinesub.sample.scans import page_derivatives, png_bytes, render_page, scoped_rng, sha256_hex, write_item
from cinesub.sample.variety import FILM_BY_KEY, FILMS

GENERATOR_VERSION = "1.4"  # 1.1: the 1960-1969 volume is image-only; 1.2: source works; 1.3: hOCR page index;
#                             1.4: the collection's expectation covers unregistered films (R1_release_date, needs_review)
DEFAULT_SEED = 1934
AS_OF = "2026-01-01"

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
REEL_WORDS = {5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}


def cce_date(iso: str) -> str:
    """``1934-01-15`` → ``15Jan34`` (the CCE form)."""
    y, m, d = iso.split("-")
    return f"{int(d)}{MONTHS[int(m) - 1]}{y[2:]}"


@dataclass(frozen=True)
class Reg:
    case: str
    title: str
    reg_id: str
    reg_date: str  # ISO
    claimant: str
    company: str
    reels: int
    film_key: str | None  # a Variety world film, or None
    status: str  # expected, as of AS_OF
    reason: str
    status_2025_12_31: str | None = None  # only where the day before differs


@dataclass(frozen=True)
class Ren:
    case: str
    title: str
    orig_reg_id: str  # as it should be read (after normalisation)
    orig_date: str  # ISO
    renewal_id: str
    renewal_date: str  # ISO
    claimant: str
    basis: str
    company: str
    reels: int
    volume: str  # identifier of the renewal volume, or "cprs"
    printed_reg_id: str | None = None  # OCR-damaged form printed in the volume
    printed_orig_date: str | None = None
    printed_renewal_id: str | None = None
    printed_copyright_sign: str = "©"


REGS: tuple[Reg, ...] = (
    # Variety films (1934 top-100 and 1926)
    Reg("unrenewed_variety_gone", "Gone with the Tempest", "LP4520", "1934-01-15", "Apex Pictures, inc.", "Apex Pictures",
        7, "gone", "likely_public_domain", "registered 1934, no renewal in 1961-62"),
    Reg("renewed_variety_midnight", "The Midnight Express", "LP4388", "1934-01-05", "Paramount Productions, inc.",
        "Paramount Productions", 8, "midnight", "protected", "renewed R285114 on 12Dec61"),
    Reg("ocr_reg_number_lady", "Lady of the Harbor", "LP4601", "1934-02-09", "United Artists Corp.", "United Artists",
        7, "lady", "likely_public_domain", "registration printed LP46O1 (O for 0); no renewal"),
    Reg("unrenewed_variety_crimson", "Crimson Trail", "LP4555", "1934-01-26", "Paramount Productions, inc.",
        "Paramount Productions", 6, "crimson", "likely_public_domain", "no renewal"),
    Reg("unrenewed_not_on_ia_patrol", "Night Patrol", "LP4580", "1934-02-02", "Columbia Pictures Corp.", "Columbia",
        6, "patrol", "likely_public_domain", "no renewal (the film is not on the Internet Archive)"),
    Reg("ocr_renewal_number_serenade", "Broadway Serenade of 1934", "LP4412", "1934-01-10",
        "Metro-Goldwyn-Mayer Corp.", "Metro-Goldwyn-Mayer Corp.", 9, "serenade", "protected",
        "renewal R285530 prints the original number as 1P4412 and © as @"),
    Reg("unmatched_number_review_bondage", "Hearts in Bondage", "LP4689", "1934-03-16", "Warner Bros. Pictures, inc.",
        "Warner Bros.", 7, "bondage", "needs_review",
        "a renewal of HEARTS IN BONDAGE dated 16Mar34 gives LP4698 (transposed): title and date agree, number does not"),
    Reg("number_collision_1934_sailor", "Sing, Sailor, Sing", "LP4701", "1934-03-23", "Fox Film Corp.", "Fox Film Corp.",
        7, "sailor", "likely_public_domain",
        "LP4701 of 1934 is not renewed; the renewed LP4701 is a 1954 registration (number collision)"),
    Reg("source_work_renewed_orchard", "Winter Orchard", "LP4630", "1934-02-16", "RKO Radio Pictures, inc.",
        "RKO Radio Pictures", 7, "orchard", "protected",
        "not renewed itself, but based on the novel Winter Orchard whose copyright was renewed (R231245; "
        "AFI based on): R5_source_work_renewed"),
    Reg("silent_pre1931_sheikh", "The Desert Sheikh", "L22890", "1926-04-12", "Famous Players-Lasky Corp.",
        "Famous Players-Lasky Corp.", 7, "sheikh", "public_domain", "published 1926, before 1931"),
    Reg("silent_pre1931_ranch", "Ranch of Dreams", "L22950", "1926-05-03", "First National Pictures, inc.",
        "First National Pictures", 6, "ranch", "public_domain", "published 1926, before 1931"),
    Reg("silent_pre1931_bargain", "Her Bargain Day", "L23011", "1926-05-20", "Metro-Goldwyn-Mayer Corp.",
        "Metro-Goldwyn-Mayer Corp.", 6, "bargain", "public_domain", "published 1926, before 1931"),
    # CCE-only cases
    Reg("renewed_1923_still_pd", "The Covered Bridge", "L18801", "1923-02-07", "Famous Players-Lasky Corp.",
        "Famous Players-Lasky Corp.", 6, None, "public_domain", "published 1923 (renewed 1950, term ended)"),
    Reg("boundary_1930_renewed", "Whispering Canyon", "LP1380", "1930-04-18", "Tiffany Productions, inc.",
        "Tiffany Productions", 7, None, "public_domain",
        "published 1930: public domain from 2026-01-01 though renewed in 1958", status_2025_12_31="protected"),
    Reg("boundary_1931_unrenewed", "Tomorrow's Harvest", "LP2210", "1931-03-05", "Educational Film Exchanges, inc.",
        "Educational Film Exchanges", 6, None, "likely_public_domain", "registered 1931, not renewed"),
    Reg("boundary_1931_renewed", "Steel Horizon", "LP2250", "1931-05-14", "Universal Pictures Corp.",
        "Universal Pictures Corp.", 8, None, "protected", "renewed R215600 on 20Jun58"),
    Reg("ocr_renewal_month_tides", "Tides of Fortune", "LP5012", "1934-10-22", "RKO Radio Pictures, inc.",
        "RKO Radio Pictures", 7, None, "protected",
        "renewal prints the date 220ct34 (0 for O) and the renewal number R2850141 (a 7th digit)"),
    Reg("number_collision_1954_renewed_cprs", "Valley of Shadows", "LP4701", "1954-09-14", "Republic Pictures Corp.",
        "Republic Pictures Corp.", 7, None, "protected", "renewed RE101234 on 1982-03-01 (CPRS)"),
    Reg("source_work_unknown_1936", "River of Regret", "LP6420", "1936-05-11", "Monogram Pictures Corp.",
        "Monogram Pictures", 6, None, "needs_review",
        "not renewed, but based on a story whose renewal is unknown (AFI based on): R5_source_work_unknown"),
    Reg("unrenewed_1955", "Desert Patrol", "LP5120", "1955-02-04", "Allied Artists Pictures Corp.",
        "Allied Artists Pictures Corp.", 7, None, "likely_public_domain", "registered 1955, no CPRS renewal"),
    Reg("boundary_1963_unrenewed", "Harbor Lights Revue", "LP26990", "1963-12-12", "Crown International Pictures",
        "Crown International Pictures", 8, None, "likely_public_domain", "registered 1963, not renewed in 1991"),
    Reg("boundary_1964_automatic", "Atomic Sunset", "LP28001", "1964-01-06", "American International Pictures",
        "American International Pictures", 9, None, "protected", "registered 1964: renewal automatic"),
    Reg("boundary_1977_automatic", "Midnight Diner", "LP49002", "1977-03-03", "Dimension Pictures, inc.",
        "Dimension Pictures", 9, None, "protected", "registered 1977: renewal automatic"),
    Reg("boundary_1978_no_renewal_needed", "Neon Avenue", "PA1234", "1978-02-15", "Neon Films, inc.", "Neon Films",
        10, None, "protected", "1978 on: no renewal needed"),
)

RENS: tuple[Ren, ...] = (
    Ren("renewed_1923_still_pd", "The Covered Bridge", "L18801", "1923-02-07", "R58700", "1950-02-17",
        "Paramount Pictures Corp.", "PWH", "Famous Players-Lasky Corp.", 6, "catalogofcopyri1950motsynth"),
    Ren("boundary_1930_renewed", "Whispering Canyon", "LP1380", "1930-04-18", "R210877", "1958-01-10",
        "Tiffany Film Corp.", "PWH", "Tiffany Productions, inc.", 7, "catalogofcopyri1958motsynth"),
    Ren("boundary_1931_renewed", "Steel Horizon", "LP2250", "1931-05-14", "R215600", "1958-06-20",
        "Universal Pictures Co., Inc.", "PWH", "Universal Pictures Corp.", 8, "catalogofcopyri1958motsynth"),
    Ren("renewed_variety_midnight", "The Midnight Express", "LP4388", "1934-01-05", "R285114", "1961-12-12",
        "Paramount Pictures Corp.", "PWH", "Paramount Productions, inc.", 8, "catalogofcopyri1961motsynth"),
    Ren("ocr_renewal_number_serenade", "Broadway Serenade of 1934", "LP4412", "1934-01-10", "R285530", "1961-12-19",
        "Metro-Goldwyn-Mayer, inc.", "PWH", "Metro-Goldwyn-Mayer Corp.", 9, "catalogofcopyri1961motsynth",
        printed_reg_id="1P4412", printed_copyright_sign="@"),
    Ren("unmatched_number_review_bondage", "Hearts in Bondage", "LP4698", "1934-03-16", "R286002", "1961-12-28",
        "United Artists Associated, inc.", "PWH", "Warner Bros. Pictures, inc.", 7, "catalogofcopyri1961motsynth"),
    Ren("ocr_renewal_month_tides", "Tides of Fortune", "LP5012", "1934-10-22", "R285014", "1961-10-30",
        "RKO General, inc.", "PWH", "RKO Radio Pictures, inc.", 7, "catalogofcopyri1961motsynth",
        printed_orig_date="220ct34", printed_renewal_id="R2850141", printed_copyright_sign="6"),
    Ren("number_collision_1954_renewed_cprs", "Valley of Shadows", "LP4701", "1954-09-14", "RE101234", "1982-03-01",
        "Republic Pictures Corp.", "PWH", "Republic Pictures Corp.", 7, "cprs"),
)

@dataclass(frozen=True)
class Src:
    """A row of the world's AFI-derived source-work table (``afi_based_on.tsv``)."""

    case: str  # the Reg case of the film
    source_title: str
    renewed: str  # yes | no | unknown (as the curator's TSV spells it)
    renewal_id: str | None = None


#: source works (AFI "based on"): a renewed novel excludes Winter Orchard; an unrenewed source
#: leaves Gone with the Tempest in the collection; an unknown one sends River of Regret to review
SOURCES: tuple[Src, ...] = (
    Src("source_work_renewed_orchard", "Winter Orchard, a novel", "yes", "R231245"),
    Src("unrenewed_variety_gone", "Tempest over the Delta, a story", "no"),
    Src("source_work_unknown_1936", "The River Road, a story", "unknown"),
)
SOURCE_WORKS_FILE = "afi_based_on.tsv"

# Non-film filler (the 1950 renewal list mixes all classes), verbatim shapes of raw_entry_examples.txt
FILLER_1950 = (
    "ACTUAL BUSINESS ENGLISH, by P. H. Deffendall. © 1Aug22, A681161. R60449, 5Apr50, P. H. Deffendall (A)",
    "AFTER THE RAIN, a comedy in a prologue, two acts, and an epilogue, by LeRoy Clemens and Lynne Overman. "
    "© 8Mar23, D63874. R59396, 13Mar50, LeRoy Clemens (A)",
)
FILLER_LATER = (
    "ABBOTT, AUSTIN.|Digest of all the New York reports, 1925. © 14Aug26; A901544. Lawyers Co-operative Pub. Co. "
    "(PCW); 21Apr54; R129491.",
)

REG_VOLUMES: tuple[dict[str, Any], ...] = (
    {"identifier": "motionpict19121939synth", "range": (1912, 1939),
     "title": "Catalog of Copyright Entries, Cumulative Series: Motion Pictures 1912-1939", "date": "1951"},
    {"identifier": "motionpict19501959synth", "range": (1950, 1959),
     "title": "Catalog of Copyright Entries, Cumulative Series: Motion Pictures 1950-1959", "date": "1960"},
    {"identifier": "motionpict19601969synth", "range": (1960, 1969),
     "title": "Catalog of Copyright Entries, Cumulative Series: Motion Pictures 1960-1969", "date": "1971"},
    {"identifier": "catalogofcopyri3311977synth", "range": (1977, 1977),
     "title": "Catalog of Copyright Entries 1977 Motion Pictures Third Series Vol 31 Parts 12-13", "date": "1977"},
    {"identifier": "catalogofcopyri4011978synth", "range": (1978, 1978),
     "title": "Catalog of Copyright Entries Fourth Series Vol 1 Part 4 Motion Pictures 1978", "date": "1978"},
)
REN_VOLUMES: tuple[dict[str, Any], ...] = (
    {"identifier": "catalogofcopyri1950motsynth", "layout": "1950", "date": "1950",
     "title": "Catalog of Copyright Entries 1950 Third Series Vol 4 Parts 12-13 Motion Pictures and Filmstrips"},
    {"identifier": "catalogofcopyri1958motsynth", "layout": "1954", "date": "1958",
     "title": "Catalog of Copyright Entries 1958 Third Series Vol 12 Parts 12-13 Motion Pictures"},
    {"identifier": "catalogofcopyri1961motsynth", "layout": "1954", "date": "1961",
     "title": "Catalog of Copyright Entries 1961 Third Series Vol 15 Parts 12-13 Motion Pictures"},
)

#: the registration volume printed without a text layer (PDF page images only, no ``_djvu.txt``)
IMAGE_ONLY_VOLUME = "motionpict19601969synth"

CPRS_HEADER = ("entry_id", "volume", "part", "number", "page", "auth", "titl", "oreg", "odat", "id", "dreg",
               "claimants", "new_matter", "see_also_ren", "see_also_reg", "note", "full_text")


def registration_line(r: Reg, printed_id: str | None = None) -> str:
    return (f"{r.title.upper()}. {r.reels} reels. © {r.claimant}; {cce_date(r.reg_date)}; "
            f"{printed_id or r.reg_id}.")


def renewal_line(n: Ren, layout: str) -> str:
    reg = n.printed_reg_id or n.orig_reg_id
    odate = n.printed_orig_date or cce_date(n.orig_date)
    rid = n.printed_renewal_id or n.renewal_id
    words = REEL_WORDS.get(n.reels, str(n.reels))
    head = f"{n.title.upper()}, a photoplay in {words} reels by {n.company}"
    head += "" if head.endswith(".") else "."
    if layout == "1950":
        return f"{head} {n.printed_copyright_sign} {odate}, {reg}. {rid}, {cce_date(n.renewal_date)}, {n.claimant} ({n.basis})"
    return f"{head} {n.printed_copyright_sign} {odate}; {reg}. {n.claimant} ({n.basis}); {cce_date(n.renewal_date)}; {rid}."


def _pdf_bytes(images: list[Any]) -> bytes:
    buf = io.BytesIO()
    first, rest = images[0], images[1:]
    first.save(buf, format="PDF", save_all=True, append_images=rest, resolution=100.0,
               title="Catalog of Copyright Entries", creationDate=None, modDate=None)
    return buf.getvalue()


def _volume_item(ia_dir: Path, gold_dir: Path, ident: str, title: str, date: str,
                 pages: list[tuple[str, str, list[str], list[dict[str, Any]]]],
                 text_layer: bool = True) -> list[dict[str, Any]]:
    """``pages``: (kind, layout, lines, entries). Leaf 0 is a title page. Without ``text_layer``
    the item has its PDF only (no ``_djvu.txt``)."""
    all_pages = [("title", "", [title.upper(), "", "LIBRARY OF CONGRESS", "COPYRIGHT OFFICE", "WASHINGTON"], [])] + pages
    texts, images, rows = [], [], []
    (gold_dir / ident).mkdir(parents=True, exist_ok=True)
    for leaf, (kind, layout, lines, entries) in enumerate(all_pages):
        text = "\n".join(lines).rstrip("\n") + "\n"
        img = render_page(lines, width=900, head_lines=1)
        images.append(img)
        texts.append(text)
        gold = {"item_id": ident, "page": leaf, "kind": kind, "layout": layout, "text": text, "entries": entries}
        (gold_dir / ident / f"{leaf:04d}.json").write_text(json.dumps(gold, indent=1, ensure_ascii=False) + "\n",
                                                          encoding="utf-8")
        rows.append({"page": leaf, "kind": kind, "layout": layout, "entries": len(entries),
                     "png_sha256": sha256_hex(png_bytes(img))})
    meta = {"identifier": ident, "mediatype": "texts", "collection": ["copyrightrecords", "americana"],
            "title": title, "creator": "Library of Congress. Copyright Office", "date": date, "year": date[:4],
            "language": "English", "page-count": str(len(all_pages))}
    files = page_derivatives(ident, texts) if text_layer else {}
    write_item(ia_dir, ident, meta, {**files, f"{ident}.pdf": _pdf_bytes(images)})
    return rows


def generate_cce_world(out_dir: Path | str, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Write the CCE world under ``out_dir`` (replacing what was there) and return its manifest."""
    out = Path(out_dir)
    for sub in ("ia", "gold"):
        if (out / sub).exists():
            shutil.rmtree(out / sub)
    out.mkdir(parents=True, exist_ok=True)
    ia_dir, gold_dir = out / "ia", out / "gold"
    rng = scoped_rng(seed, "cce")
    manifest: dict[str, Any] = {"generator": "cinesub.sample.cce", "generator_version": GENERATOR_VERSION,
                                "seed": seed, "as_of": AS_OF, "volumes": [], "cases": [], "renewals": [],
                                "collection": {}}
    # registration volumes
    for vol in REG_VOLUMES:
        lo, hi = vol["range"]
        regs = sorted((r for r in REGS if lo <= int(r.reg_date[:4]) <= hi), key=lambda r: r.title.upper())
        lines = [f"MOTION PICTURES {lo}-{hi}" if lo != hi else f"MOTION PICTURES {lo}", ""]
        entries = []
        for r in regs:
            printed = "LP46O1" if r.case == "ocr_reg_number_lady" else None
            lines.append(registration_line(r, printed))
            entries.append({"case": r.case, "title": r.title, "reg_id": r.reg_id, "reg_date": r.reg_date,
                            "claimant": r.claimant, "printed_reg_id": printed})
        text_layer = vol["identifier"] != IMAGE_ONLY_VOLUME
        rows = _volume_item(ia_dir, gold_dir, vol["identifier"], vol["title"], vol["date"],
                            [("registrations", "registration", lines, entries)], text_layer=text_layer)
        manifest["volumes"].append({"identifier": vol["identifier"], "kind": "registrations", "pages": rows,
                                    "text_layer": text_layer})
    # renewal volumes
    for vol in REN_VOLUMES:
        rens = sorted((n for n in RENS if n.volume == vol["identifier"]), key=lambda n: n.title.upper())
        lines = ["RENEWAL REGISTRATIONS", "MOTION PICTURES" if vol["layout"] != "1950" else "ALL CLASSES", ""]
        entries = []
        items = [(n.title.upper(), renewal_line(n, vol["layout"]), n) for n in rens]
        filler = FILLER_1950 if vol["layout"] == "1950" else FILLER_LATER
        items += [(f.upper(), f, None) for f in filler]
        rng.shuffle(items)
        items.sort(key=lambda x: x[0])
        for _, line, n in items:
            lines.append(line)
            if n is not None:
                entries.append({"case": n.case, "title": n.title, "orig_reg_id": n.orig_reg_id,
                                "orig_date": n.orig_date, "renewal_id": n.renewal_id,
                                "renewal_date": n.renewal_date, "claimant": n.claimant, "basis": n.basis,
                                "printed": line})
        rows = _volume_item(ia_dir, gold_dir, vol["identifier"], vol["title"], vol["date"],
                            [("renewals", vol["layout"], lines, entries)])
        manifest["volumes"].append({"identifier": vol["identifier"], "kind": "renewals", "layout": vol["layout"],
                                    "pages": rows, "text_layer": True})
    # CPRS-like export: the post-1978 renewals plus unrelated rows
    cprs = ["\t".join(CPRS_HEADER)]
    cprs_rows = [("a1f0c2d4-0001", "Republic Pictures Corp.", "Valley of Shadows", "LP4701", "1954-09-14",
                  "RE101234", "1982-03-01", "Republic Pictures Corp.|PWH"),
                 ("a1f0c2d4-0002", "Charles Singer.", "A History of biology.", "A42179", "1950-03-21", "RE9390",
                  "1978-12-14", "Charles Singer|A"),
                 ("a1f0c2d4-0003", "Marian Webb.", "Garden of the west; a novel.", "A88120", "1953-06-02", "RE92003",
                  "1981-05-11", "Marian Webb|A")]
    for eid, auth, titl, oreg, odat, rid, dreg, claim in cprs_rows:
        cprs.append("\t".join([eid, "", "", "", "", auth, titl, oreg, odat, rid, dreg, claim, "", "", "", "", ""]))
    (out / "cprs_export.tsv").write_text("\n".join(cprs) + "\n", encoding="utf-8")
    # AFI "based on" source works (read by extractors.cce.source_works)
    reg_of = {r.case: r for r in REGS}
    src_lines = ["film_reg_id\tfilm_reg_date\tsource_title\trenewed\trenewal_id"]
    manifest["source_works"] = []
    for w in SOURCES:
        r = reg_of[w.case]
        src_lines.append("\t".join([r.reg_id, r.reg_date, w.source_title, w.renewed, w.renewal_id or ""]))
        manifest["source_works"].append({"case": w.case, "film_reg_id": r.reg_id, "film_reg_date": r.reg_date,
                                         "source_title": w.source_title, "renewed": w.renewed,
                                         "renewal_id": w.renewal_id})
    (out / SOURCE_WORKS_FILE).write_text("\n".join(src_lines) + "\n", encoding="utf-8")
    # ground truth
    for r in REGS:
        case: dict[str, Any] = {"case": r.case, "title": r.title, "reg_id": r.reg_id, "reg_date": r.reg_date,
                                "status": r.status, "reason": r.reason, "film_key": r.film_key,
                                "imdb": FILM_BY_KEY[r.film_key].imdb if r.film_key else None}
        if r.status_2025_12_31:
            case["status_as_of_2025_12_31"] = r.status_2025_12_31
        manifest["cases"].append(case)
    for n in RENS:
        manifest["renewals"].append({"case": n.case, "title": n.title, "orig_reg_id": n.orig_reg_id,
                                     "orig_date": n.orig_date, "renewal_id": n.renewal_id,
                                     "renewal_date": n.renewal_date, "source": n.volume,
                                     "printed_reg_id": n.printed_reg_id, "printed_orig_date": n.printed_orig_date,
                                     "printed_renewal_id": n.printed_renewal_id})
    manifest["collection"] = expected_collection()
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                       encoding="utf-8")
    return manifest


def expected_collection() -> dict[str, Any]:
    """Variety top-100 ∩ (public domain or likely public domain) ∩ sound film on IA, with the
    reason each other top-100 film is excluded (every Variety world film is in its year's top 100).
    A film with no registration is public domain by its release year when released before the
    95-year line (``r1_release_date``: rule R1_release_date), else excluded
    (``copyright:no_registration``); a film whose IA item has no sound metadata, and no criterion
    failed, is ``needs_review`` (``sound:unknown``)."""
    by_film = {r.film_key: r for r in REGS if r.film_key}
    line = int(AS_OF[:4]) - 95
    included, excluded, review, r1 = [], {}, {}, []
    for f in FILMS:
        r = by_film.get(f.key)
        reasons = []
        if r is None:
            if f.year < line:
                r1.append(f.imdb)
            else:
                reasons.append("copyright:no_registration")
        elif r.status not in ("public_domain", "likely_public_domain"):
            reasons.append(f"status:{r.status}")
        if not f.sound:
            reasons.append("not_sound")
        if not f.ia_identifier:
            reasons.append("not_on_ia")
        if reasons:
            excluded[f.imdb] = reasons
        elif f.ia_identifier and not f.sound_metadata:
            review[f.imdb] = ["sound:unknown"]
        else:
            included.append(f.imdb)
    return {"as_of": AS_OF, "included": sorted(included), "excluded": dict(sorted(excluded.items())),
            "needs_review": dict(sorted(review.items())), "r1_release_date": sorted(r1)}


if __name__ == "__main__":  # python -m cinesub.sample.cce OUT_DIR [SEED]
    import sys

    m = generate_cce_world(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else DEFAULT_SEED)
    print(json.dumps({"volumes": [v["identifier"] for v in m["volumes"]], "collection": m["collection"]}, indent=1))
