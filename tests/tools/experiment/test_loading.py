"""Evaluation data per task (loading.py): label checks and stratified samples for multiclass and regression labels,
and the few categorical columns read beyond the model's inputs for the segment analysis."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tools.experiment.binding import BindingError, ModelBinding
from tools.experiment.loading import load_eval_sample, segment_candidates
from tools.experiment.sampling import SampleSpec
from tools.experiment.task import TaskDecision

MULTI = TaskDecision("multiclass", "test", ("a", "b", "c"), ("a", "b", "c"))
REGRESSION = TaskDecision("regression", "test")


def _binding(path: Path, label: str = "y") -> ModelBinding:
    return ModelBinding(
        artifact_path=path.with_suffix(".joblib"), artifact_sha256="ab" * 32, eval_data_path=path, label_column=label
    )


def _frame(n: int, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "region": rng.choice(["north", "south", "east"], size=n),
            "order_id": [f"o{i}" for i in range(n)],  # an identifier: too many values for segments
            "note": ["same"] * n,  # one value: nothing to split by
            "flag": rng.random(n) < 0.3,
            "channel": rng.choice(["web", "app"], size=n),
            "kind": rng.choice(["a", "b", "c"], size=n, p=[0.7, 0.2, 0.1]),
            "minutes": rng.gamma(2.0, 3.0, size=n).round(2),
        }
    )


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_segment_candidates_are_few_valued_text_or_bool_columns(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"eval{suffix}"
    frame = _frame(3_000)
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    others = ["region", "order_id", "note", "flag", "channel", "minutes"]
    assert segment_candidates(path, others, 3) == ["region", "flag", "channel"]
    assert segment_candidates(path, others, 1) == ["region"]  # bounded, in file order
    assert segment_candidates(path, others, 0) == []


def test_extra_columns_join_the_model_columns_and_the_label(tmp_path: Path) -> None:
    path = tmp_path / "eval.csv"
    _frame(500).to_csv(path, index=False)
    data = load_eval_sample(_binding(path, "kind"), ["x"], SampleSpec(), MULTI, extra_columns=2)
    assert list(data.frame.columns) == ["x", "region", "flag", "kind"]
    plain = load_eval_sample(_binding(path, "kind"), ["x"], SampleSpec(), MULTI)
    assert list(plain.frame.columns) == ["x", "kind"]  # none unless asked for


def test_a_multiclass_sample_is_stratified_by_class(tmp_path: Path) -> None:
    path = tmp_path / "eval.parquet"
    frame = _frame(20_000)
    frame.to_parquet(path)
    spec = SampleSpec(half_width=0.02, seed=5, min_per_class=300)  # 2,401 rows
    data = load_eval_sample(_binding(path, "kind"), ["x"], spec, MULTI)
    record = data.sampling
    assert record is not None and record.method.startswith("stratified by label")
    totals = frame["kind"].value_counts().to_dict()
    assert record.class_counts_total == {k: totals[k] for k in ("a", "b", "c")}
    assert set(record.class_counts_used) == {"a", "b", "c"} and record.class_counts_used["c"] >= 240
    assert data.frame["kind"].value_counts().to_dict() == record.class_counts_used


def test_a_regression_sample_is_stratified_by_label_decile(tmp_path: Path) -> None:
    path = tmp_path / "eval.csv"
    frame = _frame(20_000)
    frame.to_csv(path, index=False)
    spec = SampleSpec(half_width=0.02, seed=5, min_per_class=0)
    data = load_eval_sample(_binding(path, "minutes"), ["x"], spec, REGRESSION)
    record = data.sampling
    assert record is not None and "label decile" in record.method
    assert len(record.class_counts_total) == 10 and sum(record.class_counts_total.values()) == 20_000
    for decile, total in record.class_counts_total.items():  # each decile keeps its share, to within a row
        assert abs(record.class_counts_used[decile] - record.rows_used * total / 20_000) <= 1
    assert abs(data.frame["minutes"].median() - frame["minutes"].median()) < 0.5


def test_a_regression_label_must_be_numeric(tmp_path: Path) -> None:
    path = tmp_path / "eval.csv"
    _frame(100).to_csv(path, index=False)
    with pytest.raises(BindingError) as caught:
        load_eval_sample(_binding(path, "region"), ["x"], SampleSpec(), REGRESSION)
    assert caught.value.code == "bad_eval_data" and "finite numbers for a regression" in str(caught.value)
