"""A tolerance scan of the demo's production models on the real embedded catalog: its thresholds bracket what a
single assessment says at the doses on either side, its evidence is written whole, and it writes nothing to the
catalog."""

from __future__ import annotations

import asyncio
import json

import pandas as pd
import pytest

from agent.assessment import assess_change
from agent.cli.catalog import discover
from agent.context import AgentContext
from policies import Verdict, load_policy
from seed.catalog import FRAUD_MODEL_URN, POSTGRES_TABLE_URN, REVIEW_MODEL_URN
from tests.agent.helpers import catalog_write_count
from tools.catalog.handle import CatalogHandle
from tools.mutations import Mutation
from tools.settings import ProvenanceSettings
from tools.tolerance.bisection import LEVELS
from tools.tolerance.doses import axes_for
from tools.tolerance.report import HEAT_MAP, REPORT_FILE, SCAN_FILE, chat_figures, read_scan, write_scan
from tools.tolerance.scan import scan
from tools.tolerance.schema import ScanResult

pytestmark = pytest.mark.slow
RANK = {Verdict.PASS: 0, Verdict.WARNING: 1, Verdict.BLOCK: 2}


def run_scan(settings: ProvenanceSettings, axes: list[str]) -> ScanResult:
    found, _, _ = asyncio.run(discover(settings, POSTGRES_TABLE_URN, "amount"))
    return scan(found, settings.lite_db.parent, load_policy(), axes)


def assessed(settings: ProvenanceSettings, mutations: list[Mutation]) -> list[dict[str, Verdict]]:
    """Each mutation assessed as `provenance assess` assesses it: each model's verdict."""

    async def go() -> list[dict[str, Verdict]]:
        async with CatalogHandle(settings) as handle:
            context = AgentContext(settings=settings, policy=load_policy(), catalog=handle)
            results = [await assess_change(context, POSTGRES_TABLE_URN, "amount", m) for m in mutations]
        return [{m.urn: m.verdict for m in r.evidence.models} for r in results]

    return asyncio.run(go())


def test_the_thresholds_bracket_single_assessments_on_either_side(settings: ProvenanceSettings) -> None:
    result = run_scan(settings, ["scale_up", "nulls"])
    fraud = next(m for m in result.models if m.urn == FRAUD_MODEL_URN)
    assert fraud.not_scanned is None and [a.axis for a in fraud.axes] == ["nulls", "scale_up"]
    axes = {a.name: a for a in axes_for("numeric", pd.Series([1.0, 2.0]))}  # scale and null doses need no data
    checks: list[tuple[Mutation, str, bool]] = []  # (mutation, level, must reach it)
    for axis in fraud.axes:
        assert axis.search.incomplete is None and axis.search.monotone
        for level in LEVELS:
            bracket = axis.search.brackets[level]
            assert bracket.reached is not None, f"{axis.axis}: {level} not reached on the demo's fraud model"
            checks.append((axes[axis.axis].mutation(bracket.reached), level, True))
            if bracket.tolerated is not None:
                checks.append((axes[axis.axis].mutation(bracket.tolerated), level, False))
    verdicts = assessed(settings, [m for m, _, _ in checks])
    for (mutation, level, reaches), models in zip(checks, verdicts, strict=True):
        verdict = models[FRAUD_MODEL_URN]
        assert (RANK[verdict] >= RANK[Verdict(level)]) is reaches, f"{mutation.describe('amount')}: {verdict}"


def test_the_scan_is_written_whole_and_writes_nothing_to_the_catalog(settings: ProvenanceSettings) -> None:
    before = catalog_write_count(settings.lite_db)
    result = run_scan(settings, ["scale_down", "shift_up", "clip_high", "rounding"])
    folder, written = write_scan(settings.home, result, load_policy().policy)
    assert catalog_write_count(settings.lite_db) == before
    assert {m.urn for m in written.models} == {FRAUD_MODEL_URN, REVIEW_MODEL_URN}
    assert read_scan(folder) == written
    stored = json.loads((folder / SCAN_FILE).read_text())
    assert stored["schema_version"] == "provenance.scan/1" and stored["policy"]["sha256"]
    assert len(stored["conventions_sha256"]) == 64
    # one figure per axis (readable in the chat), in the scan's order of models and axes
    per_axis = [f"{m.name}-{a.axis}.png" for m in written.models for a in m.axes]
    assert len(per_axis) == 2 * 4
    assert set(written.plots) == {*per_axis, HEAT_MAP}
    assert [p.name for p in chat_figures(folder)] == [HEAT_MAP, *per_axis]
    for name in written.plots:
        assert (folder / name).read_bytes().startswith(b"\x89PNG")
    report = (folder / REPORT_FILE).read_text()
    assert "## fraud_detector (binary, input `txn_amount`)" in report and "| shift_up |" in report
    assert f"![tolerance heat map]({HEAT_MAP})" in report
    assert all(f"({name})" in report for name in per_axis)
    for model in written.models:
        assert model.artifact_sha256 and model.eval_data_sha256 and model.rows
        assert {a.axis for a in model.axes} == {"scale_down", "shift_up", "clip_high", "rounding"}
