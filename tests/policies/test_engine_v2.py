"""Policy v2: the default, its loader checks, dispatch on the task; v1 stays selectable, same binary verdicts."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from policies import DEFAULT_POLICY_PATH, V1_POLICY_PATH, Policy, PolicyError, Verdict, evaluate, load_policy
from tests.policies.helpers import binary, multiclass, regression
from tools.experiment.metrics import compute_metrics

V2 = load_policy().policy


def test_v2_is_the_default_and_records_its_own_hash() -> None:
    loaded = load_policy(None)
    assert DEFAULT_POLICY_PATH.name == "default-v2.yaml" and loaded.path == DEFAULT_POLICY_PATH.resolve()
    assert (loaded.policy.name, loaded.policy.version) == ("default", 2)
    assert loaded.sha256 != load_policy(V1_POLICY_PATH).sha256
    assert loaded.policy.structural.dropped is Verdict.BLOCK and loaded.policy.structural.renamed is Verdict.BLOCK


def test_v2_judges_every_task_and_v1_binary_only(v1: Policy) -> None:
    assert [V2.judges(t) for t in ("binary", "multiclass", "regression")] == [True, True, True]
    assert [v1.judges(t) for t in ("binary", "multiclass", "regression")] == [True, False, False]
    assert v1.segments is None and v1.segment_bands("binary") is None


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_binary_decisions_are_v1s(v1: Policy, seed: int) -> None:
    rng = np.random.default_rng(seed)
    y = (rng.random(3000) < 0.3).astype(int)
    base = np.clip(0.2 + 0.5 * y + rng.normal(0, 0.15, 3000), 0, 1)
    for mutated in (base, np.clip(base + rng.normal(0, 0.05 * seed, 3000), 0, 1), 1 - base):
        m = compute_metrics(y, base, mutated, np.zeros(3000, dtype=bool))
        assert evaluate(m, V2) == evaluate(m, v1)


@pytest.mark.parametrize("build", [binary, multiclass, regression])
def test_every_task_is_judged_by_its_own_rules(build: object) -> None:
    m = build()  # type: ignore[operator]
    decision = evaluate(m, V2)
    assert decision.verdict is Verdict.PASS
    metrics = {r.metric for r in decision.reasons}
    assert ("auc_drop" in metrics) == (m.task == "binary")
    assert ("moved_share" in metrics) == (m.task == "regression")
    assert ("class_psi" in metrics) == (m.task == "multiclass")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "default-v2.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ("    block: 0.10     # Giskard's MAJOR level, 2 x threshold.\n  # Drops", "    block: 1.5\n  # Drops",
         "multiclass.flip_rate.block"),
        ("  accuracy_drop:    #", "  accuracy_dorp:    #", "accuracy_dorp"),
        ("    warning: 0.01   # one accuracy point", "    warning: 0.5   # one accuracy point",
         "multiclass.accuracy_drop: warning (0.5) must be <= block"),
        ("  tolerance_fraction: 0.1", "  tolerance_fraction: 0", "regression.tolerance_fraction"),
        ("  min_rows: 200     # enough rows", "  min_rows: 1     # enough rows", "regression.min_rows"),
        ("  fdr: 0.05", "  fdr: 1.5", "segments.fdr"),
        ("  numeric_bins: 4", "  numeric_bins: 1", "segments.numeric_bins"),
        ("  min_share: 0.05", "  min_share: 0.05\n  min_shares: 0.1", "segments.min_shares"),
        ("  dropped: BLOCK", "  dropped: PASS", "cannot PASS"),
        ("version: 2", "version: 3", "file name says default v2"),
    ],
)  # fmt: skip
def test_invalid_v2_values_name_the_file_and_the_key(tmp_path: Path, old: str, new: str, problem: str) -> None:
    text = DEFAULT_POLICY_PATH.read_text()
    assert old in text
    path = write(tmp_path, text.replace(old, new, 1))
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    assert str(path) in str(info.value) and problem in str(info.value)


def test_sections_are_optional_a_v1_shaped_file_loads(tmp_path: Path) -> None:
    text = V1_POLICY_PATH.read_text().replace("version: 1", "version: 2", 1)
    policy = load_policy(write(tmp_path, text)).policy
    assert policy.multiclass is None and policy.regression is None and policy.segments is None
    assert evaluate(regression(), policy).verdict is Verdict.INCOMPLETE


THRESHOLD_LINE = re.compile(r"^(?P<indent> *)(?P<key>[a-z_0-9]+):(?P<value>[^#]*)(?P<comment>#.*)?$")


def test_every_v2_threshold_is_commented_in_the_file_and_documented() -> None:
    readme = (DEFAULT_POLICY_PATH.parent / "README.md").read_text()
    path: list[str] = []
    checked = 0
    for line in DEFAULT_POLICY_PATH.read_text().splitlines():
        found = THRESHOLD_LINE.match(line)
        if not found or found["key"] in ("name", "version", "description"):
            continue
        path = path[: len(found["indent"]) // 2] + [found["key"]]
        if not found["value"].strip():
            continue  # a section header
        dotted = ".".join(path)
        assert found["comment"], f"default-v2.yaml: {dotted} has no comment"
        assert f"`{dotted}`" in readme, f"policies/README.md gives no rationale for `{dotted}`"
        checked += 1
    assert checked >= 35
