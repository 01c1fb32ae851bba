"""`require_family(module, extra)`: a family's tests fail, naming the extra to install, when its
simulator is missing (this package's `families` group installs every one: `make setup`), rather
than being skipped."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest


def require_family(module: str, extra: str) -> ModuleType:
    """The imported `module`; fails the test module's collection when it cannot be imported."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        pytest.fail(
            f"these tests need {module}: pip install 'platform-envs[{extra}]' (or make setup) ({exc})", pytrace=False
        )
