"""The two worked examples (page image → JSON answer) of the CCE Gemini page prompt.

What: :func:`write_cce_gemini_examples` renders two small Catalog of Copyright Entries pages with
the sample world's own layout code (:mod:`cinesub.sample.cce`: entry lines, page renderer, PNG
encoder) and writes each with the answer the prompt teaches (``extractors/cce/gemini_pages.py``,
schema ``CCERow``): a registration page of a cumulative catalog and a 1954-layout renewal page.
The shipped files under ``extractors/cce/data/examples`` are this function's output; a test checks
them byte for byte.

Why here: the examples must look like the pages the extractor reads, so they come from the same
generator code as the sample world; their films are not in the world, so the prompt never leaks a
test answer. They teach: values verbatim as printed (an OCR-looking ``LP9O88`` stays as printed,
dates stay ``DMonYY``), the title without description and credits, ``©`` printed as ``@`` or ``6``,
one row per registration of a multi-registration renewal, and non-film entries of a renewal list
skipped.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from cinesub.sample.cce import Reg, Ren, cce_date, registration_line, renewal_line
from cinesub.sample.scans import png_bytes, render_page

EXAMPLE_REGS: tuple[tuple[Reg, str | None, str], ...] = (
    # (registration, printed number or None, printed copyright sign)
    (Reg("example", "Along the Rio Grande", "LP10245", "1941-02-07", "RKO Radio Pictures, inc.", "RKO", 6, None,
         "", ""), None, "©"),
    (Reg("example", "The Bells of St. Mary's", "LP81", "1945-12-06", "Rainbow Productions, inc.", "Rainbow", 13,
         None, "", ""), None, "©"),
    (Reg("example", "Danger Street", "LP9088", "1947-03-14", "Paramount Pictures, inc.", "Paramount", 7, None,
         "", ""), "LP9O88", "©"),
    (Reg("example", "Highway West", "LP10602", "1941-08-02", "Warner Bros. Pictures, inc.", "Warner Bros.", 7,
         None, "", ""), None, "@"),
)

EXAMPLE_RENS: tuple[tuple[Ren, str], ...] = (
    (Ren("example", "Canyon of Gold", "L23790", "1927-03-12", "R143001", "1955-02-02", "Pioneer Film Corp.", "PWH",
         "Pioneer Pictures, inc.", 7, "example"), "©"),
    (Ren("example", "The Last Frontier", "L24410", "1927-09-19", "R145220", "1955-03-30",
         "Twentieth Century-Fox Film Corp.", "PWH", "Fox Film Corp.", 8, "example"), "6"),
)
#: a non-film renewal (class A, a book): on the page, not in the answer
EXAMPLE_BOOK = "BAKER, RAY.|Notes on the river trade. © 3Mar27; A962201. Ray Baker (A); 5Jan55; R142210."
#: one renewal entry for two registrations (one row per registration in the answer)
EXAMPLE_DOUBLE = ("DOUBLE TROUBLE, a photoplay in two parts by Comet Film Co. © 4Apr27; L23861; 18Apr27; L23902. "
                  "Comet Pictures, inc. (PWH); 9Mar55; R144117, R144118.")
EXAMPLE_DOUBLE_ROWS = (("L23861", "4Apr27", "R144117"), ("L23902", "18Apr27", "R144118"))


def _row(kind: str, title: str, reg_id: str, reg_date: str, renewal_id: str | None = None,
         renewal_date: str | None = None, claimant: str | None = None, basis: str | None = None) -> dict[str, Any]:
    return {"kind": kind, "title": title, "reg_id": reg_id, "reg_date": reg_date, "renewal_id": renewal_id,
            "renewal_date": renewal_date, "claimant": claimant, "basis": basis, "conf": 1.0}


def example_pages() -> list[tuple[list[str], list[dict[str, Any]]]]:
    """``[(page lines, answer rows)]`` of the two examples."""
    lines1 = ["MOTION PICTURES 1940-1949", ""]
    rows1 = []
    for r, printed, sign in sorted(EXAMPLE_REGS, key=lambda x: x[0].title.upper()):
        lines1.append(registration_line(r, printed).replace("©", sign))
        rows1.append(_row("registration", r.title.upper(), printed or r.reg_id, cce_date(r.reg_date),
                          claimant=r.claimant))
    lines2 = ["RENEWAL REGISTRATIONS", "MOTION PICTURES", "", EXAMPLE_BOOK]
    rows2 = []
    for n, sign in EXAMPLE_RENS:
        lines2.append(renewal_line(replace(n, printed_copyright_sign=sign), "1954"))
        rows2.append(_row("renewal", n.title.upper(), n.orig_reg_id, cce_date(n.orig_date), n.renewal_id,
                          cce_date(n.renewal_date), n.claimant, n.basis))
    lines2.insert(5, EXAMPLE_DOUBLE)  # alphabetical: BAKER, CANYON, DOUBLE, THE LAST
    rows2[1:1] = [_row("renewal", "DOUBLE TROUBLE", reg, d, rid, "9Mar55", "Comet Pictures, inc.", "PWH")
                  for reg, d, rid in EXAMPLE_DOUBLE_ROWS]
    return [(lines1, rows1), (lines2, rows2)]


def write_cce_gemini_examples(out_dir: Path | str) -> list[Path]:
    """Write ``example{1,2}.png`` + ``.json`` under ``out_dir``; returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for i, (lines, rows) in enumerate(example_pages(), start=1):
        img = render_page(lines, width=900, head_lines=1 if i == 1 else 2)
        (out / f"example{i}.png").write_bytes(png_bytes(img))
        (out / f"example{i}.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written += [out / f"example{i}.png", out / f"example{i}.json"]
    return written


if __name__ == "__main__":  # python -m cinesub.sample.cce_examples OUT_DIR
    import sys

    for p in write_cce_gemini_examples(sys.argv[1]):
        print(p)
