"""The dispatch table: every subcommand the parser accepts has a handler, each handler's module and function exist,
and building the parser (what `provenance --help` does) imports none of them."""

from __future__ import annotations

import argparse
import subprocess
import sys

from agent.cli.app import HANDLERS, LazyCommand
from agent.cli.parser import build_parser


def test_every_subcommand_has_a_handler_that_resolves() -> None:
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) == set(HANDLERS)
    for name, handler in HANDLERS.items():
        assert isinstance(handler, LazyCommand), name
        assert callable(handler.load()), name


def test_the_parser_loads_no_command_module() -> None:
    code = (
        "import sys; from agent.cli import app; app.build_parser(); "
        "print(sorted(m for m in sys.modules if m.startswith(('agent.cli.', 'agent.graph', 'agent.assessment'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.strip() == "['agent.cli.app', 'agent.cli.parser', 'agent.cli.precheck']"
