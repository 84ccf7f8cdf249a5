"""The structural rule: the verdict for a production model whose input column is dropped or renamed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from policies.engine import V1_POLICY_PATH, PolicyError, Verdict, load_policy, structural_reason


def policy_file(tmp_path: Path, structural: object | None) -> Path:
    """A copy of the v1 policy with its `structural` section replaced (or removed when None)."""
    data = yaml.safe_load(V1_POLICY_PATH.read_text())
    data.pop("structural", None)
    if structural is not None:
        data["structural"] = structural
    path = tmp_path / "team-v1.yaml"
    path.write_text(yaml.safe_dump({**data, "name": "team"}))
    return path


def test_the_packaged_policies_block_both() -> None:
    for loaded in (load_policy(), load_policy(V1_POLICY_PATH)):
        rule = loaded.policy.structural
        assert (rule.dropped, rule.renamed) == (Verdict.BLOCK, Verdict.BLOCK)


def test_absent_section_means_block(tmp_path: Path) -> None:
    rule = load_policy(policy_file(tmp_path, None)).policy.structural
    assert (rule.dropped, rule.renamed) == (Verdict.BLOCK, Verdict.BLOCK)


def test_the_section_sets_each_verdict(tmp_path: Path) -> None:
    policy = load_policy(policy_file(tmp_path, {"dropped": "BLOCK", "renamed": "WARNING"})).policy
    renamed = structural_reason("renamed", "amount", policy)
    assert renamed.severity == Verdict.WARNING and renamed.code == "structural_renamed_warning"
    assert renamed.message == (
        "input column amount is renamed: the model cannot be scored without it (policy structural.renamed: WARNING)"
    )
    dropped = structural_reason("dropped", "amount", policy)
    assert dropped.severity == Verdict.BLOCK and dropped.code == "structural_dropped_block"


@pytest.mark.parametrize(
    ("section", "needle"),
    [
        ({"dropped": "PASS"}, "cannot PASS"),
        ({"renamed": "MAYBE"}, "structural.renamed"),
        ({"retyped": "BLOCK"}, "structural.retyped"),
    ],
    ids=["pass-refused", "unknown-verdict", "unknown-key"],
)
def test_bad_sections_are_refused(tmp_path: Path, section: dict[str, str], needle: str) -> None:
    with pytest.raises(PolicyError, match="invalid policy") as caught:
        load_policy(policy_file(tmp_path, section))
    assert needle in str(caught.value)
