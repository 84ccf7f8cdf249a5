"""The outcome of a replay: `ReplayReport`, rendered for a person (`render`) or as JSON (`to_dict`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.replay.compare import FLOAT_ABS_TOL, FLOAT_REL_TOL, Difference


@dataclass
class TurnSummary:
    index: int
    label: str  # "ask: <question>" / "decide: approve by …"
    recorded: str  # e.g. "BLOCK, approval requested"
    now: str


@dataclass
class ReplayReport:
    trace_id: str
    source: Path
    live: bool
    home: Path | None  # where the replay's evidence was kept; None when it was temporary and is gone
    turns: list[TurnSummary] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    catalog_changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        return not self.differences

    @property
    def exit_code(self) -> int:
        return 0 if self.reproduced else 1

    def render(self) -> str:
        mode = (
            "live: the current catalog through MCP, recorded LLM outputs, no writes"
            if self.live
            else "offline: recorded catalog answers and LLM outputs, no MCP server, no API key, no writes"
        )
        lines = [f"Replay of trace {self.trace_id} ({self.source})", f"Mode: {mode}"]
        for turn in self.turns:
            same = "" if turn.recorded == turn.now else f" (recorded: {turn.recorded})"
            lines.append(f"  turn {turn.index} {turn.label} → {turn.now}{same}")
        tolerance = f"floats within {FLOAT_ABS_TOL:g} absolute or {FLOAT_REL_TOL:g} relative"
        if self.reproduced:
            lines.append(f"REPRODUCED: verdicts and metrics match the recording ({tolerance}).")
        else:
            lines.append(f"NOT REPRODUCED: {len(self.differences)} difference(s) ({tolerance}):")
            lines += [f"  - {d.line()}" for d in self.differences]
        if self.live:
            if self.catalog_changes:
                lines.append("What changed in the catalog since the recording:")
                lines += [f"  - {c}" for c in self.catalog_changes]
            else:
                lines.append("The catalog answered as recorded.")
        if self.notes:
            lines.append("Notes:")
            lines += [f"  - {n}" for n in self.notes]
        lines.append(
            f"Replay evidence: {self.home}" if self.home else "Replay evidence: written to a temporary home, removed."
        )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "source": str(self.source),
            "live": self.live,
            "reproduced": self.reproduced,
            "home": str(self.home) if self.home else None,
            "turns": [vars(t) for t in self.turns],
            "differences": [vars(d) for d in self.differences],
            "catalog_changes": self.catalog_changes,
            "notes": self.notes,
            "tolerance": {"abs": FLOAT_ABS_TOL, "rel": FLOAT_REL_TOL},
        }
