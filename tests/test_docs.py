"""The guides' Python examples run as written, and the docs site's pages are all in its navigation.

Every ```python block of a page under docs/ runs in a fresh namespace, in a temporary working
folder (an example may save a file). An example that needs an extra (river, dask) is skipped
when the extra is not installed.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
EXAMPLES = [(page, number, code)
            for page in sorted(DOCS.rglob("*.md"))
            for number, code in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S))]
EXTRAS = {"river": "river", "dask": "dask", "distributed": "distributed"}


def test_the_guides_have_python_examples():
    pages = {page.relative_to(DOCS).as_posix() for page, _, _ in EXAMPLES}
    assert {"getting-started.md", "guides/library.md", "guides/river.md", "guides/retraining.md",
            "guides/distributed.md"} <= pages


@pytest.mark.parametrize("page, number, code", EXAMPLES,
                         ids=[f"{page.relative_to(DOCS).as_posix()}:{number + 1}" for page, number, _ in EXAMPLES])
def test_a_docs_example_runs_verbatim(page, number, code, tmp_path, monkeypatch):
    for module in re.findall(r"^\s*(?:from|import) (\w+)", code, flags=re.M):
        if module in EXTRAS and importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{page.relative_to(ROOT)} python example {number + 1}", "exec"), {})


def test_every_page_is_in_the_navigation():
    config = (ROOT / "mkdocs.yml").read_text()
    nav = config[config.index("\nnav:"):config.index("\nmarkdown_extensions:")]
    listed = set(re.findall(r"([\w/.-]+\.md)$", nav, flags=re.M))
    pages = {page.relative_to(DOCS).as_posix() for page in DOCS.rglob("*.md")}
    assert pages == listed


def test_no_cross_reference_in_a_docstring_is_split_across_lines():
    """A role such as :meth:`name <target>` broken over two lines makes mkdocs-autorefs fail
    the whole site build (KeyError: 'identifier'): each must sit on one line."""
    split = re.compile(r":(?:meth|class|func|attr|mod|data|exc):`[^`]*\n")
    found = [f"{path.relative_to(ROOT)}:{text[:match.start()].count(chr(10)) + 1}"
             for path in sorted((ROOT / "streamnb").rglob("*.py"))
             for text in [path.read_text()] for match in split.finditer(text)]
    assert found == []
