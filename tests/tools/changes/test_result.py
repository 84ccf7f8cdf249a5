"""What `check` says of each model: the reasons that set the verdict, and for a PASS what was measured first."""

from __future__ import annotations

from policies import Verdict, evaluate
from tests.policies.test_engine import POLICY, metrics
from tools.changes.result import outcome_of
from tools.evidence.schema import ModelEvidence


def evidence(**overrides: object) -> ModelEvidence:
    measured = metrics(**overrides)
    decision = evaluate(measured, POLICY)
    return ModelEvidence(
        urn="urn:li:mlModel:(m)", name="m", verdict=decision.verdict, reasons=list(decision.reasons), metrics=measured
    )


def test_a_pass_leads_with_what_was_measured_not_with_zero_failures() -> None:
    passed = outcome_of(evidence(flips=3, flip_rate=0.003, flip_rate_ci_high=0.009))
    assert passed.verdict == Verdict.PASS
    assert passed.reasons[0].startswith("flip rate 0.3%"), passed.reasons
    assert "failed inference" in passed.reasons[-1]  # still listed, last


def test_a_block_lists_only_the_reasons_that_set_it() -> None:
    blocked = outcome_of(evidence(failures=50, failure_rate=0.05, n_scored=950))
    assert blocked.verdict == Verdict.BLOCK
    assert len(blocked.reasons) == 1 and "50 of 1000 rows (5%) failed inference" in blocked.reasons[0]
