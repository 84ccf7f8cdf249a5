"""Working out and checking a binding against a real MLflow store (the real world's): which version, which pickle,
which held-out data and label — and the refusals, which write nothing."""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.preprocessing import StandardScaler

from tests.realworld.world import RealWorld
from tests.tools.registry.mlflow_helpers import LeavesMarker, register, version_tags
from tools.experiment.binding import (
    ARTIFACT_SHA256,
    ARTIFACT_URI,
    DECISION_THRESHOLD,
    EVAL_DATA_URI,
    LABEL_COLUMN,
    MLFLOW_MODEL,
    MLFLOW_RUN_ID,
    MLFLOW_VERSION,
    REQUIRED_KEYS,
)
from tools.registry.binder import BindOptions, check, propose
from tools.registry.mlflow_registry import ALIASES_TAG, MlflowRegistry, ModelRef, RegistryError

pytestmark = pytest.mark.slow  # the real world is built once per session (~15 s)


def registry(world: RealWorld) -> MlflowRegistry:
    return MlflowRegistry(world.mlflow_uri)


# --- choosing the version -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given",
    ["credit_default", "credit_default_1", "urn:li:mlModel:(urn:li:dataPlatform:mlflow,credit_default_1,PROD)"],
)
def test_the_model_is_found_by_name_name_version_or_urn(real_world: RealWorld, given: str) -> None:
    version = registry(real_world).find_version(ModelRef.parse(given), None)
    assert (version.name, version.version, version.stage) == ("credit_default", "1", "Production")
    assert version.run_id == real_world.champion.run_id
    assert version.datahub_urn() == real_world.champion.urn


def test_without_a_production_version_the_latest_is_taken_and_said(real_world: RealWorld) -> None:
    version = registry(real_world).find_version(ModelRef.parse("credit_default_challenger"), None)
    assert (version.version, version.stage) == ("1", "Staging")
    assert "latest" in version.chosen and "Production" in version.chosen


def test_unknown_model_and_conflicting_versions_are_refused(real_world: RealWorld) -> None:
    reg = registry(real_world)
    with pytest.raises(RegistryError, match="no registered model 'nope' in MLflow at [^;]* \\(give"):
        reg.find_version(ModelRef.parse("nope"), None)  # nothing close: no suggestion
    with pytest.raises(RegistryError, match="no registered model 'credit_defualt' .*; did you mean credit_default"):
        reg.find_version(ModelRef.parse("credit_defualt"), None)
    with pytest.raises(RegistryError, match="has no version 7"):
        reg.find_version(ModelRef.parse("credit_default"), "7")
    with pytest.raises(RegistryError, match="names version 1, but --version says 2"):
        reg.find_version(ModelRef.parse("credit_default_1"), "2")


# --- proposing -------------------------------------------------------------------------------------------------


def test_proposal_for_the_production_model(real_world: RealWorld) -> None:
    proposal = propose(registry(real_world), ModelRef.parse("credit_default"), BindOptions())
    champion = real_world.champion
    tags = proposal.tags
    assert tags[ARTIFACT_URI] == f"{champion.artifact_uri}/model"  # the version's source, as MLflow records it
    assert tags[ARTIFACT_SHA256] == hashlib.sha256(champion.artifact_path.read_bytes()).hexdigest()
    assert tags[EVAL_DATA_URI] == str(real_world.holdout_csv)  # the run's input logged with context "eval"
    assert tags[LABEL_COLUMN] == "defaulted"  # the one 0/1 column that is not an input (not applicant_id)
    assert (tags[MLFLOW_RUN_ID], tags[MLFLOW_MODEL], tags[MLFLOW_VERSION]) == (champion.run_id, "credit_default", "1")
    assert DECISION_THRESHOLD not in tags
    # The alias MLflow's get_model_version reports, kept as a version tag for DataHub's mlflow source to carry.
    assert proposal.version.aliases == ("champion",) and tags[ALIASES_TAG] == "champion"
    assert set(proposal.changed) == set(tags)  # nothing of it is there yet
    text = "\n".join(proposal.findings)
    assert "cloudpickle" in text and "1800 rows" in text
    assert "a Pipeline, detected from LogisticRegression (2 classes)" in text


def test_threshold_and_explicit_eval_data_and_label(real_world: RealWorld) -> None:
    options = BindOptions(eval_data=str(real_world.holdout_csv), label="defaulted", threshold=0.3)
    proposal = propose(registry(real_world), ModelRef.parse("credit_default"), options)
    assert proposal.tags[DECISION_THRESHOLD] == "0.3"
    assert proposal.tags[EVAL_DATA_URI] == str(real_world.holdout_csv)


@pytest.mark.parametrize("threshold", [0.0, 1.0, -2.0, float("nan")])
def test_threshold_out_of_range_is_refused(real_world: RealWorld, threshold: float) -> None:
    with pytest.raises(RegistryError, match=DECISION_THRESHOLD):
        propose(registry(real_world), ModelRef.parse("credit_default"), BindOptions(threshold=threshold))


def test_missing_label_column_is_refused_with_the_columns(real_world: RealWorld) -> None:
    with pytest.raises(RegistryError) as caught:
        propose(registry(real_world), ModelRef.parse("credit_default"), BindOptions(label="nope"))
    assert "'nope' is not in" in str(caught.value) and "defaulted" in str(caught.value)


def test_a_label_the_classifier_never_predicts_is_refused(real_world: RealWorld) -> None:
    with pytest.raises(RegistryError, match="the model never predicts"):
        propose(registry(real_world), ModelRef.parse("credit_default"), BindOptions(label="applicant_id"))


def test_a_multiclass_classifier_and_a_regressor_bind_as_assess_measures_them(real_world_copy: RealWorld) -> None:
    """bind checks the label against the task assess will measure (tools/experiment/task.py), not against 0/1."""
    world = real_world_copy
    frame = pd.read_csv(world.holdout_csv)
    frame["band"] = pd.qcut(frame["income"], 3, labels=["low", "mid", "high"]).astype(str)
    frame["spend"] = frame["loan_amount"] * 0.5
    labelled = world.dir / "labelled.csv"
    frame.to_csv(labelled, index=False)
    inputs = ["income", "loan_amount"]
    bands = LogisticRegression(max_iter=500).fit(frame[inputs], frame["band"])
    spend = LinearRegression().fit(frame[inputs], frame["spend"])
    for name, model, label in (("bands", bands, "band"), ("spend", spend, "spend")):
        register(world, name, model, inputs=(("eval", "labelled", labelled),))
        proposal = propose(registry(world), ModelRef.parse(name), BindOptions(label=label))
        assert proposal.tags[LABEL_COLUMN] == label
        assert check(proposal.tags, world.dir, "tags").valid
    findings = " ".join(propose(registry(world), ModelRef.parse("bands"), BindOptions(label="band")).findings)
    assert "3 classes" in findings and "multiclass, high: " in findings
    with pytest.raises(RegistryError, match="holds value"):  # a label outside the classes is still refused
        propose(registry(world), ModelRef.parse("bands"), BindOptions(label="defaulted"))


@pytest.mark.parametrize("flavour", ["xgboost", "lightgbm"])
def test_models_logged_with_mlflows_xgboost_and_lightgbm_flavours_bind(
    real_world_copy: RealWorld, flavour: str
) -> None:
    import lightgbm
    import xgboost

    world = real_world_copy
    frame = pd.read_csv(world.holdout_csv)
    frame["spend"] = frame["loan_amount"] * 0.5 + frame["income"] * 0.01
    labelled = world.dir / "labelled.csv"
    frame.to_csv(labelled, index=False)
    inputs = ["income", "loan_amount"]
    if flavour == "xgboost":
        classifier: object = xgboost.XGBClassifier(n_estimators=10).fit(frame[inputs], frame["defaulted"])
        regressor: object = xgboost.XGBRegressor(n_estimators=10).fit(frame[inputs], frame["spend"])
    else:
        classifier = lightgbm.LGBMClassifier(n_estimators=10, verbose=-1).fit(frame[inputs], frame["defaulted"])
        regressor = lightgbm.LGBMRegressor(n_estimators=10, verbose=-1).fit(frame[inputs], frame["spend"])
    for name, model, label in ((f"{flavour}_risk", classifier, "defaulted"), (f"{flavour}_spend", regressor, "spend")):
        register(world, name, model, inputs=(("eval", "labelled", labelled),), flavour=flavour)
        proposal = propose(registry(world), ModelRef.parse(name), BindOptions(label=label))
        findings = " ".join(proposal.findings)
        assert f"a {type(model).__name__}" in findings and "inputs income, loan_amount" in findings
        assert ("xgboost" if flavour == "xgboost" else "cloudpickle") in findings  # how the file was read
        result = check(proposal.tags, world.dir, "tags")
        assert result.valid, result.problems


def test_eval_data_without_the_model_inputs_is_refused(real_world: RealWorld, tmp_path: Path) -> None:
    partial = tmp_path / "partial.csv"
    partial.write_text("income,defaulted\n1.0,0\n2.0,1\n")
    with pytest.raises(RegistryError, match="lacks the model's input column.*loan_amount"):
        propose(registry(real_world), ModelRef.parse("credit_default"), BindOptions(eval_data=str(partial)))


def test_no_held_out_data_is_refused_and_nothing_written(real_world_copy: RealWorld) -> None:
    world = real_world_copy
    frame = pd.read_csv(world.train_csv)
    model = LogisticRegression(max_iter=500).fit(frame[["income", "loan_amount"]], frame["defaulted"])
    version = register(world, "no_holdout", model, inputs=(("training", "main.applicant_features", world.train_csv),))
    with pytest.raises(RegistryError) as caught:
        propose(registry(world), ModelRef.parse("no_holdout"), BindOptions())
    message = str(caught.value)
    assert "no held-out evaluation data" in message and "--eval-data" in message
    assert "main.applicant_features (training)" in message  # says what the run did log
    assert version_tags(world, "no_holdout", version) == {}


def test_a_transformer_is_not_a_model_to_bind(real_world_copy: RealWorld) -> None:
    world = real_world_copy
    frame = pd.read_csv(world.train_csv)
    scaler = StandardScaler().fit(frame[["income", "loan_amount"]])
    register(world, "scaler", scaler, inputs=(("eval", "holdout", world.holdout_csv),))
    with pytest.raises(RegistryError, match="holds a StandardScaler, not a model with predict_proba or predict"):
        propose(registry(world), ModelRef.parse("scaler"), BindOptions())


def test_a_pickled_plain_object_is_not_a_model_to_bind(real_world_copy: RealWorld) -> None:
    world = real_world_copy
    register(world, "weights", {"w": [1, 2]}, inputs=(("eval", "holdout", world.holdout_csv),), as_mlflow_model=False)
    with pytest.raises(RegistryError, match="holds a dict, not a model with predict_proba or predict"):
        propose(registry(world), ModelRef.parse("weights"), BindOptions())


# --- checking -------------------------------------------------------------------------------------------------


def test_check_names_the_missing_keys(real_world: RealWorld) -> None:
    result = check({"team": "risk", LABEL_COLUMN: "defaulted"}, real_world.dir, "tags")
    assert not result.valid and result.code == "missing_binding"
    assert result.missing == [k for k in REQUIRED_KEYS if k != LABEL_COLUMN]


def test_check_of_a_good_binding(real_world: RealWorld) -> None:
    proposal = propose(registry(real_world), ModelRef.parse("credit_default"), BindOptions())
    result = check(proposal.tags, real_world.dir, "tags")
    assert result.valid, result.problems
    assert any("sha256 matches" in line for line in result.ok)


def test_check_never_unpickles_a_tampered_artifact(real_world_copy: RealWorld) -> None:
    world = real_world_copy
    proposal = propose(registry(world), ModelRef.parse("credit_default"), BindOptions())
    marker = world.dir / "unpickled"
    world.champion.artifact_path.write_bytes(pickle.dumps(LeavesMarker(marker)))
    result = check(proposal.tags, world.dir, "tags")
    assert result.code == "hash_mismatch" and not result.valid
    assert not marker.exists(), "the tampered artifact was unpickled"


def test_a_multiclass_models_label_is_the_column_holding_its_classes_not_a_0_1_flag() -> None:
    """bind picked is_fraud (the one 0/1 column besides the inputs) for a three-class model, then refused it."""
    import pandas as pd
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from tools.registry.binder import _label

    frame = pd.DataFrame(
        {"amount": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "is_fraud": [0, 1, 0, 1, 0, 1],
         "risk_tier": ["low", "mid", "high", "low", "mid", "high"], "txn_id": ["a", "b", "c", "d", "e", "f"]}
    )  # fmt: skip
    multiclass = make_pipeline(LogisticRegression()).fit(frame[["amount"]], frame["risk_tier"])
    assert _label(None, frame, ["amount"], "eval.csv", multiclass)[0] == "risk_tier"
    binary = make_pipeline(LogisticRegression()).fit(frame[["amount"]], frame["is_fraud"].astype(float))
    assert _label(None, frame, ["amount"], "eval.csv", binary)[0] == "is_fraud"
