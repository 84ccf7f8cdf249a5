"""What the chat shows, kept apart from Chainlit so it can be tested without a browser.

`chainlit_app.py` only wires UI events; everything it renders comes from here: the chat's local setup (login,
auth secret, history database), one step per graph node, the verdict card, and the publication result.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
import sqlite3
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.state import ApprovalRequest
from policies.engine import Verdict
from tools.evidence.schema import Evidence, ModelEvidence, PublicationRecord, StageFailure
from tools.evidence.store import EVIDENCE_FILE, REPORT_FILE, runs_dir
from tools.experiment.metrics import ModelMetrics

CHAT_USER = "provenance"
PASSWORD_ENV = "PROVENANCE_CHAT_PASSWORD"
DEFAULT_PASSWORD = "provenance"
AUTH_SECRET_ENV = "CHAINLIT_AUTH_SECRET"
SECRET_FILE = "chainlit-secret"
CHAT_DB = "chat.db"

DEMO_QUESTION = "What happens if payments.transactions.amount is sent in cents instead of dollars?"
STARTERS: tuple[tuple[str, str], ...] = (
    ("Dollars → cents: what breaks?", DEMO_QUESTION),
    ("What depends on this field?", "What depends on payments.transactions.amount?"),
    ("Who owns the transactions table?", "Who owns payments.public.transactions?"),
    ("Latest verdict for fraud_detector", "What is the latest verdict for fraud_detector?"),
)
"""(label, message) pairs offered on an empty chat."""

VERDICT_ICONS = {Verdict.PASS: "✅", Verdict.WARNING: "⚠️", Verdict.BLOCK: "⛔", Verdict.INCOMPLETE: "❔"}
CATALOG_ERRORS = ("CatalogError", "CatalogToolError")  # how `captured` nodes label an unreachable catalog

# --- local setup ---------------------------------------------------------------------------------------------

# The Chainlit SQLAlchemy data layer does not create its schema; this is its SQLite form (quoted camelCase).
CHAT_DDL = """
CREATE TABLE IF NOT EXISTS users ("id" TEXT PRIMARY KEY, "identifier" TEXT NOT NULL UNIQUE,
  "metadata" TEXT NOT NULL, "createdAt" TEXT);
CREATE TABLE IF NOT EXISTS threads ("id" TEXT PRIMARY KEY, "createdAt" TEXT, "name" TEXT,
  "userId" TEXT, "userIdentifier" TEXT, "tags" TEXT, "metadata" TEXT,
  FOREIGN KEY ("userId") REFERENCES users("id") ON DELETE CASCADE);
CREATE TABLE IF NOT EXISTS steps ("id" TEXT PRIMARY KEY, "name" TEXT NOT NULL, "type" TEXT NOT NULL,
  "threadId" TEXT NOT NULL, "parentId" TEXT, "streaming" BOOLEAN NOT NULL, "waitForAnswer" BOOLEAN,
  "isError" BOOLEAN, "metadata" TEXT, "tags" TEXT, "input" TEXT, "output" TEXT, "createdAt" TEXT,
  "command" TEXT, "modes" TEXT, "start" TEXT, "end" TEXT, "generation" TEXT, "showInput" TEXT,
  "language" TEXT, "indent" INT, "defaultOpen" BOOLEAN, "autoCollapse" BOOLEAN, "icon" TEXT,
  FOREIGN KEY ("threadId") REFERENCES threads("id") ON DELETE CASCADE);
CREATE TABLE IF NOT EXISTS elements ("id" TEXT PRIMARY KEY, "threadId" TEXT, "type" TEXT, "url" TEXT,
  "chainlitKey" TEXT, "name" TEXT NOT NULL, "display" TEXT, "objectKey" TEXT, "size" TEXT,
  "page" INT, "language" TEXT, "forId" TEXT, "path" TEXT, "mime" TEXT, "props" TEXT, "autoPlay" BOOLEAN,
  "playerConfig" TEXT, FOREIGN KEY ("threadId") REFERENCES threads("id") ON DELETE CASCADE);
CREATE TABLE IF NOT EXISTS feedbacks ("id" TEXT PRIMARY KEY, "forId" TEXT NOT NULL, "threadId" TEXT NOT NULL,
  "value" INT NOT NULL, "comment" TEXT, FOREIGN KEY ("threadId") REFERENCES threads("id") ON DELETE CASCADE);
"""


def init_chat_db(home: Path) -> Path:
    """Create (idempotently) the chat history database $PROVENANCE_HOME/chat.db and return its path."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / CHAT_DB
    with sqlite3.connect(path) as conn:
        conn.executescript(CHAT_DDL)
    conn.close()
    return path


def ensure_auth_secret(home: Path, env: MutableMapping[str, str] | None = None) -> str:
    """Chainlit signs login tokens with CHAINLIT_AUTH_SECRET. Keep a set one; else reuse or create
    $PROVENANCE_HOME/chainlit-secret (mode 0600), so logins survive restarts, and export it to `env`."""
    env = os.environ if env is None else env
    if secret := env.get(AUTH_SECRET_ENV, "").strip():
        return secret
    path = home / SECRET_FILE
    if not path.exists():
        home.mkdir(parents=True, exist_ok=True)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process created it first: use theirs
            pass
        else:
            with os.fdopen(descriptor, "w") as handle:
                handle.write(secrets.token_urlsafe(48) + "\n")
    secret = path.read_text().strip()
    if not secret:
        raise RuntimeError(f"{path} is empty; delete it to generate a new secret, or set {AUTH_SECRET_ENV}")
    env[AUTH_SECRET_ENV] = secret
    return secret


def check_login(username: str, password: str, env: Mapping[str, str] | None = None) -> bool:
    """The single local account: user `provenance`, password $PROVENANCE_CHAT_PASSWORD (default `provenance`)."""
    env = os.environ if env is None else env
    expected = env.get(PASSWORD_ENV) or DEFAULT_PASSWORD
    user_ok = hmac.compare_digest(username.encode(), CHAT_USER.encode())
    return hmac.compare_digest(password.encode(), expected.encode()) and user_ok


# --- one step per graph node ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StepView:
    name: str
    input: str
    output: str
    is_error: bool = False


class StepNarrator:
    """Turns each node's state update into a step: what the node worked on (from earlier updates of the same
    turn) and what it produced. One narrator per turn, told what the turn starts from: `question=` for a new
    question, `run_id=` when resuming an approval."""

    def __init__(self, **known: Any) -> None:
        self.state: dict[str, Any] = dict(known)

    def view(self, node: str, update: Mapping[str, Any]) -> StepView | None:
        if node == "experiment":  # the subgraph's merged output repeats experiment.measure and experiment.judge
            return None
        before, self.state = self.state, {**self.state, **update}
        new_failures = [f for f in update.get("failures") or [] if f not in (before.get("failures") or [])]
        output = _OUTPUTS.get(node, _no_output)(update)
        if new_failures:
            output = "\n".join([*(f"{f.stage} failed: {f.message}" for f in new_failures), output]).strip()
        return StepView(
            name=node,
            input=_INPUTS.get(node, _no_output)(before),
            output=output or "(no change)",
            is_error=bool(new_failures),
        )


def _no_output(_: Mapping[str, Any]) -> str:
    return ""


def _route(update: Mapping[str, Any]) -> str:
    route = update.get("route")
    if route is None:
        return ""
    parts = [f"intent: {route.intent}", f"subject: {route.subject or '-'}"]
    return " · ".join(parts + ([f"change: {route.change}"] if route.change else []))


def _field(state: Mapping[str, Any]) -> str:
    ctx = state.get("field_context")
    return f"{ctx.dataset_urn} · field {ctx.field} ({ctx.field_type})" if ctx else ""


def _discovery(update: Mapping[str, Any]) -> str:
    found = update.get("discovery")
    if found is None:
        return ""
    lines = [f"{len(found.features)} feature(s), {len(found.models)} model(s); lineage precision {found.precision}"]
    for model in found.models:
        lines.append(f"- {model.name}: {'production' if model.production else 'not in production'}")
    return "\n".join(lines)


def _plan(update: Mapping[str, Any]) -> str:
    record, plan = update.get("plan_record"), update.get("plan")
    if record is not None:
        return f"{record.description} (planner: {record.planner})\n{record.rationale}".strip()
    return f"refused: {plan.refusal}" if plan is not None and plan.refusal else ""


def _measured(update: Mapping[str, Any]) -> str:
    return "\n".join(f"- {m.name}: {_metrics_line(m.metrics)}" for m in update.get("model_results") or [])


def _judged(update: Mapping[str, Any]) -> str:
    if (verdict := update.get("verdict")) is None:
        return ""
    return "\n".join([f"verdict: {verdict}", *(f"- {reason}" for reason in update.get("verdict_reasons") or [])])


def _publication(update: Mapping[str, Any]) -> str:
    if (record := update.get("publication")) is None:
        return ""
    return f"{record.status}: {record.message}" if record.message else str(record.status)


def _approval(update: Mapping[str, Any]) -> str:
    decision = update.get("approval")
    return f"{decision.decision} by {decision.by}" if decision else ""


def _plan_input(state: Mapping[str, Any]) -> str:
    route = state.get("route")
    change = route.change if route is not None and route.change else state.get("question", "")
    return f"{change} · {_field(state)}"


_INPUTS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "route": lambda s: str(s.get("question", "")),
    "catalog_qa": _route,
    "gather_context": _route,
    "discover": _field,
    "plan": _plan_input,
    "experiment.measure": lambda s: s["plan_record"].description if s.get("plan_record") else "",
    "experiment.judge": _measured,
    "write_evidence": _judged,
    "approval": lambda s: f"run {s['run_id']}" if s.get("run_id") else "",
    "publish": lambda s: f"run {s.get('run_id') or '?'}, {_approval(s)}",
}
_OUTPUTS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "route": _route,
    "catalog_qa": lambda u: str(u.get("answer", "")),
    "gather_context": _field,
    "discover": _discovery,
    "plan": _plan,
    "experiment.measure": _measured,
    "experiment.judge": _judged,
    "write_evidence": lambda u: f"run {u['run_id']}: evidence.json, report.md and plots" if u.get("run_id") else "",
    "approval": lambda u: "\n".join(filter(None, [_approval(u), _publication(u)])),
    "publish": _publication,
    "respond": lambda u: str(u.get("answer", "")),
}


# --- messages ------------------------------------------------------------------------------------------------


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|:~$])")


def plain(text: str) -> str:
    """Plain text shown verbatim in Markdown: punctuation escaped (the chat renders `:name` as a directive, so
    URNs would lose their parts), line breaks and indentation kept."""
    lines = [_MARKDOWN_SPECIAL.sub(r"\\\1", line) for line in text.strip("\n").splitlines()]
    return "  \n".join("\u00a0" * (len(line) - len(line.lstrip(" "))) + line.lstrip(" ") for line in lines)


def answer_markdown(values: Mapping[str, Any]) -> str:
    """A finished turn's answer; an unreachable catalog is said plainly before the agent's own words."""
    answer = plain(str(values.get("answer") or "I have no answer for that."))
    failures: list[StageFailure] = values.get("failures") or []
    if any(f.message.startswith(CATALOG_ERRORS) for f in failures):
        return f"**The DataHub catalog could not be reached.**\n\n{answer}"
    return answer


def catalog_error_markdown(error: Exception) -> str:
    return f"**The DataHub catalog could not be reached.** {plain(str(error))}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _num(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


def _metrics_line(m: ModelMetrics | None) -> str:
    if m is None:
        return "not measured"
    return f"flips {_pct(m.flip_rate)}, ΔAUC {_num(m.auc_delta, '+.3f')}, PSI {_num(m.psi, '.2f')}, " + (
        f"failures {_pct(m.failure_rate)}"
    )


def _metrics_row(model: ModelEvidence) -> str:
    m = model.metrics
    head = f"| {plain(model.name)} | {VERDICT_ICONS[model.verdict]} {model.verdict} |"
    if m is None:
        return head + " not measured | | | | |"
    flips = f"{_pct(m.flip_rate)} ({_pct(m.flip_rate_ci_low)} – {_pct(m.flip_rate_ci_high)})"
    auc = f"{_num(m.auc_baseline)} → {_num(m.auc_mutated)}"
    delta = f"{_num(m.auc_delta, '+.3f')} ({_num(m.auc_delta_ci_low, '+.3f')} to {_num(m.auc_delta_ci_high, '+.3f')})"
    p_value = _num(m.auc_p_value, ".2g")
    return f"{head} {flips} | {auc} | {delta}, p = {p_value} | {_num(m.psi, '.2f')} | {_pct(m.failure_rate)} |"


def run_files(home: Path, evidence: Evidence) -> tuple[list[Path], Path, Path]:
    """(plots, evidence.json, report.md) of a run folder; plots that are missing on disk are left out."""
    folder = runs_dir(home) / evidence.run_id
    plots = [folder / name for model in evidence.models for name in model.plots.values()]
    return [p for p in plots if p.is_file()], folder / EVIDENCE_FILE, folder / REPORT_FILE


def verdict_card(home: Path, evidence: Evidence, request: ApprovalRequest | None = None) -> str:
    """Markdown: overall and per-model verdicts, metrics with 95% intervals, the reasons, the evidence paths
    and, when approval is pending, exactly what approving would write."""
    req = evidence.request
    dataset = req.dataset_urn.split(",")[1] if req.dataset_urn.count(",") >= 2 else req.dataset_urn
    confidence = next((m.metrics.confidence for m in evidence.models if m.metrics), 0.95)
    lines = [
        f"## {VERDICT_ICONS[evidence.verdict]} Verdict: {evidence.verdict}",
        f"**Change tested:** {plain(evidence.plan.description)} on `{dataset}.{req.field}` "
        f"· policy {plain(evidence.policy.name)} v{evidence.policy.version} · run `{evidence.run_id}`",
    ]
    if evidence.models:
        lines += [
            "",
            f"| Model | Verdict | Flip rate ({confidence:.0%} CI) | AUC before → after | ΔAUC ({confidence:.0%} CI) "
            "| Score PSI | Failed rows |",
            "|---|---|---|---|---|---|---|",
            *(_metrics_row(model) for model in evidence.models),
        ]
    reasons = [
        f"- **{plain(model.name)}** {reason.severity}: {plain(reason.message)}"
        for model in evidence.models
        for reason in model.reasons
        if reason.severity != Verdict.PASS
    ] or [f"- {plain(reason)}" for reason in evidence.verdict_reasons]
    lines += ["", "**Why**", *reasons]
    if evidence.not_tested:
        lines += ["", "**Not tested**", *(f"- {plain(n.name)}: {plain(n.reason)}" for n in evidence.not_tested)]
    if evidence.failures:
        lines += ["", "**Failures**", *(f"- {f.stage}: {plain(f.message)}" for f in evidence.failures)]
    if evidence.coverage is not None:
        lines += ["", "**Coverage**", *(f"- {plain(line)}" for line in evidence.coverage.lines())]
    _, evidence_json, report = run_files(home, evidence)
    lines += ["", f"**Evidence:** `{evidence_json}` · **Report:** `{report}`"]
    if request is not None:
        lines += ["", "**Approving writes to DataHub:**", *(f"- {plain(write)}" for write in request.writes)]
    return "\n".join(lines)


APPROVAL_QUESTION = "Publish this verdict to DataHub (tag and impact document)?"


def publication_markdown(record: PublicationRecord | None) -> str:
    if record is None or record.status == "not_requested":
        return "Nothing was published."
    if record.status == "published":
        tags = ", ".join(f"`{tag}` on `{urn}`" for urn, tag in record.tags.items())
        return f"**Published** by {plain(record.decided_by or 'unknown')}: {tags}; document `{record.document_urn}`."
    if record.status == "rejected":
        return f"**Rejected** by {plain(record.decided_by or 'unknown')}: nothing was written to DataHub."
    if record.status == "failed":
        return (
            f"**Publication failed:** {plain(record.message or 'no reason recorded')}. `provenance publish` retries it."
        )
    return f"Publication {record.status}."


REPLAY_COMMAND = "/replay"


def replay_argument(text: str) -> str | None:
    """`/replay` → "" (list traces), `/replay <trace id or path>` → that reference, anything else → None."""
    stripped = text.strip()
    if stripped != REPLAY_COMMAND and not stripped.startswith(REPLAY_COMMAND + " "):
        return None
    return stripped[len(REPLAY_COMMAND) :].strip()


async def replay_markdown(reference: str, home: Path) -> str:
    """The chat's answer to `/replay`: a list of past traces, or the replay comparison of one."""
    from agent.replay import areplay_trace
    from agent.traces import TraceError, list_traces
    from tools.settings import ProvenanceSettings

    if not reference:
        listings = list_traces(home)[-10:]
        if not listings:
            return "No saved conversations yet."
        lines = ["Recent conversations — replay one with `/replay <trace id>`:"]
        for listing in reversed(listings):
            if listing.trace is None:
                lines.append(f"- `{listing.path.stem}`: unreadable ({listing.error})")
                continue
            questions = [t.input.question for t in listing.trace.turns if t.input.question]
            lines.append(f"- `{listing.trace.trace_id}` — {plain(questions[0] if questions else '(no question)')}")
        return "\n".join(lines)
    try:
        report = await areplay_trace(reference, ProvenanceSettings(provenance_home=home))
    except TraceError as exc:
        return f"Cannot replay `{plain(reference)}`: {plain(str(exc))}"
    verdict = "reproduced" if report.reproduced else "NOT reproduced"
    return f"**Replay {verdict}** (offline, nothing written)\n\n```\n{report.render()}\n```"
