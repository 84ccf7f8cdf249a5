"""Refusals that need neither the catalog nor the heavy libraries (pandas, scikit-learn, LangGraph, MCP): checked
right after parsing, before a command's module is imported, so a typo is refused at once.

The commands check the same things again (and more: parameter values, the catalog's names), so they stay correct
when called without this step; the messages here say the same thing in the same words.
"""

from __future__ import annotations

import argparse
import json

from agent.cli.parser import OPERATOR_NAMES
from tools.catalog.urn_shape import not_a_dataset_urn
from tools.errors import BadRequest

NO_PUBLISH = "assess needs --no-publish here; use `provenance ask` to assess and publish with approval"


class Refused(BadRequest, ValueError):
    """The request cannot be served as written (exit 2); the message says what is expected."""


def parse_params(pairs: list[str]) -> dict[str, object]:
    """`--param k=v`: v is JSON when it parses (numbers, objects), else a plain string."""
    params: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise Refused(f"--param expects key=value, got {pair!r} (e.g. --param factor=100)")
        if key in params:
            raise Refused(f"--param {key} is given twice ({key}={params[key]!r} and {pair!r}); give each key once")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params


def subject_problem(args: argparse.Namespace) -> None:
    """`--dataset` and `--field`, or `--feature`: exactly one of the two ways to name what changes."""
    if args.feature is not None:
        if args.dataset is not None or args.field is not None:
            raise Refused(
                "name the subject once: --feature (e.g. --feature driver_hourly_stats.conv_rate), or --dataset with "
                "--field, not both"
            )
        if not args.feature.strip():
            raise Refused("--feature needs a feature, a feature view or a feature service, e.g. --feature conv_rate")
        return
    if args.dataset is None or args.field is None:
        raise Refused(
            "name what changes: --dataset URN with --field NAME (e.g. --dataset "
            "'urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)' --field amount), or "
            "--feature (an mlFeature, feature view or feature service)"
        )
    if problem := not_a_dataset_urn(args.dataset):
        raise Refused(problem)


def precheck(args: argparse.Namespace) -> None:
    """Raise `Refused` for what is wrong on the command line alone, in the order the command would find it. For
    `assess`, the mutation it parsed is `args.mutation`: the command runs it, never parsing the words again."""
    if args.command == "ask" and not args.question.strip():
        raise Refused(
            'ask needs a question or a proposed change, e.g. provenance ask "What happens if '
            'payments.transactions.amount is sent in cents?"'
        )
    if args.command == "assess" and not args.no_publish:
        raise Refused(NO_PUBLISH)
    if args.command in ("lineage", "assess"):
        subject_problem(args)
    if args.command != "assess":
        return
    op = args.op.strip().lower()
    if op not in OPERATOR_NAMES:
        raise Refused(
            f"unknown mutation operator {args.op!r}; allowed operators: {', '.join(OPERATOR_NAMES)} "
            "(`provenance assess --help` lists each with its parameters)"
        )
    params = parse_params(args.param)
    if not 0 < args.fraction <= 1:  # also NaN
        raise Refused(f"--fraction must be in (0, 1], got {args.fraction}")
    if not 0 <= args.seed < 2**63:  # checkpoints store it as a 64-bit integer
        raise Refused(f"--seed must be in [0, 2**63), got {args.seed}")
    # The operator's own bounds ("factor=abc", "decimals=99"): assess loads the allowlist anyway, so checking here
    # costs nothing and refuses in a second instead of after the catalog's libraries are imported.
    from tools.mutations import PlanError, parse_mutation

    try:
        args.mutation = parse_mutation(op, params, fraction=args.fraction, seed=args.seed)  # what `assess` runs
    except PlanError as exc:
        raise Refused(str(exc)) from exc
