"""Task detection (binary / multiclass / regression) from real fitted estimators, the `provenance.task` override and
its checks, label checks per task, and inference per task through the runner (2-D multiclass scores and regressor
predictions keep the per-row failure isolation)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC

from tools.experiment.binding import ARTIFACT_SHA256, ARTIFACT_URI, EVAL_DATA_URI, LABEL_COLUMN, TASK, BindingError
from tools.experiment.locate import resolve_binding
from tools.experiment.runner import BINARY, BaselineCache, run_experiment, score_frame
from tools.experiment.sampling import stratified_indices
from tools.experiment.task import TaskDecision, check_labels, decide_task, label_keys, label_strata
from tools.mutations import parse_mutation

RNG = np.random.default_rng(15)
X = pd.DataFrame({"x": RNG.normal(size=300), "z": RNG.normal(size=300)})
Y_BINARY = (X["x"] + 0.3 * RNG.normal(size=300) > 0).astype(int)
Y_THREE = pd.Series(np.digitize(X["x"], [-0.5, 0.5]), name="y").map({0: "low", 1: "mid", 2: "high"})
Y_NUMBER = 3 * X["x"] - X["z"] + 0.1 * RNG.normal(size=300)


def fitted(estimator: Any, y: pd.Series) -> Any:
    return estimator.fit(X, y)


# --- detection ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "y", "task", "basis"),
    [
        (lambda: make_pipeline(StandardScaler(), LogisticRegression()), Y_BINARY, "binary", "LogisticRegression (2"),
        (lambda: LogisticRegression(max_iter=500), Y_THREE, "multiclass", "LogisticRegression (3 classes)"),
        (lambda: make_pipeline(StandardScaler(), GradientBoostingRegressor(n_estimators=5)), Y_NUMBER, "regression",
         "GradientBoostingRegressor (a scikit-learn regressor)"),
        (lambda: HistGradientBoostingRegressor(max_iter=5), Y_NUMBER, "regression", "HistGradientBoostingRegressor"),
        (lambda: make_pipeline(StandardScaler(), xgb.XGBRegressor(n_estimators=5)), Y_NUMBER, "regression",
         "XGBRegressor (a scikit-learn regressor)"),
        (lambda: lgb.LGBMRegressor(n_estimators=5, verbose=-1), Y_NUMBER, "regression", "LGBMRegressor"),
        (lambda: xgb.XGBClassifier(n_estimators=5), Y_BINARY, "binary", "XGBClassifier (2 classes)"),
        (lambda: lgb.LGBMClassifier(n_estimators=5, verbose=-1), Y_THREE, "multiclass", "LGBMClassifier (3 classes)"),
    ],
)  # fmt: skip
def test_task_is_detected_from_the_fitted_estimator(make: Any, y: pd.Series, task: str, basis: str) -> None:
    decision = decide_task(fitted(make(), y))
    assert decision.task == task
    assert basis in decision.basis and decision.basis.startswith("detected from")
    if task == "multiclass":
        assert decision.classes is not None and sorted(decision.classes) == ["high", "low", "mid"]
        assert decision.width == 3
    else:
        assert decision.width == 1


class PredictOnly:
    """No scikit-learn tags: a model that only predicts numbers."""

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return np.asarray(frame["x"], dtype=float) * 2


class ProbaOnly:
    """No tags and no classes_: read as binary, column 1 positive (the behaviour before tasks existed)."""

    def predict_proba(self, frame: pd.DataFrame) -> np.ndarray:
        p = 1 / (1 + np.exp(-np.asarray(frame["x"], dtype=float)))
        return np.column_stack([1 - p, p])


def test_untagged_objects_are_read_by_what_they_can_do() -> None:
    assert decide_task(PredictOnly()).task == "regression"
    assert "predict without predict_proba" in decide_task(PredictOnly()).basis
    proba = decide_task(ProbaOnly())
    assert proba.task == "binary" and proba.classes is None


def test_a_model_that_predicts_nothing_is_not_a_pipeline() -> None:
    with pytest.raises(BindingError) as caught:
        decide_task(StandardScaler().fit(X))
    assert caught.value.code == "not_a_pipeline" and "neither predict_proba nor predict" in str(caught.value)


def test_a_classifier_without_predict_proba_is_incomplete() -> None:
    with pytest.raises(BindingError) as caught:
        decide_task(SVC().fit(X, Y_BINARY))  # probability=False: no predict_proba
    assert caught.value.code == "task_mismatch" and "without predict_proba" in str(caught.value)


# --- the binding key ----------------------------------------------------------------------------------------


def test_an_agreeing_binding_key_says_so() -> None:
    decision = decide_task(fitted(GradientBoostingRegressor(n_estimators=5), Y_NUMBER), "regression")
    assert decision.task == "regression"
    assert decision.basis.startswith(f"binding key {TASK}=regression (agrees with detected from")


def test_the_binding_key_can_settle_an_untagged_model() -> None:
    decision = decide_task(ProbaOnly(), "binary")
    assert decision.task == "binary" and "agrees with" in decision.basis


@pytest.mark.parametrize(
    ("model", "override", "says"),
    [
        (lambda: fitted(LinearRegression(), Y_NUMBER), "binary", "task=binary but the pipeline has no predict_proba"),
        (lambda: fitted(LinearRegression(), Y_NUMBER), "multiclass", "has no predict_proba"),
        (lambda: fitted(LogisticRegression(), Y_BINARY), "regression", "ends in the classifier LogisticRegression"),
        (lambda: fitted(LogisticRegression(), Y_BINARY), "multiclass", "LogisticRegression has 2 classes (0, 1)"),
        (lambda: fitted(LogisticRegression(max_iter=500), Y_THREE), "binary", "has 3 classes (high, low, mid)"),
        (lambda: ProbaOnly(), "multiclass", "has no classes_"),
        (lambda: ProbaOnly(), "regression", "the pipeline has no predict"),
    ],
)  # fmt: skip
def test_a_binding_key_the_pipeline_cannot_serve_is_a_mismatch(model: Any, override: Any, says: str) -> None:
    with pytest.raises(BindingError) as caught:
        decide_task(model(), override)
    assert caught.value.code == "task_mismatch"
    assert says in str(caught.value) and "fix the binding key or bind the right artifact" in str(caught.value)


def test_resolve_binding_reads_and_validates_the_task_key(tmp_path: Path) -> None:
    keys = {ARTIFACT_URI: "m.joblib", ARTIFACT_SHA256: "ab" * 32, EVAL_DATA_URI: "e.csv", LABEL_COLUMN: "y"}
    assert resolve_binding(keys, tmp_path).task is None
    assert resolve_binding({**keys, TASK: " Regression "}, tmp_path).task == "regression"
    with pytest.raises(BindingError) as caught:
        resolve_binding({**keys, TASK: "ranking"}, tmp_path)
    assert caught.value.code == "bad_binding"
    # The built-ins, then any task a test module registered in this process (tests/tools/tasks/).
    expected = r"provenance.task must be one of binary, multiclass, regression(, \w+)*, got 'ranking'"
    assert re.search(expected, str(caught.value))


# --- labels -------------------------------------------------------------------------------------------------

MULTI = TaskDecision("multiclass", "test", ("high", "low", "mid"), ("high", "low", "mid"))
REGRESSION = TaskDecision("regression", "test")
STRING_BINARY = TaskDecision("binary", "test", ("no", "yes"), ("no", "yes"))
INT_BINARY = TaskDecision("binary", "test", ("0", "1"), (0, 1))


def test_multiclass_labels_outside_the_classes_are_named() -> None:
    labels = pd.Series(["low", "mid", "urgent", "high", "unknown", "urgent"])
    with pytest.raises(BindingError) as caught:
        check_labels(MULTI, labels, "priority", "eval.csv")
    message = str(caught.value)
    assert caught.value.code == "bad_eval_data"
    assert "holds value(s) the model never predicts: unknown, urgent" in message
    assert "classes are high, low, mid" in message
    check_labels(MULTI, pd.Series(["low", "low"]), "priority", "eval.csv")  # a subset of the classes is fine


@pytest.mark.parametrize(
    ("decision", "labels", "says"),
    [
        (REGRESSION, pd.Series(["a", "b"]), "must hold finite numbers for a regression"),
        (REGRESSION, pd.Series([True, False]), "must hold finite numbers"),
        (REGRESSION, pd.Series([1.0, np.inf]), "must hold finite numbers"),
        (REGRESSION, pd.Series([1.0, None]), "has missing values"),
        (INT_BINARY, pd.Series([0, 1, 2]), "never predicts: 2"),
        (STRING_BINARY, pd.Series(["no", "maybe"]), "never predicts: maybe"),
        (BINARY, pd.Series([0, 1, 2]), "must hold only 0/1 values"),
    ],
)  # fmt: skip
def test_labels_that_cannot_be_the_target_are_refused(decision: TaskDecision, labels: pd.Series, says: str) -> None:
    with pytest.raises(BindingError) as caught:
        check_labels(decision, labels, "y", "eval.csv")
    assert caught.value.code == "bad_eval_data" and says in str(caught.value)


def test_label_arrays_per_task() -> None:
    assert STRING_BINARY.label_array(pd.Series(["yes", "no", "yes"])).tolist() == [1, 0, 1]
    assert INT_BINARY.label_array(pd.Series([1.0, 0.0, 1.0])).tolist() == [1, 0, 1]  # a CSV's 1.0 is class 1
    assert INT_BINARY.label_array(pd.Series([1, 0])).dtype == np.int8
    assert BINARY.label_array(pd.Series([0, 1, 1])).tolist() == [0, 1, 1]
    assert MULTI.label_array(pd.Series(["mid", "high"])).tolist() == ["mid", "high"]
    assert REGRESSION.label_array(pd.Series([1, 2])).dtype == np.float64
    assert label_keys(np.array([1.0, 2.5, 3.0])).tolist() == ["1", "2.5", "3"]
    assert label_keys(np.array([True, 2, "a"], dtype=object)).tolist() == ["1", "2", "a"]


@pytest.mark.parametrize(
    "labels",
    [
        pd.Series(["high", "mid", "high"]),
        pd.Series(["high", "mid"], dtype="string[pyarrow]"),
        pd.Series(["mid", "high", "mid"], dtype="category"),
        pd.Series([1.0, 2.5, -0.0, 3.0]),
        pd.Series([3, 1, 3]),
        pd.Series([True, 2, "a", 1.0], dtype=object),
    ],
)
def test_a_multiclass_label_array_is_the_label_keys_of_every_row(labels: pd.Series) -> None:
    got, want = MULTI.label_array(labels), label_keys(labels.to_numpy())
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


def test_label_strata_per_task() -> None:
    codes, names, method = label_strata(pd.Series(["b", "a", "c", "a"]), MULTI)
    assert names == ["a", "b", "c"] and codes.tolist() == [1, 0, 2, 0] and "stratified by label" in method
    values = pd.Series(np.arange(1_000, dtype=float))
    codes, names, method = label_strata(values, REGRESSION)
    assert len(names) == 10 and np.bincount(codes).tolist() == [100] * 10
    assert names[0].startswith("[-inf, ") and "label decile" in method
    chosen = stratified_indices(codes, 200, 3)
    assert np.bincount(codes[chosen]).tolist() == [20] * 10  # every decile keeps its share in a sample


# --- inference per task through the runner ------------------------------------------------------------------


class FailsOnNegativeZ:
    """Wraps a fitted model; raises for any batch holding a row with z < -2.2 (so the runner must bisect), and
    returns non-finite output for rows with z > 2.0."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.classes_ = getattr(inner, "classes_", None)

    def _check(self, frame: pd.DataFrame) -> None:
        if (frame["z"] < -2.2).any():
            raise ValueError("z out of range")

    def predict_proba(self, frame: pd.DataFrame) -> np.ndarray:
        self._check(frame)
        out = np.asarray(self.inner.predict_proba(frame), dtype=float)
        out[(frame["z"] > 2.0).to_numpy(), 0] = np.nan
        return out


class RegressorFailsOnNegativeZ(FailsOnNegativeZ):
    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        self._check(frame)
        out = np.asarray(self.inner.predict(frame), dtype=float)
        out[(frame["z"] > 2.0).to_numpy()] = np.inf
        return out


def test_multiclass_scores_are_rows_of_probabilities_and_failures_stay_per_row() -> None:
    inner = fitted(LogisticRegression(max_iter=500), Y_THREE)
    model = FailsOnNegativeZ(inner)
    decision = decide_task(inner)
    result = score_frame(model, X, ["x", "z"], chunk_rows=64, suspects=np.ones(len(X), dtype=bool), task=decision)
    bad = ((X["z"] < -2.2) | (X["z"] > 2.0)).to_numpy()
    assert bad.any() and result.scores.shape == (len(X), 3)
    np.testing.assert_array_equal(result.failed, bad)
    assert np.isnan(result.scores[bad]).all()  # a failed row is NaN across its whole score
    np.testing.assert_allclose(result.scores[~bad], inner.predict_proba(X[~bad]))
    assert any("NaN or infinite probabilities" in e for e in result.error_samples)


def test_regressor_predictions_and_failures_stay_per_row() -> None:
    inner = fitted(LinearRegression(), Y_NUMBER)
    model = RegressorFailsOnNegativeZ(inner)
    result = score_frame(model, X, ["x", "z"], chunk_rows=64, suspects=np.ones(len(X), dtype=bool), task=REGRESSION)
    bad = ((X["z"] < -2.2) | (X["z"] > 2.0)).to_numpy()
    assert result.scores.shape == (len(X),)
    np.testing.assert_array_equal(result.failed, bad)
    np.testing.assert_allclose(result.scores[~bad], inner.predict(X[~bad]))
    assert any("NaN or infinite predictions" in e for e in result.error_samples)


def test_run_experiment_per_task_caches_either_shape() -> None:
    frame = X.assign(y=Y_THREE)
    model = fitted(LogisticRegression(max_iter=500), Y_THREE)
    decision = decide_task(model)
    cache = BaselineCache()
    kwargs: dict[str, Any] = dict(
        pipeline=model, frame=frame, columns=["x", "z"], label_column="y", feature_column="x", cache=cache,
        cache_key=("m", "e"), task=decision,
    )  # fmt: skip
    first = run_experiment(mutation=parse_mutation("scale", {"factor": 3}), **kwargs)
    again = run_experiment(mutation=parse_mutation("round", {"decimals": 0}), **kwargs)
    assert first.baseline.shape == (len(frame), 3) and again.baseline_cached and again.baseline is first.baseline
    assert first.y_true.tolist() == Y_THREE.tolist()
    assert first.label_codes is not None  # made with the labels, from the same factorization
    np.testing.assert_array_equal(first.label_codes[0], decision.label_codes(pd.Series(Y_THREE))[0])
    expected = model.predict_proba(frame[["x", "z"]].assign(x=frame["x"] * 3))
    np.testing.assert_allclose(first.mutated.scores, expected)


def test_a_binary_model_scores_the_same_whether_its_task_is_detected_or_assumed() -> None:
    """The bit-identity of binary results: the decided task gives exactly the arrays the pre-task default gave."""
    frame = X.assign(y=Y_BINARY)
    model = fitted(make_pipeline(StandardScaler(), LogisticRegression()), Y_BINARY)
    kwargs: dict[str, Any] = dict(
        pipeline=model, frame=frame, columns=["x", "z"], label_column="y", feature_column="x",
        mutation=parse_mutation("scale", {"factor": 10}), cache_key=("m", "e"),
    )  # fmt: skip
    assumed = run_experiment(cache=BaselineCache(), **kwargs)
    decided = run_experiment(cache=BaselineCache(), task=decide_task(model), **kwargs)
    for a, b in ((assumed.y_true, decided.y_true), (assumed.baseline, decided.baseline)):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    assert assumed.mutated.scores.tobytes() == decided.mutated.scores.tobytes()


def test_a_string_labelled_binary_pipeline_with_a_categorical_input() -> None:
    frame = pd.DataFrame({"x": X["x"], "region": np.where(X["z"] > 0, "north", "south")})
    y = pd.Series(np.where(Y_BINARY == 1, "yes", "no"))
    encode = ColumnTransformer([("cat", OneHotEncoder(), ["region"])], remainder="passthrough")
    model = Pipeline([("encode", encode), ("clf", LogisticRegression())]).fit(frame, y)
    decision = decide_task(model)
    assert decision.task == "binary" and decision.classes == ("no", "yes")
    outcome = run_experiment(
        pipeline=model, frame=frame.assign(y=y), columns=["x", "region"], label_column="y", feature_column="x",
        mutation=parse_mutation("scale", {"factor": 2}), cache=BaselineCache(), cache_key=("m", "e"), task=decision,
    )  # fmt: skip
    assert outcome.y_true.tolist() == (y == "yes").astype(int).tolist()
    np.testing.assert_allclose(outcome.baseline, model.predict_proba(frame)[:, 1])


@pytest.mark.parametrize(
    ("labels", "classes"),
    [
        (pd.Series(["low", "high", "mid", "high", "new"], dtype="str"), ("high", "low", "mid")),
        (pd.Series(["low", "high", "mid", "high", "new"], dtype=object), ("high", "low", "mid")),
        (pd.Series([2, 0, 1, 1, 7]), ("0", "1", "2")),
        (pd.Series([2.0, 0.0, 1.0, 1.0, 0.5]), ("0", "1", "2")),
        (pd.Series(["b", "a", "c", "a"], dtype="category"), ("a", "b", "c")),
    ],
)
def test_label_codes_are_the_encoded_label_array(labels: pd.Series, classes: tuple[str, ...]) -> None:
    from tools.experiment.metrics_multiclass import encode_labels

    decision = TaskDecision("multiclass", "test", classes=classes)
    codes, names = decision.label_codes(labels)
    expected_codes, expected_names = encode_labels(decision.label_array(labels), list(classes))
    np.testing.assert_array_equal(codes, expected_codes)
    assert names == expected_names
    array, both = decision.encoded_labels(labels)  # what the experiment makes: both halves from one factorization
    np.testing.assert_array_equal(array, decision.label_array(labels))
    assert both is not None
    np.testing.assert_array_equal(both[0], expected_codes)
    assert both[1] == expected_names


def test_other_tasks_get_no_label_codes() -> None:
    assert REGRESSION.encoded_labels(pd.Series([1.0, 2.0]))[1] is None
    array, codes = STRING_BINARY.encoded_labels(pd.Series(["yes", "no"]))
    assert array.tolist() == [1, 0] and codes is None


def test_label_codes_are_for_multiclass_models_only() -> None:
    with pytest.raises(ValueError, match="multiclass"):
        REGRESSION.label_codes(pd.Series([1.0, 2.0]))
