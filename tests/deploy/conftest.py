"""Fixtures of the deployment tests (tests/deploy): the real helm binary (helm_tool.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the tests import their helpers (importlib mode)

from helm_tool import helm_binary  # found through the line above


@pytest.fixture(scope="session")
def helm() -> Path:
    return helm_binary()
