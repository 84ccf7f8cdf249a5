"""The `provenance` command line (the console script `provenance = "agent.cli:main"`, or `python -m agent.cli`).

app.py parses (parser.py) and dispatches, and maps errors to the exit codes of exit_codes.py; one module per group
of commands: assess, bind, catalog (seed, serve, lineage, demo), check (a CHANGES.yml gate), conversation (ask,
resume, runs, publish), traces (traces, replay); render.py prints an assessment result on the terminal.
"""

from agent.cli.app import main

__all__ = ["main"]
