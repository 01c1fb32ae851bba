"""Inspect AI evaluations of models as agents (not built yet)."""
