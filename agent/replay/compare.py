"""The comparison rules of a replay: what must match between a recorded turn and its replay, and how closely.

Integers and strings must be equal; floats within `FLOAT_ABS_TOL` absolute or `FLOAT_REL_TOL` relative (`same`).
A difference is reported once (a decision turn carries the assessment of the turn before it). With `--live`, what
changed in the catalog is reported apart from the differences, with the JSON paths where its answers changed
(`json_paths`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from agent.replay.describe import REPLAY_SKIPPED, fmt, short, skipped, turn_state
from agent.replay.doubles import call_key
from agent.traces.schema import AffectedModelRecord, ModelOutcome, TraceTurn
from policies import ModelMetrics
from tools.catalog.calls import ToolCallRecord
from tools.catalog.session import WRITE_TOOLS

FLOAT_ABS_TOL = 1e-9
FLOAT_REL_TOL = 1e-9
_MAX_CALL_DIFFS = 6


def close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=FLOAT_REL_TOL, abs_tol=FLOAT_ABS_TOL)


def same(a: Any, b: Any) -> bool:
    """Deep equality with the float tolerance (ints and bools compare exactly).

    Kept by hand: DeepDiff with math_epsilon=1e-9 agrees on floats, but takes True for 1 (once int and float may
    compare) and a Verdict for unequal to its string.
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, int | float) and isinstance(b, int | float) and close(float(a), float(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@dataclass
class Difference:
    turn: int | None  # None: the whole trace (policy, files)
    subject: str  # e.g. "model fraud_detector · metric flip_rate"
    recorded: str
    now: str

    def line(self) -> str:
        where = f"turn {self.turn} · " if self.turn is not None else ""
        return f"{where}{self.subject}: recorded {self.recorded}, now {self.now}"


class Comparer:
    def __init__(self, live: bool) -> None:
        self.live = live
        self.differences: list[Difference] = []
        self.catalog_changes: list[str] = []
        self.notes: list[str] = []

    def diff(self, turn: int | None, subject: str, recorded: Any, now: Any) -> None:
        found = Difference(turn, subject, fmt(recorded), fmt(now))
        # A decision turn carries the assessment of the turn before it: report a difference once.
        if not any(
            (d.subject, d.recorded, d.now) == (found.subject, found.recorded, found.now) for d in self.differences
        ):
            self.differences.append(found)

    def note(self, turn: int, text: str) -> None:
        if not any(n.split(": ", 1)[-1] == text for n in self.notes if n.startswith("turn ")):
            self.notes.append(f"turn {turn}: {text}")

    def change(self, turn: int, text: str) -> None:
        if not any(c.split(": ", 1)[1] == text for c in self.catalog_changes):
            self.catalog_changes.append(f"turn {turn}: {text}")

    def check(self, turn: int, subject: str, recorded: Any, now: Any) -> None:
        if not same(recorded, now):
            self.diff(turn, subject, recorded, now)

    def turn(self, rec: TraceTurn, now: TraceTurn) -> None:
        i = rec.index
        if rec.status == "error" and now.status == "error":
            recorded_kind, now_kind = (rec.error or "").split(":")[0], (now.error or "").split(":")[0]
            self.check(i, "turn error", recorded_kind, now_kind)
            return
        if rec.status != "ok":
            # Interrupted from outside the graph (a crash, a cancelled chat, a failing UI hook): there is no
            # recorded outcome to compare; the replay ran the turn so the thread reaches the same state.
            why = rec.error or "the process stopped before the turn ended"
            self.note(
                i, f"not compared: the recorded turn did not finish ({short(why, 120)}); replay: {turn_state(now)}"
            )
            return
        if now.status != "ok":
            self.diff(i, "turn status", "ok", f"{now.status} {now.error or ''}".strip())
            return
        ro, no = rec.outcome, now.outcome
        if ro is None or no is None:
            if (ro is None) != (no is None):
                self.diff(i, "turn outcome", "recorded" if ro else "missing", "recorded" if no else "missing")
            return
        if ro.route or no.route:
            for name in ("intent", "subject", "change"):
                self.check(i, f"route {name}", getattr(ro.route, name, None), getattr(no.route, name, None))
        rp, np_ = ro.plan_record, no.plan_record
        self.check(i, "plan mutation", rp.mutation if rp else None, np_.mutation if np_ else None)
        self.check(i, "plan description", rp.description if rp else None, np_.description if np_ else None)
        self.check(
            i,
            "failed stages",
            [f"{f.stage}/{f.kind}" for f in ro.failures],
            [f"{f.stage}/{f.kind}" for f in no.failures],
        )
        if [f.stage for f in ro.failures] != [f.stage for f in no.failures] and no.failures:
            self.note(i, "replay failure messages: " + " | ".join(short(f.message) for f in no.failures))
        self.check(i, "overall verdict", ro.verdict, no.verdict)
        self.check(i, "approval requested", ro.pending is not None, no.pending is not None)
        if ro.pending and no.pending:
            self.check(i, "approval models", dict(ro.pending.models), dict(no.pending.models))
        self._models(i, ro.models, no.models)
        self._publication(rec, now)
        self._affected(i, ro.affected_models, no.affected_models)

    def _publication(self, rec: TraceTurn, now: TraceTurn) -> None:
        assert rec.outcome is not None and now.outcome is not None
        rp, np_ = rec.outcome.publication, now.outcome.publication
        if np_ is not None and skipped(np_.message):
            self.notes.append(
                f"turn {rec.index}: the recorded decision was replayed; publication {REPLAY_SKIPPED} "
                f"(recorded: {rp.status if rp else 'none'})"
            )
            return
        self.check(rec.index, "publication status", rp.status if rp else None, np_.status if np_ else None)

    def _models(self, i: int, recorded: list[ModelOutcome], now: list[ModelOutcome]) -> None:
        by_urn = {m.urn: m for m in now}
        for rec in recorded:
            cur = by_urn.pop(rec.urn, None)
            if cur is None:
                self.diff(i, f"model {rec.name} ({rec.urn})", f"tested, {rec.verdict}", "not tested")
                continue
            subject = f"model {rec.name}"
            self.check(i, f"{subject} · verdict", str(rec.verdict), str(cur.verdict))
            if rec.task is not None:  # traces recorded before tasks have none; their metrics say "binary"
                self.check(i, f"{subject} · task", rec.task, cur.task)
            self.check(i, f"{subject} · reasons", [r.code for r in rec.reasons], [r.code for r in cur.reasons])
            if rec.verdict != cur.verdict:
                worst = [r.message for r in cur.reasons if r.severity == cur.verdict]
                if worst:
                    self.note(i, f"{rec.name} is {cur.verdict} now because: {short(worst[0], 300)}")
            self._metrics(i, subject, rec.metrics, cur.metrics)
            if rec.binding or cur.binding:
                for name in (
                    "artifact_path",
                    "artifact_sha256_expected",
                    "eval_data_path",
                    "eval_data_sha256",
                    "label_column",
                    "decision_threshold",
                ):
                    self.check(
                        i,
                        f"{subject} · binding {name}",
                        getattr(rec.binding, name, None),
                        getattr(cur.binding, name, None),
                    )
        for cur in by_urn.values():
            self.diff(i, f"model {cur.name} ({cur.urn})", "not in the recording", f"tested, {cur.verdict}")

    def _metrics(self, i: int, subject: str, rec: ModelMetrics | None, cur: ModelMetrics | None) -> None:
        if rec is None or cur is None:
            if (rec is None) != (cur is None):
                self.diff(i, f"{subject} · metrics", "measured" if rec else "none", "measured" if cur else "none")
            return
        self._tree(i, subject, "", rec.model_dump(), cur.model_dump())

    def _tree(self, i: int, subject: str, path: str, rec: Any, cur: Any) -> None:
        """Every metric down to its leaves, so a task's nested numbers (``regression.mae_delta``,
        ``segments.worst.p_adjusted``, ``multiclass.per_class_flip_rate.high``) get the float tolerance and are
        named on their own; a list whose length changed is one difference."""
        if isinstance(rec, dict) and isinstance(cur, dict):
            for key in [*rec, *(k for k in cur if k not in rec)]:
                self._tree(i, subject, f"{path}.{key}" if path else str(key), rec.get(key), cur.get(key))
        elif isinstance(rec, list) and isinstance(cur, list) and len(rec) == len(cur):
            for n, (a, b) in enumerate(zip(rec, cur, strict=True)):
                self._tree(i, subject, f"{path}[{n}]", a, b)
        else:
            self.check(i, f"{subject} · metric {path}", rec, cur)

    def _affected(self, i: int, recorded: list[AffectedModelRecord], now: list[AffectedModelRecord]) -> None:
        by_urn = {m.urn: m for m in now}
        changes: list[str] = []
        for rec in recorded:
            cur = by_urn.pop(rec.urn, None)
            if cur is None:
                changes.append(f"downstream model {rec.name} ({rec.urn}) no longer depends on the field")
                continue
            if rec.production != cur.production:
                changes.append(
                    f"{rec.name}: production {rec.production} → {cur.production} ({cur.production_evidence})"
                )
            for what, old, new in (("tag", rec.tags, cur.tags), ("owner", rec.owners, cur.owners)):
                for added in sorted(set(new) - set(old)):
                    changes.append(f"{rec.name}: {what} added {added}")
                for removed in sorted(set(old) - set(new)):
                    changes.append(f"{rec.name}: {what} removed {removed}")
            for key in sorted(set(rec.custom_properties) | set(cur.custom_properties)):
                old_value, new_value = rec.custom_properties.get(key), cur.custom_properties.get(key)
                if old_value != new_value:
                    changes.append(f"{rec.name}: property {key} {fmt(old_value)} → {fmt(new_value)}")
        for cur in by_urn.values():
            status = f"production ({cur.production_evidence})" if cur.production else "not in production"
            changes.append(f"new downstream model {cur.name} ({cur.urn}), {status}")
        if not changes:
            return
        for text in changes:
            if self.live:
                self.change(i, text)
            else:  # the catalog answers were the recorded ones: a different reading is a code change
                self.diff(i, "lineage reading", "as recorded", text)

    def calls(self, i: int, recorded: list[ToolCallRecord], now: list[ToolCallRecord], *, publishing: bool) -> None:
        """`--live`: which catalog answers differ from the recorded ones (first call per tool + arguments)."""
        first_recorded: dict[str, ToolCallRecord] = {}
        for record in recorded:
            first_recorded.setdefault(call_key(record.tool, record.arguments), record)
        seen: set[str] = set()
        lines: list[str] = []
        for record in now:
            key = call_key(record.tool, record.arguments)
            if key in seen:
                continue
            seen.add(key)
            old = first_recorded.get(key)
            if old is None:
                lines.append(f"new catalog call: {short(key)}")
            elif old.ok != record.ok or old.result != record.result:
                paths = json_paths(old.result, record.result)
                lines.append(f"catalog answer changed: {short(key, 100)} at {', '.join(paths)}")
        if not publishing:  # the publication's own reads are skipped with it
            lines += [
                f"catalog call no longer made: {short(key)}"
                for key, record in first_recorded.items()
                if key not in seen and record.tool not in WRITE_TOOLS
            ]
        if len(lines) > _MAX_CALL_DIFFS:
            lines = [*lines[:_MAX_CALL_DIFFS], f"… and {len(lines) - _MAX_CALL_DIFFS} more catalog call difference(s)"]
        for line in lines:
            self.change(i, line)


def json_paths(a: Any, b: Any, path: str = "", limit: int = 3) -> list[str]:
    """Up to `limit` JSON paths where two answers differ (e.g. `.downstreams[0].urn`, in sorted key order).

    Plain equality, as for the whole answers: 1 == 1.0 == True, a missing key equals null, and a list whose
    length changed is one difference at its own path. Kept by hand: DeepDiff reports each of these otherwise.
    """
    out: list[str] = []

    def walk(x: Any, y: Any, where: str) -> None:
        if len(out) >= limit or x == y:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for key in sorted(set(x) | set(y), key=str):
                walk(x.get(key), y.get(key), f"{where}.{key}")
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for n, (u, v) in enumerate(zip(x, y, strict=True)):
                walk(u, v, f"{where}[{n}]")
        else:
            out.append(where or "(root)")

    walk(a, b, path)
    return out
