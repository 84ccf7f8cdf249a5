"""Read-only answers from the catalog: dependents of a field, owners, latest verdict and document."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage

from agent.capabilities import CAPABILITIES
from agent.context import AgentContext
from agent.latest_run import latest_run
from agent.nodes.failures import Node, captured
from agent.schemas import Intent
from agent.state import AgentState
from tools.catalog.render import render_discovery
from tools.catalog.resolve import read_as, resolve_field, resolve_model
from tools.evidence.writeback import STATUS_TAG_PREFIX
from tools.runtime.lanes import interactive


def make_catalog_qa(ctx: AgentContext) -> Node:
    async def dependents(subject: str) -> str:
        discoverer = await ctx.handle.discoverer()
        pairs = await discoverer.resolve_subject(subject)  # a field, or a feature / feature view / feature service
        expanded = [line for d, f in pairs if (line := read_as(subject, d, f))]
        said = [f"({'; '.join(expanded)})"] if expanded else []
        return "\n\n".join([*said, *[render_discovery(await discoverer.discover(d, f)) for d, f in pairs]])

    async def owners(subject: str) -> str:
        reader = await ctx.handle.reader()
        if subject.startswith("urn:li:"):
            urn = subject
        elif "." in subject:
            dataset, field = await resolve_field(reader, subject + ".x")  # the subject names a dataset
            urn = dataset
        else:
            urn = await resolve_model(reader, subject)
        entity = await reader.get_entity(urn)
        if entity is None:
            return f"{urn} is not in the catalog."
        who = ", ".join(entity.owners) or "no owners recorded"
        return f"Owners of {entity.name or urn}: {who}"

    async def latest_verdict(subject: str) -> str:
        reader = await ctx.handle.reader()
        urn = await resolve_model(reader, subject)
        entity = await reader.get_entity(urn)
        if entity is None:
            return f"{urn} is not in the catalog."
        status = [t.removeprefix("urn:li:tag:") for t in entity.tags if t.startswith(STATUS_TAG_PREFIX)]
        documents = newest_first(entity.raw.get("relatedDocuments", {}).get("documents", []))
        published = status[0] if status else "none recorded"
        lines = [f"{entity.name}: latest published Provenance status (its tag in DataHub): {published}"]
        if documents:
            latest = documents[0]
            lines.append(f"  latest impact document: {(latest.get('info') or {}).get('title', latest['urn'])}")
            lines.append(f"    {latest['urn']}")
        if len(documents) > 1:
            lines.append(f"  {len(documents) - 1} earlier document(s) linked to this model")
        found = latest_run(ctx.settings.home, urn)
        if found.evidence is not None and found.model is not None:  # may be newer than what was published
            run = found.evidence
            lines.append(
                f"  latest run here: {found.model.verdict} ({run.run_id}, {run.plan.description}; publication "
                f"{run.publication.status})"
            )
        return "\n".join(lines)

    @captured("catalog_qa")
    async def catalog_qa(state: AgentState) -> dict[str, Any]:
        assert state.route is not None
        intent, subject = state.route.intent, state.route.subject
        with interactive():  # a person waits for this answer: not queued behind running assessments' discoveries
            answer = await answer_for(intent, subject)
        return {"answer": answer, "messages": [AIMessage(answer)]}

    async def answer_for(intent: Intent, subject: str | None) -> str:
        if intent in (Intent.HELP, Intent.UNKNOWN) or not subject:
            prefix = "" if intent == Intent.HELP else "I could not map that to something I can do. "
            answer = prefix + CAPABILITIES
        elif intent == Intent.DEPENDENTS:
            answer = await dependents(subject)
        elif intent == Intent.OWNERS:
            answer = await owners(subject)
        elif intent == Intent.LATEST_VERDICT:
            answer = await latest_verdict(subject)
        else:
            raise ValueError(f"catalog_qa cannot answer intent {intent}")
        return answer

    return catalog_qa


RUN_IN_TITLE = re.compile(r"\(run (\d{8}T\d{6}Z-[0-9a-f]+)\)$")  # tools/evidence/writeback.py's document_title


def newest_first(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Impact documents by the run in their title, newest first (run ids start with their UTC time); documents of
    another origin after them, in the catalog's order."""

    def run_id(document: dict[str, Any]) -> str:
        match = RUN_IN_TITLE.search((document.get("info") or {}).get("title") or "")
        return match.group(1) if match else ""

    return sorted(documents, key=run_id, reverse=True)
