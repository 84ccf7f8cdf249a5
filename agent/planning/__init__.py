"""Offline routing and experiment planning, used when no chat model is configured."""
