"""The policy engine: measured metrics + a versioned threshold file -> verdict and reasons (docs/design.md §6).

Pure and LLM-free. ``evaluate`` is a function of its two arguments only; every rule adds a ``Reason`` (PASS
reasons included, so a report can show why nothing fired) and the verdict is the most severe reason. The rules of
each task live in their own module (rules_binary, rules_multiclass, rules_regression, segment_rule); this module
holds the policy model, the dispatch on ``metrics.task`` and the loader.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import ValidationError

from policies.metrics import Frozen, ModelMetrics
from policies.policy import Policy
from policies.rules_binary import binary_reasons, binary_sample_reasons
from policies.rules_common import failure_reason, missing_task_metrics
from policies.rules_multiclass import multiclass_reasons, multiclass_sample_reasons
from policies.rules_regression import regression_reasons, regression_sample_reasons
from policies.rules_task import task_reasons, task_sample_reasons
from policies.sections import (
    AucDropRule,
    Band,
    FailureRule,
    MulticlassRules,
    RegressionRules,
    SegmentRule,
    ShareBand,
    SignificantDropRule,
    SignificantIncreaseRule,
    StructuralRule,
    TaskRules,
)
from policies.segment_rule import segment_reasons
from policies.verdicts import Decision, Reason, Verdict, incomplete, overall_verdict
from tools.errors import BadRequest

DEFAULT_POLICY_PATH = Path(__file__).with_name("default-v2.yaml")
V1_POLICY_PATH = Path(__file__).with_name("default-v1.yaml")

__all__ = [  # the names other packages import from here; the models themselves live in small modules
    "DEFAULT_POLICY_PATH",
    "V1_POLICY_PATH",
    "AucDropRule",
    "Band",
    "Decision",
    "FailureRule",
    "LoadedPolicy",
    "MulticlassRules",
    "Policy",
    "PolicyError",
    "Reason",
    "RegressionRules",
    "SegmentRule",
    "ShareBand",
    "SignificantDropRule",
    "SignificantIncreaseRule",
    "TaskRules",
    "StructuralRule",
    "Verdict",
    "evaluate",
    "incomplete",
    "load_policy",
    "overall_verdict",
    "structural_reason",
]


class PolicyError(BadRequest, ValueError):
    """A policy file that cannot be used; the message names the file and the problem."""


class LoadedPolicy(Frozen):
    policy: Policy
    sha256: str  # over the file's bytes, recorded in the evidence
    path: Path


def structural_reason(change: Literal["dropped", "renamed"], field: str, policy: Policy) -> Reason:
    """The policy's verdict for a model whose input `field` is `change` ("dropped" or "renamed")."""
    level = policy.structural.renamed if change == "renamed" else policy.structural.dropped
    return Reason(
        code=f"structural_{change}_{level.lower()}",
        severity=level,
        message=f"input column {field} is {change}: the model cannot be scored without it "
        f"(policy structural.{change}: {level})",
    )


def _no_rules(task: str, policy: Policy) -> Reason:
    if task in ("multiclass", "regression"):
        judges, fix = (
            "it judges binary classifiers only",
            f"policies/default-v2.yaml or a policy with a `{task}:` section",
        )
    else:
        judges, fix = "no `tasks:` section names it", f"a policy with a `tasks: {{{task}: ...}}` section"
    return Reason(
        code=f"{task}_not_judged",
        severity=Verdict.INCOMPLETE,
        metric=task,
        message=f"policy {policy.name} v{policy.version} has no {task} rules ({judges}); "
        f"judge this {task} model with {fix}",
    )


def evaluate(metrics: ModelMetrics, policy: Policy) -> Decision:
    """Judge one model's metrics by its task's rules. Pure: the same inputs always give the same decision."""
    m = metrics
    reasons = [failure_reason(m, policy.inference_failures)]  # a crash is a fact, judged whatever the sample size
    if m.task == "binary":
        if m.binary is None:  # ModelMetrics refuses this; the type checker does not know
            return Decision.from_reasons([*reasons, missing_task_metrics("binary", m)])
        too_small = binary_sample_reasons(m, m.binary, policy)
        judged = [] if too_small else binary_reasons(m, m.binary, policy)
    elif m.task == "multiclass":
        if policy.multiclass is None:
            return Decision.from_reasons([*reasons, _no_rules("multiclass", policy)])
        too_small = multiclass_sample_reasons(m, policy.multiclass)
        judged = [] if too_small else multiclass_reasons(m, policy.multiclass)
    elif m.task == "regression":
        if policy.regression is None:
            return Decision.from_reasons([*reasons, _no_rules("regression", policy)])
        too_small = regression_sample_reasons(m, policy.regression)
        judged = [] if too_small else regression_reasons(m, policy.regression)
    else:  # a registered task (tools/tasks/): the policy's tasks.<name> section judges it
        rules = policy.tasks.get(m.task)
        if rules is None:
            return Decision.from_reasons([*reasons, _no_rules(m.task, policy)])
        too_small = task_sample_reasons(m, rules)
        judged = [] if too_small else task_reasons(m, rules)
    if too_small:  # the statistics on too small a sample would be noise; say so instead of judging
        return Decision.from_reasons(reasons + too_small)
    segments = segment_reasons(m, policy.segments, policy.segment_bands(m.task))
    return Decision.from_reasons(reasons + judged + segments)


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys: PyYAML silently keeps the last, hiding an edited threshold."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _readable(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        text = str(err["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {text}" + ("" if err["type"] == "missing" else f" (got {err['input']!r})"))
    return "; ".join(parts)


def load_policy(path: Path | None = None) -> LoadedPolicy:
    """Load and validate a policy file (default: the packaged default-v2.yaml); sha256 over its bytes."""
    target = Path(path) if path is not None else DEFAULT_POLICY_PATH
    try:
        raw = target.read_bytes()
    except OSError as exc:
        raise PolicyError(f"{target}: cannot read policy file ({exc.strerror or exc})") from exc
    try:
        data = yaml.load(raw, Loader=_UniqueKeyLoader)  # a SafeLoader subclass: no arbitrary objects
    except yaml.YAMLError as exc:
        raise PolicyError(f"{target}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise PolicyError(f"{target}: expected a mapping of policy fields, got {type(data).__name__}")
    try:
        policy = Policy.model_validate(data)
    except ValidationError as exc:
        raise PolicyError(f"{target}: invalid policy: {_readable(exc)}") from None
    named = re.fullmatch(r"(?P<name>.+)-v(?P<version>\d+)\.ya?ml", target.name)
    if named and (named["name"] != policy.name or int(named["version"]) != policy.version):
        raise PolicyError(
            f"{target}: the file name says {named['name']} v{named['version']} but the file declares name "
            f"{policy.name!r} version {policy.version}; rename the file or fix the fields"
        )
    return LoadedPolicy(policy=policy, sha256=hashlib.sha256(raw).hexdigest(), path=target.resolve())
