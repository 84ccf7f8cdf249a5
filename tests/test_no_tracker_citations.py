"""The code and docs say what they do, never "issue N": the tracker those numbers point at is not part of the
repository, so a reader of the tree cannot follow them."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("agent", "tools", "policies", "seed", "scripts", "benchmarks", "tests", "docs", "examples")
TOP_LEVEL = ("README.md", "ARCHITECTURE.md", "Makefile", "pyproject.toml", "chainlit.md", "action.yml")
CITATION = re.compile(r"\b[Ii]ssues? #?[0-9]+")
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".j2", ".sql", ".txt", ".cfg"}


def _files() -> list[Path]:
    found = [ROOT / name for name in TOP_LEVEL if (ROOT / name).is_file()]
    for folder in SOURCES:
        found += [p for p in (ROOT / folder).rglob("*") if p.suffix in SUFFIXES and p.is_file()]
    return [p for p in found if p.resolve() != Path(__file__).resolve()]


def test_no_file_cites_an_issue_number() -> None:
    cited = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}"
        for path in _files()
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if CITATION.search(line)
    ]
    assert not cited, "say what the code does instead:\n" + "\n".join(cited)
