"""A griffe extension for the docs site: Sphinx roles in docstrings shown as code.

The docstrings name other objects the Sphinx way (``:class:`~streamnb.ByteNgrams```,
``:func:`learn```, ``:data:`QUANTUM_BITS```). mkdocstrings reads Markdown, where such a role
would show its colons; this turns each into a code span, ``ByteNgrams`` (the last part, as
Sphinx shows a name with ``~``) or ``streamnb.ByteNgrams`` (the whole name), and reST's
double-backtick literals into single-backtick code spans (and a paragraph's closing ``::``,
which introduces an indented block, into ``:``); a doctest goes in a ``pycon`` fence, untouched. Used by mkdocs.yml.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|mod|obj|exc|const):`(~?)([^`]+)`")
LITERAL = re.compile(r"``([^`]+)``")
LITERAL_BLOCK = re.compile(r"(\S)::$", re.M)  # "text::" before an indented block: Markdown indents code


def _role(match: re.Match[str]) -> str:
    short, target = match.group(1), match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if short else target}`"


def fence_doctests(text: str) -> str:
    """Each doctest (a ``>>>`` line and the lines after it up to a blank line) in a fence."""
    lines, out, inside = text.split("\n"), [], False
    for line in lines:
        if not inside and line.lstrip().startswith(">>>"):
            inside = True
            out.append("```pycon")
        elif inside and not line.strip():
            inside = False
            out.append("```")
        out.append(line.strip() if inside else line)
    if inside:
        out.append("```")
    return "\n".join(out)


def convert(text: str) -> str:
    """The docstring text with roles and reST literals as Markdown code spans, doctests fenced."""
    parts = re.split(r"(```pycon\n.*?\n```)", fence_doctests(text), flags=re.S)
    return "".join(part if part.startswith("```pycon") else
                   LITERAL_BLOCK.sub(r"\1:", LITERAL.sub(r"`\1`", ROLE.sub(_role, part))) for part in parts)


class SphinxRoles(griffe.Extension):
    """Rewrites every docstring as it is loaded (see the module docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = convert(obj.docstring.value)
