"""Bad input, property-based (hypothesis, derandomized so the figures repeat): plans and operator parameters,
dataset URNs and field names (through discovery on the live MCP path), chat messages (the deterministic router and
planner, and a few through the whole graph), trace files, and CLI arguments (`agent.cli.main` in-process).

Every input must either work or be refused with an exception of the documented kind whose message says what to
do or what is allowed. Anything else (another exception type, a traceback, an argparse exit other than 2) is a
crash. Figures per domain: inputs tried, crashes (0), rejections, rejections with a clear message.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.conversation import Session, open_session
from agent.planning.deterministic import plan as deterministic_plan
from agent.planning.deterministic import route as deterministic_route
from agent.schemas import FieldContext
from agent.traces.schema import TraceError, parse_trace
from agent.traces.store import sorted_trace_files
from seed.catalog import KAFKA_TOPIC_URN, POSTGRES_TABLE_URN
from tests.agent.helpers import CHAT_MODEL_ENVS
from tests.reliability.common import fresh_home, settings_for, snapshot
from tools.catalog.datahub import CatalogReader
from tools.catalog.lineage_walk import Discoverer
from tools.catalog.resolve import CatalogInputError
from tools.catalog.session import CatalogError
from tools.mutations import ALLOWED_OPERATORS, PlanError, apply_mutation, parse_mutation

# -------------------------------------------------------------------------------------------------- the tally


@dataclass
class DomainFigures:
    domain: str
    tried: int = 0
    accepted: int = 0
    rejected: int = 0
    clear: int = 0
    crashes: list[str] = field(default_factory=list)
    unclear: list[str] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)
    """A few of the clear refusals, for the report."""

    def accept(self) -> None:
        self.tried += 1
        self.accepted += 1

    def reject(self, message: str, is_clear: bool, example: object) -> None:
        self.tried += 1
        self.rejected += 1
        if message.strip() and is_clear:
            self.clear += 1
            if len(self.samples) < 4 and message[:60] not in {m[:60] for m in self.samples}:
                self.samples.append(message.strip()[:300])
        elif len(self.unclear) < 5:
            self.unclear.append(f"{example!r:.200} -> {message!r:.300}")

    def crash(self, exc: BaseException, example: object) -> None:
        self.tried += 1
        if len(self.crashes) < 5:
            self.crashes.append(f"{example!r:.200} -> {type(exc).__name__}: {exc}"[:500])
        else:
            self.crashes.append("…")


@dataclass
class BadInputFigures:
    domains: list[DomainFigures]

    @property
    def tried(self) -> int:
        return sum(d.tried for d in self.domains)

    @property
    def crashes(self) -> int:
        return sum(len(d.crashes) for d in self.domains)

    @property
    def rejected(self) -> int:
        return sum(d.rejected for d in self.domains)

    @property
    def clear(self) -> int:
        return sum(d.clear for d in self.domains)

    def domain(self, name: str) -> DomainFigures:
        return next(d for d in self.domains if d.domain == name)


def _run(tally: DomainFigures, prop: Callable[[], None]) -> DomainFigures:
    """Run a hypothesis property; the property records every example in the tally and never raises itself."""
    prop()
    return tally


def _settings(examples: int) -> Any:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


ALLOWED_WORDS = re.compile(r"allowed|must|operators that fit|arguments of their own|expected|e\.g\.|needs", re.I)

# ---------------------------------------------------------------------------------------------- strategies

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=12,
)
PARAM_NAMES = sorted(
    {"factor", "offset", "value", "mapping", "decimals", "lower", "upper", "relative_std", "period"}
    | {"op", "fraction", "seed", "verdict", ""}
)
OPS = st.one_of(st.sampled_from(sorted(ALLOWED_OPERATORS)), st.text(max_size=20), st.sampled_from(["SCALE ", "drop"]))
FRACTIONS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, 1.0, 1e-9, 0.5, -0.5]))
SEEDS = st.integers(min_value=-(10**20), max_value=10**20)
PARAMS = st.dictionaries(st.sampled_from(PARAM_NAMES) | st.text(max_size=10), JSON_VALUES, max_size=4)


def _operator_params(op: str) -> st.SearchStrategy[dict[str, Any]]:
    """Parameters named as the operator's own, with any values (what a careless planner would send)."""
    names = {
        "scale": ["factor"],
        "shift": ["offset"],
        "constant": ["value"],
        "category_remap": ["mapping"],
        "unseen_category": ["value"],
        "round": ["decimals"],
        "clip": ["lower", "upper"],
        "noise": ["relative_std"],
        "cyclic_shift": ["offset", "period"],
    }.get(op, [])
    return st.fixed_dictionaries({}, optional={name: JSON_VALUES for name in names})


COLUMNS: dict[str, pd.Series] = {
    "numeric": pd.Series([1.5, -2.0, 0.0, 1e6, np.nan, 3.25], name="x"),
    "integer": pd.Series([1, 2, 3, 4, 5, 6], name="x"),
    "categorical": pd.Series(["a", "b", None, "c", "a", "b"], name="x", dtype=object),
    "boolean": pd.Series([True, False, True, True, False, False], name="x"),
}

# ------------------------------------------------------------------------------------------------- plans


def plans(examples: int) -> DomainFigures:
    tally = DomainFigures("plans (op, params, fraction, seed)")

    random_plans = st.tuples(OPS, PARAMS | st.one_of(st.none(), st.lists(JSON_SCALARS)), FRACTIONS, SEEDS)
    plausible = st.sampled_from(sorted(ALLOWED_OPERATORS)).flatmap(
        lambda op: st.tuples(st.just(op), _operator_params(op), FRACTIONS, st.integers(-5, 2**40))
    )  # a real operator with its own parameter names: the values decide

    @_settings(examples)
    @given(plan=st.one_of(random_plans, plausible))
    def prop(plan: tuple[Any, Any, float, int]) -> None:
        op, params, fraction, seed = example = plan
        try:
            parse_mutation(op, params, fraction=fraction, seed=seed)
        except PlanError as exc:
            tally.reject(str(exc), bool(ALLOWED_WORDS.search(str(exc))), example)
        except Exception as exc:
            tally.crash(exc, example)
        else:
            tally.accept()

    return _run(tally, prop)


def operator_parameters(examples: int) -> DomainFigures:
    """Each allowlisted operator with random values for its own parameters, then applied to every column kind."""
    tally = DomainFigures("operator parameters (and application to a column)")

    @_settings(examples)
    @given(data=st.data())
    def prop(data: st.DataObject) -> None:
        op = data.draw(st.sampled_from(sorted(ALLOWED_OPERATORS)))
        params = data.draw(_operator_params(op))
        fraction = data.draw(st.floats(min_value=1e-6, max_value=1.0))
        example = (op, params, fraction)
        try:
            mutation = parse_mutation(op, params, fraction=fraction, seed=data.draw(st.integers(0, 2**32)))
        except PlanError as exc:
            tally.reject(str(exc), bool(ALLOWED_WORDS.search(str(exc))), example)
            return
        except Exception as exc:
            tally.crash(exc, example)
            return
        for kind, column in COLUMNS.items():
            try:
                mutated = apply_mutation(column, mutation)
            except PlanError as exc:
                tally.reject(str(exc), bool(ALLOWED_WORDS.search(str(exc))), (*example, kind))
            except Exception as exc:
                tally.crash(exc, (*example, kind))
            else:
                if len(mutated) != len(column) or column is mutated:
                    tally.crash(AssertionError("mutation changed the length or worked in place"), (*example, kind))
                else:
                    tally.accept()

    return _run(tally, prop)


# ------------------------------------------------------------------------------------------------ chat text

AMOUNT = FieldContext(
    dataset_urn=POSTGRES_TABLE_URN,
    field="amount",
    field_type="NUMBER",
    native_type="numeric(12,2)",
    description="Transaction amount in US dollars",
)
COUNTRY = FieldContext(dataset_urn=POSTGRES_TABLE_URN, field="country", field_type="STRING", native_type="char(2)")
CHANGE_WORDS = [
    "cents", "dollars", "null", "10%", "renamed", "to", "'DE'", "shifted", "by", "+5", "rounded", "clipped", "at",
    "1e308", "-0", "nan", "inf", "UTC", "CET", "every", "other", "row", "half", "seed", "42", "x", "times", "0",
]  # fmt: skip
MESSAGES = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(CHANGE_WORDS) | st.text(max_size=8), max_size=14).map(" ".join),
    st.lists(st.sampled_from(CHANGE_WORDS), max_size=10).map(
        lambda words: f"What happens if payments.transactions.amount is {' '.join(words)}?"
    ),
)
CLEAR_REFUSAL = re.compile(r"can test|Changes that fit|allowed|cannot run as described|e\.g\.", re.I)


def chat_messages(examples: int) -> DomainFigures:
    tally = DomainFigures("chat messages (deterministic router and planner)")

    @_settings(examples)
    @given(text=MESSAGES, field=st.sampled_from([AMOUNT, COUNTRY]))
    def prop(text: str, field: FieldContext) -> None:
        try:
            deterministic_route(text)
            proposal = deterministic_plan(text, field)
        except Exception as exc:  # documented: never raises on user text
            tally.crash(exc, text)
            return
        if proposal.structural is not None:  # a dropped or renamed column: judged by the structural rule
            assert proposal.op is None and proposal.refusal is None, (text, proposal)
            tally.accept()
            return
        if proposal.op is None:
            refusal = proposal.refusal or ""
            tally.reject(refusal, bool(CLEAR_REFUSAL.search(refusal)), text)
            return
        try:  # what the planner proposes must pass the graph's own validation
            parse_mutation(proposal.op, proposal.params, fraction=proposal.fraction, seed=proposal.seed)
        except Exception as exc:
            tally.crash(exc, (text, proposal))
        else:
            tally.accept()

    return _run(tally, prop)


class LiveSession:
    """One checkpointed session on the embedded catalog, driven from synchronous code (hypothesis examples)."""

    def __init__(self, home: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.settings = settings_for(home)
        self._cm = open_session(self.settings)
        self.session: Session = self.run(self._cm.__aenter__())

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def close(self) -> None:
        try:
            self.run(self._cm.__aexit__(None, None, None))
        finally:
            self.loop.close()


def chat_through_graph(live: LiveSession, examples: int) -> DomainFigures:
    tally = DomainFigures("chat messages through the graph")
    before = snapshot(live.settings.lite_db)
    counter = iter(range(10**6))

    @_settings(examples)
    @given(text=MESSAGES.filter(lambda t: t.strip() != ""))
    def prop(text: str) -> None:
        try:
            turn = live.run(live.session.ask(text, thread_id=f"fuzz-{next(counter)}", mode="no_publish"))
        except Exception as exc:
            tally.crash(exc, text)
            return
        failures = turn.values.get("failures") or []
        if turn.values.get("run_id") or (turn.answer and not failures):
            tally.accept()
        elif any(f.kind == "input" for f in failures):
            tally.reject(turn.answer, bool(CLEAR_REFUSAL.search(turn.answer)), text)
        else:  # a stage error (not the user's fault) on plain text is a defect
            tally.crash(RuntimeError(turn.answer or "empty answer"), text)

    _run(tally, prop)
    if snapshot(live.settings.lite_db).writes_since(before):
        tally.crash(AssertionError("a chat message wrote to the catalog"), "all examples")
    return tally


# ------------------------------------------------------------------------------------------- URNs and fields

REAL_FIELDS = ["amount", "country", "txn_count_1h"]
URNS = st.one_of(
    st.text(max_size=80),
    st.builds(
        lambda platform, name, env: f"urn:li:dataset:(urn:li:dataPlatform:{platform},{name},{env})",
        st.sampled_from(["postgres", "kafka", "", "x y", "pg)"]) | st.text(max_size=10),
        st.sampled_from(["payments.public.transactions", "payments.public.transaction", "", "a,b"])
        | st.text(max_size=30),
        st.sampled_from(["PROD", "DEV", ""]) | st.text(max_size=5),
    ),
    st.sampled_from([POSTGRES_TABLE_URN, KAFKA_TOPIC_URN]).map(lambda u: u[: len(u) // 2]),
    st.just(POSTGRES_TABLE_URN),
)
FIELDS = st.one_of(
    st.sampled_from(REAL_FIELDS), st.text(max_size=40), st.sampled_from(["", ".", "amount ", "AMOUNT", "[v=2].x"])
)
CLEAR_CATALOG = re.compile(
    r"expected urn:li:dataset|Closest matches|No close match|e\.g\.|Qualify|not in the catalog", re.I
)


def urns_and_fields(live: LiveSession, examples: int) -> DomainFigures:
    tally = DomainFigures("dataset URNs and field names (discovery over MCP)")

    async def discover(urn: str, name: str) -> None:
        reader = CatalogReader((await live.session.context.handle.get()).session)
        await Discoverer(reader).discover(urn, name)

    @_settings(examples)
    @given(urn=URNS, name=FIELDS)
    def prop(urn: str, name: str) -> None:
        try:
            live.run(asyncio.wait_for(discover(urn, name), 60))
        except CatalogInputError as exc:
            tally.reject(str(exc), bool(CLEAR_CATALOG.search(str(exc))), (urn, name))
        except CatalogError as exc:  # the catalog refused the request itself: a rejection, but is it clear?
            tally.reject(str(exc), False, (urn, name))
        except Exception as exc:
            tally.crash(exc, (urn, name))
        else:
            tally.accept()

    return _run(tally, prop)


# -------------------------------------------------------------------------------------------------- traces


def _mutate(document: Any, path: list[int], value: Any) -> Any:
    """Replace the node at a path drawn from the document; value Ellipsis deletes it instead."""
    if not path:
        return None if value is Ellipsis else value
    head, *rest = path
    if isinstance(document, dict | list) and document:
        keys = list(document) if isinstance(document, dict) else list(range(len(document)))
        key = keys[head % len(keys)]
        copy: Any = dict(document) if isinstance(document, dict) else list(document)
        if not rest and value is Ellipsis:
            del copy[key]
        else:
            copy[key] = _mutate(document[key], rest, value)
        return copy
    return None if value is Ellipsis else value


def trace_files(recorded: dict[str, Any] | None, examples: int) -> DomainFigures:
    tally = DomainFigures("trace files (random JSON, bytes, damaged real traces)")
    sources = [st.binary(max_size=200).map(lambda b: ("bytes", b)), JSON_VALUES.map(lambda v: ("json", v))]
    if recorded is not None:
        damaged = st.tuples(
            st.lists(st.integers(0, 50), min_size=1, max_size=6), st.one_of(JSON_VALUES, st.just(Ellipsis))
        ).map(lambda pv: ("damaged", _mutate(recorded, pv[0], pv[1])))
        sources.append(damaged)

    @_settings(examples)
    @given(case=st.one_of(*sources))
    def prop(case: tuple[str, Any]) -> None:
        kind, payload = case
        data = payload if kind == "bytes" else json.dumps(payload, allow_nan=True).encode()
        try:
            parse_trace(data, "fuzzed.json")
        except TraceError as exc:
            message = str(exc)
            tally.reject(message, "fuzzed.json" in message and bool(re.search(r"trace|schema", message)), kind)
        except Exception as exc:
            tally.crash(exc, (kind, data[:200]))
        else:
            tally.accept()

    return _run(tally, prop)


# ------------------------------------------------------------------------------------------------------- CLI

SUBCOMMANDS = ["ask", "resume", "runs", "publish", "traces", "replay", "assess", "lineage", "catalog", "demo", "seed"]
NEED_EXTRA = {"catalog", "demo", "seed"}  # with no extra argument they serve forever or train models
OPTIONS = [
    "--dataset", "--field", "--op", "--param", "--fraction", "--seed", "--policy", "--no-publish", "--json",
    "--thread", "--approve", "--reject", "--live", "--keep", "-v", "--help", "serve", "--port", "--token", "--",
    "factor=100", "factor=[1]", "=", "mapping={\"a\":\"b\"}", "scale", "constant", "nan", "inf", "-1", "0", "1e400",
    POSTGRES_TABLE_URN, "amount", "urn:li:dataset:(", "What happens if payments.transactions.amount doubles?",
]  # fmt: skip
ARG_TOKENS = st.sampled_from(OPTIONS) | st.text(
    st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=15
)
_TEXT = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=30)
_NUMBER_TEXT = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(str), st.integers().map(str), _TEXT)


def _assess_args(t: tuple[str, list[str], str, str, str, str, str, str]) -> list[str]:
    command, flags, dataset, name, op, param, fraction, seed = t
    values = {"--dataset": dataset, "--field": name, "--op": op, "--param": param, "--fraction": fraction}
    args = [command]
    for flag in flags:
        args.append(flag)
        if flag in values:
            args.append(values[flag])
        elif flag == "--seed":
            args.append(seed)
    return args


URNS_TEXT = st.one_of(st.just(POSTGRES_TABLE_URN), _TEXT)
WELL_FORMED = st.one_of(
    st.tuples(
        st.just("assess"),
        st.lists(
            st.sampled_from(["--dataset", "--field", "--op", "--param", "--fraction", "--seed", "--no-publish"]),
            min_size=3,
            max_size=7,
        ),
        URNS_TEXT,
        st.sampled_from(["amount", "country", "nope"]) | _TEXT,
        st.sampled_from(sorted(ALLOWED_OPERATORS)) | _TEXT,
        st.sampled_from(["factor=100", "factor=0", "value=x", "mapping={}", "k"]) | _TEXT,
        _NUMBER_TEXT,
        _NUMBER_TEXT,
    ).map(_assess_args),
    st.tuples(st.just("lineage"), URNS_TEXT, _TEXT).map(lambda t: [t[0], "--dataset", t[1], "--field", t[2]]),
    st.tuples(st.sampled_from(["publish", "replay"]), _TEXT).map(list),
    st.tuples(st.just("resume"), _TEXT, st.sampled_from(["--approve", "--reject"])).map(list),
    st.tuples(st.just("ask"), MESSAGES, st.sampled_from([[], ["--no-publish"], ["--reject"], ["--thread", "t"]])).map(
        lambda t: [t[0], t[1], *t[2]]
    ),
)
CLEAR_CLI = re.compile(
    r"usage:|allowed|expected|e\.g\.|recent|must|needs|choose from|not a|no run|no trace|no pending|has no|"
    r"Approval|--approve|Qualify|Closest",
    re.I,
)


@contextlib.contextmanager
def _environment(**values: str | None) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    for key, value in values.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def cli_arguments(home: Path, examples: int) -> DomainFigures:
    """`provenance …` in-process with random arguments; the catalog is a real-DataHub setting with no URL, so
    every command that needs it fails fast with its CatalogError instead of starting servers."""
    from agent.cli import main

    tally = DomainFigures("CLI arguments (agent.cli.main)")

    @_settings(examples)
    @given(
        case=st.one_of(
            st.tuples(st.sampled_from(SUBCOMMANDS), st.lists(ARG_TOKENS, max_size=7)),
            WELL_FORMED.map(lambda args: (args[0], args[1:])),
        )
    )
    def prop(case: tuple[str, list[str]]) -> None:
        command, tokens = case
        if command in NEED_EXTRA and (not tokens or tokens == ["serve"] or "--help" in tokens):
            tokens = [*tokens, "--unexpected"]
        if command == "catalog" and tokens[:1] == ["serve"] and "--help" not in tokens:
            tokens = ["serve", "--port", "not-a-port", *tokens[1:]]
        args = [command, *tokens]
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code: int | None = main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2 if exc.code else 0
            if code not in (0, 2):
                tally.crash(exc, args)
                return
        except Exception as exc:
            tally.crash(exc, args)
            return
        if code in (0, 10, 20, 30):
            tally.accept()
        elif code in (1, 2):
            message = err.getvalue() or out.getvalue()
            traceback = "Traceback (most recent call last)" in message
            tally.reject(message, not traceback and bool(CLEAR_CLI.search(message)), args)
        else:
            tally.crash(RuntimeError(f"exit code {code}"), args)

    with _environment(
        PROVENANCE_HOME=str(home),
        PROVENANCE_CATALOG="datahub",
        DATAHUB_GMS_URL=None,
        PROVENANCE_LITE_DB=None,
        **dict.fromkeys(CHAT_MODEL_ENVS),
    ):
        return _run(tally, prop)


# ------------------------------------------------------------------------------------------------ together

EXAMPLES = {"plans": 400, "operators": 200, "chat": 400, "graph": 8, "urns": 60, "traces": 300, "cli": 120}


def measure_bad_input(template: Path, workdir: Path | None = None, scale: float = 1.0) -> BadInputFigures:
    n = {key: max(1, math.ceil(value * scale)) for key, value in EXAMPLES.items()}
    domains = [plans(n["plans"]), operator_parameters(n["operators"]), chat_messages(n["chat"])]
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        live = LiveSession(fresh_home(template, Path(tmp) / "home"))
        try:
            domains.append(chat_through_graph(live, n["graph"]))
            domains.append(urns_and_fields(live, n["urns"]))
        finally:
            live.close()
        recorded_files = sorted_trace_files(live.settings.home)
        recorded = json.loads(recorded_files[-1].read_text()) if recorded_files else None
        domains.append(trace_files(recorded, n["traces"]))
        cli_home = Path(tmp) / "cli-home"
        cli_home.mkdir()
        domains.append(cli_arguments(cli_home, n["cli"]))
    return BadInputFigures(domains)


@pytest.fixture(scope="module")
def figures(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> BadInputFigures:
    return measure_bad_input(seeded_template, tmp_path_factory.mktemp("bad-input"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "domain",
    [
        "plans (op, params, fraction, seed)",
        "operator parameters (and application to a column)",
        "chat messages (deterministic router and planner)",
        "chat messages through the graph",
        "dataset URNs and field names (discovery over MCP)",
        "trace files (random JSON, bytes, damaged real traces)",
        "CLI arguments (agent.cli.main)",
    ],
)
def test_bad_input_never_crashes_and_is_refused_clearly(figures: BadInputFigures, domain: str) -> None:
    tally = figures.domain(domain)
    assert tally.tried > 0
    assert not tally.crashes, tally.crashes
    assert tally.clear == tally.rejected, tally.unclear
    if domain.startswith(("plans", "operator", "dataset", "trace", "CLI")):
        assert tally.rejected > 0  # the strategies do reach the refusals
