"""The change each model's input column undergoes: the planned mutation carried along the lineage path.

A path whose every step is a recorded copy (or a dbt node and its table) passes the mutation as it is. A step with
an expression (tools/catalog/sql_source.py) derives it exactly (tools/transforms): `ratio = amount / insured_value`
turns "scale amount ×100" into "scale ratio ×100" on the same rows. Where the reading stops (an unknown transform, a
filter on the column, an expression no rule carries exactly), a configured warehouse re-runs the dataset's SQL with
the change applied and classifies what the column underwent (rerun.py); where it can re-run a derived change too,
it confirms it, and a disagreement makes the model INCOMPLETE citing both. Otherwise the model is INCOMPLETE
`non_identity_transform` quoting what stopped the reading — never a guess.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

import pandas as pd

from tools.catalog.discovery import AffectedFeature, LineageStep
from tools.catalog.sql_source import step_expression
from tools.experiment.rerun import Effect, Rerunner
from tools.experiment.verify import Check, Verifier
from tools.mutations import Mutation, PlanError, check_compatible
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


@dataclass(frozen=True)
class LinkOutcome:
    mutation: Mutation | None
    unchanged: bool
    explanation: str
    refusal: str | None = None


def _rerun(mutation: Mutation, path: list[LineageStep], column: str, rerunner: Rerunner) -> Effect | None:
    plan = path[-1].rerun if path else None
    if plan is None or rerunner.warehouse is None:
        return None
    return rerunner.effect(plan, mutation, path[0].column, column)


def derive_link(
    mutation: Mutation,
    path: list[LineageStep],
    column: str,
    unknown: list[str],
    verifier: Verifier,
    rerunner: Rerunner,
) -> LinkOutcome:
    """What `column` (the end of `path`) undergoes: read from the SQL, or re-run in the warehouse where the reading
    stops (`unknown`: the steps no reading carries), or refused saying why."""
    if unknown:
        stopped = f"through transform(s) {', '.join(unknown)}; the mutation cannot be propagated faithfully"
        return _from_rerun(mutation, path, column, rerunner, stopped)
    steps = [(step_expression(s), s.expression_input) for s in path[1:] if s.expression is not None]
    known = [(e, src) for e, src in steps if src is not None]
    derived = compose(mutation, known)
    if derived.refused:
        return _from_rerun(mutation, path, column, rerunner, derived.explanation)
    checked = _checked(mutation, known, verifier)
    if checked is not None and not checked.agrees:
        return LinkOutcome(None, False, "", checked.said)
    explanation = derived.explanation + (f" ({checked.said})" if checked is not None else "") if steps else ""
    plan = path[-1].rerun if path else None
    if steps and plan is not None and rerunner.warehouse is not None:
        check = rerunner.explains(plan, mutation, path[0].column, column, derived.mutation)
        if not check.agrees:
            said = "unchanged" if derived.mutation is None else derived.mutation.describe(column)
            return LinkOutcome(None, False, "", f"the SQL reading says {said}, but the warehouse: {check.said}")
        explanation += f"; {check.said}"
    if derived.unchanged or derived.mutation is None:
        return LinkOutcome(None, True, explanation)
    return LinkOutcome(derived.mutation, False, explanation)


def _from_rerun(mutation: Mutation, path: list[LineageStep], column: str, rerunner: Rerunner, why: str) -> LinkOutcome:
    effect = _rerun(mutation, path, column, rerunner)
    if effect is None:
        return LinkOutcome(None, False, "", why)
    if effect.refused:
        return LinkOutcome(None, False, "", f"{why}; {effect.said}")
    note = f"{effect.said} (where the SQL reading stopped: {why})"
    return LinkOutcome(effect.mutation, effect.unchanged, note)


def carry(
    mutation: Mutation,
    links: list[AffectedFeature],
    verifier: Verifier | None = None,
    rerunner: Rerunner | None = None,
) -> Carried:
    verifier = verifier or Verifier.from_environment()
    rerunner = rerunner or Rerunner(verifier.warehouse)
    mutations: dict[str, Mutation] = {}
    explanations: list[str] = []
    unchanged: list[str] = []
    for link in links:
        via = f"feature {link.name}" if link.link == "feature" else f"training run {link.urn}"
        outcome = derive_link(mutation, link.path, link.column, link.non_identity_transforms, verifier, rerunner)
        if outcome.refusal is not None:
            return Carried({}, explanations, unchanged, _refusal(link, via, outcome.refusal))
        if outcome.explanation:
            explanations.append(outcome.explanation)
        if outcome.unchanged or outcome.mutation is None:
            unchanged.append(link.column)
            continue
        known = mutations.get(link.column)
        if known is not None and known != outcome.mutation:
            return Carried(
                {},
                explanations,
                unchanged,
                f"two lineage paths reach {link.column} with different changes "
                f"({known.describe(link.column)}; {outcome.mutation.describe(link.column)})",
            )
        mutations[link.column] = outcome.mutation
    unchanged = [c for c in dict.fromkeys(unchanged) if c not in mutations]
    return Carried(mutations, list(dict.fromkeys(explanations)), unchanged)


def _refusal(link: AffectedFeature, via: str, refusal: str) -> str:
    if link.non_identity_transforms:  # the refusal reads "through transform(s) …"
        return f"the field reaches {link.column} ({via}) {refusal}"
    return f"{link.column} ({via}): {refusal}"


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


def reaching_links(features: list[AffectedFeature], inputs: Collection[str] | None) -> list[AffectedFeature]:
    """The links a change can reach a model through: its feature links, and the training-run links whose column the
    verified pipeline reads (`inputs`; None: not known, and no training-run link counts)."""
    runs = [f for f in features if f.link == "training_run" and inputs is not None and f.column in inputs]
    return [f for f in features if f.link == "feature"] + runs


def unfit_column(mutations: Mapping[str, Mutation], frame: pd.DataFrame) -> tuple[str, PlanError] | None:
    """The first column (by name) whose change does not fit its evaluation data, and why; None when all fit."""
    for column in sorted(mutations):
        try:
            check_compatible(mutations[column], frame[column])
        except PlanError as exc:
            return column, exc
    return None
