"""The `provenance` argument parser: every subcommand and its options. Kept free of the commands' own imports
(the graph, the catalog, MLflow), so `provenance --help` and a usage error stay fast."""

from __future__ import annotations

import argparse
from pathlib import Path

from tools.registry.mlflow_registry import TRACKING_ENV

OPERATOR_SIGNATURES = (
    "scale(factor)",
    "shift(offset)",
    "null_inject()",
    "constant(value)",
    "category_remap(mapping)",
    "unseen_category(value)",
    "round(decimals)",
    "clip(lower, upper)",
    "noise(relative_std)",
    "sign_flip()",
    "shuffle()",
    "cyclic_shift(offset, period)",
)
"""The operators of tools.mutations.ALLOWED_OPERATORS with their parameters, written out: importing tools.mutations
loads pandas, and the help needs only these (tests/agent/cli/test_startup.py checks the two agree)."""
OPERATOR_NAMES = tuple(signature.split("(")[0] for signature in OPERATOR_SIGNATURES)

DESCRIPTION = "The `provenance` command line. Logs go to stderr; `--json` output goes to stdout."


FEATURE_HELP = (
    "an mlFeature (URN or name: conv_rate, driver_hourly_stats.conv_rate), a feature view or a feature service, "
    "instead of --dataset/--field: the column(s) it reads"
)


def port(text: str) -> int:
    """A TCP port for argparse: 0 (a free one) to 65535; anything else is a usage error naming the range."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535; 0 picks a free one)") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port (0-65535; 0 picks a free one)")
    return value


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("provenance")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed: pip install -e .)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="provenance", description=DESCRIPTION)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logs on stderr")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="seed the demo catalog and walk through the impact analysis")
    demo.add_argument(
        "--diff", action="store_true",
        help="instead: build the demo's DuckDB warehouse (today's transactions and a pull request's) and run "
        "`provenance diff` on it",
    )  # fmt: skip
    commands.add_parser("seed", help="train the demo models and write the demo catalog")
    catalog = commands.add_parser("catalog", help="the embedded DataHub catalog")
    catalog_commands = catalog.add_subparsers(dest="catalog_command", required=True)
    serve = catalog_commands.add_parser(
        "serve",
        help="serve the embedded catalog and a read-only MCP server in the foreground; other commands reuse them",
    )
    serve.add_argument("--port", type=port, default=0, help="port on 127.0.0.1 (default: a free one)")
    serve.add_argument("--mcp-port", type=port, default=0, help="the MCP server's port (default: a free one)")
    serve.add_argument(
        "--token", default=None, help="the writer token (default: random; visible in `ps`: prefer --token-file)"
    )
    serve.add_argument("--token-file", type=Path, default=None, help="a file holding the writer token")
    serve.add_argument(
        "--background", action="store_true",
        help="run as this home's warm service (what commands start by themselves): at a lower CPU priority, exiting "
        "after PROVENANCE_SERVICE_IDLE seconds without a request",
    )  # fmt: skip
    service = commands.add_parser(
        "service", help="show or stop this home's warm local service (PROVENANCE_SERVICE=off: none is started)"
    )
    service.add_argument("action", choices=("status", "stop"), help="status: what runs and since when; stop: end it")
    ingest = catalog_commands.add_parser(
        "ingest",
        help="run DataHub ingestion recipes (postgres, dbt, mlflow, …) into the catalog Provenance reads",
        description="Each RECIPE is a DataHub recipe with a `source:` and no `sink:`: it is written into this "
        "home's catalog (the served one if `catalog serve` runs, else the embedded one; PROVENANCE_CATALOG="
        "datahub: your GMS) through its REST endpoint. Recipes run in order and stop at the first failure.",
    )
    ingest.add_argument("recipes", nargs="+", type=Path, metavar="RECIPE", help="recipe YAML file(s), run in order")
    lineage = commands.add_parser("lineage", help="which features and models depend on a field")
    lineage.add_argument("--dataset", help="dataset URN")
    lineage.add_argument("--field", help="field path in that dataset")
    lineage.add_argument(
        "--feature",
        help=FEATURE_HELP,
    )
    lineage.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    scan = commands.add_parser(
        "scan",
        help="tolerance map: the doses of each change at which each production model downstream of a field "
        "reaches WARNING and BLOCK",
        description="For every production model downstream of the field and every dose axis that fits the field "
        "(scale up/down, shift up/down in standard deviations, null share, rounding, clipping, unseen-category "
        "share), bisects a fixed dose grid on the policy's own verdict and reports each threshold as a bracket "
        "between two tested doses. Writes scan.json, report.md and plots under $PROVENANCE_HOME/scans/<scan_id>/; "
        "writes to the catalog only with --publish and an approval. Exit codes: 0 scanned (and published, if "
        "asked); 30 the map is incomplete (lineage not read whole, a model not scanned, a threshold unknown); 2 bad "
        "input; 1 a service or the publication failed.",
    )
    mcp = commands.add_parser(
        "mcp",
        help="Provenance as an MCP server on stdio, for other agents (affected_models, assess_change, …)",
        description="Serves the tools affected_models, assess_change, check_changes, diff_models, infer_changes, "
        "latest_verdict "
        "and explain_run and the "
        "resources provenance://runs/<id>/report and /evidence over stdio (the MCP Python SDK). No tool writes to "
        "DataHub: publishing needs a person's approval in the chat or with `provenance publish`. With --http: "
        "streamable HTTP on 127.0.0.1 instead, each request needing the bearer token printed at startup.",
    )
    mcp.add_argument("--http", action="store_true", help="streamable HTTP on 127.0.0.1 instead of stdio")
    mcp.add_argument("--port", type=port, default=None, help="with --http: the port (default: a free one)")
    mcp.add_argument("--token", default=None, help="with --http: the bearer token (default: a random one, printed)")
    target = scan.add_mutually_exclusive_group(required=True)
    target.add_argument("--dataset", help="dataset URN")
    target.add_argument(
        "--model", help="an mlModel URN: scan the source column of each of its features, for this model only"
    )
    target.add_argument("--feature", help=FEATURE_HELP)
    scan.add_argument(
        "--field",
        default=None,
        help="field path in that dataset (default: every field that reaches a production model)",
    )
    scan.add_argument(
        "--axes", default=None, metavar="A,B",
        help="only these axes: scale_up, scale_down, shift_up, shift_down, nulls, rounding, clip_high, unseen",
    )  # fmt: skip
    scan.add_argument("--json", action="store_true", help="scan.json on stdout")
    scan.add_argument(
        "--publish", action="store_true",
        help="after the scan, show what would be written and ask y/N: the map as the structured property "
        "io.provenance.tolerance on the column, and a linked document",
    )  # fmt: skip
    scan.add_argument("--yes", action="store_true", help="approve --publish without asking (recorded as cli --yes)")
    assess = commands.add_parser("assess", help="test every affected production model against a mutation")
    assess.add_argument("--dataset", help="dataset URN")
    assess.add_argument("--field", help="field path in that dataset")
    assess.add_argument(
        "--feature",
        help=FEATURE_HELP,
    )
    assess.add_argument(
        "--op", required=True, help=f"mutation operator, with its parameters: {', '.join(OPERATOR_SIGNATURES)}"
    )
    assess.add_argument(
        "--param", action="append", default=[], metavar="K=V",
        help="one operator parameter, e.g. factor=100, mapping='{\"a\": \"b\"}' (repeat for several; a key once)",
    )  # fmt: skip
    assess.add_argument("--fraction", type=float, default=1.0, help="share of rows to mutate, in (0, 1]")
    assess.add_argument("--seed", type=int, default=0, help="seed choosing the mutated rows")
    assess.add_argument("--policy", type=Path, default=None, help="policy file (default: policies/default-v2.yaml)")
    assess.add_argument(
        "--no-publish",
        action="store_true",
        help="required: assess writes evidence only and never touches the catalog (`provenance ask` assesses and "
        "publishes with a person's approval)",
    )
    assess.add_argument("--json", action="store_true", help="the evidence summary as JSON on stdout")
    ask = commands.add_parser("ask", help="ask a question or propose a change, in plain language")
    ask.add_argument("question", help='e.g. "What happens if payments.transactions.amount is sent in cents?"')
    ask.add_argument("--thread", default=None, help="conversation id (default: a new one)")
    decide = ask.add_mutually_exclusive_group()
    decide.add_argument("--approve", action="store_true", help="approve publication without asking")
    decide.add_argument("--reject", action="store_true", help="reject publication without asking")
    decide.add_argument("--no-publish", action="store_true", help="evidence only; no approval, no catalog writes")
    resume = commands.add_parser(
        "resume", help="answer a pending approval, or (with no decision) continue a turn that was interrupted"
    )
    resume.add_argument("thread", help="the conversation id printed by `ask`")
    decide = resume.add_mutually_exclusive_group()
    decide.add_argument("--approve", action="store_true", help="approve the pending publication")
    decide.add_argument("--reject", action="store_true", help="reject it: nothing is written to the catalog")
    commands.add_parser("runs", help="list assessment runs and their publication status")
    publish = commands.add_parser("publish", help="publish (or retry publishing) a run's verdict to DataHub")
    publish.add_argument("run_id", help="a run id from `provenance runs`")
    publish.add_argument(
        "--yes", action="store_true", help="publish without asking (required when not on a terminal); recorded as yours"
    )
    traces = commands.add_parser("traces", help="list recorded conversations (date, question, verdict, published?)")
    traces.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    replay = commands.add_parser(
        "replay",
        help="re-run a recorded conversation offline and check its verdicts and metrics reproduce",
        description="Exit 0: reproduced; 1: differences (listed); 2: the trace cannot be read. Never writes to "
        "the catalog; the replay's evidence goes to a temporary home unless --keep is given.",
    )
    replay.add_argument("trace", help="a trace file, or a trace id from `provenance traces`")
    replay.add_argument("--live", action="store_true", help="ask the current catalog (read-only) instead")
    replay.add_argument("--keep", type=Path, default=None, metavar="DIR", help="keep the replay's evidence in DIR")
    replay.add_argument("--json", action="store_true", help="the report as JSON on stdout")
    _add_bind_parser(commands)
    _add_check_parser(commands)
    _add_diff_parser(commands)
    _add_infer_changes_parser(commands)
    return parser


CHECK_EXIT_CODES = (
    "Exit codes: the combined verdict's, i.e. the worst entry's (BLOCK > INCOMPLETE > WARNING > PASS): PASS 0, "
    "WARNING 10, BLOCK 20, INCOMPLETE 30 (also for an entry that could not be assessed, and for every unmapped "
    "entry); 2 the file is invalid (every problem is listed with its line) or --publish has no approval, nothing "
    "assessed; 1 the catalog cannot be reached, or a requested publication failed."
)


def _add_check_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = commands.add_parser(
        "check",
        help="gate a change file (CHANGES.yml): assess every entry like `assess`, one combined verdict",
        description="Each `changes` entry is assessed like `provenance assess` (its own evidence run); each "
        "`structural` entry (a dropped or renamed column) gives every production model downstream the policy's "
        "structural verdict; each `unmapped` entry is INCOMPLETE (review by hand). Nothing is written to the "
        "catalog unless --publish is given with an approval (`approval: {by: NAME}` in the file, or --approved-by). "
        + CHECK_EXIT_CODES,
    )
    check.add_argument("changes", type=Path, help="the CHANGES.yml file (format: docs/gate.md)")
    check.add_argument("--json", action="store_true", help="the check result as JSON on stdout")
    check.add_argument(
        "--markdown", type=Path, default=None, metavar="FILE", help="also write the PR summary (Markdown) to FILE"
    )
    check.add_argument(
        "--evidence-url-base",
        default=None,
        metavar="URL",
        help="link evidence in the Markdown as URL/<run_id>/report.md (where the runs are served) instead of paths",
    )
    check.add_argument(
        "--evidence-artifact",
        default=None,
        metavar="URL",
        help="the runs are a CI artifact downloadable at URL (e.g. the workflow run's page): name each report's path "
        "in it and link URL",
    )
    check.add_argument("--policy", type=Path, default=None, help="policy file (default: policies/default-v2.yaml)")
    check.add_argument("--publish", action="store_true", help="write the verdicts to the catalog (needs an approval)")
    check.add_argument(
        "--approved-by", default=None, metavar="NAME", help="approve --publish on the command line (else: the file's)"
    )


def _add_diff_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    diff = commands.add_parser(
        "diff",
        help="run the production models on what a pull request builds: base vs head relations, paired by key",
        description="For every production model downstream of the changed datasets (the catalog's lineage), reads "
        "the relation it is scored on from both sides of the pull request (the same rows, joined on a unique key "
        "and sampled by a hash of it in the warehouse), scores both with the verified model and judges the paired "
        "metrics, the rows gone and a data diff of its columns with the policy, as `assess` does. Nothing is "
        "written to the catalog or the warehouse. " + CHECK_EXIT_CODES.replace("entry", "model"),
    )
    diff.add_argument(
        "--dataset", action="append", required=True, metavar="URN",
        help="a changed dataset's URN (repeat for each dataset the pull request changes)",
    )  # fmt: skip
    diff.add_argument(
        "--warehouse", default=None, metavar="URL",
        help="SQLAlchemy URL of the warehouse (postgresql://reader@host/db), or duckdb:///file.duckdb; default: "
        "PROVENANCE_WAREHOUSE_URL",
    )  # fmt: skip
    diff.add_argument("--base-schema", default=None, help="schema of the base relations (default: the catalog's)")
    diff.add_argument("--head-schema", default=None, help="schema the pull request's build wrote, e.g. ci_pr_123")
    diff.add_argument("--base-manifest", type=Path, default=None, help="dbt manifest.json of the base build")
    diff.add_argument("--head-manifest", type=Path, default=None, help="dbt manifest.json of the head build")
    diff.add_argument(
        "--relation", action="append", default=[], metavar="NAME=BASE:HEAD",
        help="a dataset's two relations by hand, e.g. claim_features=analytics.claim_features:ci_pr_7.claim_features",
    )  # fmt: skip
    diff.add_argument("--key", default=None, help="comma-separated key columns (default: the catalog's key)")
    diff.add_argument("--rows", type=int, default=100_000, help="paired rows scored per relation (default 100000)")
    diff.add_argument("--seed", type=int, default=0, help="seed of the rows' hash sample (default 0)")
    diff.add_argument(
        "--changes", type=Path, default=None, metavar="FILE",
        help="a CHANGES.yml (e.g. from infer-changes) to compare with what the data shows, column by column",
    )  # fmt: skip
    diff.add_argument("--policy", type=Path, default=None, help="policy file (default: policies/default-v2.yaml)")
    diff.add_argument("--json", action="store_true", help="the diff's evidence as JSON on stdout")
    diff.add_argument("--markdown", type=Path, default=None, metavar="FILE", help="also write the PR comment to FILE")


def _add_bind_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bind = commands.add_parser(
        "bind",
        help="bind a model registered in MLflow so assess can test it (writes MLflow model-version tags)",
        description="Finds the version's model file (MLflow's sklearn flavour, or xgboost/lightgbm with the "
        "scikit-learn API; a classifier or a regressor), the held-out data the training run logged and the "
        "label; shows the provenance.* tags it will write and asks; writes them as MLflow model-version tags "
        "(DataHub's mlflow ingestion copies them into the model's custom properties) and, on the embedded "
        f"catalog, into the DataHub model at once. Needs {TRACKING_ENV}. Exit codes: 0 bound (or, with --check, "
        "the binding is valid); 2 refused or bad input, nothing written; 1 MLflow unreachable or not confirmed; "
        "30 (--check) the binding is missing or does not work.",
    )
    bind.add_argument("model", help="registered model name, name_version as DataHub names it, or the mlModel URN")
    bind.add_argument("--version", default=None, help="model version (default: the one in stage Production)")
    bind.add_argument("--eval-data", default=None, metavar="URI", help="held-out data, if the run logged none")
    bind.add_argument("--label", default=None, metavar="COLUMN", help="the label column (the target, for a regressor)")
    bind.add_argument("--threshold", type=float, default=None, help="decision threshold in (0, 1), default 0.5")
    bind.add_argument("--yes", action="store_true", help="write without asking")
    bind.add_argument("--check", action="store_true", help="only report whether the existing binding works")


NULL_SHARE_DEFAULT = 0.05
"""tools.changes.sqlmap.DEFAULT_NULL_SHARE, written out: that module loads sqlglot (tests/agent/cli/
test_infer_changes.py checks the two agree)."""

INFER_CHANGES_EXIT_CODES = (
    "Exit codes: 0 the file is written (also when some entries are `unmapped`: the file says so and `check` counts "
    "them INCOMPLETE; also when no SQL file changed: an empty change set); 2 bad input, nothing written (not a git "
    "repository, an unknown ref, a malformed --dataset, an unknown --dialect, --json with --output -); 1 the "
    "catalog cannot be reached, or an internal error."
)


def _share(text: str) -> float:
    value = float(text)
    if not 0 < value <= 1:  # also NaN
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text}")
    return value


def _add_infer_changes_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    infer = commands.add_parser(
        "infer-changes",
        help="write CHANGES.yml from the SQL models (plain SQL and dbt) changed between two git refs",
        description="Reads every .sql file changed between --base and --head (dbt Jinja stripped), parses both "
        "versions with sqlglot and maps each changed output column to an operator: x*c or x/c -> scale; ROUND(x, n) "
        "or CAST(x AS INT) -> round; x+c -> shift; LEAST/GREATEST -> clip; COALESCE(x, c) added -> constant, "
        "removed -> null_inject; a changed CASE mapping -> category_remap. A dropped or renamed column is a "
        "structural entry; anything else (and a file sqlglot cannot parse) is `unmapped`, for review by hand. "
        "A model's dataset is searched in the catalog by its table name (a dbt config(alias=...), else the "
        "CREATE TABLE/VIEW or INSERT INTO name, else the file name, as dbt names a model). " + INFER_CHANGES_EXIT_CODES,
    )
    infer.add_argument("paths", nargs="*", metavar="PATH", help="only files under these paths (relative to --repo)")
    infer.add_argument("--base", required=True, metavar="REF", help="the git ref the change starts from, e.g. main")
    infer.add_argument("--head", default="HEAD", metavar="REF", help="the git ref with the change (default: HEAD)")
    infer.add_argument("--repo", default=".", metavar="DIR", help="the git checkout (default: the current folder)")
    infer.add_argument(
        "--output", default="CHANGES.yml", metavar="FILE", help="where to write the change file; - for stdout"
    )
    infer.add_argument("--json", action="store_true", help="also print the change set as JSON on stdout")
    infer.add_argument("--platform", default=None, help="search the models' datasets on this platform only")
    infer.add_argument(
        "--name-prefix", default=None, metavar="DB.SCHEMA", help="the datasets' qualified names start with this"
    )
    infer.add_argument(
        "--dataset", action="append", default=[], metavar="NAME=URN", help="the dataset of a model (table or file)"
    )
    infer.add_argument(
        "--null-share",
        type=_share,
        default=None,
        metavar="F",
        help=f"share of rows a COALESCE added/removed touches, in (0, 1] (default: {NULL_SHARE_DEFAULT}, a stated "
        "assumption, not a measured null share)",
    )
    infer.add_argument("--dialect", default=None, help="sqlglot dialect of the SQL, e.g. postgres, snowflake")
