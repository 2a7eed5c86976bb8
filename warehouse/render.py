"""HTML from templates: every page the project writes is a Jinja2 template under
``warehouse/templates/`` (package data), rendered with autoescape on — a value from the data is
always text, never markup. Markup made by code (an inline SVG drawn by warehouse/plots.py) enters
a template only as :func:`markup`."""

from __future__ import annotations

import html
import re
from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup


#: characters never written into a page (C0/C1 controls but tab and newlines, lone surrogates)
_HTML_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def escape(value: Any) -> Markup:
    """A value as HTML text: ``html.escape`` (quotes too), control characters shown as U+FFFD, None
    as nothing."""
    if isinstance(value, Markup):
        return value
    if value is None:
        return Markup("")
    return Markup(html.escape(_HTML_CONTROL_RE.sub("\ufffd", str(value)), quote=True))


@lru_cache(maxsize=1)
def environment() -> Environment:
    # finalize escapes every printed value the way the pages always did (&quot;, &#x27;); markup
    # made by a macro or passed through :func:`markup` is left as it is; autoescape stays on
    # underneath for anything finalize does not see
    return Environment(loader=PackageLoader("warehouse", "templates"),
                       autoescape=select_autoescape(default=True, default_for_string=True),
                       finalize=escape, undefined=StrictUndefined, keep_trailing_newline=True,
                       trim_blocks=True, lstrip_blocks=True)


def render(template: str, **context: Any) -> str:
    """The text of ``warehouse/templates/<template>`` rendered with ``context``."""
    return environment().get_template(template).render(**context)


def markup(html_text: str) -> Markup:
    """Trusted markup made by code (an SVG drawn here), inserted as is."""
    return Markup(html_text)
