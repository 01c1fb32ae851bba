"""The built-in catalog's option declarations are true to the environments: each entry builds with
every declared default given explicitly, and classic control's defaults are Gymnasium's own."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import random

import gymnasium
import pytest
from platform_broker.catalog import load_catalog
from platform_sdk.server.factory import build_env

CATALOG = load_catalog(None)
DMC_SAMPLE = 6  # DeepMind Control has 51 entries: a fixed sample of them builds here
DMC = [entry for entry in CATALOG if entry.family == "DeepMind Control"]
CHOSEN = [entry for entry in CATALOG if entry.family != "DeepMind Control"] + random.Random(15).sample(DMC, DMC_SAMPLE)


def declared_defaults(entry) -> dict:
    """Every declared option's default that is not null, but the platform's own endless."""
    defaults = {option.name: json.loads(option.default_json) for option in entry.options if option.name != "endless"}
    return {name: value for name, value in defaults.items() if value is not None}


@pytest.mark.parametrize("entry", CHOSEN, ids=[entry.id for entry in CHOSEN])
def test_an_entry_builds_with_its_declared_defaults(entry, monkeypatch):
    if not os.environ.get("MUJOCO_GL"):
        monkeypatch.setenv("MUJOCO_GL", "egl")  # no display here: MuJoCo renders off screen
    kwargs = {**json.loads(entry.kwargs_json or "{}"), **declared_defaults(entry)}
    env, _ = build_env(entry.gymnasium_id, entry.factory, [entry.path] if entry.path else [], kwargs)
    try:
        env.reset(seed=0)
        env.step(env.action_space.sample())
    finally:
        env.close()


def test_classic_controls_defaults_are_gymnasiums():
    for entry in (entry for entry in CATALOG if entry.family == "Classic control"):
        spec = gymnasium.spec(entry.gymnasium_id)
        module, name = str(spec.entry_point).split(":")
        parameters = inspect.signature(getattr(importlib.import_module(module), name).__init__).parameters
        for option in entry.options:
            default = json.loads(option.default_json)
            if option.name == "max_episode_steps":
                assert default == spec.max_episode_steps, entry.id
            elif option.name != "endless":
                assert default == parameters[option.name].default, (entry.id, option.name)
