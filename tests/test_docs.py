"""Every python code block in docs/*.md runs (blocks of one page share a namespace)."""
import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(p for p in [*DOCS.glob("*.md"), DOCS.parent / "README.md"]
               if "```python" in p.read_text())


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_snippets_run(page, capsys):
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    namespace = {}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{page.name}[block {i}]", "exec"), namespace)
    assert blocks
