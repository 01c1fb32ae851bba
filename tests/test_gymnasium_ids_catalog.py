"""The SDK's table of built-in catalog ids (`platform_sdk.client.builtin_ids`, which
`platform_sdk.gym_ids` registers as `simulusion/<id>` without asking a platform) is the broker's
built-in catalog: its ids, in order, and each one's `max_episode_steps` default. After a change
to the broker's builtin/*.toml: `.venv/bin/python scripts/gen_gym_ids.py`."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from platform_sdk.client.builtin_ids import BUILTIN_IDS

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gen_gym_ids.py"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_gym_ids", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_builtin_ids_are_the_brokers_builtin_catalog():
    generator = _generator()
    table = generator.builtin_ids()
    assert list(BUILTIN_IDS.items()) == list(table.items()), "run: .venv/bin/python scripts/gen_gym_ids.py"
    assert generator.TARGET.read_text(encoding="utf-8") == generator.module_text(table)
