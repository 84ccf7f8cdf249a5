"""Trace commands: list recorded conversations, replay one offline (or against the live catalog)."""

from __future__ import annotations

import argparse
import json
import sys

from agent.cli.exit_codes import EXIT_BAD_INPUT, EXIT_OK
from agent.traces.schema import TraceError
from agent.traces.store import list_traces, traces_dir
from tools.settings import ProvenanceSettings


def _cmd_traces(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    listings = list_traces(settings.home)
    if getattr(args, "json", False):
        rows = [
            {"path": str(item.path), "error": item.error}
            if item.trace is None
            else {
                "path": str(item.path),
                "trace_id": item.trace.trace_id,
                "created_at": item.trace.created_at,
                "updated_at": item.trace.updated_at,
                "turns": len(item.trace.turns),
                "question": item.trace.question,
                "verdict": item.trace.verdict,
                "publication": item.trace.publication_status,
            }
            for item in listings
        ]
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    if not listings:
        print(f"No traces under {traces_dir(settings.home)} yet; every `provenance ask` and chat records one.")
        return EXIT_OK
    print(f"{'date (UTC)':<19}  {'trace':<36} {'turns':>5}  {'verdict':<10} {'published?':<16} question")
    for item in listings:
        if item.trace is None:
            print(f"{'?':<19}  {item.path.stem:<36} {'?':>5}  unreadable: {item.error}")
            continue
        trace = item.trace
        date = trace.created_at[:19].replace("T", " ")
        question = trace.question if len(trace.question) <= 70 else trace.question[:69] + "…"
        print(
            f"{date:<19}  {trace.trace_id:<36} {len(trace.turns):>5}  {trace.verdict or '-':<10} "
            f"{trace.publication_status:<16} {question}"
        )
    return EXIT_OK


def _cmd_replay(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    from agent.replay.run import replay_trace

    try:
        report = replay_trace(args.trace, settings, live=args.live, home=args.keep)
    except TraceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        print(report.render())
    return report.exit_code
