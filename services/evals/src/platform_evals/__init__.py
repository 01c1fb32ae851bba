"""Inspect evaluations on the users' machines (docs/evals.md)."""
