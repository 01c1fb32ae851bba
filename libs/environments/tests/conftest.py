"""The environments' tests import their helpers (`builtin_catalog`, `doom_required`) from this
folder (pytest runs with --import-mode=importlib).

`menagerie_root`: the local copy of MuJoCo Menagerie's robots that the robot tests load (nothing
here downloads robots): MENAGERIE_ROOT when set, else `<repo>/../shared/menagerie`; a test using it
fails naming MENAGERIE_ROOT when neither holds the catalog's robots."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

MENAGERIE_ROBOTS = ("franka_emika_panda", "ufactory_xarm7", "unitree_h1", "unitree_g1", "booster_t1")
_BESIDE_THE_CHECKOUT = Path(__file__).resolve().parents[3].parent / "shared" / "menagerie"


@pytest.fixture(scope="session")
def menagerie_root() -> Path:
    """The Menagerie copy with the catalog's five robots, also set as MENAGERIE_ROOT (for
    subprocesses and the mujoco-menagerie package)."""
    root = Path(os.environ.get("MENAGERIE_ROOT") or _BESIDE_THE_CHECKOUT)
    missing = [robot for robot in MENAGERIE_ROBOTS if not (root / robot).is_dir()]
    if missing:
        pytest.fail(
            f"the robot tests need MENAGERIE_ROOT: a local copy of MuJoCo Menagerie with {', '.join(MENAGERIE_ROBOTS)} "
            f"(looked in {root}, missing {', '.join(missing)}; the default is <repo>/../shared/menagerie)"
        )
    os.environ["MENAGERIE_ROOT"] = str(root)
    return root
