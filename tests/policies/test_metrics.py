"""The metrics' shape: one paired change per before/after metric, one section per task, and evidence written
before the sections (flat `auc_delta`, `mae_delta_ci_low`… fields) still read."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from policies import ModelMetrics, PairedChange
from tests.policies.helpers import binary, multiclass, regression

FLAT_BINARY = {
    "n": 7200, "positives": 556, "negatives": 6644, "n_scored": 7200, "auc_baseline": 0.8993, "auc_mutated": 0.7266,
    "auc_delta": -0.1727, "auc_delta_ci_low": -0.1854, "auc_delta_ci_high": -0.1601, "auc_p_value": 6.06e-158,
    "flips": 3000, "flip_rate": 0.4167, "flip_rate_ci_low": 0.4053, "flip_rate_ci_high": 0.4281,
    "prob_shift_mean": 0.3, "prob_shift_p95": 0.9, "prob_shift_max": 0.99, "psi": 2.1, "failures": 0,
    "failure_rate": 0.0, "threshold": 0.5, "confidence": 0.95, "methods": {},
}  # fmt: skip


def test_flat_binary_evidence_reads_into_the_binary_section() -> None:
    m = ModelMetrics.model_validate_json(json.dumps(FLAT_BINARY))
    assert m.task == "binary" and m.binary is not None
    assert (m.binary.positives, m.binary.negatives) == (556, 6644)
    assert m.binary.auc == PairedChange(
        baseline=0.8993, mutated=0.7266, delta=-0.1727, ci_low=-0.1854, ci_high=-0.1601, p_value=6.06e-158
    )
    assert ModelMetrics.model_validate(m.model_dump()) == m  # the nested form round-trips as itself


def test_flat_auc_of_none_is_no_auc() -> None:
    flat = FLAT_BINARY | dict.fromkeys(("auc_baseline", "auc_mutated", "auc_delta", "auc_p_value"), None)
    flat |= {"auc_delta_ci_low": None, "auc_delta_ci_high": None}
    m = ModelMetrics.model_validate(flat)
    assert m.binary is not None and m.binary.auc is None and m.binary.positives == 556


def test_flat_regression_and_multiclass_sections_nest_and_drop_the_binary_blanks() -> None:
    r, mc = regression(), multiclass()
    assert r.regression is not None and mc.multiclass is not None
    flat_r = r.model_dump() | {"positives": 0, "negatives": 0, "auc_baseline": None, "auc_delta": None}
    section = flat_r.pop("regression")
    mae = section.pop("mae")
    section |= {f"mae_{k}": v for k, v in (("baseline", mae["baseline"]), ("mutated", mae["mutated"]))}
    section |= {"mae_delta": mae["delta"], "mae_delta_ci_low": mae["ci_low"], "mae_delta_ci_high": mae["ci_high"]}
    section |= {"mae_delta_relative": mae["relative"]}
    old = ModelMetrics.model_validate(flat_r | {"regression": section})
    assert old == r and old.binary is None


def test_a_binary_model_needs_its_section_and_others_have_none() -> None:
    with pytest.raises(ValidationError, match="binary model's metrics need a binary section"):
        ModelMetrics.model_validate(binary().model_dump() | {"binary": None})
    b = binary().binary
    assert b is not None
    with pytest.raises(ValidationError, match="regression model's metrics have no binary section"):
        ModelMetrics.model_validate(regression().model_dump() | {"binary": b.model_dump()})
