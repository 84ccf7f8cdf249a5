"""`python -m agent.cli`: the same as the `provenance` console script."""

import sys

from agent.cli.app import main

if __name__ == "__main__":
    sys.exit(main())
