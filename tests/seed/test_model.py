"""Behaviour the demo scenarios rely on, measured on the written artifacts rather than assumed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import Pipeline

from seed.data import FEATURE_COLUMNS, LABEL_COLUMN, generate_transactions
from seed.model import (
    DECISION_THRESHOLD,
    EVAL_FILENAME,
    DemoArtifacts,
    read_eval_frame,
    train_demo_models,
)
from seed.review import REVIEW_EVAL_FILENAME, REVIEW_LABEL

ARTIFACT_FILES = [
    "fraud_detector.joblib",
    "merchant_risk.joblib",
    "review_time.joblib",
    EVAL_FILENAME,
    REVIEW_EVAL_FILENAME,
]
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> DemoArtifacts:
    return train_demo_models(tmp_path_factory.mktemp("demo_a"))


@pytest.fixture(scope="module")
def eval_frame(artifacts: DemoArtifacts) -> pd.DataFrame:
    return read_eval_frame(artifacts.eval_data_path)


@pytest.fixture(scope="module")
def fraud_detector(artifacts: DemoArtifacts) -> Pipeline:
    model: Pipeline = joblib.load(artifacts.fraud_detector.artifact_path)
    return model


@pytest.fixture(scope="module")
def merchant_risk(artifacts: DemoArtifacts) -> Pipeline:
    model: Pipeline = joblib.load(artifacts.merchant_risk.artifact_path)
    return model


def _scores(model: Pipeline, frame: pd.DataFrame) -> np.ndarray:
    return np.asarray(model.predict_proba(frame[list(model.feature_names_in_)])[:, 1])


def _auc(labels: pd.Series, scores: np.ndarray) -> float:
    return float(roc_auc_score(labels.to_numpy(), scores))


@pytest.mark.slow
def test_artifact_metadata(artifacts: DemoArtifacts, eval_frame: pd.DataFrame) -> None:
    assert sorted(p.name for p in artifacts.out_dir.iterdir()) == sorted(ARTIFACT_FILES)
    assert artifacts.label_column == LABEL_COLUMN
    assert list(eval_frame.columns) == [*FEATURE_COLUMNS, LABEL_COLUMN]
    assert len(eval_frame) >= 6_000
    for artifact in artifacts.models.values():
        assert artifact.artifact_path.parent == artifacts.out_dir
        assert len(artifact.artifact_sha256) == 64
    assert (artifacts.fraud_detector.eval_mae, artifacts.review_time.eval_auc) == (None, None)
    assert "txn_amount" in artifacts.fraud_detector.features
    assert not any("amount" in f for f in artifacts.merchant_risk.features)
    with pytest.raises(ValueError):
        artifacts.fraud_detector.eval_auc = 1.0  # type: ignore[misc]


def test_pipeline_shapes(fraud_detector: Pipeline, merchant_risk: Pipeline, artifacts: DemoArtifacts) -> None:
    for model, artifact in (
        (fraud_detector, artifacts.fraud_detector),
        (merchant_risk, artifacts.merchant_risk),
    ):
        assert isinstance(model, Pipeline)
        assert isinstance(model.steps[-1][1], LogisticRegression)
        assert list(model.feature_names_in_) == artifact.features

    def imputers(model: Pipeline) -> list[SimpleImputer]:
        features = model.named_steps["features"]
        found = []
        for _, transformer, _ in features.transformers_:
            steps = transformer.steps if isinstance(transformer, Pipeline) else [("", transformer)]
            found += [step for _, step in steps if isinstance(step, SimpleImputer)]
        return found

    assert len(imputers(fraud_detector)) == 2
    assert imputers(merchant_risk) == []


def test_eval_auc(
    artifacts: DemoArtifacts, eval_frame: pd.DataFrame, fraud_detector: Pipeline, merchant_risk: Pipeline
) -> None:
    labels = eval_frame[LABEL_COLUMN]
    fraud_auc = _auc(labels, _scores(fraud_detector, eval_frame))
    risk_auc = _auc(labels, _scores(merchant_risk, eval_frame))
    assert 0.80 <= fraud_auc <= 0.97
    assert risk_auc > 0.6
    assert fraud_auc == pytest.approx(artifacts.fraud_detector.eval_auc, abs=1e-12)
    assert risk_auc == pytest.approx(artifacts.merchant_risk.eval_auc, abs=1e-12)


def test_dollars_to_cents_degrades_fraud_detector(eval_frame: pd.DataFrame, fraud_detector: Pipeline) -> None:
    labels = eval_frame[LABEL_COLUMN]
    before = _scores(fraud_detector, eval_frame)
    cents = eval_frame.assign(txn_amount=eval_frame["txn_amount"] * 100)
    after = _scores(fraud_detector, cents)
    flip_rate = float(np.mean((before >= DECISION_THRESHOLD) != (after >= DECISION_THRESHOLD)))
    auc_drop = _auc(labels, before) - _auc(labels, after)
    assert flip_rate >= 0.15
    assert auc_drop >= 0.05


def test_dollars_to_cents_does_not_touch_control(eval_frame: pd.DataFrame, merchant_risk: Pipeline) -> None:
    cents = eval_frame.assign(txn_amount=eval_frame["txn_amount"] * 100)
    assert np.array_equal(_scores(merchant_risk, eval_frame), _scores(merchant_risk, cents))


def test_rounding_to_cents_is_a_no_op(eval_frame: pd.DataFrame, fraud_detector: Pipeline) -> None:
    rounded = eval_frame.assign(txn_amount=eval_frame["txn_amount"].round(2))
    assert np.array_equal(_scores(fraud_detector, eval_frame), _scores(fraud_detector, rounded))


def test_nulls_absorbed_by_imputer_but_break_control(
    eval_frame: pd.DataFrame, fraud_detector: Pipeline, merchant_risk: Pipeline
) -> None:
    rng = np.random.default_rng(0)
    ages = eval_frame["account_age_days"].astype(float)
    ages[rng.random(len(ages)) < 0.10] = np.nan
    with_nulls = eval_frame.assign(account_age_days=ages)
    assert 0.08 <= with_nulls["account_age_days"].isna().mean() <= 0.12

    scores = _scores(fraud_detector, with_nulls)
    assert np.isfinite(scores).all()
    with pytest.raises(ValueError, match="NaN"):
        _scores(merchant_risk, with_nulls)


def test_unseen_category_is_ignored_not_fatal(
    eval_frame: pd.DataFrame, fraud_detector: Pipeline, merchant_risk: Pipeline
) -> None:
    unseen = eval_frame["merchant_category"].replace("jewelry", "luxury")
    renamed = eval_frame.assign(merchant_category=unseen)
    changed = (eval_frame["merchant_category"] == "jewelry").to_numpy()
    assert changed.any()
    for model in (fraud_detector, merchant_risk):
        before, after = _scores(model, eval_frame), _scores(model, renamed)
        assert np.isfinite(after).all()
        assert np.array_equal(before[~changed], after[~changed])
        assert not np.allclose(before[changed], after[changed])


def _file_bytes(out_dir: Path) -> dict[str, bytes]:
    return {name: (out_dir / name).read_bytes() for name in ARTIFACT_FILES}


def test_same_seed_is_byte_identical(artifacts: DemoArtifacts, tmp_path: Path) -> None:
    again = train_demo_models(tmp_path / "demo_b")
    assert _file_bytes(again.out_dir) == _file_bytes(artifacts.out_dir)
    for name, artifact in again.models.items():
        assert artifact.artifact_sha256 == artifacts.models[name].artifact_sha256
        assert artifact.eval_auc == artifacts.models[name].eval_auc
        assert artifact.eval_mae == artifacts.models[name].eval_mae
    assert again.eval_data_sha256 == artifacts.eval_data_sha256
    assert again.review_eval_sha256 == artifacts.review_eval_sha256


@pytest.mark.slow
def test_retraining_in_place_keeps_files_untouched(tmp_path: Path) -> None:
    first = train_demo_models(tmp_path)
    before = {name: (tmp_path / name).stat().st_mtime_ns for name in ARTIFACT_FILES}
    second = train_demo_models(tmp_path)
    assert second == first
    assert {name: (tmp_path / name).stat().st_mtime_ns for name in ARTIFACT_FILES} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(ARTIFACT_FILES), "no temp files left behind"


def test_different_seed_differs(artifacts: DemoArtifacts, tmp_path: Path) -> None:
    other = train_demo_models(tmp_path, seed=7)
    assert other.eval_data_sha256 != artifacts.eval_data_sha256
    assert other.fraud_detector.artifact_sha256 != artifacts.fraud_detector.artifact_sha256
    assert not generate_transactions(seed=7).equals(generate_transactions())


@pytest.mark.slow
def test_bytes_do_not_depend_on_the_process(artifacts: DemoArtifacts, tmp_path: Path) -> None:
    """Guards against hash-seed or import-order leaking into the pickles (in-process reruns can't see it)."""
    script = (
        "import sys; from pathlib import Path; from seed.model import train_demo_models; "
        "train_demo_models(Path(sys.argv[1]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, cwd=REPO_ROOT, env=env)
    assert _file_bytes(tmp_path) == _file_bytes(artifacts.out_dir)


# --- the review-time regressor (the demo's second task) -------------------------------------------------------


@pytest.fixture(scope="module")
def review(artifacts: DemoArtifacts) -> tuple[Pipeline, pd.DataFrame]:
    model: Pipeline = joblib.load(artifacts.review_time.artifact_path)
    return model, read_eval_frame(artifacts.review_eval_path)


def test_review_eval_file_holds_the_fraud_evaluation_rows_with_their_review_time(
    review: tuple[Pipeline, pd.DataFrame], eval_frame: pd.DataFrame
) -> None:
    _, frame = review
    assert list(frame.columns) == [*FEATURE_COLUMNS, REVIEW_LABEL]
    pd.testing.assert_frame_equal(frame[FEATURE_COLUMNS], eval_frame[FEATURE_COLUMNS])
    assert (frame[REVIEW_LABEL] >= 0.5).all() and np.array_equal(frame[REVIEW_LABEL], frame[REVIEW_LABEL].round(2))


def test_review_time_regressor_is_accurate_and_sensitive_to_the_amount(
    review: tuple[Pipeline, pd.DataFrame], artifacts: DemoArtifacts
) -> None:
    model, frame = review
    features = list(model.feature_names_in_)
    assert "txn_amount" in features and not hasattr(model, "predict_proba")
    before = model.predict(frame[features])
    mae = float(np.mean(np.abs(before - frame[REVIEW_LABEL])))
    assert mae == pytest.approx(artifacts.review_time.eval_mae, abs=1e-12)
    assert mae < 0.5 * float(np.mean(np.abs(frame[REVIEW_LABEL] - frame[REVIEW_LABEL].mean())))  # beats the mean
    cents = model.predict(frame[features].assign(txn_amount=frame["txn_amount"] * 100))
    assert float(np.mean(np.abs(cents - frame[REVIEW_LABEL]))) > 3 * mae  # dollars -> cents wrecks it
    rounded = model.predict(frame[features].assign(txn_amount=frame["txn_amount"].round(2)))
    assert np.array_equal(before, rounded)
