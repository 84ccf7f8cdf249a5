"""Process exit codes, documented in the README: usable as a CI gate."""

from tools.errors import EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_OK, VERDICT_EXIT_CODES

__all__ = ["EXIT_BAD_INPUT", "EXIT_CODES", "EXIT_FAILURE", "EXIT_OK"]
EXIT_CODES = VERDICT_EXIT_CODES
