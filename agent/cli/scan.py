"""`provenance scan`: the tolerance map of the production models downstream of one field (tools/tolerance)."""

from __future__ import annotations

import argparse
import asyncio

from agent.cli.catalog import discover
from agent.cli.exit_codes import EXIT_OK
from agent.errors import UsageError
from policies import load_policy
from tools.catalog.resolve import check_dataset_urn
from tools.settings import ProvenanceSettings
from tools.tolerance.doses import AXIS_NAMES
from tools.tolerance.report import REPORT_FILE, write_scan
from tools.tolerance.scan import scan


def _cmd_scan(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    check_dataset_urn(args.dataset)
    axes = _axes(args.axes)
    found, _startup, _catalog = asyncio.run(discover(settings, args.dataset, args.field))
    loaded = load_policy()
    result = scan(found, settings.lite_db.parent, loaded, axes)
    folder, result = write_scan(settings.home, result, loaded.policy)
    if args.json:
        print(result.model_dump_json(indent=2))
        return EXIT_OK
    print(f"Tolerance map of {args.field} ({len(result.models)} production model(s), {result.experiments} doses, "
          f"{result.seconds:.1f} s; policy {result.policy.name} v{result.policy.version})")  # fmt: skip
    for model in result.models:
        print(f"  {model.name}:" if model.axes else f"  {model.summary()}")
        for axis in model.axes:
            levels = "; ".join(axis.bracket_text(level) for level in ("BLOCK", "WARNING"))
            print(f"    {axis.axis:<11} {levels}")
    if not result.models:
        print("  no production model downstream: nothing to scan")
    print(f"Evidence: {folder / REPORT_FILE}")
    return EXIT_OK


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
