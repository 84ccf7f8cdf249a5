"""The runner: baseline vs mutated inference on the demo pipelines, per-row failure capture, baseline cache."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from seed.model import FRAUD_DETECTOR, MERCHANT_RISK, MODEL_FEATURES, read_eval_frame
from tools.experiment.binding import ModelBinding
from tools.experiment.loading import load_verified_pipeline
from tools.experiment.runner import BaselineCache, BaselineFailure, ExperimentOutcome, run_experiment
from tools.mutations import Mutation, apply_mutation, parse_mutation

LABEL = "is_fraud"


@dataclass(frozen=True)
class Demo:
    pipelines: dict[str, Any]
    frame: pd.DataFrame
    eval_sha: str


@pytest.fixture(scope="module")
def demo(seeded_template: Path) -> Demo:
    """The seeded demo pipelines, loaded through the verified path (the template is read-only here)."""
    folder = seeded_template / "demo"
    eval_path = folder / "fraud_eval.csv"
    pipelines = {}
    for name in (FRAUD_DETECTOR, MERCHANT_RISK):
        artifact = folder / f"{name}.joblib"
        binding = ModelBinding(
            artifact_path=artifact,
            artifact_sha256=hashlib.sha256(artifact.read_bytes()).hexdigest(),
            eval_data_path=eval_path,
            label_column=LABEL,
        )
        pipelines[name] = load_verified_pipeline(binding)
    return Demo(pipelines, read_eval_frame(eval_path), hashlib.sha256(eval_path.read_bytes()).hexdigest())


def run(
    pipeline: Any,
    frame: pd.DataFrame,
    column: str,
    mutation: Mutation,
    *,
    columns: list[str] | None = None,
    cache: BaselineCache | None = None,
    key: tuple[str, str] = ("artifact", "eval"),
    chunk_rows: int | None = None,
) -> ExperimentOutcome:
    extra = {} if chunk_rows is None else {"chunk_rows": chunk_rows}
    return run_experiment(
        pipeline=pipeline,
        frame=frame,
        columns=columns or [c for c in frame.columns if c != LABEL],
        label_column=LABEL,
        feature_column=column,
        mutation=mutation,
        cache=cache or BaselineCache(),
        cache_key=key,
        **extra,
    )


def demo_run(demo: Demo, model: str, column: str, mutation: Mutation, **kwargs: Any) -> ExperimentOutcome:
    return run(demo.pipelines[model], demo.frame, column, mutation, columns=MODEL_FEATURES[model], **kwargs)


def direct_scores(pipeline: Any, frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    return np.asarray(pipeline.predict_proba(frame[columns])[:, 1])


# --- the demo models ----------------------------------------------------------------------------------------


def test_scale_100_changes_fraud_detector_scores(demo: Demo) -> None:
    outcome = demo_run(demo, FRAUD_DETECTOR, "txn_amount", parse_mutation("scale", {"factor": 100}))
    n = len(demo.frame)
    columns = MODEL_FEATURES[FRAUD_DETECTOR]
    np.testing.assert_allclose(outcome.baseline, direct_scores(demo.pipelines[FRAUD_DETECTOR], demo.frame, columns))
    scaled = demo.frame.assign(txn_amount=demo.frame["txn_amount"] * 100)
    expected = direct_scores(demo.pipelines[FRAUD_DETECTOR], scaled, columns)
    np.testing.assert_allclose(outcome.mutated.scores, expected)
    assert outcome.rows_changed == n  # every amount is > 0, so every row changes
    assert not outcome.mutated.failed.any()
    assert np.mean(np.abs(outcome.mutated.scores - outcome.baseline)) > 0.05  # a real, large shift
    np.testing.assert_array_equal(outcome.y_true, demo.frame[LABEL].to_numpy())
    assert outcome.baseline_cached is False


def test_null_inject_breaks_the_model_without_imputer(demo: Demo) -> None:
    mutation = parse_mutation("null_inject", {}, fraction=0.10, seed=7)
    n = len(demo.frame)
    nulled = apply_mutation(demo.frame["account_age_days"], mutation).isna().to_numpy()
    assert not demo.frame["account_age_days"].isna().any()

    outcome = demo_run(demo, MERCHANT_RISK, "account_age_days", mutation)  # must not raise

    failed = outcome.mutated.failed
    assert failed.sum() == round(0.10 * n) == nulled.sum()
    assert failed.mean() == pytest.approx(0.10, abs=0)  # 720 of 7200: exact
    np.testing.assert_array_equal(failed, nulled)  # exactly the mutated rows, no more, no fewer
    assert np.isnan(outcome.mutated.scores[failed]).all()
    np.testing.assert_array_equal(outcome.mutated.scores[~failed], outcome.baseline[~failed])  # untouched rows
    assert any("NaN" in sample for sample in outcome.mutated.error_samples), outcome.mutated.error_samples
    assert outcome.mutated.unisolated_rows == 0
    assert outcome.mutated.predict_calls < 20  # the missing-value class is attributed without per-row bisection


def test_null_inject_is_absorbed_by_the_imputer(demo: Demo) -> None:
    mutation = parse_mutation("null_inject", {}, fraction=0.10, seed=7)
    outcome = demo_run(demo, FRAUD_DETECTOR, "account_age_days", mutation)
    assert outcome.rows_changed == round(0.10 * len(demo.frame))
    assert not outcome.mutated.failed.any()
    assert np.isfinite(outcome.mutated.scores).all()
    assert outcome.mutated.error_samples == []


def test_input_frame_is_not_modified(demo: Demo) -> None:
    frame = demo.frame.copy(deep=True)
    before = frame.copy(deep=True)
    for mutation, column in (
        (parse_mutation("null_inject", {}, fraction=0.3), "account_age_days"),  # int column becomes float
        (parse_mutation("scale", {"factor": 100}), "txn_amount"),
        (parse_mutation("category_remap", {"mapping": {"US": "USA"}}), "country"),
    ):
        run(demo.pipelines[FRAUD_DETECTOR], frame, column, mutation, columns=MODEL_FEATURES[FRAUD_DETECTOR])
    pd.testing.assert_frame_equal(frame, before, check_exact=True)
    assert frame.dtypes.equals(before.dtypes)


def test_a_change_carried_into_two_columns_mutates_both_and_never_the_baseline(demo: Demo) -> None:
    """One change reaching two model inputs (carried through SQL): both change in the mutated copy only, so the
    baseline — which is cached and reused by later runs — is the untouched data's."""
    pipeline, columns = demo.pipelines[FRAUD_DETECTOR], MODEL_FEATURES[FRAUD_DETECTOR]
    scale = parse_mutation("scale", {"factor": 100}, fraction=0.5, seed=3)
    nulls = parse_mutation("null_inject", {}, fraction=0.5, seed=3)
    cache = BaselineCache()
    outcome = run_experiment(
        pipeline=pipeline,
        frame=demo.frame,
        columns=columns,
        label_column=LABEL,
        feature_column="txn_amount",
        mutation=scale,
        cache=cache,
        cache_key=("artifact", "eval"),
        other_mutations={"account_age_days": nulls},
    )
    np.testing.assert_allclose(outcome.baseline, direct_scores(pipeline, demo.frame, columns))
    both = demo.frame.assign(
        txn_amount=apply_mutation(demo.frame["txn_amount"], scale),
        account_age_days=apply_mutation(demo.frame["account_age_days"], nulls),
    )
    np.testing.assert_allclose(outcome.mutated.scores, direct_scores(pipeline, both, columns))
    assert outcome.rows_changed == round(0.5 * len(demo.frame))  # the same seed picks the same rows in both
    again = demo_run(demo, FRAUD_DETECTOR, "txn_amount", scale, cache=cache)
    assert again.baseline_cached and np.array_equal(again.baseline, outcome.baseline)


@pytest.mark.parametrize(
    ("model", "column", "op", "params", "fraction"),
    [
        (FRAUD_DETECTOR, "txn_amount", "scale", {"factor": 100}, 1.0),
        (MERCHANT_RISK, "account_age_days", "null_inject", {}, 0.05),
        (FRAUD_DETECTOR, "merchant_category", "unseen_category", {"value": "crypto"}, 0.2),
    ],
)
@pytest.mark.slow
def test_small_chunks_match_one_chunk(
    demo: Demo, model: str, column: str, op: str, params: dict[str, object], fraction: float
) -> None:
    mutation = parse_mutation(op, params, fraction=fraction, seed=3)
    whole = demo_run(demo, model, column, mutation, chunk_rows=len(demo.frame))
    chunked = demo_run(demo, model, column, mutation, chunk_rows=100)
    # Row-wise models: chunking may only change BLAS summation order, never more than rounding.
    np.testing.assert_allclose(chunked.baseline, whole.baseline, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(chunked.mutated.scores, whole.mutated.scores, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(chunked.mutated.failed, whole.mutated.failed)
    assert chunked.rows_changed == whole.rows_changed
    assert chunked.mutated.predict_calls > whole.mutated.predict_calls  # the chunk size was actually honoured


# --- baseline cache -----------------------------------------------------------------------------------------


class CountingModel:
    """Wraps a classifier and counts the rows it is asked to score."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.rows_scored = 0

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        self.rows_scored += len(X)
        return np.asarray(self.inner.predict_proba(X))


def test_baseline_is_cached_per_key(demo: Demo) -> None:
    model = CountingModel(demo.pipelines[FRAUD_DETECTOR])
    columns = MODEL_FEATURES[FRAUD_DETECTOR]
    cache = BaselineCache()
    n = len(demo.frame)
    key = ("sha-artifact", demo.eval_sha)

    first = run(model, demo.frame, "txn_amount", parse_mutation("scale", {"factor": 100}), columns=columns,
                cache=cache, key=key)  # fmt: skip
    assert first.baseline_cached is False
    assert model.rows_scored == 2 * n  # baseline + mutated

    second = run(model, demo.frame, "hour", parse_mutation("cyclic_shift", {"offset": 3, "period": 24}),
                 columns=columns, cache=cache, key=key)  # fmt: skip
    assert second.baseline_cached is True
    assert model.rows_scored == 3 * n  # only the mutated pass ran
    np.testing.assert_array_equal(second.baseline, first.baseline)
    with pytest.raises(ValueError):
        second.baseline[0] = 0.0  # read-only: no caller can corrupt the cached baseline

    other = run(model, demo.frame, "txn_amount", parse_mutation("scale", {"factor": 100}), columns=columns,
                cache=cache, key=("sha-artifact", "another eval file"))  # fmt: skip
    assert other.baseline_cached is False
    assert model.rows_scored == 5 * n


def test_baseline_failure_is_not_blamed_on_the_mutation() -> None:
    frame = pd.DataFrame({"x": [1.0, 2.0, np.nan, 4.0], LABEL: [0, 1, 0, 1]})
    model = Pipeline([("clf", LogisticRegression())]).fit(pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]}), [0, 1, 0, 1])
    cache = BaselineCache()
    with pytest.raises(BaselineFailure, match="1 unmutated evaluation rows"):
        run(model, frame, "x", parse_mutation("scale", {"factor": 2}), cache=cache)
    with pytest.raises(BaselineFailure):  # a failed baseline is not cached as if it were good
        run(model, frame, "x", parse_mutation("scale", {"factor": 2}), cache=cache)


# --- failure capture with hand-made models ------------------------------------------------------------------


def _frame(n: int = 2_000, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(1.0, 10.0, n)
    return pd.DataFrame({"x": x, "z": rng.normal(size=n), LABEL: (rng.random(n) < x / 12).astype(int)})


class NaNForNegatives:
    """A model that does not raise but returns NaN (and +inf) probabilities for rows with x < 0."""

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        x = X["x"].to_numpy(dtype=float)
        p = 1 / (1 + np.exp(-(x - 5)))
        p = np.where(x < 0, np.nan, p)
        p = np.where(x < -9, np.inf, p)
        return np.column_stack([1 - p, p])


def test_nan_and_inf_probabilities_count_as_failures() -> None:
    frame = _frame()
    mutation = parse_mutation("sign_flip", {}, fraction=0.15, seed=5)
    flipped = apply_mutation(frame["x"], mutation).to_numpy() < 0
    outcome = run(NaNForNegatives(), frame, "x", mutation)
    assert flipped.sum() == round(0.15 * len(frame))
    np.testing.assert_array_equal(outcome.mutated.failed, flipped)
    assert not np.isfinite(outcome.mutated.scores[flipped]).any()
    assert any("NaN or infinite" in sample for sample in outcome.mutated.error_samples)


def _reject_negative(X: pd.DataFrame) -> pd.DataFrame:
    negative = X["x"].to_numpy() < 0
    if negative.any():
        raise ValueError(f"negative amount in {int(negative.sum())} row(s)")
    return X


def negative_rejecting_model(frame: pd.DataFrame) -> Pipeline:
    pipeline = Pipeline([("guard", FunctionTransformer(_reject_negative)), ("clf", LogisticRegression())])
    return pipeline.fit(frame[["x", "z"]], frame[LABEL])


@pytest.mark.parametrize("chunk_rows", [2_000, 128])
def test_bisection_isolates_exactly_the_raising_rows(chunk_rows: int) -> None:
    frame = _frame()
    model = negative_rejecting_model(frame)
    mutation = parse_mutation("sign_flip", {}, fraction=0.02, seed=9)
    negative = apply_mutation(frame["x"], mutation).to_numpy() < 0
    assert negative.sum() == 40

    outcome = run(model, frame, "x", mutation, chunk_rows=chunk_rows)

    np.testing.assert_array_equal(outcome.mutated.failed, negative)
    assert outcome.mutated.unisolated_rows == 0
    assert outcome.mutated.value_class_rows == 0  # the values are present and finite: bisection, not the shortcut
    ok = ~negative
    expected = model.predict_proba(frame.loc[ok, ["x", "z"]])[:, 1]
    np.testing.assert_allclose(outcome.mutated.scores[ok], expected, rtol=1e-12)
    samples = outcome.mutated.error_samples
    assert samples and all("ValueError: negative amount in 1 row(s)" in s for s in samples)
    first_row = int(samples[0].split()[1].rstrip(":"))
    assert negative[first_row]
    # Bisection costs about two predictions per failing row per level, far below one call per row.
    assert outcome.mutated.predict_calls < len(frame) / 4


def _nan_guard(X: pd.DataFrame) -> pd.DataFrame:
    bad = X["x"].isna().to_numpy() & (X["z"].to_numpy() > 0)
    if bad.any():
        raise ValueError("missing x where z > 0")
    return X.fillna(0.0)


def test_missing_values_that_fail_only_sometimes_are_bisected() -> None:
    """When probes of the missing-value class disagree, every row is still judged on its own."""
    frame = _frame()
    mutation = parse_mutation("null_inject", {}, fraction=0.05, seed=1)
    nulled = apply_mutation(frame["x"], mutation).isna().to_numpy()
    # z > 0 for every nulled row except the last one (a probe), so the class as a whole fails but not uniformly.
    z = np.abs(frame["z"].to_numpy()) + 0.1
    z[np.flatnonzero(nulled)[-1]] = -1.0
    frame = frame.assign(z=z)
    model = Pipeline([("guard", FunctionTransformer(_nan_guard)), ("clf", LogisticRegression())])
    model.fit(frame[["x", "z"]], frame[LABEL])

    outcome = run(model, frame, "x", mutation)

    np.testing.assert_array_equal(outcome.mutated.failed, nulled & (z > 0))
    assert outcome.mutated.failed.sum() == nulled.sum() - 1
    assert outcome.mutated.value_class_rows == 0
