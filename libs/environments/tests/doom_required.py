"""`require_vizdoom()`: the Doom tests fail, naming the install command, when vizdoom is
missing (the sdk's dev group installs it: `make setup`), rather than being skipped."""

from __future__ import annotations

import pytest
from platform_envs.doom.errors import DoomError, import_vizdoom


def require_vizdoom() -> None:
    try:
        import_vizdoom()
    except DoomError as exc:
        pytest.fail(f"the Doom tests need vizdoom: {exc}", pytrace=False)
