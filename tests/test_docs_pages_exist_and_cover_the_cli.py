"""The documentation site's nav, its Guarantees page and its CLI guide match the project."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click
import yaml

from langgraph_durable.interrupts.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _nav_pages(items: list[Any]) -> list[str]:
    pages: list[str] = []
    for item in items:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages.extend(_nav_pages(value) if isinstance(value, list) else [value])
    return pages


def _nav() -> list[str]:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return _nav_pages(config["nav"])


def test_every_nav_page_exists_and_every_page_is_in_the_nav() -> None:
    nav = _nav()
    missing = [page for page in nav if not (DOCS / page).is_file()]
    assert not missing, f"pages in mkdocs.yml's nav but not in docs/: {missing}"
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(set(nav)) == pages
    assert len(nav) == len(set(nav)), "a page is listed twice in the nav"


def test_every_file_the_guarantees_name_exists() -> None:
    text = (DOCS / "guarantees.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:tests|benchmarks)/[\w/.]+\.py|\.ci/run)`", text))
    assert len(named) > 30
    assert not sorted(f for f in named if not (ROOT / f).is_file())


def test_every_command_of_the_cli_is_in_its_guide() -> None:
    assert isinstance(main, click.Group)
    guide = (DOCS / "guides" / "cli.md").read_text(encoding="utf-8")
    table = "\n".join(line for line in guide.splitlines() if line.startswith("| `"))
    undocumented = [name for name in main.commands if f"`{name}" not in table]
    assert not undocumented, f"commands missing from docs/guides/cli.md: {undocumented}"
