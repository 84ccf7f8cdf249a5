"""Progress of a 10-20 s command on a terminal: one line per stage as it ends (the catalog read, the lineage walk,
the plan, each model's experiment, the evidence), on stderr. Nothing when stderr is not a terminal or the output
is JSON, so pipes and scripts see exactly what they saw before."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from agent.conversation import UpdateHook

DONE = {
    "route": "question read",
    "gather_context": "field found in the catalog",
    "plan": "experiment planned",
    "write_evidence": "evidence written",
    "publish": "publication done",
}


class TerminalProgress:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.started = time.monotonic()

    def say(self, text: str) -> None:
        print(f"[{time.monotonic() - self.started:5.1f}s] {text}", file=self.stream, flush=True)

    async def __call__(self, node: str, update: dict[str, Any]) -> None:
        if node == "discover" and update.get("discovery") is not None:
            names = [m.name for m in update["discovery"].production_models]
            self.say(f"lineage walked: {len(names)} production model(s) {', '.join(names)}".rstrip())
        elif node == "experiment.measure":
            for result in update.get("model_results") or []:
                self.say(f"experiment on {result.name} done")
        elif node == "experiment.structural":
            self.say("judged by the policy's structural rule (no experiment)")
        elif node in DONE:
            self.say(DONE[node])


def terminal_progress(*, json_output: bool = False, stream: TextIO | None = None) -> UpdateHook | None:
    """A progress printer for this terminal, or None (not a terminal, or --json)."""
    stream = stream or sys.stderr
    if json_output or not stream.isatty():
        return None
    progress = TerminalProgress(stream)
    progress.say("starting: opening the catalog")
    return progress
