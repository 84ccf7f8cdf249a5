"""`provenance diff`: the production models scored on a pull request's base and head relations (agent/diffing.py);
the evidence folder is written first, then the text (or JSON) printed and the PR comment written."""

from __future__ import annotations

import argparse
import asyncio

from agent.diffing import DiffRequest, diff_models
from agent.errors import UsageError
from policies import load_policy
from tools.catalog.resolve import check_dataset_urn
from tools.diff.markdown import markdown
from tools.diff.sides import RelationMap, parse_relations, read_manifest
from tools.diff.warehouse import dialect_of
from tools.errors import VERDICT_EXIT_CODES
from tools.settings import ProvenanceSettings


def _cmd_diff(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    url = args.warehouse or settings.warehouse_url
    if not url:
        raise UsageError("diff reads the warehouse: pass --warehouse URL or set PROVENANCE_WAREHOUSE_URL")
    if args.rows < 1:
        raise UsageError(f"--rows must be at least 1, got {args.rows}")
    for dataset in args.dataset:
        check_dataset_urn(dataset)
    dialect = dialect_of(url)
    relations = RelationMap(
        dialect=dialect,
        base_schema=args.base_schema,
        head_schema=args.head_schema,
        explicit=parse_relations(args.relation),
        base_manifest=read_manifest(args.base_manifest, dialect) if args.base_manifest else {},
        head_manifest=read_manifest(args.head_manifest, dialect) if args.head_manifest else {},
    )
    if not (args.head_schema or args.head_manifest or args.relation):
        raise UsageError("name the pull request's side: --head-schema, --head-manifest or --relation NAME=BASE:HEAD")
    key = [k.strip() for k in args.key.split(",") if k.strip()] if args.key else None
    request = DiffRequest(
        warehouse_url=url, relations=relations, datasets=args.dataset, policy=load_policy(args.policy), key=key,
        rows=args.rows, seed=args.seed,
    )  # fmt: skip
    evidence, folder = asyncio.run(diff_models(settings, request))
    text = markdown(evidence)
    if args.markdown is not None:
        args.markdown.write_text(text, encoding="utf-8")
    print(evidence.model_dump_json(indent=2) if args.json else text + f"\n(evidence: {folder})")
    return VERDICT_EXIT_CODES[evidence.verdict]
