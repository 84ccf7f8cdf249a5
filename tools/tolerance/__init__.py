"""Tolerance maps: how far each production model downstream of a column can take a change before the policy says
WARNING or BLOCK, found by bisection on the policy's own verdict over a dose grid (`bisection.py`)."""
