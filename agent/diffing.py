"""`provenance diff`: the production models downstream of the changed datasets (the catalog's lineage, as `assess`
finds them, column by column), each scored on the base and head relations the pull request's build wrote, judged by
the policy; evidence written first, under $PROVENANCE_HOME/diffs/<run id>/ (diff.json, diff.md, plots)."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlparse

from agent.errors import UsageError
from policies import LoadedPolicy, Reason, Verdict, overall_verdict
from tools.atomic import write_atomically
from tools.catalog.discovery import AffectedModel
from tools.catalog.handle import CatalogHandle
from tools.catalog.resolve import check_dataset_urn
from tools.catalog.training_runs import dataset_parts
from tools.changes.schema import ProposedChange, load_change_set
from tools.diff.crosscheck import ColumnReading, read_column
from tools.diff.markdown import markdown
from tools.diff.measure import DiffJob, measure_in_job
from tools.diff.rows import DEFAULT_ROWS, paired_rows
from tools.diff.schema import DiffEvidence, ModelDiff, Sides
from tools.diff.sides import RelationMap, SidesError, catalog_key, parse_relations, read_manifest
from tools.diff.warehouse import DiffWarehouse, dialect_of
from tools.runtime.executor import make_executor
from tools.settings import ProvenanceSettings

DIFF_FILE, MARKDOWN_FILE = "diff.json", "diff.md"


@dataclass(frozen=True)
class DiffRequest:
    warehouse_url: str
    relations: RelationMap
    datasets: list[str]  # dataset URNs the pull request changes
    policy: LoadedPolicy
    key: list[str] | None = None
    rows: int = DEFAULT_ROWS
    seed: int = 0
    declared: list[ProposedChange] = field(default_factory=list)  # a CHANGES file's entries, to cross-check


# Platforms whose datasets are not warehouse relations: a feature view's or a model's own entities. The relation a
# model is scored on is the last dataset on its lineage path that is not one of these (a Feast feature view's
# source table, the dbt model a training run read).
NOT_WAREHOUSE = frozenset({"feast", "mlflow", "sagemaker", "vertexai", "tecton", "featurestore"})


@dataclass(frozen=True)
class Reads:
    dataset_urn: str | None  # the warehouse dataset the model is scored on; None: no lineage path names one
    columns: dict[str, str]  # model input name -> the relation's column, where the lineage names it
    changed: str = ""  # the changed dataset the model was reached from


def reads_of(model: AffectedModel, changed: str) -> Reads:
    """The warehouse dataset the model's links reach it from, and the column each linked input is read from. When
    no link's path has a warehouse step, which relation the model is scored on is unknown (None): never the changed
    dataset by default, whose rows may not be the model's (a feature view between them transforms them)."""
    chosen: str | None = None
    columns: dict[str, str] = {}
    for link in model.features:
        steps = [s for s in link.path if dataset_parts(s.dataset_urn)[0] not in NOT_WAREHOUSE]
        step = steps[-1] if steps else None
        if step is None:
            continue
        chosen = chosen or step.dataset_urn
        if step.dataset_urn == chosen and link.link == "feature":
            columns[link.name] = step.column
    return Reads(dataset_urn=chosen, columns=columns, changed=changed)


def relation_unknown(model: AffectedModel, reads: Reads) -> ModelDiff:
    """The model's diff when no warehouse relation is on its lineage: INCOMPLETE, saying why and what would help."""
    message = (
        f"no warehouse relation lies on the lineage from {reads.changed} to this model (only feature-store or "
        "registry steps), so which rows it is scored on is unknown and it was not measured; run `provenance diff` "
        "with --dataset set to the relation its features are read from"
    )
    reason = Reason(code="relation_unknown", severity=Verdict.INCOMPLETE, message=message)
    return ModelDiff(urn=model.urn, name=model.name, verdict=Verdict.INCOMPLETE, reasons=[reason])


def diff_request(
    *,
    warehouse_url: str | None,
    datasets: list[str],
    policy: LoadedPolicy,
    base_schema: str | None = None,
    head_schema: str | None = None,
    relations: list[str] | None = None,
    base_manifest: Path | None = None,
    head_manifest: Path | None = None,
    key: str | None = None,
    rows: int = DEFAULT_ROWS,
    seed: int = 0,
    changes: Path | None = None,
) -> DiffRequest:
    """A diff request from a front end's words (the CLI's flags, the MCP tool's arguments), every one checked before
    any catalog or warehouse is opened; a problem raises UsageError naming the fix."""
    if not warehouse_url:
        raise UsageError("diff reads the warehouse: pass --warehouse URL or set PROVENANCE_WAREHOUSE_URL")
    if not datasets:
        raise UsageError("name at least one changed dataset (--dataset URN)")
    for dataset in datasets:
        check_dataset_urn(dataset)
    if rows < 1:
        raise UsageError(f"--rows must be at least 1, got {rows}")
    if not (head_schema or head_manifest or relations):
        raise UsageError("name the pull request's side: --head-schema, --head-manifest or --relation NAME=BASE:HEAD")
    dialect = dialect_of(warehouse_url)
    relation_map = RelationMap(
        dialect=dialect,
        base_schema=base_schema,
        head_schema=head_schema,
        explicit=parse_relations(relations or []),
        base_manifest=read_manifest(base_manifest, dialect) if base_manifest else {},
        head_manifest=read_manifest(head_manifest, dialect) if head_manifest else {},
    )
    keys = [k.strip() for k in key.split(",") if k.strip()] if key else None
    declared = list(load_change_set(changes).changes) if changes is not None else []
    return DiffRequest(warehouse_url, relation_map, datasets, policy, keys, rows, seed, declared)


@dataclass
class _Reach:
    models: dict[str, tuple[AffectedModel, Reads]] = field(default_factory=dict)  # urn -> (model, what it reads)
    complete: bool = True
    lines: list[str] = field(default_factory=list)


def diffs_dir(home: Path) -> Path:
    return home / "diffs"


def _public(url: str) -> str:
    parsed = urlparse(url)
    if parsed.password:
        return url.replace(f":{parsed.password}@", ":***@", 1)
    return url


async def _reach(handle: CatalogHandle, datasets: list[str]) -> _Reach:
    discoverer = await handle.discoverer()
    reach = _Reach()
    for urn in datasets:
        for column in await discoverer.field_names(urn):
            found = await discoverer.discover(urn, column)
            reach.complete &= found.coverage.complete
            # The first column's coverage says what was searched and reached; the others add what could not be read.
            new = (
                found.coverage.lines()
                if not reach.lines
                else [f"could not read: {u}" for u in found.coverage.unreadable]
            )
            reach.lines += [line for line in new if line not in reach.lines]
            for model in found.production_models:  # each column's discovery links the model by that column
                reads = reads_of(model, urn)
                if model.urn in reach.models:
                    first, known = reach.models[model.urn]
                    if known.dataset_urn == reads.dataset_urn:
                        reads = Reads(known.dataset_urn, {**known.columns, **reads.columns}, known.changed)
                    reach.models[model.urn] = (first, reads if known.dataset_urn == reads.dataset_urn else known)
                else:
                    reach.models[model.urn] = (model, reads)
    return reach


async def _sides(handle: CatalogHandle, request: DiffRequest, dataset_urn: str) -> Sides:
    pair = request.relations.sides(dataset_urn)
    if pair is None:
        raise SidesError(
            f"nothing names the head side of {dataset_urn}: pass --head-schema, --head-manifest or --relation"
        )
    if request.key:
        key, basis = request.key, "--key"
    else:
        found = await catalog_key(await handle.reader(), dataset_urn)
        if found is None:
            raise SidesError(
                f"the catalog knows no unique key of {dataset_urn} (no primary key, no dbt unique test); pass --key "
                "with the column(s) that identify a row"
            )
        key, basis = found
    return Sides(dataset_urn=dataset_urn, base=pair[0], head=pair[1], key=key, key_basis=basis)


def _readings(warehouse: DiffWarehouse, sides: Sides, request: DiffRequest) -> list[ColumnReading]:
    """Every column of a changed dataset read on the paired rows: what changed, and how that compares with the
    CHANGES entries for it."""
    from tools.diff.rows import relation_sql

    head_order = warehouse.columns(relation_sql(sides.head))
    base_order = warehouse.columns(relation_sql(sides.base))
    head_columns, base_columns = set(head_order), set(base_order)
    columns = [c for c in base_order if c in head_columns and c not in sides.key]
    rows = paired_rows(warehouse, sides.base, sides.head, sides.key, columns, limit=request.rows, seed=request.seed)
    declared = {c.field: c for c in request.declared if c.dataset == sides.dataset_urn}
    found = [
        ColumnReading(dataset_urn=sides.dataset_urn, column=c, data="dropped: the head relation does not have it")
        for c in base_order
        if c not in head_columns
    ]
    found += [
        ColumnReading(dataset_urn=sides.dataset_urn, column=c, data="a new column: only the head relation has it")
        for c in head_order
        if c not in base_columns
    ]
    for column in columns:
        reading = read_column(
            sides.dataset_urn, column, rows.frame[f"base.{column}"], rows.frame[f"head.{column}"], declared.get(column)
        )
        if reading is not None:
            found.append(reading)
    return found


def _run_id() -> str:
    return f"diff-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{uuid.uuid4().hex[:6]}"


async def diff_models(settings: ProvenanceSettings, request: DiffRequest) -> tuple[DiffEvidence, Path]:
    """The diff's evidence and its run folder (written before this returns)."""
    warehouse = DiffWarehouse(request.warehouse_url)
    run_id = _run_id()
    diffs_dir(settings.home).mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=diffs_dir(settings.home), prefix=f".{run_id}."))  # renamed when complete
    try:
        async with CatalogHandle(settings) as handle:
            reach = await _reach(handle, request.datasets)
            sides: dict[str, Sides] = {}
            jobs: list[DiffJob] = []
            unreadable: list[ModelDiff] = []
            for model, what in reach.models.values():
                reads = what.dataset_urn
                if reads is None:
                    unreadable.append(relation_unknown(model, what))
                    continue
                if reads not in sides:
                    sides[reads] = await _sides(handle, request, reads)
                jobs.append(
                    DiffJob(
                        model=model,
                        reads=reads,
                        sides=sides[reads],
                        policy=request.policy.policy,
                        base_dir=settings.lite_db.parent,
                        run_dir=staging,
                        limit=request.rows,
                        seed=request.seed,
                        columns=what.columns,
                    )  # fmt: skip
                )
            # The models score at once, as assess's do: the experiment executor's threads (or worker processes).
            executor = make_executor(settings.executor_kind(long_lived=False), settings.workers)
            try:
                done = await asyncio.gather(*(executor.run(measure_in_job, j, request.warehouse_url) for j in jobs))
            finally:
                await executor.aclose()
            models: list[ModelDiff] = list(unreadable)
            for job, (result, counts) in zip(jobs, done, strict=True):
                models.append(result)
                if counts is not None:
                    sides[job.reads] = sides[job.reads].model_copy(update=counts)
            readings: list[ColumnReading] = []
            for urn in request.datasets:
                if urn not in sides:
                    sides[urn] = await _sides(handle, request, urn)
                readings += await asyncio.to_thread(_readings, warehouse, sides[urn], request)
        verdict = overall_verdict([m.verdict for m in models])
        if not models and not reach.complete:
            verdict = Verdict.INCOMPLETE
        policy = request.policy
        base_label, head_label = request.relations.describe()
        evidence = DiffEvidence(
            run_id=run_id, created_at=datetime.now(UTC).isoformat(), warehouse=_public(request.warehouse_url),
            dialect=warehouse.dialect, base_label=base_label, head_label=head_label, policy_name=policy.policy.name,
            policy_version=policy.policy.version, policy_sha256=policy.sha256, rows_limit=request.rows,
            seed=request.seed, datasets=list(sides.values()), models=models, verdict=verdict,
            coverage_complete=reach.complete, coverage_lines=reach.lines, readings=readings,
        )  # fmt: skip
        write_atomically(staging / DIFF_FILE, evidence.model_dump_json(indent=2).encode())
        write_atomically(staging / MARKDOWN_FILE, markdown(evidence).encode())
        final = diffs_dir(settings.home) / run_id
        os.replace(staging, final)
        return evidence, final
    finally:
        warehouse.close()
        if staging.exists():
            shutil.rmtree(staging)
