"""The deterministic assessment: discovery -> plan check -> per-model experiment -> policy -> evidence.

No LLM anywhere in here. The CLI's `assess` calls it directly; the agent's experiment subgraph runs the same
steps as nodes.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from policies.engine import LoadedPolicy
from tools.catalog.connection import Catalog
from tools.catalog.datahub import CatalogReader
from tools.catalog.discovery import Discoverer, Discovery
from tools.evidence.build import environment, persist_run, policy_record
from tools.evidence.schema import ChangeRequest, Evidence, ModelEvidence, PlanRecord, new_run_id
from tools.evidence.store import EVIDENCE_FILE, REPORT_FILE
from tools.experiment.assess import ModelTest, not_tested, overall, prepare_model, run_model, validate_against_field
from tools.experiment.mutations import Mutation
from tools.experiment.runner import BaselineCache
from tools.settings import ProvenanceSettings

EXIT_CODES = {"PASS": 0, "WARNING": 10, "BLOCK": 20, "INCOMPLETE": 30}
_BASELINES = BaselineCache()  # per process: the baseline never depends on the mutation


class AssessmentResult(BaseModel):
    evidence: Evidence
    run_dir: Path
    discovery: Discovery

    def summary(self) -> dict[str, Any]:
        """The `--json` contract of DESIGN §9."""
        ev = self.evidence
        return {
            "run_id": ev.run_id,
            "verdict": ev.verdict,
            "reasons": ev.verdict_reasons,
            "models": [
                {
                    "urn": m.urn,
                    "name": m.name,
                    "verdict": m.verdict,
                    "reasons": [r.message for r in m.reasons],
                    "reason_codes": [r.code for r in m.reasons],
                    "production_marker": m.production_marker,
                    "metrics": m.metrics.model_dump(mode="json") if m.metrics else None,
                }
                for m in ev.models
            ],
            "not_tested": [n.model_dump() for n in ev.not_tested],
            "coverage": ev.coverage.model_dump(mode="json") if ev.coverage else None,
            "policy": ev.policy.model_dump(),
            "evidence": {
                "folder": str(self.run_dir),
                "json": str(self.run_dir / EVIDENCE_FILE),
                "report": str(self.run_dir / REPORT_FILE),
                "plots": {m.name: [str(self.run_dir / p) for p in m.plots.values()] for m in ev.models},
            },
            "publication": ev.publication.model_dump(),
            "mcp_calls": ev.mcp_calls,
        }


async def discover_and_check(catalog: Catalog, request: ChangeRequest, mutation: Mutation) -> Discovery:
    discovery = await Discoverer(CatalogReader(catalog.session)).discover(request.dataset_urn, request.field)
    validate_against_field(mutation, discovery)
    return discovery


def experiment(discovery: Discovery, mutation: Mutation, base_dir: Path, policy: LoadedPolicy) -> list[ModelTest]:
    """Prepare every production model first (so a bad plan is refused before anything runs), then run."""
    prepared = [prepare_model(model, mutation, base_dir) for model in discovery.production_models]
    return [
        ModelTest(p) if isinstance(p, ModelEvidence) else run_model(p, mutation, policy, _BASELINES) for p in prepared
    ]


def build_evidence(
    *,
    request: ChangeRequest,
    plan: PlanRecord,
    discovery: Discovery,
    tests: list[ModelTest],
    policy: LoadedPolicy,
    catalog_description: str,
    mcp_calls: int,
    timings: dict[str, float],
) -> Evidence:
    verdict, reasons = overall(discovery, [t.evidence for t in tests])
    return Evidence(
        run_id=new_run_id(),
        request=request,
        catalog=catalog_description,
        dataset_owners=discovery.dataset.owners,
        dataset_tags=discovery.dataset.tags,
        lineage_precision=discovery.precision,
        datasets_searched=discovery.datasets_searched,
        coverage=discovery.coverage,
        plan=plan,
        models=[t.evidence for t in tests],
        not_tested=not_tested(discovery),
        verdict=verdict,
        verdict_reasons=reasons,
        policy=policy_record(policy),
        mcp_calls=mcp_calls,
        timings=timings,
        environment=environment(),
    )


async def assess_change(
    settings: ProvenanceSettings,
    catalog: Catalog,
    request: ChangeRequest,
    plan: PlanRecord,
    mutation: Mutation,
    policy: LoadedPolicy,
) -> AssessmentResult:
    timings: dict[str, float] = {}
    started = time.perf_counter()
    discovery = await discover_and_check(catalog, request, mutation)
    timings["discovery"] = time.perf_counter() - started
    started = time.perf_counter()
    tests = experiment(discovery, mutation, settings.lite_db.parent, policy)
    timings["experiment"] = time.perf_counter() - started
    evidence = build_evidence(
        request=request,
        plan=plan,
        discovery=discovery,
        tests=tests,
        policy=policy,
        catalog_description=catalog.description,
        mcp_calls=len(catalog.session.calls),
        timings=timings,
    )
    started = time.perf_counter()
    run_dir = persist_run(settings.home, evidence, tests)
    evidence.timings["evidence"] = time.perf_counter() - started
    return AssessmentResult(evidence=evidence, run_dir=run_dir, discovery=discovery)
