"""The policy engine: measured metrics + a versioned threshold file -> verdict and reasons (DESIGN §6).

Pure and LLM-free. ``evaluate`` is a function of its two arguments only; every rule adds a ``Reason`` (PASS
reasons included, so a report can show why nothing fired) and the verdict is the most severe reason.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from policies.metrics import ModelMetrics

DEFAULT_POLICY_PATH = Path(__file__).with_name("default-v1.yaml")


class Verdict(StrEnum):
    PASS = "PASS"
    WARNING = "WARNING"
    BLOCK = "BLOCK"
    INCOMPLETE = "INCOMPLETE"

    @property
    def severity(self) -> int:
        """BLOCK > INCOMPLETE > WARNING > PASS: an unmeasured model outranks a measured warning."""
        return _SEVERITY[self]


_SEVERITY = {Verdict.PASS: 0, Verdict.WARNING: 1, Verdict.INCOMPLETE: 2, Verdict.BLOCK: 3}


class PolicyError(ValueError):
    """A policy file that cannot be used; the message names the file and the problem."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Band(_Frozen):
    """WARNING at value >= warning, BLOCK at value >= block."""

    warning: float = Field(gt=0)
    block: float = Field(gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> Band:
        if self.warning > self.block:
            raise ValueError(f"warning ({self.warning}) must be <= block ({self.block})")
        return self


class FailureRule(_Frozen):
    warning_count: int = Field(ge=1)
    block_rate: float = Field(gt=0, le=1)


class AucDropRule(Band):
    alpha: float = Field(gt=0, lt=1)
    block: float = Field(gt=0, le=1)


class Policy(_Frozen):
    name: str = Field(min_length=1)
    version: int = Field(ge=1)
    description: str = ""
    min_rows: int = Field(ge=1)
    min_positives: int = Field(ge=2)  # DeLong's variance needs at least two of each class
    min_negatives: int = Field(ge=2)
    flip_rate: Band
    score_psi: Band
    inference_failures: FailureRule
    auc_drop: AucDropRule

    @model_validator(mode="after")
    def _consistent(self) -> Policy:
        if self.flip_rate.block > 1:
            raise ValueError(f"flip_rate.block is a fraction of rows and must be <= 1 (got {self.flip_rate.block})")
        if self.min_rows < self.min_positives + self.min_negatives:
            raise ValueError("min_rows must be >= min_positives + min_negatives")
        return self


class LoadedPolicy(_Frozen):
    policy: Policy
    sha256: str  # over the file's bytes, recorded in the evidence
    path: Path


class Reason(_Frozen):
    code: str  # e.g. "flip_rate_block"
    severity: Verdict
    message: str  # human-readable, with the measured number and the threshold
    metric: str | None = None
    value: float | None = None
    threshold: float | None = None


class Decision(_Frozen):
    verdict: Verdict
    reasons: tuple[Reason, ...]

    @classmethod
    def from_reasons(cls, reasons: Iterable[Reason]) -> Decision:
        reasons = tuple(reasons)
        return cls(verdict=overall_verdict([r.severity for r in reasons]), reasons=reasons)


def overall_verdict(decisions: Sequence[Verdict]) -> Verdict:
    """Most severe verdict; an empty sequence is PASS (the caller says no production model depends on it)."""
    return max(decisions, key=lambda v: v.severity, default=Verdict.PASS)


def incomplete(code: str, message: str) -> Decision:
    """INCOMPLETE for a problem decided before any metric exists (missing binding, hash mismatch, ...)."""
    return Decision.from_reasons([Reason(code=code, severity=Verdict.INCOMPLETE, message=message)])


def _pct(x: float) -> str:
    return f"{x * 100:.3g}%"


def _band_reason(metric: str, label: str, value: float, band: Band, *, percent: bool, detail: str = "") -> Reason:
    if value >= band.block:
        level, threshold, cmp = Verdict.BLOCK, band.block, ">="
    elif value >= band.warning:
        level, threshold, cmp = Verdict.WARNING, band.warning, ">="
    else:
        level, threshold, cmp = Verdict.PASS, band.warning, "<"
    shown, limit = (f"{value:.1%}", _pct(threshold)) if percent else (f"{value:.3f}", f"{threshold:g}")
    name = "warning" if level is not Verdict.BLOCK else "block"
    message = f"{label} {shown}{detail} {cmp} {limit} {name} threshold"
    return Reason(
        code=f"{metric}_{level.lower()}",
        severity=level,
        message=message,
        metric=metric,
        value=value,
        threshold=threshold,
    )


def _failure_reason(m: ModelMetrics, rule: FailureRule) -> Reason:
    counted = f"{m.failures} of {m.n} rows ({_pct(m.failure_rate)}) failed inference"
    if m.failure_rate >= rule.block_rate:
        level, threshold, text = Verdict.BLOCK, rule.block_rate, f">= {_pct(rule.block_rate)} block threshold"
    elif m.failures >= rule.warning_count:
        level, threshold, text = Verdict.WARNING, float(rule.warning_count), f"(warning from {rule.warning_count})"
    else:
        level, threshold, text = Verdict.PASS, float(rule.warning_count), f"(warning from {rule.warning_count})"
    return Reason(
        code=f"inference_failures_{level.lower()}",
        severity=level,
        message=f"{counted} {text}",
        metric="failure_rate",
        value=m.failure_rate,
        threshold=threshold,
    )


def _sample_reasons(m: ModelMetrics, p: Policy) -> list[Reason]:
    checks = [
        ("rows", m.n, p.min_rows),
        ("positives", m.positives, p.min_positives),
        ("negatives", m.negatives, p.min_negatives),
    ]
    return [
        Reason(
            code=f"min_{what}_incomplete",
            severity=Verdict.INCOMPLETE,
            metric=what,
            value=float(have),
            threshold=float(need),
            message=f"only {have} evaluation {what}; the policy needs at least {need} to judge this model",
        )
        for what, have, need in checks
        if have < need
    ]


def _auc_reason(m: ModelMetrics, rule: AucDropRule) -> Reason:
    if m.auc_baseline is None or m.auc_mutated is None or m.auc_delta is None or m.auc_p_value is None:
        return Reason(
            code="auc_unavailable",
            severity=Verdict.INCOMPLETE,
            metric="auc_drop",
            message=f"ROC AUC could not be computed on the {m.n_scored} successfully scored rows "
            "(needs at least 2 positives and 2 negatives among them)",
        )
    drop, p = -m.auc_delta, m.auc_p_value  # the thresholds are on the drop (baseline - mutated)
    # The message speaks of one quantity only, the change (mutated - baseline), so the delta and both CI bounds
    # carry the same sign convention: a drop reads "change -0.1727, 95% CI -0.1854 to -0.1601".
    ci = f"{_pct(m.confidence)} CI {m.auc_delta_ci_low:+.4f} to {m.auc_delta_ci_high:+.4f}"
    change = f"change {m.auc_delta:+.4f}, {ci}, DeLong p = {p:.3g}"
    facts = f"AUC {m.auc_baseline:.4f} -> {m.auc_mutated:.4f} ({change})"
    significant = p < rule.alpha
    if significant and drop >= rule.block:
        level, threshold, why = Verdict.BLOCK, rule.block, f"significant, drop >= {rule.block:g} block"
    elif significant and drop >= rule.warning:
        level, threshold, why = Verdict.WARNING, rule.warning, f"significant, drop >= {rule.warning:g} warning"
    elif not significant:
        level, threshold, why = Verdict.PASS, rule.warning, f"not significant (p >= alpha {rule.alpha:g})"
    else:
        level, threshold, why = Verdict.PASS, rule.warning, f"a drop below the {rule.warning:g} practical minimum"
    return Reason(
        code=f"auc_drop_{level.lower()}",
        severity=level,
        message=f"{facts}: {why}",
        metric="auc_drop",
        value=drop,
        threshold=threshold,
    )


def evaluate(metrics: ModelMetrics, policy: Policy) -> Decision:
    """Judge one model's metrics. Pure: the same inputs always give the same decision."""
    reasons = [_failure_reason(metrics, policy.inference_failures)]
    too_small = _sample_reasons(metrics, policy)
    if too_small:  # flips, PSI and AUC on too small a sample would be noise; say so instead of judging
        return Decision.from_reasons(reasons + too_small)
    m = metrics
    if m.flip_rate is not None:
        ci = f" ({_pct(m.confidence)} CI {m.flip_rate_ci_low:.1%}-{m.flip_rate_ci_high:.1%}, {m.flips} of {m.n_scored})"
        reasons.append(_band_reason("flip_rate", "flip rate", m.flip_rate, policy.flip_rate, percent=True, detail=ci))
    if m.psi is not None:
        reasons.append(_band_reason("score_psi", "score PSI", m.psi, policy.score_psi, percent=False))
    reasons.append(_auc_reason(m, policy.auc_drop))
    return Decision.from_reasons(reasons)


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
    """Load and validate a policy file (default: the packaged default-v1.yaml); sha256 over its bytes."""
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
