"""The README and every page of docs/ and bench/README.md link only to files that exist in the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text())
    broken = [link for link in links if not link.startswith(("http://", "https://"))
              and not (page.parent / link).exists()]
    assert broken == []


def test_the_readme_is_short_and_links_the_reference():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    for page in ("docs/design.md", "docs/daemon.md", "docs/scenario-file.md", "docs/metrics.md", "docs/sweeps.md",
                 "docs/model.md", "docs/engine.md", "docs/stack.md", "bench/README.md"):
        assert f"]({page})" in text, page
