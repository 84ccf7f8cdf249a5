"""What the code and docs cite is in the repository, and every section they cite exists.

- No text file of the repository (tracked, or new and not ignored) points outside the checkout: not at the sibling
  folder of notes the project started from (`..` + `/shared`), nor at the design file that lived there (cited as
  `DESIGN` + ` §N`, `DESIGN` + `:` or `DESIGN` + `.md`). A reader of the repository cannot follow those; the design
  is docs/design.md, the policy's sources docs/policy_sources.md.
- Every `docs/<file>.md` named from the repository root exists, and every citation `docs/<file>.md §N` names a
  numbered heading of that file. Inside docs/<file>.md a bare `§N` means that same file.
- Headings in docs/ are numbered `## N. Title` and `### N.M Title` (N.M under section N), each number once.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# Written so that this file does not match itself.
OUTSIDE = re.compile(r"\.\./shared|\bDESIGN(?:\.md|\s*§|:)")
# Occurrences that are not citations, per file. Each must still occur, so the list cannot go stale.
NOT_CITATIONS: dict[str, re.Pattern[str]] = {
    # A relative artifact path used as test input for binding resolution.
    "tests/tools/experiment/test_binding.py": re.compile(r'"\.\./shared/m\.joblib"'),
}

DOC_FILE = re.compile(r"(?<![\w./-])docs/([\w.-]+\.md)\b")
# An optional file before the section sign: `docs/design.md §4`, or a bare `§4` (inside docs/: the same file).
CITATION = re.compile(r"(?:(?<![\w./-])docs/([\w.-]+\.md)\s*)?§\s*(\d+(?:\.\d+)*)")
NUMBERED_HEADING = re.compile(r"^(#{2,6})\s+(\d+(?:\.\d+)*)(\.?)\s+\S")


@dataclass(frozen=True)
class TextFile:
    path: str  # relative to the root, with forward slashes
    text: str

    def lines(self) -> Iterator[tuple[int, str]]:
        yield from enumerate(self.text.splitlines(), start=1)


@cache
def text_files() -> tuple[TextFile, ...]:
    """The repository's text files: tracked, plus new ones git does not ignore (binary and undecodable skipped)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"not a git checkout, or git is missing: {exc}")
    files = []
    for name in sorted({n for n in listed.decode().split("\0") if n}):
        path = ROOT / name
        if not path.is_file():  # deleted in the work tree, not yet in the index
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            files.append(TextFile(name, data.decode("utf-8")))
        except UnicodeDecodeError:
            continue
    return tuple(files)


def numbered_headings(path: Path) -> list[tuple[int, int, str, bool]]:
    """(line, level, number, ends with a dot) of each numbered heading, outside fenced code blocks."""
    found = []
    fenced = False
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        match = None if fenced else NUMBERED_HEADING.match(line)
        if match:
            found.append((line_no, len(match[1]), match[2], match[3] == "."))
    return found


def test_nothing_points_outside_the_repository() -> None:
    offending = []
    for file in text_files():
        allowed = NOT_CITATIONS.get(file.path)
        for line_no, line in file.lines():
            text = allowed.sub("", line) if allowed else line
            if OUTSIDE.search(text):
                offending.append(f"{file.path}:{line_no}: {line.strip()}")
    assert not offending, (
        "these lines cite files outside the repository; cite docs/design.md §N or docs/policy_sources.md §N "
        "instead (or state the fact in place):\n" + "\n".join(offending)
    )


def test_the_known_exceptions_still_occur() -> None:
    texts = {f.path: f.text for f in text_files()}
    stale = [path for path, pattern in NOT_CITATIONS.items() if not pattern.search(texts.get(path, ""))]
    assert not stale, f"NOT_CITATIONS lists occurrences that are gone; remove them: {stale}"


def test_docs_headings_follow_the_numbering_convention() -> None:
    docs = sorted(DOCS.glob("*.md"))
    assert docs, "docs/ holds the design and the policy's sources"
    problems = []
    for doc in docs:
        seen: set[str] = set()
        section: str | None = None
        for line_no, level, number, dotted in numbered_headings(doc):
            where = f"docs/{doc.name}:{line_no}"
            depth = number.count(".") + 1
            if level == 2:
                if depth != 1 or not dotted:
                    problems.append(f"{where}: a section heading is `## N. Title`, got number {number!r}")
                section = number
            elif level == 3:
                if depth != 2 or dotted or number.split(".")[0] != section:
                    problems.append(f"{where}: a subsection heading is `### N.M Title` under `## N.`, got {number!r}")
            else:
                problems.append(f"{where}: numbered headings are levels 2 and 3 only")
            if number in seen:
                problems.append(f"{where}: section {number} numbered twice")
            seen.add(number)
    assert not problems, "\n".join(problems)


def test_cited_docs_and_sections_exist() -> None:
    sections = {doc.name: {number for _, _, number, _ in numbered_headings(doc)} for doc in DOCS.glob("*.md")}
    missing = []
    for file in text_files():
        in_docs = file.path.startswith("docs/") and file.path.count("/") == 1 and file.path.endswith(".md")
        for line_no, line in file.lines():
            where = f"{file.path}:{line_no}"
            for name in DOC_FILE.findall(line):
                if name not in sections:
                    missing.append(f"{where}: docs/{name} does not exist")
            for name, number in CITATION.findall(line):
                target = name or (file.path.removeprefix("docs/") if in_docs else None)
                if target is None or target not in sections:
                    continue  # a bare § outside docs/, or a missing file (reported above)
                if number not in sections[target]:
                    missing.append(f"{where}: docs/{target} has no heading numbered {number}")
    assert not missing, "\n".join(missing)


LINK = re.compile(r"\]\(([^)\s]+)\)")


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, fenced = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"^#{1,6}\s+(.*)$", line)):
            found.add(github_anchor(match[1]))
    return found


def test_relative_links_of_the_guides_resolve() -> None:
    """README.md, ARCHITECTURE.md and docs/*.md: every relative link names a file of the checkout, and every
    `#anchor` a heading of its target (the README was split into docs/ once; a moved section keeps its links)."""
    guides = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted(DOCS.glob("*.md"))]
    broken = []
    for guide in guides:
        for line_no, line in enumerate(guide.read_text(encoding="utf-8").splitlines(), start=1):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):  # http(s):, mailto:
                    continue
                file_part, _, anchor = target.partition("#")
                resolved = (guide.parent / file_part).resolve() if file_part else guide
                where = f"{guide.relative_to(ROOT)}:{line_no}: {target}"
                if not resolved.exists():
                    broken.append(f"{where} (no such file)")
                elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                    broken.append(f"{where} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)
