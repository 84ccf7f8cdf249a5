"""Reliability tests: prompt injection, faults and recovery, bad input, artifact safety, isolation and load, scale.

Each module exposes a `measure_*` function returning a dataclass of figures; the tests assert on it and
`scripts/reliability_figures.py` prints the same figures as the Reliability table of docs/performance.md.
"""
