"""Curator decisions on entity-link disagreements (SPEC A1 gate 3; docs/review.md).

When the Common Sense Media page of a Kids-in-Mind film (same title and year) embeds another IMDb
id, the film waits in the ``link_reviews`` queue. A curator decides with ``cinesub review
decide-link``; the decisions are appended to ``link_decisions`` and the latest one per KIM page
is in force. The inventory stage applies it with :func:`resolve_disagreement`, so the film's row
in ``films`` (``imdb_id``, ``link_status``) carries the outcome and every later stage sees it.
"""

from __future__ import annotations

#: ``--accept`` choice -> stored decision
CHOICES: dict[str, str] = {"kim": "accept_kim", "csm": "accept_csm", "reject": "reject"}
DECISIONS: tuple[str, ...] = tuple(CHOICES.values())
#: ``films.link_status`` of a disagreement after each decision; ``disagree`` while open
LINK_STATUS: dict[str, str] = {"accept_kim": "accepted_kim", "accept_csm": "accepted_csm", "reject": "rejected"}
#: link statuses that pass gate 3 (the entity link)
PASSING: tuple[str, ...] = ("agree", "accepted_kim", "accepted_csm")

#: what the next build does with each decision (printed by ``decide-link``; docs/review.md)
EFFECTS: dict[str, str] = {
    "accept_kim": "the KIM page's IMDb id is right: the next build resolves the film to it and the film "
                  "passes gate 3 (entity_link); it is then acquired and judged by gates 4-6",
    "accept_csm": "the CSM page's IMDb id is right: the next build resolves the film to the CSM id (its "
                  "IMDb record and subtitles are those of that id) and the film passes gate 3",
    "reject": "the link cannot be trusted: the next build drops the film at gate 3 (csm_link_rejected)",
}


def resolve_disagreement(decision: str | None, kim_imdb_id: str, csm_imdb_id: str | None) -> tuple[str, str]:
    """The film's (imdb_id, link_status) for a KIM/CSM disagreement under ``decision`` (None =
    open). ``accept_csm`` without a CSM id (the CSM page has no IMDb link) cannot move the film
    and leaves it undecided."""
    if decision is None:
        return kim_imdb_id, "disagree"
    if decision not in LINK_STATUS:
        raise ValueError(f"unknown entity-link decision {decision!r} (expected one of {', '.join(DECISIONS)})")
    if decision == "accept_csm":
        if not csm_imdb_id:
            return kim_imdb_id, "disagree"
        return csm_imdb_id, LINK_STATUS[decision]
    return kim_imdb_id, LINK_STATUS[decision]
