"""Proposed changes to the data (CHANGES.yml): the file's schema (schema.py), inferring it from a SQL diff, and
rendering a check's result. Kept import-light: import the submodule you need."""
