"""The model-binding contract (docs/design.md §4): resolving the custom properties, and never unpickling bytes that do
not match the catalog's sha256."""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from tools.experiment.binding import (
    ARTIFACT_SHA256,
    ARTIFACT_URI,
    DECISION_THRESHOLD,
    EVAL_DATA_URI,
    LABEL_COLUMN,
    REQUIRED_KEYS,
    BindingError,
    ModelBinding,
)
from tools.experiment.loading import load_eval_data, load_verified_pipeline
from tools.experiment.locate import resolve_binding

GOOD_SHA = "ab" * 32


def props(**overrides: str | None) -> dict[str, str]:
    base = {
        ARTIFACT_URI: "demo/model.joblib",
        ARTIFACT_SHA256: GOOD_SHA,
        EVAL_DATA_URI: "demo/eval.csv",
        LABEL_COLUMN: "is_fraud",
    }
    for key, value in overrides.items():
        real = {"uri": ARTIFACT_URI, "sha": ARTIFACT_SHA256, "eval": EVAL_DATA_URI, "label": LABEL_COLUMN}.get(key, key)
        if value is None:
            base.pop(real, None)
        else:
            base[real] = value
    return base


# --- resolve_binding ---------------------------------------------------------------------------------------


def test_complete_binding_resolves(tmp_path: Path) -> None:
    binding = resolve_binding(props(), tmp_path)
    assert binding.artifact_path == tmp_path / "demo" / "model.joblib"
    assert binding.eval_data_path == tmp_path / "demo" / "eval.csv"
    assert binding.artifact_sha256 == GOOD_SHA
    assert binding.label_column == "is_fraud"
    assert binding.decision_threshold == 0.5  # the documented default


@pytest.mark.parametrize(
    "missing",
    [
        [ARTIFACT_URI],
        [ARTIFACT_SHA256],
        [EVAL_DATA_URI, LABEL_COLUMN],
        list(REQUIRED_KEYS),
    ],
)
def test_missing_keys_are_named(tmp_path: Path, missing: list[str]) -> None:
    properties = {k: v for k, v in props().items() if k not in missing}
    with pytest.raises(BindingError) as caught:
        resolve_binding(properties, tmp_path)
    assert caught.value.code == "missing_binding"
    message = str(caught.value)
    for key in missing:
        assert key in message
    for key in set(REQUIRED_KEYS) - set(missing):
        assert key not in message, f"{key} is present but reported missing"


@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
def test_blank_values_count_as_missing(tmp_path: Path, blank: str) -> None:
    with pytest.raises(BindingError) as caught:
        resolve_binding(props(label=blank), tmp_path)
    assert caught.value.code == "missing_binding"
    assert LABEL_COLUMN in str(caught.value)


def test_no_custom_properties_at_all(tmp_path: Path) -> None:
    with pytest.raises(BindingError) as caught:
        resolve_binding({}, tmp_path)
    assert caught.value.code == "missing_binding"
    assert all(key in str(caught.value) for key in REQUIRED_KEYS)


@pytest.mark.parametrize(
    "sha",
    [
        "ab" * 31,  # 62 hex chars
        "ab" * 32 + "a",  # 65
        "g" + "a" * 63,  # right length, not hex
        "sha256:" + "ab" * 32,
        "0x" + "ab" * 31,
    ],
)
def test_bad_sha_is_refused(tmp_path: Path, sha: str) -> None:
    with pytest.raises(BindingError) as caught:
        resolve_binding(props(sha=sha), tmp_path)
    assert caught.value.code == "bad_binding"
    assert ARTIFACT_SHA256 in str(caught.value)


def test_sha_is_normalised(tmp_path: Path) -> None:
    binding = resolve_binding(props(sha=f"  {GOOD_SHA.upper()}\n"), tmp_path)
    assert binding.artifact_sha256 == GOOD_SHA


def test_relative_paths_resolve_against_the_base_dir(tmp_path: Path) -> None:
    base = tmp_path / "home"
    binding = resolve_binding(props(uri="../shared/m.joblib", eval="file://data/e.csv"), base)
    assert binding.artifact_path == tmp_path / "shared" / "m.joblib"  # ".." resolved, not kept
    assert binding.eval_data_path == base / "data" / "e.csv"  # file:// prefix stripped, then relative


def test_absolute_paths_are_kept(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    binding = resolve_binding(props(uri=str(elsewhere / "m.joblib"), eval=f"file://{elsewhere}/e.csv"), tmp_path / "b")
    assert binding.artifact_path == elsewhere / "m.joblib"
    assert binding.eval_data_path == elsewhere / "e.csv"


def test_home_relative_paths_expand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    binding = resolve_binding(props(uri="~/models/m.joblib"), tmp_path / "base")
    assert binding.artifact_path == tmp_path / "user" / "models" / "m.joblib"


@pytest.mark.parametrize(("text", "expected"), [("0.3", 0.3), (" 0.9 ", 0.9), ("1e-3", 0.001), ("0.5", 0.5)])
def test_decision_threshold_parsed(tmp_path: Path, text: str, expected: float) -> None:
    binding = resolve_binding({**props(), DECISION_THRESHOLD: text}, tmp_path)
    assert binding.decision_threshold == pytest.approx(expected)


@pytest.mark.parametrize("text", ["0", "1", "-0.1", "1.5", "nan", "inf", "high", ""])
def test_decision_threshold_out_of_bounds(tmp_path: Path, text: str) -> None:
    with pytest.raises(BindingError) as caught:
        resolve_binding({**props(), DECISION_THRESHOLD: text}, tmp_path)
    assert caught.value.code == "bad_binding"
    assert DECISION_THRESHOLD in str(caught.value)


# --- load_verified_pipeline: a tampered artifact is never unpickled -------------------------------------------


class _SideEffect:
    """Unpickling this creates the directory `marker`: proof that pickle code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Callable[..., object], tuple[str]]:
        return (os.mkdir, (self.marker,))


def _dump_joblib(obj: object, path: Path) -> None:
    joblib.dump(obj, path)


def _dump_pickle(obj: object, path: Path) -> None:
    path.write_bytes(pickle.dumps(obj))


DUMPERS = pytest.mark.parametrize("dump", [_dump_joblib, _dump_pickle], ids=["joblib", "pickle"])


def _binding(artifact: Path, sha: str, eval_path: Path | None = None, label: str = "y") -> ModelBinding:
    return ModelBinding(
        artifact_path=artifact,
        artifact_sha256=sha,
        eval_data_path=eval_path or artifact.with_suffix(".csv"),
        label_column=label,
    )


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@DUMPERS
def test_tampered_artifact_is_never_unpickled(tmp_path: Path, dump: Callable[[object, Path], None]) -> None:
    marker = tmp_path / "pwned"
    artifact = tmp_path / "model.joblib"
    dump(_SideEffect(marker), artifact)
    wrong = hashlib.sha256(b"the bytes the catalog registered").hexdigest()

    with pytest.raises(BindingError) as caught:
        load_verified_pipeline(_binding(artifact, wrong))

    assert caught.value.code == "hash_mismatch"
    assert not marker.exists(), "the artifact was unpickled although its sha256 did not match"
    assert _sha(artifact) in str(caught.value) and wrong in str(caught.value)


@DUMPERS
def test_control_matching_sha_does_unpickle(tmp_path: Path, dump: Callable[[object, Path], None]) -> None:
    """Proves the test above can fail: with the right digest the same file's pickle code runs."""
    marker = tmp_path / "pwned"
    artifact = tmp_path / "model.joblib"
    dump(_SideEffect(marker), artifact)

    with pytest.raises(BindingError) as caught:
        load_verified_pipeline(_binding(artifact, _sha(artifact)))

    assert marker.is_dir(), "the control did not unpickle: the tamper test proves nothing"
    assert caught.value.code == "not_a_pipeline"  # os.mkdir returned None, which has no predict_proba


def test_file_swapped_after_hashing_is_not_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hash and unpickle use the same bytes: swapping the file after the read cannot smuggle a pickle in."""
    artifact = tmp_path / "model.joblib"
    good = LogisticRegression().fit(np.array([[0.0], [1.0], [0.2], [0.9]]), np.array([0, 1, 0, 1]))
    joblib.dump(good, artifact)
    good_sha = _sha(artifact)
    evil = tmp_path / "evil.joblib"
    marker = tmp_path / "pwned"
    joblib.dump(_SideEffect(marker), evil)
    evil_bytes = evil.read_bytes()
    original_read_bytes = Path.read_bytes

    def read_then_swap(self: Path) -> bytes:
        data = original_read_bytes(self)
        if self == artifact:
            artifact.write_bytes(evil_bytes)  # an attacker replacing the file right after the hash check
        return data

    monkeypatch.setattr(Path, "read_bytes", read_then_swap)
    pipeline = load_verified_pipeline(_binding(artifact, good_sha))
    monkeypatch.undo()

    assert isinstance(pipeline, LogisticRegression)
    assert not marker.exists()
    assert original_read_bytes(artifact) == evil_bytes  # the swap did happen


def test_real_pipeline_loads(tmp_path: Path) -> None:
    artifact = tmp_path / "model.joblib"
    X, y = np.array([[0.0], [1.0], [0.2], [0.9]]), np.array([0, 1, 0, 1])
    joblib.dump(LogisticRegression().fit(X, y), artifact)
    pipeline = load_verified_pipeline(_binding(artifact, _sha(artifact)))
    assert pipeline.predict_proba(X).shape == (4, 2)


def test_missing_artifact(tmp_path: Path) -> None:
    with pytest.raises(BindingError) as caught:
        load_verified_pipeline(_binding(tmp_path / "nope.joblib", GOOD_SHA))
    assert caught.value.code == "missing_artifact"
    assert "nope.joblib" in str(caught.value)


def test_directory_is_not_an_artifact(tmp_path: Path) -> None:
    folder = tmp_path / "model.joblib"
    folder.mkdir()
    with pytest.raises(BindingError) as caught:
        load_verified_pipeline(_binding(folder, GOOD_SHA))
    assert caught.value.code == "missing_artifact"


def test_garbage_with_matching_sha_is_not_a_pipeline(tmp_path: Path) -> None:
    artifact = tmp_path / "model.joblib"
    artifact.write_bytes(b"this is not a pickle at all")
    with pytest.raises(BindingError) as caught:
        load_verified_pipeline(_binding(artifact, _sha(artifact)))
    assert caught.value.code == "not_a_pipeline"


def test_unpicklable_object_without_predict_proba(tmp_path: Path) -> None:
    artifact = tmp_path / "model.joblib"
    joblib.dump({"weights": [1, 2, 3]}, artifact)
    with pytest.raises(BindingError) as caught:
        load_verified_pipeline(_binding(artifact, _sha(artifact)))
    assert caught.value.code == "not_a_pipeline"
    assert "dict" in str(caught.value)


# --- load_eval_data ---------------------------------------------------------------------------------------


def _eval_binding(path: Path, label: str = "y") -> ModelBinding:
    return _binding(path.with_suffix(".joblib"), GOOD_SHA, eval_path=path, label=label)


def test_eval_data_loads_with_sha_of_bytes(tmp_path: Path) -> None:
    path = tmp_path / "eval.csv"
    path.write_text("x,y\n1.5,0\n2.5,1\n3.5,0\n")
    frame, digest = load_eval_data(_eval_binding(path))
    assert list(frame.columns) == ["x", "y"] and len(frame) == 3
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()


def test_parquet_eval_data(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    path = tmp_path / "eval.parquet"
    pd.DataFrame({"x": [1.0, 2.0], "y": [0, 1]}).to_parquet(path)
    frame, _ = load_eval_data(_eval_binding(path))
    assert frame["y"].tolist() == [0, 1]


def test_missing_eval_data(tmp_path: Path) -> None:
    with pytest.raises(BindingError) as caught:
        load_eval_data(_eval_binding(tmp_path / "absent.csv"))
    assert caught.value.code == "missing_eval_data"
    assert "absent.csv" in str(caught.value)


def test_eval_without_label_column(tmp_path: Path) -> None:
    path = tmp_path / "eval.csv"
    path.write_text("x,label\n1,0\n2,1\n")
    with pytest.raises(BindingError) as caught:
        load_eval_data(_eval_binding(path, label="is_fraud"))
    assert caught.value.code == "bad_eval_data"
    assert "'is_fraud'" in str(caught.value) and "label" in str(caught.value)  # names the columns it has


@pytest.mark.parametrize(
    "labels",
    [["0", "1", "2"], ["yes", "no", "yes"], ["0", "", "1"], ["0.5", "1", "0"]],
    ids=["three-classes", "strings", "missing", "fractional"],
)
def test_non_binary_labels(tmp_path: Path, labels: list[str]) -> None:
    path = tmp_path / "eval.csv"
    path.write_text("x,y\n" + "".join(f"{i},{label}\n" for i, label in enumerate(labels)))
    with pytest.raises(BindingError) as caught:
        load_eval_data(_eval_binding(path))
    assert caught.value.code == "bad_eval_data"
    assert "0/1" in str(caught.value)


def test_unreadable_eval_data(tmp_path: Path) -> None:
    path = tmp_path / "eval.parquet"
    path.write_bytes(b"not parquet")
    with pytest.raises(BindingError) as caught:
        load_eval_data(_eval_binding(path))
    assert caught.value.code == "bad_eval_data"
