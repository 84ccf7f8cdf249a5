"""compute_task_metrics: binary unchanged, dispatch per task, segments attached; real sklearn models mutated by the
real operators and judged by default-v2 (scale on a regressor blocks, a harmless round passes, an unseen category
breaks a multiclass model, one hot region raises the verdict though the overall flip rate is low)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from policies import Verdict, evaluate, load_policy
from tools.experiment.metrics import compute_metrics
from tools.experiment.segments import DEFAULT_SEGMENT_BANDS
from tools.experiment.task import TaskDecision
from tools.experiment.task_metrics import compute_task_metrics, prepare_metric_inputs
from tools.mutations.apply import apply_mutation
from tools.mutations.parse import parse_mutation

POLICY = load_policy().policy
N = 4000


def transactions(n: int = N, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "amount": rng.gamma(2.0, 40.0, n).round(2),
            "region": rng.choice(["north", "south", "east", "west", "centre"], n, p=[0.1, 0.3, 0.3, 0.2, 0.1]),
            "channel": rng.choice(["web", "app", "store"], n),
        }
    )


def mutate(frame: pd.DataFrame, column: str, op: str, params: dict[str, object], fraction: float = 1.0) -> pd.DataFrame:
    out = frame.copy()
    out[column] = apply_mutation(frame[column], parse_mutation(op, params, fraction=fraction, seed=1))
    return out


def codes(m: object) -> set[str]:
    return {r.code for r in evaluate(m, POLICY).reasons}  # type: ignore[arg-type]


def test_binary_numbers_are_compute_metrics_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    y = (rng.random(N) < 0.3).astype(int)
    base = np.clip(0.2 + 0.5 * y + rng.normal(0, 0.15, N), 0, 1)
    mut = np.clip(base + rng.normal(0, 0.1, N), 0, 1)
    failed = rng.random(N) < 0.01
    plain = compute_metrics(y, base, mut, failed)
    m = compute_task_metrics("binary", y, base, mut, failed, segments_frame=transactions())
    assert m.model_dump(exclude={"segments"}) == plain.model_dump(exclude={"segments"}) and m.task == "binary"
    assert m.segments is not None and m.segments.segments_tested > 0
    assert (m.segments.warning_band, m.segments.block_band) == DEFAULT_SEGMENT_BANDS
    assert compute_task_metrics("binary", y, base, mut, failed) == plain


def regression_model() -> tuple[pd.DataFrame, np.ndarray, object]:
    frame = transactions()
    rng = np.random.default_rng(5)
    review_minutes = 5 + 0.3 * frame["amount"].to_numpy() + rng.normal(0, 4, N)
    features = make_column_transformer((StandardScaler(), ["amount"]), (OneHotEncoder(), ["channel"]))
    model = make_pipeline(features, LinearRegression()).fit(frame, review_minutes)
    return frame, review_minutes, model


def assess_regression(op: str, params: dict[str, object]):  # type: ignore[no-untyped-def]
    frame, y, model = regression_model()
    base = model.predict(frame)  # type: ignore[attr-defined]
    mut = model.predict(mutate(frame, "amount", op, params))  # type: ignore[attr-defined]
    fraction = POLICY.regression_tolerance_fraction()
    assert fraction is not None
    return compute_task_metrics(
        "regression", y, base, mut, np.zeros(N, dtype=bool), segments_frame=frame,
        segment_bands=POLICY.segment_bands("regression"), segment_rule=POLICY.segments, tolerance_fraction=fraction,
    )  # fmt: skip


def test_scale_makes_a_regressor_useless_and_blocks() -> None:
    m = assess_regression("scale", {"factor": 100})
    assert m.task == "regression" and m.regression is not None
    assert m.regression.mae.ci_low > 0 and m.regression.moved_share > 0.9
    decision = evaluate(m, POLICY)
    assert decision.verdict is Verdict.BLOCK
    assert {"mae_increase_block", "rmse_increase_block", "moved_share_block", "prediction_psi_block"} <= codes(m)


def test_a_harmless_round_passes() -> None:
    m = assess_regression("round", {"decimals": 0})  # amounts are cents: whole dollars move predictions by < 0.15
    assert m.regression is not None and m.regression.moved == 0
    decision = evaluate(m, POLICY)
    assert decision.verdict is Verdict.PASS, [r.message for r in decision.reasons if r.severity is not Verdict.PASS]


def test_an_unseen_category_breaks_a_multiclass_model() -> None:
    frame = transactions(seed=2)
    tiers = np.array(["basic", "plus", "premium"])
    rng = np.random.default_rng(6)
    by_channel = {"web": 0, "app": 1, "store": 2}
    label = tiers[(frame["channel"].map(by_channel).to_numpy() + (rng.random(N) < 0.15)) % 3]
    encode = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["channel"]), (StandardScaler(), ["amount"])
    )
    model = make_pipeline(encode, LogisticRegression(max_iter=500)).fit(frame, label)
    base = model.predict_proba(frame)
    mut = model.predict_proba(mutate(frame, "channel", "unseen_category", {"value": "kiosk"}, fraction=0.5))
    m = compute_task_metrics(
        "multiclass", label, base, mut, np.zeros(N, dtype=bool), classes=list(model.classes_), segments_frame=frame,
        segment_bands=POLICY.segment_bands("multiclass"),
    )  # fmt: skip
    assert m.task == "multiclass" and m.multiclass is not None and m.multiclass.classes == ["basic", "plus", "premium"]
    assert m.flip_rate is not None and m.flip_rate > POLICY.multiclass.flip_rate.block  # type: ignore[union-attr]
    assert m.multiclass.accuracy.ci_high < -0.03
    assert evaluate(m, POLICY).verdict is Verdict.BLOCK
    assert {"flip_rate_block", "accuracy_drop_block", "macro_f1_drop_block"} <= codes(m)
    # the same numbers when the labels' codes and the segment groups were prepared beforehand (as assess does)
    decision = TaskDecision("multiclass", "test", classes=tuple(model.classes_))
    inputs = prepare_metric_inputs(decision.label_codes(pd.Series(label)), frame, POLICY.segments)
    prepared = compute_task_metrics(
        "multiclass", label, base, mut, np.zeros(N, dtype=bool), classes=list(model.classes_), segments_frame=frame,
        segment_bands=POLICY.segment_bands("multiclass"), segment_rule=POLICY.segments, prepared=inputs,
    )  # fmt: skip
    assert prepared == m


def test_one_hot_region_raises_the_verdict_though_the_overall_flip_rate_is_low() -> None:
    frame = transactions(seed=4)
    rng = np.random.default_rng(9)
    y = (rng.random(N) < 0.3).astype(int)
    base = np.clip(0.25 + 0.5 * y + rng.normal(0, 0.12, N), 0.001, 0.999)
    north = (frame["region"] == "north").to_numpy()
    mut = base.copy()
    inverted = north & (rng.random(N) < 0.3)  # 30 % of the northern rows (10 % of all) get the opposite score
    mut[inverted] = 1 - base[inverted]
    m = compute_task_metrics(
        "binary", y, base, mut, np.zeros(N, dtype=bool), segments_frame=frame,
        segment_bands=POLICY.segment_bands("binary"), segment_rule=POLICY.segments,
    )  # fmt: skip
    assert m.flip_rate is not None and m.flip_rate < POLICY.flip_rate.warning
    decision = evaluate(m, POLICY)
    assert "flip_rate_pass" in codes(m) and decision.verdict is Verdict.BLOCK
    reason = next(r for r in decision.reasons if r.code == "segment_block")
    assert reason.message.startswith("segment region=north: flip rate ")
    found = re.search(
        r"one-sided binomial p = (\S+), BH-adjusted p = (\S+) < FDR 0.05 across (\d+) segments", reason.message
    )
    assert found, reason.message
    raw, adjusted, tested = float(found[1]), float(found[2]), int(found[3])
    assert raw < adjusted < 0.05 and tested == m.segments.segments_tested  # type: ignore[union-attr]
    worst = m.segments.worst  # type: ignore[union-attr]
    assert worst is not None and worst.exceeds == "block" and worst.p_adjusted_block is not None
    assert worst.p_adjusted_block >= worst.p_value_block  # type: ignore[operator]


def test_dispatch_errors_name_the_fix() -> None:
    y, p = np.zeros(4), np.ones((4, 3)) / 3
    with pytest.raises(ValueError, match="needs classes"):
        compute_task_metrics("multiclass", y, p, p, np.zeros(4, dtype=bool))
    with pytest.raises(ValueError, match="unknown task 'ranking'"):
        compute_task_metrics("ranking", y, y, y, np.zeros(4, dtype=bool))  # type: ignore[arg-type]
