"""CHANGES.yml: loading a valid file, every problem of an invalid one reported with its own line, and dumping."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.changes.schema import (
    Approval,
    ChangeSet,
    ChangeSetError,
    ProposedChange,
    SourceRef,
    StructuralChange,
    UnmappedChange,
    dump_change_set,
    load_change_set,
)
from tools.mutations import ALLOWED_OPERATORS

ROOT = Path(__file__).resolve().parents[3]
URN = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"

FULL = f"""\
version: 1
approval:
  by: alice@example.com
  note: reviewed the impact
changes:
  - dataset: {URN}
    field: amount
    op: scale
    params: {{factor: 100}}
    note: amounts now in cents
    source: {{file: models/transactions.sql, line: 3, column: amount}}
    confidence: high
  - dataset: {URN}
    field: merchant_category
    op: category_remap
    params:
      mapping: {{grocery: food}}
    fraction: 0.5
    seed: 3
  - dataset: {URN}
    field: amount
    op: clip
    params: {{lower: 0, upper: null}}
structural:
  - dataset: {URN}
    field: amount
    change: renamed
    renamed_to: amount_cents
unmapped:
  - file: models/transactions.sql
    line: 7
    column: risk_band
    reason: "expression changed; no operator fits"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "CHANGES.yml"
    path.write_text(text, encoding="utf-8")
    return path


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """The 1-based line of the `occurrence`-th line containing `needle` (so the tests do not count lines)."""
    hits = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    return hits[occurrence - 1]


def problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ChangeSetError) as caught:
        load_change_set(write(tmp_path, text))
    assert str(caught.value).count("\n  ") == len(caught.value.problems)  # the message lists every problem
    return caught.value.problems


def test_a_full_file_loads_with_its_values_and_defaults(tmp_path: Path) -> None:
    change_set = load_change_set(write(tmp_path, FULL))
    assert change_set.approval == Approval(by="alice@example.com", note="reviewed the impact")
    scale, remap, clip = change_set.changes
    assert (scale.op, scale.params, scale.fraction, scale.seed) == ("scale", {"factor": 100}, 1.0, 0)
    assert isinstance(scale.params["factor"], int)  # YAML's integer stays an integer (keeps an int column's dtype)
    assert scale.source == SourceRef(file="models/transactions.sql", line=3, column="amount")
    assert scale.confidence == "high" and scale.note == "amounts now in cents"
    assert remap.params == {"mapping": {"grocery": "food"}} and (remap.fraction, remap.seed) == (0.5, 3)
    assert clip.params == {"lower": 0, "upper": None}
    assert change_set.structural == [
        StructuralChange(dataset=URN, field="amount", change="renamed", renamed_to="amount_cents")
    ]
    assert change_set.unmapped == [
        UnmappedChange(
            file="models/transactions.sql", line=7, column="risk_band", reason="expression changed; no operator fits"
        )
    ]


def test_an_empty_change_list_is_valid(tmp_path: Path) -> None:
    assert load_change_set(write(tmp_path, "version: 1\n")) == ChangeSet()


def test_every_problem_is_reported_with_its_line(tmp_path: Path) -> None:
    text = f"""\
version: 1
changes:
  - dataset: {URN}
    field: amount
    op: scale
    params: {{factor: 100}}
    colour: red
  - dataset: {URN}
    op: round
    params: {{decimals: 2}}
    confidence: certain
unmapped:
  - file: a.sql
    line: 0
    column: x
    reason: r
"""
    found = problems(tmp_path, text)
    assert found == [
        f"line {line_of(text, 'colour')}: changes[0].colour: unknown key (allowed keys are listed in docs/gate.md)",
        f"line {line_of(text, '- dataset', 2)}: changes[1].field: Field required",
        f"line {line_of(text, 'confidence')}: changes[1].confidence: Input should be 'high', 'medium' or 'low'",
        f"line {line_of(text, 'line: 0')}: unmapped[0].line: Input should be greater than or equal to 1",
    ]


def test_operators_and_parameters_are_checked_as_assess_checks_them(tmp_path: Path) -> None:
    text = f"""\
version: 1
changes:
  - dataset: {URN}
    field: amount
    op: multiply
    params: {{factor: 100}}
  - dataset: {URN}
    field: amount
    op: scale
    params: {{factor: 0}}
  - dataset: {URN}
    field: amount
    op: scale
    params: {{factor: 100}}
    fraction: 1.5
  - dataset: payments.transactions
    field: amount
    op: round
    params: {{decimals: 2, places: 3}}
"""
    first, zero, fraction, urn, extra = problems(tmp_path, text)
    assert first.startswith(f"line {line_of(text, 'multiply')}: changes[0].op: unknown operator 'multiply'")
    assert all(op in first for op in ALLOWED_OPERATORS)
    assert zero.startswith(f"line {line_of(text, 'factor: 0')}: changes[1].params.factor: invalid scale mutation")
    assert fraction.startswith(f"line {line_of(text, 'fraction: 1.5')}: changes[2].fraction:")
    assert "(0, 1]" in fraction
    assert urn == (
        f"line {line_of(text, 'payments.transactions')}: changes[3].dataset: 'payments.transactions' is not a "
        "dataset URN; expected urn:li:dataset:(<platform>,<name>,<env>)"
    )
    assert extra.startswith(f"line {line_of(text, 'places')}: changes[3].params.places:")
    assert "unknown parameter 'places'" in extra


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("version: 2\nchanges: []\n", "line 1: version: unsupported version 2; this Provenance reads version 1"),
        ("- a\n- b\n", "line 1: expected a mapping with `version: 1` and `changes:` at the top"),
        ("", "line 1: expected a mapping with `version: 1` and `changes:` at the top"),
        ("version: 1\nchanges:\n  - field: [amount\n", "line 4: not valid YAML"),
        ("version: 1\nchanges: {}\n", "line 2: changes: Input should be a valid list"),
        (
            f"version: 1\nstructural:\n  - dataset: {URN}\n    field: amount\n    change: renamed\n",
            "line 3: structural[0]: a renamed column needs `renamed_to: <new name>`",
        ),
        (
            f"version: 1\nstructural:\n  - dataset: {URN}\n    field: amount\n    change: retyped\n",
            "line 5: structural[0].change: Input should be 'dropped' or 'renamed'",
        ),
    ],
    ids=["version-2", "a-list", "empty", "bad-yaml", "changes-not-a-list", "renamed-without-name", "bad-kind"],
)
def test_file_level_problems(tmp_path: Path, text: str, expected: str) -> None:
    (problem,) = problems(tmp_path, text)
    assert problem.startswith(expected), problem


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(ChangeSetError, match="cannot read the file"):
        load_change_set(tmp_path / "nope.yml")


def test_dump_round_trips_and_is_stable(tmp_path: Path) -> None:
    change_set = load_change_set(write(tmp_path, FULL))
    text = dump_change_set(change_set, header="written by a test\n\nsecond line")
    assert text.startswith("# written by a test\n#\n# second line\nversion: 1\n")
    assert load_change_set(write(tmp_path, text)) == change_set
    assert dump_change_set(load_change_set(write(tmp_path, text)), header="written by a test\n\nsecond line") == text
    assert "fraction" not in text.split("merchant_category")[0]  # defaults are left out; the given 0.5 is kept
    assert "fraction: 0.5" in text


def test_dump_of_models_built_in_code(tmp_path: Path) -> None:
    change_set = ChangeSet(
        changes=[ProposedChange(dataset=URN, field="amount", op="round", params={"decimals": 2}, confidence="medium")],
        unmapped=[UnmappedChange(file="m.sql", line=2, column="*", reason="could not parse")],
    )
    text = dump_change_set(change_set)
    assert text.splitlines()[:2] == ["version: 1", "changes:"]
    assert load_change_set(write(tmp_path, text)) == change_set


def test_the_example_file_is_valid() -> None:
    change_set = load_change_set(ROOT / "examples" / "CHANGES.yml")
    assert [c.op for c in change_set.changes] == ["scale", "round"]
    assert change_set.structural and change_set.unmapped


def test_shape_and_operator_problems_are_reported_together(tmp_path: Path) -> None:
    text = f"""\
version: 1
changes:
  - dataset: {URN}
    field: amount
    op: rounds
structural:
  - dataset: {URN}
    field: amount
    change: deleted
"""
    assert [p.split(":")[0:2] for p in problems(tmp_path, text)] == [
        [f"line {line_of(text, 'rounds')}", " changes[0].op"],
        [f"line {line_of(text, 'deleted')}", " structural[0].change"],
    ]
