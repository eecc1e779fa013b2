"""Every link between the README and the pages of docs/ leads somewhere: the file exists
and, for a link to a section (`page.md#anchor`), the page has a heading with that anchor
(GitHub's: lower case, punctuation dropped, spaces as hyphens)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """The page without its fenced code blocks."""
    return re.sub(r"^\s*```.*?^\s*```", "", text, flags=re.M | re.S)


def anchors(page: Path) -> set:
    """GitHub's anchor of every heading of ``page`` (a repeated one gets -1, -2, ...)."""
    seen, out = {}, set()
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", prose(page.read_text()), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_anchors_follow_github():
    page = ROOT / "docs" / "expert.md"
    found = anchors(page)
    assert {"models", "speed", "strength", "the-model-file"} <= found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_to_a_page_and_section_resolves(page):
    broken = []
    for target in LINK.findall(prose(page.read_text())):
        if re.match(r"^[a-z]+:", target):           # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no file {path}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no section #{anchor} in {dest.name}")
    assert not broken, broken
