"""The catalog of a process: opened on first use, kept open, reopened after its MCP server died; and the writer
sessions that publication opens after approval.

One reader MCP session (mutations off) serves every turn, as docs/design.md §3 asks. Writing takes a second,
short-lived MCP session that only the publish step opens.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cached_property

from tools.catalog.calls import ToolCallRecord, calls_of_this_run
from tools.catalog.connection import Catalog, open_catalog, open_writer
from tools.catalog.datahub import CatalogReader, CatalogWriter
from tools.catalog.lineage_walk import Discoverer
from tools.catalog.mlflow_live import LiveRegistry
from tools.catalog.session import WriterSession
from tools.runtime.held import HeldContext
from tools.settings import ProvenanceSettings

log = logging.getLogger(__name__)
_RUNS_KEPT = 32  # runs whose Discoverer is kept: more than a chat process runs at once


class CatalogHandle:
    """Opens the catalog (embedded endpoint + reader MCP server, or a real GMS) on first use and keeps it open.

    The reader's MCP server runs with mutations off. `writer()` starts a second MCP server (mutations on) against
    the same endpoint for one publication; `release_writer` (or leaving `writing()`) stops it.
    """

    def __init__(self, settings: ProvenanceSettings) -> None:
        self.settings = settings
        self._catalog: Catalog | None = None
        self._held: HeldContext[Catalog] | None = None
        self._writers: dict[CatalogWriter, HeldContext[WriterSession]] = {}
        self._lock = asyncio.Lock()
        self._discoverers: dict[int, tuple[list[ToolCallRecord], Catalog, Discoverer]] = {}

    async def get(self) -> Catalog:
        async with self._lock:
            owner_gone = self._held is not None and self._held.ended  # the catalog's context has exited
            if self._catalog is not None and (self._catalog.session.lost or owner_gone):
                # The MCP server died: the turn that saw it failed; later turns get a fresh catalog.
                why = self._catalog.session.lost or "the MCP session ended"
                log.warning("catalog connection lost (%s); reopening", why)
                try:
                    await self._release()
                except Exception as exc:  # closing a dead transport may complain; the new one matters
                    log.debug("closing the lost catalog: %s", exc)
            if self._catalog is None:
                held = HeldContext(lambda: open_catalog(self.settings), "provenance-catalog")
                self._catalog = await held.open()
                self._held = held
            return self._catalog

    async def reader(self) -> CatalogReader:
        return CatalogReader((await self.get()).session)

    @cached_property
    def registry(self) -> LiveRegistry | None:
        """The MLflow registry MLFLOW_TRACKING_URI names (None when unset), loaded once per handle."""
        return LiveRegistry.from_environment()

    async def discoverer(self) -> Discoverer:
        """The catalog's one face for names, fields and lineage: one per run (the turn or assessment whose calls
        are being collected, tools/catalog/calls.py), shared by that run's nodes with its answers, so no call is
        repeated; another run, even at the same time, gets its own and sees the catalog as it is then. The MLflow
        registry is loaded once per handle."""
        catalog = await self.get()
        run = calls_of_this_run()
        kept = self._discoverers.get(id(run)) if run is not None else None
        if kept is not None and kept[0] is run and kept[1] is catalog:
            return kept[2]
        discoverer = Discoverer(CatalogReader(catalog.session, remember=run is not None), registry=self.registry)
        if run is not None:
            self._discoverers[id(run)] = (run, catalog, discoverer)
            while len(self._discoverers) > _RUNS_KEPT:  # the oldest runs' are done
                self._discoverers.pop(next(iter(self._discoverers)))
        return discoverer

    async def writer(self) -> CatalogWriter:
        """Only the publish step asks for this, after approval: a writer over an MCP server of its own (mutations
        on) against the endpoint this handle reads from (an embedded endpoint is reused, not started again).
        Hand it back with `release_writer`; `writing()` does both."""
        catalog = await self.get()
        held = HeldContext(lambda: open_writer(catalog), "provenance-catalog-writer")
        session = await held.open()
        # One call log for reader and writer: the session's count sees the writes among the reads (each call is
        # also reported to the collectors of the run that made it, tools/catalog/calls.py).
        session.calls = catalog.session.calls
        writer = CatalogWriter(session)
        self._writers[writer] = held
        return writer

    async def release_writer(self, writer: CatalogWriter) -> None:
        """Stop the writer's MCP server. A server that already died may complain on the way out: logged only,
        so that the publication's own outcome is what the caller sees."""
        held = self._writers.pop(writer, None)
        if held is None:
            return
        try:
            await held.close()
        except Exception as exc:
            log.debug("closing the writer session: %s", exc)

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[CatalogWriter]:
        """A writer for the duration of the block (one publication)."""
        writer = await self.writer()
        try:
            yield writer
        finally:
            await self.release_writer(writer)

    @property
    def opened(self) -> Catalog | None:
        return self._catalog

    async def aclose(self) -> None:
        for writer in list(self._writers):  # before the reader: an embedded endpoint stops with it
            await self.release_writer(writer)
        await self._release()

    async def _release(self) -> None:
        held, self._held, self._catalog = self._held, None, None
        if held is not None:
            await held.close()

    async def __aenter__(self) -> CatalogHandle:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
