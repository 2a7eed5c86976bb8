"""``cinesub ratings``: national motion-picture rating normalisation (SPEC A8, docs/ratings.md).

``normalize COUNTRY RAW`` maps one raw certificate label to its SPEC A8 label. ``COUNTRY`` is a
SPEC A8 name (``United Kingdom``, ``South Korea``, ...) or one of IMDb's names for it (``UK``,
``USA``, ``West Germany``, ``Korea``). ``RAW`` is the label as IMDb shows it, with or without the
``Country:`` prefix and an optional ``::(note)`` (``12A``, ``UK:12A``, ``UK:12A::(Blu-ray rating)``).

Exit codes: 0 when the string was judged (mapped, or unmapped with a reason); 2 when ``COUNTRY``
is not one of the ten countries or their aliases, or when ``RAW`` carries a prefix naming a
different country. With ``--json`` stdout is always one JSON object, the error cases included
(``label`` null and a ``reason``: ``other_country`` or ``country_mismatch``).
"""

from __future__ import annotations

import json
from typing import Any, Optional

import typer
from rich.console import Console

ratings_app = typer.Typer(help="National rating normalisation (SPEC A8): normalize, labels.",
                          no_args_is_help=True)
err = Console(stderr=True, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add the ``ratings`` command group to the main CLI."""
    app.add_typer(ratings_app, name="ratings")


def _refuse(country: str, reason: str, detail: str, as_json: bool) -> None:
    """The usage error of one mapping request (exit 2), also as JSON with ``--json``."""
    if as_json:
        print(json.dumps(_error_json(country, reason, detail)))
    err.print(f"[red]{detail}[/red]", highlight=False)
    raise typer.Exit(2)


def _error_json(country: str, reason: str, detail: str) -> dict[str, Any]:
    return {"country": country, "label": None, "minimumAge": None, "ordinal": None,
            "reason": reason, "detail": detail}


def _strip_prefix(target: str, raw: str) -> tuple[str | None, str | None]:
    """(label[::note], None) or (None, the other country) when ``raw`` names another country."""
    from validators.ratings import canonical_country, split_certificate

    parts = split_certificate(raw)
    if parts is None:
        return raw, None
    prefix, label, note = parts
    prefix_country = canonical_country(prefix)
    if prefix_country is None:
        return raw, None  # not a country prefix we know: judged as a whole (never guessed)
    if prefix_country != target:
        return None, prefix_country
    return label + (f"::{note}" if note else ""), None


@ratings_app.command("normalize")
def normalize_cmd(
    country: str = typer.Argument(..., help="SPEC A8 country (e.g. 'United Kingdom') or an IMDb alias (UK, USA)."),
    raw: str = typer.Argument(..., help="Raw label: '12A', 'UK:12A', 'o.Al.', 'TV-MA', '12::(DVD rating)'."),
    as_json: bool = typer.Option(False, "--json", help="Print {country,label,minimumAge,ordinal[,reason]}."),
) -> None:
    """Map one raw certificate to its country's SPEC A8 label (or say why it stays unmapped)."""
    from validators.ratings import COUNTRY_ORDER, REASONS, canonical_country, normalize

    target = canonical_country(country)
    if target is None:
        _refuse(country, "other_country", f"unknown country {country!r}; known: {', '.join(COUNTRY_ORDER)} "
                "(or IMDb's names: UK, USA, ...)", as_json)
    label, other = _strip_prefix(target, raw)
    if label is None:
        _refuse(target, "country_mismatch", f"RAW {raw!r} names {other}, not {target}", as_json)
    result = normalize(target, label)
    if as_json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
        return
    if result.mapped:
        print(f"{result.country}: {raw} -> {result.label} (minimumAge {result.minimum_age}, "
              f"ordinal {result.ordinal}, rule {result.rule})")
    else:
        print(f"{result.country}: {raw} -> unmapped ({result.reason}: "
              f"{REASONS.get(result.reason or '', 'no reason recorded')}; rule {result.rule})")


@ratings_app.command("labels")
def labels_cmd(
    country: Optional[str] = typer.Argument(None, help="One country (default: all ten, in SPEC A8 order)."),
    as_json: bool = typer.Option(False, "--json", help="Print {country: [labels in order]}."),
) -> None:
    """Show the ordered label spaces of SPEC A8 (index = ordinal)."""
    from validators.ratings import COUNTRY_ORDER, canonical_country, label_space

    if country is not None:
        target = canonical_country(country)
        if target is None:
            err.print(f"[red]unknown country {country!r}; known: {', '.join(COUNTRY_ORDER)}[/red]", highlight=False)
            raise typer.Exit(2)
        countries: tuple[str, ...] = (target,)
    else:
        countries = COUNTRY_ORDER
    spaces = {c: label_space(c) for c in countries}
    if as_json:
        print(json.dumps(spaces, ensure_ascii=False))
        return
    for c, labels in spaces.items():
        print(f"{c}: " + " < ".join(labels))
