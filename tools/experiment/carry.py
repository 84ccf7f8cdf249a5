"""The change each model's input column undergoes: the planned mutation carried along the lineage path.

A path whose every step is a recorded copy (or a dbt node and its table) passes the mutation as it is. A step with
an expression (tools/catalog/sql_source.py) derives it exactly (tools/transforms): `ratio = amount / insured_value`
turns "scale amount ×100" into "scale ratio ×100" on the same rows. A step whose transform is unknown, or an
expression the mutation cannot be carried through exactly, makes the model INCOMPLETE `non_identity_transform`
quoting it — never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.catalog.discovery import AffectedFeature
from tools.catalog.sql_source import step_expression
from tools.experiment.verify import Check, Verifier
from tools.mutations import Mutation
from tools.transforms.derive import compose, derive
from tools.transforms.expressions import ColumnExpression


@dataclass(frozen=True)
class Carried:
    """Per input column, the mutation it undergoes and how it was derived; `unchanged` lists the columns the
    change provably cannot alter; `refusal` is set when some link cannot be carried exactly."""

    mutations: dict[str, Mutation]
    explanations: list[str]
    unchanged: list[str]
    refusal: str | None = None


def carry(mutation: Mutation, links: list[AffectedFeature], verifier: Verifier | None = None) -> Carried:
    verifier = verifier or Verifier.from_environment()
    mutations: dict[str, Mutation] = {}
    explanations: list[str] = []
    unchanged: list[str] = []
    for link in links:
        via = f"feature {link.name}" if link.link == "feature" else f"training run {link.urn}"
        if link.non_identity_transforms:
            return Carried(
                {},
                explanations,
                unchanged,
                f"the field reaches {link.column} ({via}) through transform(s) "
                f"{', '.join(link.non_identity_transforms)}; the mutation cannot be propagated faithfully",
            )
        steps = [(step_expression(s), s.expression_input) for s in link.path[1:] if s.expression is not None]
        derived = compose(mutation, [(e, src) for e, src in steps if src is not None])
        if derived.refused:
            return Carried({}, explanations, unchanged, f"{link.column} ({via}): {derived.explanation}")
        checked = _checked(mutation, [(e, src) for e, src in steps if src is not None], verifier)
        if checked is not None and not checked.agrees:
            return Carried({}, explanations, unchanged, f"{link.column} ({via}): {checked.said}")
        if steps:
            explanations.append(derived.explanation + (f" ({checked.said})" if checked is not None else ""))
        if derived.unchanged or derived.mutation is None:
            unchanged.append(link.column)
            continue
        known = mutations.get(link.column)
        if known is not None and known != derived.mutation:
            return Carried(
                {},
                explanations,
                unchanged,
                f"two lineage paths reach {link.column} with different changes "
                f"({known.describe(link.column)}; {derived.mutation.describe(link.column)})",
            )
        mutations[link.column] = derived.mutation
    unchanged = [c for c in dict.fromkeys(unchanged) if c not in mutations]
    return Carried(mutations, list(dict.fromkeys(explanations)), unchanged)


def _checked(
    mutation: Mutation, steps: list[tuple[ColumnExpression, tuple[str, str]]], verifier: Verifier
) -> Check | None:
    """Each hop's derivation run in the warehouse (verify.py); the first disagreement, else what was checked."""
    said: list[str] = []
    current: Mutation | None = mutation
    for expression, source in steps:
        if current is None:
            break
        step = derive(current, expression, source)
        outcome = None if step.unchanged else step.mutation
        check = verifier.check(current, expression, source, outcome)
        if not check.agrees:
            return check
        said.append(check.said)
        current = outcome
    return Check(True, "; ".join(dict.fromkeys(said))) if said else None
