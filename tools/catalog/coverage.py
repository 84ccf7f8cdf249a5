"""What a discovery read, reached and could not read: the answer to "how sure is 'nothing depends on it'?"."""

from __future__ import annotations

from pydantic import BaseModel, computed_field


class ModelReach(BaseModel):
    urn: str
    name: str
    production: bool
    marker: str  # the production marker that matched, or why the model does not count as production
    links: list[str]  # how lineage reached it: "feature …", "training run … on … (matched by name)"


class Coverage(BaseModel):
    conventions_sha256: str = ""
    datasets_searched: list[str] = []
    mirrors: list[str] = []  # mirror-platform datasets standing for a searched table, and how they were tied
    siblings: list[str] = []  # dbt nodes and the tables they materialise, walked as one node, and how each was tied
    models_reached: list[ModelReach] = []
    not_linked: list[str] = []  # reached, but not through the changed column, and why
    unreadable: list[str] = []  # what could not be read; any entry makes the coverage incomplete

    @computed_field  # type: ignore[prop-decorator]
    @property
    def complete(self) -> bool:
        return not self.unreadable

    def lines(self) -> list[str]:
        """Plain-text lines for answers and reports."""
        out = [f"datasets searched: {len(self.datasets_searched)} ({', '.join(self.datasets_searched) or 'none'})"]
        out += [f"mirror: {m}" for m in self.mirrors]
        out += [f"sibling: {s}" for s in self.siblings]
        if self.models_reached:
            for reach in self.models_reached:
                status = "production" if reach.production else "not production"
                out.append(f"model reached: {reach.name} ({status}: {reach.marker}) via {'; '.join(reach.links)}")
        else:
            out.append("models reached: none")
        out += [f"not linked: {n}" for n in self.not_linked]
        out += [f"could not read: {u}" for u in self.unreadable]
        out.append("coverage: complete" if self.complete else "coverage: INCOMPLETE (see 'could not read')")
        return out
