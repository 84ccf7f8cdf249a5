"""A fourth ML task added in one module (tests/tools/tasks/quantile_task.py) plus its registration, measured end
to end: the real embedded catalog and MCP server, discovery, binding with `provenance.task=quantile`, the verified
artifact, inference, the task's metrics, a policy with a `tasks: {quantile: ...}` section, plots, report and the
chat's table. The expected numbers are recomputed here from the artifact with numpy."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import datahub.metadata.schema_classes as m
import joblib
import numpy as np
import pandas as pd
import pytest
from datahub.metadata.urns import CorpGroupUrn, DatasetUrn, MlFeatureTableUrn, MlFeatureUrn, MlModelGroupUrn, MlModelUrn
from sklearn.ensemble import GradientBoostingRegressor

from agent.assessment import AssessmentResult, assess_change
from agent.chat.tables import metric_tables
from agent.context import AgentContext
from policies import DEFAULT_POLICY_PATH, Verdict, load_policy
from seed.catalog import write_to_lite
from seed.catalog_builders import (
    Column,
    feature_table_mcps,
    mcps_for,
    ml_model_group_mcps,
    ml_model_mcps,
    ownership,
    schema_metadata,
    upstream_lineage,
)
from tests.tools.tasks import quantile_task
from tools import task_registry
from tools.catalog.handle import CatalogHandle
from tools.mutations import parse_mutation
from tools.settings import ProvenanceSettings

pytestmark = pytest.mark.slow  # trains a model and assesses it through the real catalog twice

ROOT = Path(__file__).resolve().parents[3]
TABLE = str(DatasetUrn("postgres", "depot.public.deliveries", "PROD"))
FEATURES = str(DatasetUrn("feast", "depot_features.delivery", "PROD"))
MODEL = "delivery_p90"
POLICY_TASKS = """
tasks:
  quantile:
    min_rows: 100
    share: {warning: 0.05, block: 0.10}
    increases:
      pinball_loss: {warning: 0.05, block: 0.20}
"""


def deliveries(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    distance = np.round(rng.gamma(2.0, 4.0, rows), 2)
    parcels = rng.poisson(3, rows) + 1
    minutes = np.round(12 + 3.5 * distance + 2 * parcels + rng.gamma(2.0, 4.0, rows), 2)
    return pd.DataFrame({"distance_km": distance, "parcels": parcels, "minutes": minutes})


def build(home: Path) -> tuple[GradientBoostingRegressor, pd.DataFrame]:
    frame = deliveries(4_000, 7)
    train, evaluation = frame.iloc[:2_500], frame.iloc[2_500:].reset_index(drop=True)
    model = GradientBoostingRegressor(loss="quantile", alpha=quantile_task.ALPHA, n_estimators=60, random_state=0)
    model.fit(train[["distance_km", "parcels"]], train["minutes"])
    (home / "models").mkdir(parents=True)
    (home / "data").mkdir()
    joblib.dump(model, home / "models" / "p90.joblib")
    evaluation.to_csv(home / "data" / "eval.csv", index=False, float_format="%.2f")
    columns = [Column("distance_km", "number", "numeric(8,2)"), Column("parcels", "number", "integer")]
    feature = {c.name: str(MlFeatureUrn("depot_features.delivery", c.name)) for c in columns}
    group = str(MlModelGroupUrn("mlflow", "depot_models", "PROD"))
    team = ownership((str(CorpGroupUrn("depot-ml")), m.OwnershipTypeClass.TECHNICAL_OWNER))
    binding = {
        "provenance.artifact_uri": "models/p90.joblib",
        "provenance.artifact_sha256": hashlib.sha256((home / "models" / "p90.joblib").read_bytes()).hexdigest(),
        "provenance.eval_data_uri": "data/eval.csv",
        "provenance.label_column": "minutes",
        "provenance.task": "quantile",
    }
    write_to_lite(
        [
            *mcps_for(TABLE, schema_metadata("postgres", "depot.public.deliveries", columns)),
            *mcps_for(
                FEATURES,
                schema_metadata("feast", "depot_features.delivery", columns),
                upstream_lineage(TABLE, FEATURES, [(c.name, c.name) for c in columns]),
            ),
            *feature_table_mcps(
                str(MlFeatureTableUrn("feast", "delivery")),
                FEATURES,
                [(feature[c.name], m.MLFeatureDataTypeClass.CONTINUOUS, c.name) for c in columns],
                description="delivery features",
                owners=team,
            ),
            *ml_model_group_mcps(group, "Depot models", team),
            *ml_model_mcps(
                str(MlModelUrn("mlflow", MODEL, "PROD")),
                description="p90 delivery time",
                model_type="pipeline",
                tags=["production"],
                features=list(feature.values()),
                group=group,
                custom_properties=binding,
                owners=team,
            ),
        ],
        home / "catalog.db",
    )
    return model, evaluation


async def _assess(home: Path, policy: Path, changes: dict[str, str]) -> dict[str, AssessmentResult]:
    settings = ProvenanceSettings(provenance_home=home)
    results = {}
    async with CatalogHandle(settings) as handle:
        context = AgentContext(settings=settings, policy=load_policy(policy), catalog=handle)
        for name, factor in changes.items():
            mutation = parse_mutation("scale", {"factor": float(factor)})
            results[name] = await assess_change(context, TABLE, "distance_km", mutation)
    return results


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dict[str, AssessmentResult], GradientBoostingRegressor, pd.DataFrame]:
    home = tmp_path_factory.mktemp("depot") / "home"
    model, evaluation = build(home)
    policy = home / "policy.yaml"
    policy.write_text(DEFAULT_POLICY_PATH.read_text() + POLICY_TASKS)
    monkey = pytest.MonkeyPatch()
    monkey.setenv("PROVENANCE_TASKS", quantile_task.__name__)  # the registration a worker process reads
    try:
        results = asyncio.run(_assess(home, policy, {"km_to_m": "1000", "same": "1"}))
    finally:
        monkey.undo()
    return results, model, evaluation


def test_the_fourth_task_is_measured_with_its_own_numbers_and_judged_by_its_policy_section(
    world: tuple[dict[str, AssessmentResult], GradientBoostingRegressor, pd.DataFrame],
) -> None:
    results, model, evaluation = world
    evidence = results["km_to_m"].evidence.models[0]
    assert evidence.task == "quantile" and evidence.metrics is not None
    section = evidence.metrics.other
    assert section is not None
    features = evaluation[["distance_km", "parcels"]]
    before = model.predict(features)
    after = model.predict(features.assign(distance_km=features["distance_km"] * 1000))
    y = evaluation["minutes"].to_numpy()
    loss = quantile_task.pinball
    assert section.paired["pinball_loss"].baseline == pytest.approx(loss(y, before).mean(), rel=1e-9)
    assert section.paired["pinball_loss"].mutated == pytest.approx(loss(y, after).mean(), rel=1e-9)
    moved = np.abs(after - before) > quantile_task.TOLERANCE_FRACTION * before.std()
    assert section.events == int(moved.sum()) and section.share == pytest.approx(moved.mean())
    assert evidence.verdict == Verdict.BLOCK
    codes = {r.code for r in evidence.reasons}
    assert {"moved_share_block", "pinball_loss_increase_block"} <= codes, codes


def test_an_unchanged_input_passes_with_the_tasks_rules_checked(
    world: tuple[dict[str, AssessmentResult], GradientBoostingRegressor, pd.DataFrame],
) -> None:
    evidence = world[0]["same"].evidence.models[0]
    assert evidence.verdict == Verdict.PASS
    codes = {r.code for r in evidence.reasons}
    assert {"moved_share_pass", "pinball_loss_increase_pass"} <= codes, codes


def test_every_renderer_shows_the_fourth_task(
    world: tuple[dict[str, AssessmentResult], GradientBoostingRegressor, pd.DataFrame],
) -> None:
    result = world[0]["km_to_m"]
    evidence = result.evidence.models[0]
    assert list(evidence.plots) == ["change"]
    assert (result.run_dir / evidence.plots["change"]).read_bytes()[:4] == b"\x89PNG"
    report = (result.run_dir / "report.md").read_text()
    assert "pinball_loss" in report and "moved share" in report
    table = "\n".join(metric_tables(result.evidence.models, 0.95))
    assert "| Δpinball_loss |" in table and MODEL.replace("_", "\\_") in table
    assert "95% CI: Moved share" in table and "Δpinball_loss +" in table  # the intervals, under the table


def test_nothing_outside_the_tasks_module_names_it() -> None:
    """The task is one module plus its registration: the product's packages never mention it."""
    mentions = [
        path.relative_to(ROOT)
        for package in ("agent", "tools", "policies")
        for path in (ROOT / package).rglob("*.py")
        if "pinball" in path.read_text() or "quantile_task" in path.read_text()
    ]
    assert mentions == []
    assert "quantile" in task_registry.names()
