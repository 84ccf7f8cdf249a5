"""Every task end to end through the real catalog: the embedded DataHub Lite endpoint, the official MCP server,
discovery, binding, verified artifacts, inference, the task's metrics, the default (v2) policy and the evidence
folder — `assess_change`, the graph the CLI runs, in-process.

Two catalogs: the demo's (its regressor `review_time_estimator` next to `fraud_detector`) and the shop world of
`world.py` (XGBoost, LightGBM, a multiclass router, a misbound model and the segment case). Expected numbers are
recomputed here from the artifacts with scikit-learn / numpy, not read back from the code under test.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pandas as pd
import pytest

from agent.assessment import AssessmentResult, assess_change
from agent.context import AgentContext
from policies import DEFAULT_POLICY_PATH, Verdict, evaluate, load_policy
from seed.catalog import FRAUD_MODEL_URN, POSTGRES_TABLE_URN, REVIEW_MODEL_URN
from seed.review import REVIEW_LABEL
from tests.e2e_tasks.world import MODELS, TABLE_URN, ShopWorld, build_world
from tools.catalog.handle import CatalogHandle
from tools.evidence.schema import ModelEvidence
from tools.mutations import Mutation, apply_mutation, parse_mutation
from tools.settings import ProvenanceSettings

pytestmark = pytest.mark.slow  # every test here shares module fixtures that train and assess real models

V1_POLICY = DEFAULT_POLICY_PATH.with_name("default-v1.yaml")


@dataclass(frozen=True)
class Case:
    dataset: str
    field: str
    mutation: Mutation


DEMO_CASES = {
    "demo-scale": Case(POSTGRES_TABLE_URN, "amount", parse_mutation("scale", {"factor": 100})),
    "demo-round": Case(POSTGRES_TABLE_URN, "amount", parse_mutation("round", {"decimals": 2})),
}
SHOP_CASES = {
    "scale-value": Case(TABLE_URN, "order_value", parse_mutation("scale", {"factor": 100})),
    "round-value": Case(TABLE_URN, "order_value", parse_mutation("round", {"decimals": 2})),
    "unseen-channel": Case(
        TABLE_URN, "channel", parse_mutation("unseen_category", {"value": "drone"}, fraction=0.25, seed=3)
    ),
    "scale-loyalty": Case(TABLE_URN, "loyalty_points", parse_mutation("scale", {"factor": 3})),
}


async def _assess(home: Path, cases: dict[str, Case]) -> dict[str, AssessmentResult]:
    settings = ProvenanceSettings(provenance_home=home)
    results = {}
    async with CatalogHandle(settings) as handle:  # one catalog and MCP server for every case
        context = AgentContext(settings=settings, policy=load_policy(), catalog=handle)
        for name, case in cases.items():
            results[name] = await assess_change(context, case.dataset, case.field, case.mutation)
    return results


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> ShopWorld:
    return build_world(tmp_path_factory.mktemp("shop") / "home")


@pytest.fixture(scope="module")
def assessed(
    shop: ShopWorld, seeded_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, AssessmentResult]:
    demo_home = tmp_path_factory.mktemp("demo") / "home"
    shutil.copytree(seeded_template, demo_home, ignore=shutil.ignore_patterns("logs", "mcp-home"))
    return {**asyncio.run(_assess(demo_home, DEMO_CASES)), **asyncio.run(_assess(shop.home, SHOP_CASES))}


def by_name(result: AssessmentResult) -> dict[str, ModelEvidence]:
    return {m.name: m for m in result.evidence.models}


def codes(model: ModelEvidence, severity: Verdict | None = None) -> set[str]:
    return {r.code for r in model.reasons if severity is None or r.severity == severity}


def mutated(frame: pd.DataFrame, column: str, mutation: Mutation) -> pd.DataFrame:
    return frame.assign(**{column: apply_mutation(frame[column], mutation)})


def assert_plots(result: AssessmentResult, model: ModelEvidence) -> None:
    assert len(model.plots) == 2, model.plots
    for file in model.plots.values():
        assert (result.run_dir / file).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- the demo's regressor: scale -> BLOCK, round -> PASS --------------------------------------------------------


def test_dollars_to_cents_blocks_the_demo_regressor_with_its_own_numbers(
    assessed: dict[str, AssessmentResult], seeded_template: Path
) -> None:
    result = assessed["demo-scale"]
    models = by_name(result)
    assert set(models) == {"fraud_detector", "review_time_estimator"}  # the fan-out: two tasks on one lineage
    assert models["fraud_detector"].urn == FRAUD_MODEL_URN and models["fraud_detector"].task == "binary"
    review = models["review_time_estimator"]
    assert review.urn == REVIEW_MODEL_URN and review.task == "regression"
    assert review.task_basis is not None and review.task_basis.startswith("binding key provenance.task=regression")
    assert "GradientBoostingRegressor" in review.task_basis
    assert review.binding is not None and review.binding.task == "regression"
    m = review.metrics
    assert m is not None and m.task == "regression" and m.regression is not None
    assert m.binary is None and m.flip_rate is None  # a regressor has no AUC and no flips

    # Independent: the artifact's own predictions on the evaluation file, before and after.
    frame = pd.read_csv(seeded_template / "demo" / "review_eval.csv")
    model = joblib.load(seeded_template / "demo" / "review_time.joblib")
    columns = list(model.feature_names_in_)
    before = model.predict(frame[columns])
    after = model.predict(frame[columns].assign(txn_amount=frame["txn_amount"] * 100))
    y = frame[REVIEW_LABEL].to_numpy()
    r = m.regression
    assert r.mae.baseline == pytest.approx(np.mean(np.abs(before - y)), rel=1e-12)
    assert r.mae.mutated == pytest.approx(np.mean(np.abs(after - y)), rel=1e-12)
    assert r.rmse.mutated == pytest.approx(np.sqrt(np.mean((after - y) ** 2)), rel=1e-12)
    tolerance = 0.1 * np.std(before)
    assert r.tolerance == pytest.approx(tolerance, rel=1e-9)
    assert r.moved == int(np.sum(np.abs(after - before) > tolerance))
    assert r.mae.ci_low > 0 and r.mae.relative is not None and r.mae.relative > 0.10

    assert review.verdict == Verdict.BLOCK
    assert {"mae_increase_block", "rmse_increase_block", "moved_share_block"} <= codes(review, Verdict.BLOCK)
    assert not any(r.code.startswith("auc") for r in review.reasons)
    assert result.evidence.verdict == Verdict.BLOCK
    assert_plots(result, review)
    stored = json.loads((result.run_dir / "evidence.json").read_text())
    (stored_review,) = [x for x in stored["models"] if x["name"] == "review_time_estimator"]
    assert stored_review["task"] == "regression" and stored_review["metrics"]["regression"]["moved"] == r.moved


def test_rounding_to_cents_passes_both_demo_models(assessed: dict[str, AssessmentResult]) -> None:
    result = assessed["demo-round"]
    models = by_name(result)
    assert set(models) == {"fraud_detector", "review_time_estimator"}
    assert result.evidence.verdict == Verdict.PASS
    review = models["review_time_estimator"]
    assert review.verdict == Verdict.PASS and review.metrics is not None and review.metrics.regression is not None
    assert review.metrics.regression.moved == 0 and review.metrics.regression.mae.delta == 0
    assert models["fraud_detector"].verdict == Verdict.PASS


# --- XGBoost and LightGBM -------------------------------------------------------------------------------------


def test_xgboost_and_lightgbm_models_are_assessed_like_any_sklearn_estimator(
    assessed: dict[str, AssessmentResult], shop: ShopWorld
) -> None:
    result = assessed["scale-value"]
    models = by_name(result)
    assert set(models) == {"returns_xgb", "margin_lgbm", "margin_lgbm_misbound"}  # the others never read it
    frame = shop.eval_frame
    scaled = mutated(frame, "order_value", SHOP_CASES["scale-value"].mutation)
    columns = list(MODELS["returns_xgb"].features)

    xgb_model = models["returns_xgb"]
    assert xgb_model.task == "binary" and xgb_model.task_basis == "detected from XGBClassifier (2 classes)"
    m = xgb_model.metrics
    assert m is not None and m.binary is not None and m.binary.auc is not None
    before = shop.models["returns_xgb"].predict_proba(frame[columns])[:, 1]
    after = shop.models["returns_xgb"].predict_proba(scaled[columns])[:, 1]
    assert m.flips == int(np.sum((before >= 0.5) != (after >= 0.5))) and m.flips > 0.10 * len(frame)
    assert xgb_model.verdict == Verdict.BLOCK and "flip_rate_block" in codes(xgb_model)
    assert m.segments is not None and {"region", "channel"} <= set(m.segments.columns_examined)  # not inputs: read
    assert_plots(result, xgb_model)

    lgbm = models["margin_lgbm"]
    assert lgbm.task == "regression" and lgbm.task_basis == "detected from LGBMRegressor (a scikit-learn regressor)"
    r = lgbm.metrics.regression if lgbm.metrics else None
    assert r is not None
    y = frame["basket_margin"].to_numpy()
    predicted = shop.models["margin_lgbm"].predict(scaled[columns])
    assert r.mae.mutated == pytest.approx(np.mean(np.abs(predicted - y)), rel=1e-9)
    assert lgbm.verdict == Verdict.BLOCK and "mae_increase_block" in codes(lgbm)
    assert_plots(result, lgbm)


def test_a_task_key_the_artifact_cannot_serve_makes_the_model_incomplete(
    assessed: dict[str, AssessmentResult],
) -> None:
    model = by_name(assessed["scale-value"])["margin_lgbm_misbound"]
    assert model.verdict == Verdict.INCOMPLETE and model.metrics is None
    (reason,) = model.reasons
    assert reason.code == "task_mismatch"
    assert "provenance.task=binary but the pipeline has no predict_proba" in reason.message


def test_rounding_whole_cents_passes_the_boosted_models(assessed: dict[str, AssessmentResult]) -> None:
    models = by_name(assessed["round-value"])
    for name in ("returns_xgb", "margin_lgbm"):
        assert models[name].verdict == Verdict.PASS, models[name].reasons
        assert models[name].experiment is not None and models[name].experiment.rows_changed == 0


# --- multiclass: an unseen category -----------------------------------------------------------------------------


def test_an_unseen_channel_flips_the_routes_it_decided(assessed: dict[str, AssessmentResult], shop: ShopWorld) -> None:
    result = assessed["unseen-channel"]
    models = by_name(result)
    assert set(models) == {"route_classifier"}
    router = models["route_classifier"]
    assert router.task == "multiclass" and router.task_basis == "detected from LogisticRegression (3 classes)"
    m, mc = router.metrics, router.metrics.multiclass if router.metrics else None
    assert m is not None and mc is not None and mc.classes == ["express", "manual", "standard"]

    # The right verdict, worked out here: OneHotEncoder(handle_unknown="ignore") scores the unseen channel as no
    # channel at all, so the rows it hits fall back to the route region and items suggest.
    model, columns = shop.models["route_classifier"], list(MODELS["route_classifier"].features)
    frame = shop.eval_frame
    changed = mutated(frame, "channel", SHOP_CASES["unseen-channel"].mutation)
    before, after = model.predict_proba(frame[columns]), model.predict_proba(changed[columns])
    flips = int(np.sum(before.argmax(1) != after.argmax(1)))
    assert m.flips == flips and m.failures == 0
    truth = frame["route"].to_numpy()
    accuracy_drop = np.mean(model.classes_[before.argmax(1)] == truth) - np.mean(
        model.classes_[after.argmax(1)] == truth
    )
    assert mc.accuracy.delta == pytest.approx(-accuracy_drop, abs=1e-12)
    rules = load_policy().policy.multiclass
    assert rules is not None
    flip_rate = flips / len(frame)  # ~9 % of routes change: above the 5 % warning band, below the 10 % block band
    flip_level = (
        "block" if flip_rate >= rules.flip_rate.block else "warning" if flip_rate >= rules.flip_rate.warning else "pass"
    )
    assert flip_level == "warning" and f"flip_rate_{flip_level}" in codes(router)
    # ~7 accuracy points lost, significantly (the paired interval is below 0): the drop blocks on its own.
    assert accuracy_drop >= rules.accuracy_drop.block and mc.accuracy.ci_high < 0
    assert "accuracy_drop_block" in codes(router, Verdict.BLOCK)
    assert router.verdict == Verdict.BLOCK
    assert not any(r.code.startswith("auc") for r in router.reasons)
    assert_plots(result, router)


# --- segments: a region far above the band while the whole is below it ------------------------------------------


def test_a_segment_far_above_the_band_raises_the_verdict_after_bh(assessed: dict[str, AssessmentResult]) -> None:
    result = assessed["scale-loyalty"]
    (churn,) = result.evidence.models
    m = churn.metrics
    policy = load_policy().policy
    assert m is not None and m.flip_rate is not None and m.segments is not None and policy.segments is not None
    assert m.flip_rate < policy.flip_rate.warning  # overall: below the warning band
    assert "flip_rate_pass" in codes(churn)

    north = next(f for f in m.segments.findings if f.segment == "region=north")
    assert north.value >= 2 * policy.flip_rate.block and north.n < 0.10 * m.n_scored  # ~30 % of ~8 % of the rows
    assert north.exceeds == "block"
    assert north.p_adjusted_block is not None and north.p_value_block is not None
    assert north.p_value_block <= north.p_adjusted_block < policy.segments.fdr  # BH-corrected, still significant
    assert m.segments.segments_tested > 1

    assert churn.verdict == Verdict.BLOCK
    (segment,) = [r for r in churn.reasons if r.code.startswith("segment_")]
    assert segment.code == "segment_block" and "BH-adjusted p" in segment.message
    assert "auc_drop_pass" in codes(churn)  # less than one AUC point: the whole still ranks as before
    others = [r for r in churn.reasons if r is not segment]
    assert all(r.severity == Verdict.PASS for r in others), others  # the segment rule alone raised it
    assert evaluate(m, load_policy(V1_POLICY).policy).verdict == Verdict.PASS  # v1 has no segment rule


def test_every_assessment_wrote_its_evidence(assessed: dict[str, AssessmentResult]) -> None:
    for name, result in assessed.items():
        stored: dict[str, Any] = json.loads((result.run_dir / "evidence.json").read_text())
        assert stored["policy"]["version"] == 2, name
        for model in stored["models"]:
            if model["metrics"] is not None:  # measured: it says what it was measured as, and why
                assert model["task"] == model["metrics"]["task"] and model["task_basis"], (name, model["name"])
