"""`provenance scan`: the tolerance map of the production models downstream of one field (tools/tolerance), and,
with `--publish` and a person's approval, the map on the column in DataHub (tools/tolerance/publish.py)."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
from pathlib import Path

from agent.cli.catalog import discover
from agent.cli.exit_codes import EXIT_FAILURE, EXIT_OK
from agent.errors import UsageError
from policies import load_policy
from tools.catalog.handle import CatalogHandle
from tools.catalog.resolve import check_dataset_urn
from tools.catalog.session import CatalogError
from tools.settings import ProvenanceSettings
from tools.tolerance.doses import AXIS_NAMES
from tools.tolerance.publish import planned_writes, publish_scan
from tools.tolerance.report import REPORT_FILE, update_scan, write_scan
from tools.tolerance.scan import scan
from tools.tolerance.schema import ScanPublication, ScanResult


def _cmd_scan(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    check_dataset_urn(args.dataset)
    axes = _axes(args.axes)
    if args.publish and not args.yes and not sys.stdin.isatty():  # refused before anything runs
        raise UsageError("--publish writes to the catalog and needs an approval: run it on a terminal, or add --yes")
    found, _startup, _catalog = asyncio.run(discover(settings, args.dataset, args.field))
    loaded = load_policy()
    folder, result = write_scan(settings.home, scan(found, settings.lite_db.parent, loaded, axes), loaded.policy)
    if args.json and not args.publish:
        print(result.model_dump_json(indent=2))
        return EXIT_OK
    if not args.json:
        print(_text(result, folder))
    if not args.publish:
        return EXIT_OK
    result = result.model_copy(update={"publication": asyncio.run(_publish(settings, folder, result, args.yes))})
    update_scan(folder, result)
    publication = result.publication
    print(
        result.model_dump_json(indent=2) if args.json else f"Publication: {publication.status} — {publication.message}"
    )
    return EXIT_FAILURE if publication.status == "failed" else EXIT_OK


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
            levels = "; ".join(axis.bracket_text(level) for level in ("BLOCK", "WARNING"))
            lines.append(f"    {axis.axis:<11} {levels}")
    if not result.models:
        lines.append("  no production model downstream: nothing to scan")
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
