"""A griffe extension for the docs site: Sphinx roles in docstrings as links, reST literals as code.

The docstrings name other objects the Sphinx way (``:class:`~streamnb.ByteNgrams```,
``:func:`learn```, ``:data:`QUANTUM_BITS```). mkdocstrings reads Markdown, where such a role
would show its colons; this turns each into an optional cross-reference of mkdocs-autorefs:
a link where the target is documented in the API reference, plain code otherwise (so the
strict build never fails on a name the reference leaves out). The text shown is the last
part of the name with ``~`` (as Sphinx shows it), else the whole name; a bare name is taken
as one of the docstring's own module. reST's double-backtick literals become single-backtick
code spans, a paragraph's closing ``::`` (which introduces an indented block) a ``:``, and a
doctest goes in a ``pycon`` fence, untouched. Used by mkdocs.yml.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|mod|obj|exc|const):`(~?)([^`]+)`")
LITERAL = re.compile(r"``([^`]+)``")
LITERAL_BLOCK = re.compile(r"(\S)::$", re.M)  # "text::" before an indented block: Markdown indents code


def _role(match: re.Match[str], module: str = "") -> str:
    short, target = match.group(1), match.group(2)
    shown = f"<code>{target.rsplit('.', 1)[-1] if short else target}</code>"
    if "." not in target and module:
        target = f"{module}.{target}"  # a name of the docstring's own module
    return f'<autoref identifier="{target}" optional>{shown}</autoref>'


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


def convert(text: str, module: str = "") -> str:
    """The docstring text with roles as links (where the target is documented) and reST
    literals as Markdown code spans, doctests fenced; ``module`` qualifies bare names."""
    parts = re.split(r"(```pycon\n.*?\n```)", fence_doctests(text), flags=re.S)
    return "".join(part if part.startswith("```pycon") else
                   LITERAL_BLOCK.sub(r"\1:", LITERAL.sub(r"`\1`", ROLE.sub(lambda m: _role(m, module), part)))
                   for part in parts)


class SphinxRoles(griffe.Extension):
    """Rewrites every docstring as it is loaded (see the module docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = convert(obj.docstring.value, obj.module.path)
