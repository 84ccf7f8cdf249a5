"""`provenance diff`: the production models scored on a pull request's base and head relations (agent/diffing.py);
the evidence folder is written first, then the text (or JSON) printed and the PR comment written."""

from __future__ import annotations

import argparse
import asyncio

from agent.diffing import diff_models, diff_request
from policies import load_policy
from tools.diff.markdown import markdown
from tools.errors import VERDICT_EXIT_CODES
from tools.settings import ProvenanceSettings


def _cmd_diff(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    request = diff_request(
        warehouse_url=args.warehouse or settings.warehouse_url, datasets=args.dataset, policy=load_policy(args.policy),
        base_schema=args.base_schema, head_schema=args.head_schema, relations=args.relation,
        base_manifest=args.base_manifest, head_manifest=args.head_manifest, key=args.key, rows=args.rows,
        seed=args.seed, changes=args.changes,
    )  # fmt: skip
    evidence, folder = asyncio.run(diff_models(settings, request))
    text = markdown(evidence)
    if args.markdown is not None:
        args.markdown.write_text(text, encoding="utf-8")
    print(evidence.model_dump_json(indent=2) if args.json else text + f"\n(evidence: {folder})")
    return VERDICT_EXIT_CODES[evidence.verdict]
