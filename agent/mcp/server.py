"""`provenance mcp`: Provenance as a stdio MCP server, built on the official MCP Python SDK (FastMCP).

One catalog handle and one experiment executor live as long as the server (its lifespan); each tool call is one
request. A request Provenance cannot serve as asked (an unknown dataset or field, an operator that does not fit)
is a tool error whose text starts with the CLI's exit code (`[exit 2] …`), never a crash of the server. No tool
writes to DataHub: publishing a verdict stays behind a person's approval (the chat, or `provenance publish`).
"""

from __future__ import annotations

import asyncio
import hmac
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError

from agent.assessment import assess_change as run_assessment
from agent.checking import check_result
from agent.context import AgentContext
from agent.diffing import diff_models as run_diff
from agent.diffing import diff_request
from agent.errors import UsageError
from agent.inferring import InferRequest, analyse_request, header, infer, summary_lines
from agent.latest_run import latest_run
from agent.mcp.app import ProvenanceMCP
from agent.mcp.schemas import (
    AffectedModels,
    Assessment,
    InferredChanges,
    LatestVerdict,
    ModelReached,
    ModelVerdict,
    SqlFileChanged,
)
from agent.plan_sentence import dataset_name
from tools.catalog.handle import CatalogHandle
from tools.catalog.lineage_walk import Discoverer
from tools.catalog.render import feature_path
from tools.catalog.resolve import CatalogInputError, check_dataset_urn, one_column
from tools.changes.result import CheckResult
from tools.changes.schema import dump_change_set, load_change_set
from tools.diff.schema import DiffEvidence
from tools.errors import ProvenanceError
from tools.evidence.schema import Evidence
from tools.evidence.store import EVIDENCE_FILE, REPORT_FILE, EvidenceError, read_evidence, runs_dir
from tools.mutations import parse_mutation
from tools.settings import ProvenanceSettings

R = TypeVar("R")
INSTRUCTIONS = (
    "Provenance tells which production ML models depend on a DataHub field (affected_models) and whether a proposed "
    "change to that field degrades them (assess_change, or check_changes for a CHANGES.yml: runs the models on "
    "baseline and changed data and applies a fixed, versioned policy: PASS, WARNING, BLOCK or INCOMPLETE). "
    "diff_models runs the production models on a pull request's built relations next to today's (any SQL change). "
    "infer_changes turns a git diff of SQL models (plain SQL or dbt) into those CHANGES entries. "
    "latest_verdict and explain_run read recorded evidence, never memory. No tool writes to DataHub: publishing a "
    "verdict needs a person's approval in the Provenance chat or with `provenance publish RUN_ID`. A BLOCK means: "
    "do not ship the change as is."
)


class StaticToken:
    """The one bearer token `provenance mcp --http` was started with (printed at startup), compared in constant time."""

    def __init__(self, token: str) -> None:
        self.token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.encode(), self.token.encode()):
            return None
        return AccessToken(token=token, client_id="provenance-mcp-client", scopes=[])


def build_server(
    settings: ProvenanceSettings, *, port: int | None = None, token: str | None = None
) -> FastMCP[AgentContext]:
    """stdio without `port`; with it, streamable HTTP on 127.0.0.1:`port`/mcp, every request needing `token`."""

    @asynccontextmanager
    async def lifespan(_server: FastMCP[AgentContext]) -> AsyncIterator[AgentContext]:
        async with CatalogHandle(settings) as handle:
            context = AgentContext(settings=settings, catalog=handle)
            try:
                yield context
            finally:
                await context.close_jobs()

    http: dict[str, Any] = {}
    if port is not None:
        if not token:
            raise ValueError("an HTTP MCP server needs a bearer token")
        url = f"http://127.0.0.1:{port}"
        http = {
            "host": "127.0.0.1",
            "port": port,
            "token_verifier": StaticToken(token),
            "auth": AuthSettings(issuer_url=url, resource_server_url=url, validate_token_resource=False),  # type: ignore[arg-type]
        }
    server = ProvenanceMCP("provenance", instructions=INSTRUCTIONS, lifespan=lifespan, **http)

    def agent(ctx: Context[Any, AgentContext, Any]) -> AgentContext:
        return ctx.request_context.lifespan_context

    @server.tool()
    async def affected_models(
        ctx: Context[Any, AgentContext, Any], dataset: str = "", field: str = "", feature: str = ""
    ) -> AffectedModels:
        """The ML models that depend on a field, through DataHub lineage: each with its lineage paths and whether
        it is in production (and why), plus how completely the lineage could be read. `dataset` is a DataHub
        dataset URN, `field` a field path in it; or, instead, `feature`: an mlFeature (URN or name), whose source
        column is the field (a feature view or service: name one of its features). Read-only."""

        async def run() -> AffectedModels:
            discoverer = await agent(ctx).handle.discoverer()
            chosen_dataset, chosen_field = await _subject(discoverer, dataset, field, feature)
            found = await discoverer.discover(chosen_dataset, chosen_field)
            return AffectedModels(
                dataset=chosen_dataset,
                field=chosen_field,
                models=[
                    ModelReached(
                        urn=m.urn,
                        name=m.name,
                        production=m.production,
                        production_marker=m.production_evidence,
                        paths=[f"{feature_path(f)} -> model {m.name}" for f in m.features],  # as `lineage` says
                    )
                    for m in found.models
                ],
                lineage_complete=found.coverage.complete,
                unreadable=list(found.coverage.unreadable),
                coverage=found.coverage.lines(),
            )

        return await _served(run)

    @server.tool()
    async def assess_change(
        op: str,
        params: dict[str, Any],
        ctx: Context[Any, AgentContext, Any],
        dataset: str = "",
        field: str = "",
        fraction: float = 1.0,
        feature: str = "",
    ) -> Assessment:
        """Test a proposed change to a field against every production model that depends on it. `op` is one
        allowlisted operator with its `params`: scale(factor), shift(offset), null_inject(), constant(value),
        category_remap(mapping), unseen_category(value), round(decimals), clip(lower, upper), noise(relative_std),
        sign_flip(), shuffle(), cyclic_shift(offset, period); `fraction` is the share of rows changed, in (0, 1].
        Returns the policy's verdict per model with the measured numbers and reasons, the change tested and the
        evidence files. `dataset` + `field` name the field, or `feature` an mlFeature (URN or name) whose source
        column it is. Never publishes. Takes seconds to a minute; progress is reported as the stages end."""

        async def run() -> Assessment:
            mutation = parse_mutation(op, params, fraction=fraction)
            discoverer = await agent(ctx).handle.discoverer()
            chosen_dataset, chosen_field = await _subject(discoverer, dataset, field, feature)
            stages = iter(range(1, 100))

            async def progress(node: str, _update: dict[str, Any]) -> None:
                await ctx.report_progress(next(stages), None, f"{node} done")

            result = await run_assessment(agent(ctx), chosen_dataset, chosen_field, mutation, on_update=progress)
            return _assessment(result.evidence, agent(ctx).settings)

        return await _served(run)

    @server.tool()
    async def check_changes(changes_yaml: str, ctx: Context[Any, AgentContext, Any]) -> CheckResult:
        """What `provenance check CHANGES.yml` returns, for a change file given as YAML text (`version: 1`,
        `changes:` with dataset, field, op, params; optional `structural:` and `unmapped:`): each entry's verdict
        with its models and evidence run, and the combined verdict and exit code (the worst entry's). Never
        publishes, whatever approval the file holds."""

        async def run() -> CheckResult:
            context = agent(ctx)
            with tempfile.TemporaryDirectory(prefix="provenance-mcp-") as scratch:
                path = Path(scratch) / "CHANGES.yml"
                path.write_text(changes_yaml, encoding="utf-8")
                try:
                    change_set = load_change_set(path)  # every problem, with its line, before anything runs
                    return await check_result(context.settings, path, change_set, context.policy, None)
                except ProvenanceError as exc:  # the client sent text: name it, not the server's scratch file
                    said = str(exc).replace(str(path), "changes_yaml")
                    raise ToolError(f"[exit {exc.exit_code}] {said}") from exc

        return await _served(run)

    @server.tool()
    async def diff_models(
        datasets: list[str],
        ctx: Context[Any, AgentContext, Any],
        head_schema: str = "",
        base_schema: str = "",
        relations: list[str] | None = None,
        key: str = "",
        rows: int = 100_000,
    ) -> DiffEvidence:
        """What `provenance diff` returns: every production model downstream of the changed `datasets` (URNs)
        scored on the relations a pull request's build wrote (`head_schema`, or `relations` as NAME=BASE:HEAD) and
        on today's (`base_schema`, default the catalog's), the same rows paired by `key` (default: the catalog's
        key); per model the verdict, paired metrics, rows gone and new, and a data diff of its columns. Reads the
        warehouse PROVENANCE_WAREHOUSE_URL names, read-only; writes nothing to DataHub."""

        async def run() -> DiffEvidence:
            context = agent(ctx)
            request = diff_request(
                warehouse_url=context.settings.warehouse_url, datasets=datasets, policy=context.policy,
                base_schema=base_schema or None, head_schema=head_schema or None, relations=relations or [],
                key=key or None, rows=rows,
            )  # fmt: skip
            evidence, _folder = await run_diff(context.settings, request)
            return evidence

        return await _served(run)

    @server.tool()
    async def infer_changes(
        base: str,
        ctx: Context[Any, AgentContext, Any],
        head: str = "HEAD",
        repo: str = ".",
        paths: list[str] | None = None,
        platform: str | None = None,
        name_prefix: str | None = None,
        datasets: dict[str, str] | None = None,
        null_share: float | None = None,
        dialect: str | None = None,
    ) -> InferredChanges:
        """The CHANGES entries a git diff implies, as `provenance infer-changes` writes them: every .sql file
        (plain SQL or dbt) changed between the refs `base` and `head` in the checkout `repo` (a path on the
        server's machine, default its working directory; `paths` narrows to files under them), both versions
        parsed with sqlglot (`dialect`), each changed output column mapped to an operator (x*c -> scale, ROUND ->
        round, x+c -> shift, LEAST/GREATEST -> clip, COALESCE -> constant or null_inject on `null_share` of rows,
        a CASE mapping -> category_remap), a dropped or renamed column as a structural entry, anything else as
        `unmapped` for review by hand. Each model's dataset is found in the catalog by its table name, narrowed by
        `platform` and `name_prefix` ("DB.SCHEMA"), or given in `datasets` {table or file: dataset URN}. Returns
        `changes_yaml` (pass it to check_changes after review) and the same entries as data; hints in it name the
        CLI's options (--platform, --name-prefix, --dataset NAME=URN: here platform, name_prefix, datasets).
        Writes nothing."""

        async def run() -> InferredChanges:
            for name, urn in (datasets or {}).items():
                if not urn.startswith("urn:li:dataset:"):
                    raise UsageError(f"datasets[{name!r}] must be a dataset URN (urn:li:dataset:(...)), got {urn!r}")
            explicit_pairs = [f"{name}={urn}" for name, urn in (datasets or {}).items()]
            request = InferRequest(
                base=base,
                head=head,
                repo=Path(repo).expanduser().resolve(),
                paths=paths or [],
                platform=platform,
                name_prefix=name_prefix,
                datasets=explicit_pairs,
                null_share=null_share,
                dialect=dialect,
            )
            models, explicit = await asyncio.to_thread(analyse_request, request)  # git runs: off the event loop
            inference = await infer(request, models, explicit, agent(ctx).handle.reader)
            found = inference.change_set
            return InferredChanges(
                base=base,
                head=head,
                repo=str(request.repo),
                changes_yaml=dump_change_set(found, header=header(request, found)),
                change_set=found,
                files=[SqlFileChanged(file=m.file, status=m.status, table=m.table, changed=m.changed) for m in models],
                unresolved=inference.unresolved,
                summary=summary_lines(inference, request, "changes_yaml"),
            )

        return await _served(run)

    @server.tool()
    async def latest_verdict(model: str, ctx: Context[Any, AgentContext, Any]) -> LatestVerdict:
        """The latest run that tested a model (its name or mlModel URN) on this home, published or not, read from
        its evidence: the run, when, the verdict, the change tested, the reasons and whether it was published
        (`publication`). The status DataHub shows is the latest *published* verdict, which may be older. `found`
        is false when no run tested this model."""
        found = latest_run(agent(ctx).settings.home, model)
        if found.evidence is None or found.model is None:
            return LatestVerdict(model=model, found=False, unreadable_runs=found.unreadable)
        evidence, hit = found.evidence, found.model
        return LatestVerdict(
            model=model,
            found=True,
            run_id=evidence.run_id,
            created_at=evidence.created_at,
            verdict=hit.verdict,
            change_tested=evidence.plan.description,
            reasons=[r.message for r in hit.reasons],
            publication=evidence.publication.status,
            unreadable_runs=found.unreadable,
        )

    @server.tool()
    async def explain_run(run_id: str, ctx: Context[Any, AgentContext, Any]) -> Assessment:
        """A recorded run, from its evidence: the verdict, each model's reasons and numbers, the change tested and
        the evidence files (read report.md as the resource provenance://runs/<run_id>/report)."""
        settings = agent(ctx).settings
        return await _served(lambda: _read_run(settings, run_id))

    @server.resource("provenance://runs/{run_id}/report", mime_type="text/markdown")
    def report(run_id: str) -> str:
        """A run's Markdown report."""
        return _run_file(settings, run_id, REPORT_FILE)

    @server.resource("provenance://runs/{run_id}/evidence", mime_type="application/json")
    def evidence(run_id: str) -> str:
        """A run's evidence.json."""
        return _run_file(settings, run_id, EVIDENCE_FILE)

    @server.resource("provenance://runs/{run_id}/plots/{file}", mime_type="image/png")
    def plot(run_id: str, file: str) -> bytes:
        """One of a run's plots (PNG), as listed in a model's `plots`."""
        if not file.endswith(".png"):
            raise ValueError(f"{file!r} is not a plot; a model's `plots` lists its plots' resources")
        return _run_path(settings, run_id, file).read_bytes()

    return server


async def _served(run: Callable[[], Awaitable[R]]) -> R:
    """Bad input and failed services as tool errors with the CLI's exit code in front; the server keeps serving."""
    try:
        return await run()
    except ProvenanceError as exc:
        raise ToolError(f"[exit {exc.exit_code}] {exc}") from exc


async def _read_run(settings: ProvenanceSettings, run_id: str) -> Assessment:
    try:
        return _assessment(read_evidence(settings.home, run_id), settings)
    except EvidenceError as exc:
        raise ToolError(f"[exit 2] {exc}; list runs with `provenance runs`") from exc


def _assessment(evidence: Evidence, settings: ProvenanceSettings) -> Assessment:
    folder = runs_dir(settings.home) / evidence.run_id
    target = f"{dataset_name(evidence.request.dataset_urn)}.{evidence.request.field}"
    return Assessment(
        run_id=evidence.run_id,
        verdict=evidence.verdict,
        change_tested=f"{evidence.plan.description} on {target}",
        reasons=evidence.verdict_reasons,
        models=[
            ModelVerdict(
                urn=m.urn,
                name=m.name,
                verdict=m.verdict,
                task=m.measured_task,
                reasons=[r.message for r in m.reasons],
                metrics=m.metrics.model_dump(mode="json") if m.metrics else None,
                plots={name: f"provenance://runs/{evidence.run_id}/plots/{file}" for name, file in m.plots.items()},
            )
            for m in evidence.models
        ],
        tolerance_notes=evidence.tolerance_notes,
        evidence_json=str(folder / EVIDENCE_FILE),
        report_md=str(folder / REPORT_FILE),
    )


def _run_file(settings: ProvenanceSettings, run_id: str, name: str) -> str:
    return _run_path(settings, run_id, name).read_text()


def _run_path(settings: ProvenanceSettings, run_id: str, name: str) -> Path:
    """A file of a run folder; a name that could leave it (a separator, a leading dot) is refused."""
    for part, what in ((run_id, "a run id"), (name, "a file of a run")):
        if "/" in part or "\\" in part or part.startswith("."):
            raise ValueError(f"{part!r} is not {what}")
    folder = runs_dir(settings.home) / run_id
    path = folder / name
    if not path.is_file():
        raise ValueError(f"run {run_id} has no {name}; list runs with `provenance runs`")
    # A link (to /etc/passwd, or out of the runs) is never served: Provenance writes run files, never links.
    if folder.is_symlink() or path.is_symlink() or not path.resolve().is_relative_to(runs_dir(settings.home).resolve()):
        raise ValueError(f"run {run_id}'s {name} is a link, not a file Provenance wrote; it is not served")
    return path


async def _subject(discoverer: Discoverer, dataset: str, field: str, feature: str) -> tuple[str, str]:
    """`dataset` + `field`, or `feature` (resolved to the one column it reads): exactly one of the two."""
    if feature.strip():
        if dataset or field:
            raise CatalogInputError("give `feature`, or `dataset` with `field`, not both")
        return one_column(feature, await discoverer.resolve_subject(feature))
    if not dataset or not field:
        raise CatalogInputError("give `dataset` (a dataset URN) with `field`, or `feature` (an mlFeature)")
    check_dataset_urn(dataset)
    return dataset, field
