"""Process exit codes, documented in the README: usable as a CI gate."""

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2
EXIT_CODES = {"PASS": 0, "WARNING": 10, "BLOCK": 20, "INCOMPLETE": 30}
