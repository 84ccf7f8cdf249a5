"""Verdicts and the reasons behind them: the vocabulary every rule module of the engine speaks.

A module of its own so the per-task rule modules can build reasons without importing the engine that imports them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from policies.metrics import Frozen


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


class Reason(Frozen):
    code: str  # e.g. "flip_rate_block"
    severity: Verdict
    message: str  # human-readable, with the measured number and the threshold
    metric: str | None = None
    value: float | None = None
    threshold: float | None = None


class Decision(Frozen):
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
