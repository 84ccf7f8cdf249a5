"""The `provenance` subcommands, grouped by concern; `agent/cli.py` parses and dispatches."""
