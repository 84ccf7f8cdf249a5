"""Process exit codes, documented in the README: usable as a CI gate."""

from tools.errors import EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_OK

__all__ = ["EXIT_BAD_INPUT", "EXIT_CODES", "EXIT_FAILURE", "EXIT_OK"]
EXIT_CODES = {"PASS": 0, "WARNING": 10, "BLOCK": 20, "INCOMPLETE": 30}
