"""`provenance scan`: the tolerance map of the production models downstream of one field (tools/tolerance), and,
with `--publish` and a person's approval, the map on the column in DataHub (tools/tolerance/publish.py)."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
from pathlib import Path

from agent.cli.exit_codes import EXIT_CODES, EXIT_FAILURE, EXIT_OK
from agent.errors import UsageError
from policies import load_policy
from tools.catalog.connection import open_catalog
from tools.catalog.datahub import CatalogReader
from tools.catalog.discovery import Discovery
from tools.catalog.handle import CatalogHandle
from tools.catalog.lineage_walk import Discoverer
from tools.catalog.resolve import check_dataset_urn
from tools.catalog.session import CatalogError
from tools.settings import ProvenanceSettings
from tools.tolerance.doses import AXIS_NAMES
from tools.tolerance.publish import planned_writes, publish_scan
from tools.tolerance.report import REPORT_FILE, combined_heat_map, update_scan, write_scan
from tools.tolerance.scan import scan
from tools.tolerance.schema import ScanPublication, ScanResult


def _cmd_scan(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    if args.dataset is not None:
        check_dataset_urn(args.dataset)
    elif args.field is not None and args.feature is not None:
        raise UsageError("--field goes with --dataset; --feature names the column(s) its feature(s) read")
    elif args.field is not None:
        raise UsageError("--field goes with --dataset; --model scans the source column of each of the model's features")
    elif args.model is not None and not args.model.startswith("urn:li:mlModel:"):
        raise UsageError(f"--model takes an mlModel URN (urn:li:mlModel:(…)), not {args.model!r}")
    axes = _axes(args.axes)
    if args.publish and not args.yes and not sys.stdin.isatty():  # refused before anything runs
        raise UsageError("--publish writes to the catalog and needs an approval: run it on a terminal, or add --yes")
    unreached: list[str] = []
    if args.model is not None:
        found = asyncio.run(_model_discoveries(settings, args.model))
    elif args.feature is not None:
        found = asyncio.run(_feature_discoveries(settings, args.feature))
    else:
        found, unreached = asyncio.run(_discoveries(settings, args.dataset, args.field))
    loaded = load_policy()
    code, scanned = EXIT_OK, []
    for discovery in found:
        folder, result = write_scan(
            settings.home,
            scan(discovery, settings.lite_db.parent, loaded, axes, cluster=settings.cluster),
            loaded.policy,
        )
        if not args.json:
            print(_text(result, folder))
        if args.publish:
            result = result.model_copy(
                update={"publication": asyncio.run(_publish(settings, folder, result, args.yes))}
            )
            update_scan(folder, result)
            if not args.json:
                print(f"Publication: {result.publication.status} — {result.publication.message}")
            code = EXIT_FAILURE if result.publication.status == "failed" else code
        scanned.append(result)
    if args.json:
        print(json.dumps([r.model_dump(mode="json") for r in scanned], indent=2) if args.field is None
              else scanned[0].model_dump_json(indent=2))  # fmt: skip
    elif unreached:
        print(f"Not scanned (no production model downstream): {', '.join(unreached)}")
    if (args.model is not None or args.field is None) and (columns := combined_heat_map(settings.home, scanned)):
        print(f"Columns × axes: {columns}", file=sys.stderr if args.json else sys.stdout)
    if code == EXIT_OK and any(r.gaps() for r in scanned):
        code = EXIT_CODES["INCOMPLETE"]  # the map has holes: what was measured stands, the rest is unknown
    return code


async def _model_discoveries(settings: ProvenanceSettings, model: str) -> list[Discovery]:
    """For each feature of the model, the discovery of its source column (the feature's upstream dataset, the
    feature's name), narrowed to this model: how far that column can move before this model breaks."""
    async with open_catalog(settings) as catalog:
        reader = CatalogReader(catalog.session)
        if await reader.get_entity(model) is None:
            raise UsageError(f'{model} is not in the catalog; `provenance ask "what depends on …"` lists models')
        features = [h for h in await reader.get_lineage(model, direction="up", max_hops=1) if h.type == "MLFEATURE"]
        if not features:
            raise UsageError(
                f"{model} has no features in the catalog (it may be linked through a training run only): scan its "
                "source columns with --dataset URN --field NAME"
            )
        discoverer = Discoverer(reader)
        found = []
        for feature in features:
            sources = [
                h for h in await reader.get_lineage(feature.urn, direction="up", max_hops=1) if h.type == "DATASET"
            ]
            column = feature.name or feature.urn.rsplit(",", 1)[-1].rstrip(")")
            for source in sources:
                discovery = await discoverer.discover(source.urn, column)
                found.append(discovery.model_copy(update={"models": [m for m in discovery.models if m.urn == model]}))
    return found


async def _feature_discoveries(settings: ProvenanceSettings, feature: str) -> list[Discovery]:
    """The discovery of each column a feature, feature view or feature service reads."""
    async with open_catalog(settings) as catalog:
        discoverer = Discoverer(CatalogReader(catalog.session))
        return [await discoverer.discover(d, f) for d, f in await discoverer.resolve_subject(feature)]


async def _discoveries(
    settings: ProvenanceSettings, dataset: str, field: str | None
) -> tuple[list[Discovery], list[str]]:
    """The field's discovery; without a field, each field's that reaches a production model, or whose lineage could
    not be read completely (its scan then says so), and the names of the fields that reach none."""
    async with open_catalog(settings) as catalog:
        reader = CatalogReader(catalog.session)
        discoverer = Discoverer(reader)
        if field is not None:
            return [await discoverer.discover(dataset, field)], []
        await discoverer.require_dataset(dataset)
        found = [await discoverer.discover(dataset, f.field_path) for f in await reader.list_schema_fields(dataset)]
    keep = [d for d in found if d.production_models or not d.coverage.complete]
    return keep, [d.field for d in found if d not in keep]


async def _publish(settings: ProvenanceSettings, folder: Path, result: ScanResult, yes: bool) -> ScanPublication:
    user = getpass.getuser()
    if yes:
        decided_by = f"cli --yes:{user}"
    else:
        print("Approving writes to DataHub:", *(f"  {w}" for w in planned_writes(result)), sep="\n")
        if input("Publish this tolerance map to DataHub? [y/N] ").strip().lower() not in ("y", "yes"):
            return ScanPublication(status="declined", decided_by=f"tty:{user}", message="nothing was written")
        decided_by = f"tty:{user}"
    report = (folder / REPORT_FILE).read_text()
    try:
        async with CatalogHandle(settings) as handle:
            reader = await handle.reader()
            async with handle.writing() as writer:
                return await publish_scan(reader, writer, result, report, decided_by)
    except CatalogError as exc:  # the catalog (or its writer session) could not even be opened
        return ScanPublication(status="failed", decided_by=decided_by, message=str(exc))


def _text(result: ScanResult, folder: Path) -> str:
    lines = [
        f"Tolerance map of {result.field} ({len(result.models)} production model(s), {result.experiments} doses, "
        f"{result.seconds:.1f} s; policy {result.policy.name} v{result.policy.version})"
    ]
    for model in result.models:
        lines.append(f"  {model.name}:" if model.axes else f"  {model.summary()}")
        for axis in model.axes:
            lines.append(f"    {axis.axis:<11} {axis.levels_text()}")
    if not result.models:
        lines.append(f"  {result.empty_text()}")
    lines += [f"  {gap}" for gap in result.gaps()]
    lines.append(f"Evidence: {folder / REPORT_FILE}")
    return "\n".join(lines)


def _axes(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in AXIS_NAMES]
    if unknown or not names:
        raise UsageError(
            f"--axes: unknown axis {', '.join(unknown) or '(none given)'}; choose from {', '.join(AXIS_NAMES)}"
        )
    return names
