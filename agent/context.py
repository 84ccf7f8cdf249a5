"""Runtime dependencies of the graph: settings, the planner, the catalog handle, the policy and the executor.

The chat model is injected (never created at import); the catalog is opened on first use (tools/catalog/handle.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.planning.planner import DeterministicPlanner, Planner
from policies import LoadedPolicy, load_policy
from tools.catalog.handle import CatalogHandle
from tools.runtime.executor import ExperimentExecutor, make_executor, shared_executor
from tools.settings import ProvenanceSettings, load_settings


@dataclass
class AgentContext:
    settings: ProvenanceSettings = field(default_factory=load_settings)
    planner: Planner = field(default_factory=DeterministicPlanner)
    policy: LoadedPolicy = field(default_factory=load_policy)
    catalog: CatalogHandle | None = None
    executor: ExperimentExecutor | None = None
    """Runs the experiment's CPU-bound jobs off the event loop; closed with the session (`open_session`)."""
    long_lived: bool = False
    """A server serving many turns (the chat): PROVENANCE_EXECUTOR=auto then means worker processes."""
    owns_executor: bool = True
    """False when the executor is the process's shared one (tools/runtime/executor.py::share_executor), which the
    context must not close."""

    def __post_init__(self) -> None:
        if self.catalog is None:
            self.catalog = CatalogHandle(self.settings)
        if self.executor is None:
            self.executor = shared_executor()
            self.owns_executor = self.executor is None
        if self.executor is None:
            self.executor = make_executor(self.settings.executor_kind(self.long_lived), self.settings.workers)

    @property
    def handle(self) -> CatalogHandle:
        assert self.catalog is not None  # set in __post_init__
        return self.catalog

    @property
    def jobs(self) -> ExperimentExecutor:
        assert self.executor is not None  # set in __post_init__
        return self.executor

    async def close_jobs(self) -> None:
        """Close the executor, unless it is the process's shared one (its owner closes that)."""
        if self.owns_executor:
            await self.jobs.aclose()
