"""Parameters travel typed, never re-encoded into a string and parsed back: a field named exactly travels as
`FieldTarget` (agent/schemas.py), not as "<dataset urn>.<field>" for the resolver to split again; the run id is
chosen when planning (`AgentState.planned_run_id`), and its staging folder is named from it in one place
(tools/evidence/store.py `staging_dir`), never parsed out of a folder's name; a command-line mutation is
parsed once."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
URN_DOT_FIELD = re.compile(r"\{[\w.]*dataset_urn\}\.\{")  # f"{dataset_urn}.{field}": a URN glued to a field
STAGING = re.compile(r"\.staging-")
STAGING_HOME = ROOT / "tools" / "evidence" / "store.py"


def _sources() -> list[Path]:
    return [p for package in ("agent", "tools") for p in (ROOT / package).rglob("*.py")]


def test_no_dataset_urn_is_glued_to_a_field_name() -> None:
    glued = [f"{p.relative_to(ROOT)}: {line.strip()}" for p in _sources() for line in p.read_text().splitlines()
             if URN_DOT_FIELD.search(line)]  # fmt: skip
    assert not glued, glued


def test_the_staging_folder_is_named_in_one_place_and_never_parsed() -> None:
    named = [str(p.relative_to(ROOT)) for p in _sources() if p != STAGING_HOME and STAGING.search(p.read_text())]
    assert not named, named


def test_the_cli_parses_a_mutation_once() -> None:
    """`provenance assess` parses its operator and parameters in its first checks (agent/cli/precheck.py, before
    any heavy import) and runs that `Mutation`; the command never parses the words again. The assessment service
    parses once more, in its own process: a request that crossed HTTP is validated where it arrives."""
    parsing = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "agent" / "cli").rglob("*.py")
                     if "parse_mutation(" in p.read_text())  # fmt: skip
    assert parsing == ["agent/cli/precheck.py"]
