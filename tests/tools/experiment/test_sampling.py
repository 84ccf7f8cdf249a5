"""Sample size from the precision needed; stratified, seeded sampling of large evaluation data; reading only the
model's columns; an end-to-end assessment of 2M Parquet rows that records its sample in the evidence."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from seed.data import LABEL_COLUMN, generate_transactions, to_feature_frame
from seed.model import FRAUD_DETECTOR, MODEL_FEATURES
from tools.catalog.discovery import AffectedFeature, AffectedModel
from tools.evidence.schema import ExperimentRecord
from tools.experiment.binding import ARTIFACT_SHA256, ARTIFACT_URI, EVAL_DATA_URI, ModelBinding
from tools.experiment.binding import LABEL_COLUMN as LABEL_KEY
from tools.experiment.loading import load_eval_sample
from tools.experiment.measure import measure_prepared
from tools.experiment.metrics import wilson_interval
from tools.experiment.prepare import PreparedModel, prepare_model
from tools.experiment.runner import BaselineCache
from tools.experiment.sampling import SampleSpec, allocate, sample_size, stratified_indices
from tools.mutations import parse_mutation

# --- sample size ------------------------------------------------------------------------------------------


def test_sample_size_is_the_worst_case_normal_bound() -> None:
    assert sample_size(0.005) == 38_415  # ceil(1.959964^2 * 0.25 / 0.005^2); z rounded to 1.96 gives 38,416
    assert sample_size(0.01) == 9_604
    assert sample_size(0.005, confidence=0.99) == 66_349
    low, high = wilson_interval(sample_size(0.005) // 2, sample_size(0.005))  # p = 0.5, the widest case
    assert (high - low) / 2 <= 0.005


@pytest.mark.parametrize("bad", [0.0, -0.1, 0.5])
def test_sample_size_refuses_impossible_widths(bad: float) -> None:
    with pytest.raises(ValueError, match="half_width"):
        sample_size(bad)


def test_zero_half_width_disables_sampling() -> None:
    assert not SampleSpec(half_width=0).enabled and SampleSpec().enabled


# --- stratification ---------------------------------------------------------------------------------------


def test_allocation_is_proportional_and_sums_to_the_sample() -> None:
    assert allocate({0: 9_000, 1: 1_000}, 1_000) == {0: 900, 1: 100}
    assert allocate({0: 2, 1: 1}, 2) == {0: 1, 1: 1}  # largest remainders: 1.33 -> 1, 0.67 -> 1
    assert sum(allocate({0: 7_777, 1: 2_223}, 1_001).values()) == 1_001


def test_allocation_gives_rare_classes_a_minimum() -> None:
    assert allocate({0: 99_900, 1: 100}, 1_000, min_per_class=50) == {0: 999, 1: 50}
    assert allocate({0: 99_990, 1: 10}, 1_000, min_per_class=50) == {0: 1_000, 1: 10}  # never more than it has


def test_small_data_is_never_sampled_by_allocation() -> None:
    assert allocate({0: 10, 1: 5}, 100) == {0: 10, 1: 5}


def _labels(n: int, rate: float, seed: int = 3) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < rate).astype(np.int8)


def test_stratified_sample_keeps_class_shares_and_is_deterministic() -> None:
    y = _labels(200_000, 0.03)
    first = stratified_indices(y, 10_000, seed=11, min_per_class=100)
    again = stratified_indices(y, 10_000, seed=11, min_per_class=100)
    other = stratified_indices(y, 10_000, seed=12, min_per_class=100)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    assert len(first) == 10_000 and len(np.unique(first)) == 10_000 and np.all(np.diff(first) > 0)
    assert abs(y[first].sum() - round(10_000 * y.mean())) <= 1


# --- reading ----------------------------------------------------------------------------------------------


def _binding(path: Path, label: str = "y") -> ModelBinding:
    return ModelBinding(
        artifact_path=path.with_suffix(".joblib"), artifact_sha256="0" * 64, eval_data_path=path, label_column=label
    )


def _frame(n: int, rate: float = 0.1) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "blob": ["z" * 50] * n,  # a wide column the model does not read
            "cat": rng.choice(["a", "b"], size=n),
            "y": _labels(n, rate),
        }
    )


def test_small_data_is_used_whole_and_hashed_whole(tmp_path: Path) -> None:
    path = tmp_path / "eval.csv"
    frame = _frame(1_000)
    frame.to_csv(path, index=False)
    data = load_eval_sample(_binding(path), ["x", "cat"], SampleSpec(half_width=0.05))  # needs 385 rows... of 1,000
    assert data.sampling is not None  # 1,000 > 385: sampled
    whole = load_eval_sample(_binding(path), ["x", "cat"], SampleSpec())  # needs 38,415: the file is used whole
    assert whole.sampling is None and len(whole.frame) == 1_000
    assert list(whole.frame.columns) == ["x", "cat", "y"]
    assert whole.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    pd.testing.assert_frame_equal(whole.frame, pd.read_csv(path)[["x", "cat", "y"]])


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_large_data_is_sampled_by_label_and_records_it(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"eval{suffix}"
    frame = _frame(60_000, rate=0.02)
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path, row_group_size=7_000)
    spec = SampleSpec(half_width=0.01, seed=9, min_per_class=500)  # 9,604 rows; 2% of that is only 192 positives
    data = load_eval_sample(_binding(path), ["x", "cat"], spec)
    assert data.sampling is not None
    record = data.sampling
    assert record.rows_total == 60_000 and record.seed == 9 and record.target_flip_half_width == 0.01
    assert record.class_counts_total == {"0": int((frame.y == 0).sum()), "1": int(frame.y.sum())}
    assert record.class_counts_used["1"] == 500  # the minimum per class
    assert record.rows_used == len(data.frame) == sum(record.class_counts_used.values())
    assert list(data.frame.columns) == ["x", "cat", "y"] == record.columns_read
    chosen = stratified_indices(frame.y.to_numpy(), spec.rows, 9, 500)
    expected = frame.iloc[chosen][["x", "cat", "y"]].reset_index(drop=True)
    pd.testing.assert_frame_equal(data.frame, expected, check_dtype=False)
    assert data.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_parquet_reads_only_the_model_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "eval.parquet"
    _frame(50_000).to_parquet(path, row_group_size=10_000)
    reads: list[Any] = []
    original_batches, original_table = pq.ParquetFile.iter_batches, pq.read_table

    def batches(self: pq.ParquetFile, *args: Any, **kwargs: Any) -> Any:
        reads.append(("iter_batches", kwargs.get("columns")))
        return original_batches(self, *args, **kwargs)

    def table(source: Any, *args: Any, **kwargs: Any) -> pa.Table:
        reads.append(("read_table", kwargs.get("columns")))
        return original_table(source, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", batches)
    monkeypatch.setattr(pq, "read_table", table)
    data = load_eval_sample(_binding(path), ["x"], SampleSpec(half_width=0.02))
    assert data.sampling is not None and "blob" not in data.frame.columns
    assert reads == [("read_table", ["y"]), ("iter_batches", ["x", "y"])]


def test_file_without_label_counts_its_columns_and_never_echoes_them(tmp_path: Path) -> None:
    path = tmp_path / "eval.parquet"
    _frame(10).to_parquet(path)
    with pytest.raises(Exception, match="'label' is not among the 4 column") as caught:
        load_eval_sample(_binding(path, label="label"), ["x"], SampleSpec())
    assert "blob" not in str(caught.value)  # a header is the file's text


# --- end to end -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2M demo rows (seed 7, not the training seed) plus a column no model reads."""
    path = tmp_path_factory.mktemp("big") / "eval.parquet"
    frame = to_feature_frame(generate_transactions(n_rows=2_000_000, seed=7))
    frame["note"] = "unused"
    frame.to_parquet(path, row_group_size=250_000)
    return path


def _model(seeded_template: Path, eval_path: Path) -> AffectedModel:
    artifact = seeded_template / "demo" / f"{FRAUD_DETECTOR}.joblib"
    link = AffectedFeature(
        urn="urn:li:mlFeature:(fraud,txn_amount)", name="txn_amount", dataset_urn="urn:li:dataset:x",
        column="txn_amount", path=[], precision="column",
    )  # fmt: skip
    return AffectedModel(
        urn="urn:li:mlModel:(fraud)", name=FRAUD_DETECTOR, production=True, production_evidence="tag production",
        features=[link], owners=[], tags=[], related_documents=[],
        custom_properties={
            ARTIFACT_URI: str(artifact), ARTIFACT_SHA256: hashlib.sha256(artifact.read_bytes()).hexdigest(),
            EVAL_DATA_URI: str(eval_path), LABEL_KEY: LABEL_COLUMN,
        },
    )  # fmt: skip


@pytest.mark.slow
def test_two_million_parquet_rows_are_assessed_on_a_recorded_sample(seeded_template: Path, big_parquet: Path) -> None:
    mutation = parse_mutation("scale", {"factor": 100})
    prepared = prepare_model(_model(seeded_template, big_parquet), mutation, seeded_template, sampling=SampleSpec())
    assert isinstance(prepared, PreparedModel) and prepared.sampling is not None
    assert sorted(prepared.frame.columns) == sorted([*MODEL_FEATURES[FRAUD_DETECTOR], LABEL_COLUMN])  # no "note"
    evidence = measure_prepared(prepared, mutation, BaselineCache()).evidence
    assert evidence.experiment is not None and evidence.metrics is not None
    sampling = evidence.experiment.sampling
    assert sampling is not None
    assert sampling.rows_total == 2_000_000 and sampling.rows_used == evidence.metrics.n == evidence.experiment.rows
    assert sampling.rows_used == sample_size(0.005)
    assert sampling.seed == SampleSpec().seed
    assert sampling.achieved_flip_half_width is not None and sampling.achieved_flip_half_width <= 0.005
    half = (evidence.metrics.flip_rate_ci_high - evidence.metrics.flip_rate_ci_low) / 2  # type: ignore[operator]
    assert sampling.achieved_flip_half_width == pytest.approx(half)
    assert (
        evidence.metrics.binary is not None and evidence.metrics.binary.auc is not None
    )  # both classes present: AUC and DeLong defined
    assert prepared.data_key.endswith(f":sample:{sampling.seed}:{sampling.rows_used}")


def test_old_experiment_records_load_without_sampling() -> None:
    record = ExperimentRecord.model_validate(
        {"rows": 10, "rows_changed": 1, "feature_column": "x", "mutation": "m", "baseline_cached": False,
         "predict_calls": 2}
    )  # fmt: skip
    assert record.sampling is None
