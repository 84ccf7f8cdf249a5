"""Runtime dependencies of the graph: settings, the planner, the catalog session and the policy.

The chat model is injected (never created at import). The catalog is opened lazily on first use and kept
for the process — one MCP session, as DESIGN §3 asks.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Protocol

from agent.schemas import ExperimentPlan, FieldContext, PlannerName, RouteDecision
from policies.engine import LoadedPolicy, load_policy
from tools.catalog.connection import Catalog, open_catalog
from tools.catalog.datahub import CatalogReader, CatalogWriter
from tools.settings import ProvenanceSettings, load_settings


class Planner(Protocol):
    name: PlannerName

    async def route(self, text: str) -> RouteDecision: ...

    async def plan(self, text: str, field: FieldContext) -> ExperimentPlan: ...


class DeterministicPlanner:
    name: PlannerName = "deterministic"

    async def route(self, text: str) -> RouteDecision:
        from agent.planning.deterministic import route

        return route(text)

    async def plan(self, text: str, field: FieldContext) -> ExperimentPlan:
        from agent.planning.deterministic import plan

        return plan(text, field)


class CatalogHandle:
    """Opens the catalog (embedded endpoint + MCP server, or a real GMS) on first use."""

    def __init__(self, settings: ProvenanceSettings) -> None:
        self.settings = settings
        self._stack = AsyncExitStack()
        self._catalog: Catalog | None = None

    async def get(self) -> Catalog:
        if self._catalog is None:
            self._catalog = await self._stack.enter_async_context(open_catalog(self.settings))
        return self._catalog

    async def reader(self) -> CatalogReader:
        return CatalogReader((await self.get()).session)

    async def writer(self) -> CatalogWriter:
        """Only the publish node asks for this, after approval."""
        return CatalogWriter((await self.get()).session)

    @property
    def opened(self) -> Catalog | None:
        return self._catalog

    async def aclose(self) -> None:
        self._catalog = None
        await self._stack.aclose()
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> CatalogHandle:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@dataclass
class AgentContext:
    settings: ProvenanceSettings = field(default_factory=load_settings)
    planner: Planner = field(default_factory=DeterministicPlanner)
    policy: LoadedPolicy = field(default_factory=load_policy)
    catalog: CatalogHandle | None = None

    def __post_init__(self) -> None:
        if self.catalog is None:
            self.catalog = CatalogHandle(self.settings)

    @property
    def handle(self) -> CatalogHandle:
        assert self.catalog is not None  # set in __post_init__
        return self.catalog
