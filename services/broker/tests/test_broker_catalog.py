"""Catalog parsing: built-ins, catalog.toml entries, and each way a file can be wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from platform_broker.catalog import load_catalog
from platform_broker.errors import ConfigError

CLASSIC_IDS = ["cartpole", "acrobot", "mountaincar", "mountaincar-continuous", "pendulum"]
# Every built-in family file (classic control, Atari, ...), in the broker's load order.
BUILTIN_IDS = load_catalog(None).ids()


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "catalog.toml"
    path.write_text(text)
    return path


def test_builtins_only_without_a_file():
    catalog = load_catalog(None)
    classic = [env_id for env_id in catalog.ids() if env_id in CLASSIC_IDS]
    assert classic == CLASSIC_IDS
    gym_ids = [catalog.get(env_id).gymnasium_id for env_id in CLASSIC_IDS]
    assert gym_ids == ["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1"]
    assert all(entry.description and "\n" not in entry.description for entry in catalog)
    assert all(not entry.image for entry in catalog)  # built-ins run without Docker


def test_file_entries_are_added(tmp_path):
    (tmp_path / "my_envs").mkdir()
    path = write(tmp_path, """
[envs.lunar]
gymnasium_id = "LunarLander-v3"
description = "Land on the pad"
kwargs = { continuous = true, gravity = -9.5 }

[envs.my-env]
factory = "my_module:make_env"
path = "./my_envs"
""")
    catalog = load_catalog(path)
    assert catalog.ids() == [*BUILTIN_IDS, "lunar", "my-env"]
    lunar = catalog.get("lunar")
    assert (lunar.gymnasium_id, lunar.description, lunar.factory) == ("LunarLander-v3", "Land on the pad", "")
    assert json.loads(lunar.kwargs_json) == {"continuous": True, "gravity": -9.5}
    mine = catalog.get("my-env")
    assert mine.factory == "my_module:make_env" and mine.gymnasium_id == ""
    assert mine.path == str((tmp_path / "my_envs").resolve())  # relative to the file's folder
    assert mine.description and json.loads(mine.kwargs_json) == {}


def test_an_image_entry(tmp_path):
    path = write(tmp_path, """
[envs.my-sim]
image = "ghcr.io/my-org/my-simulator:1.2@sha256:abc123"
kwargs = { level = 2 }

[envs.plain]
image = "my-sim"
description = "My simulator"
""")
    catalog = load_catalog(path)
    assert catalog.ids() == [*BUILTIN_IDS, "my-sim", "plain"]
    sim = catalog.get("my-sim")
    assert sim.image == "ghcr.io/my-org/my-simulator:1.2@sha256:abc123"
    assert (sim.gymnasium_id, sim.factory, sim.path) == ("", "", "")
    assert json.loads(sim.kwargs_json) == {"level": 2}
    assert sim.description == "Docker image ghcr.io/my-org/my-simulator:1.2@sha256:abc123"
    assert catalog.get("plain").description == "My simulator"


def test_a_file_entry_replaces_a_builtin(tmp_path):
    catalog = load_catalog(write(tmp_path, '[envs.cartpole]\ngymnasium_id = "CartPole-v0"\n'))
    assert catalog.get("cartpole").gymnasium_id == "CartPole-v0"
    assert catalog.ids() == BUILTIN_IDS


@pytest.mark.parametrize(("text", "entry", "problem"), [
    ('[envs."bad id"]\ngymnasium_id = "X-v0"\n', "bad id", "letters, digits"),
    ('[envs."a.b"]\ngymnasium_id = "X-v0"\n', "a.b", "letters, digits"),
    ('[envs.both]\ngymnasium_id = "X-v0"\nfactory = "m:f"\n', "both", "exactly one of"),
    ('[envs.both]\nimage = "org/sim"\nfactory = "m:f"\n', "both", "exactly one of 'gymnasium_id', 'factory' and 'image'"),
    ('[envs.both]\nimage = "org/sim"\ngymnasium_id = "X-v0"\n', "both", "exactly one of"),
    ('[envs.img]\nimage = "-v /:/host org/sim"\n', "img", "Docker image reference"),
    ('[envs.img]\nimage = "org/sim latest"\n', "img", "Docker image reference"),
    ('[envs.img]\nimage = ["org/sim"]\n', "img", "'image' must be a string"),
    ('[envs.img]\nimage = "org/sim"\npath = "."\n', "img", "only goes with 'factory'"),
    ('[envs.neither]\ndescription = "nothing to run"\n', "neither", "exactly one of"),
    ('[envs.fac]\nfactory = "no_colon"\n', "fac", "'module:function'"),
    ('[envs.fac]\nfactory = "m:f:g"\n', "fac", "'module:function'"),
    ('[envs.kw]\ngymnasium_id = "X-v0"\nkwargs = 3\n', "kw", "'kwargs' must be a table"),
    ('[envs.kw]\ngymnasium_id = "X-v0"\nkwargs = { when = 1979-05-27 }\n', "kw", "JSON values"),
    ('[envs.typo]\ngymnasium_id = "X-v0"\nkwarg = {}\n', "typo", "unknown keys ['kwarg']"),
    ('[envs.num]\ngymnasium_id = 5\n', "num", "'gymnasium_id' must be a string"),
    ('[envs.p]\nfactory = "m:f"\npath = "./missing"\n', "p", "is not a folder"),
    ('[envs.p]\ngymnasium_id = "X-v0"\npath = "."\n', "p", "only goes with 'factory'"),
    ('envs = { flat = "X-v0" }\n', "flat", "must be a table"),
    ('[envs.free]\nfactory = "m:f"\nfree_kwargs = "yes"\n', "free", "'free_kwargs' must be true or false, got 'yes'"),
    ('[envs.free]\nfactory = "m:f"\nfree_kwargs = 1\n', "free", "'free_kwargs' must be true or false, got 1"),
    ('[envs.free]\nfactory = "m:f"\nfree-kwargs = true\n', "free", "unknown keys ['free-kwargs']"),
    ('[envs.g]\nfactory = "m:f"\ngpus = -1\n', "g", "'gpus' must be a whole number from 0 to 16, got -1"),
    ('[envs.g]\nfactory = "m:f"\ngpus = 1.5\n', "g", "'gpus' must be a whole number from 0 to 16, got 1.5"),
    ('[envs.g]\nfactory = "m:f"\ngpus = true\n', "g", "'gpus' must be a whole number from 0 to 16, got True"),
    ('[envs.g]\nimage = "org/sim"\ngpus = 17\n', "g", "'gpus' must be a whole number from 0 to 16, got 17"),
])
def test_bad_entries_name_the_file_and_the_entry(tmp_path, text, entry, problem):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_catalog(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"catalog {path}: entry '{entry}': ")
    assert problem in message


@pytest.mark.parametrize(("text", "problem"), [
    ("[envs.x\n", "not valid TOML"),
    ("envs = 3\n", "'envs' must be a table"),
    ('[environments.x]\ngymnasium_id = "X-v0"\n', "unknown top-level keys ['environments']"),
])
def test_bad_files_name_the_file(tmp_path, text, problem):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match="^catalog ") as info:
        load_catalog(path)
    assert str(path) in str(info.value) and problem in str(info.value)
    assert "\n" not in str(info.value)


def test_free_kwargs_is_an_entrys_opt_in(tmp_path):
    catalog = load_catalog(write(tmp_path, """
[envs.open]
factory = "m:f"
free_kwargs = true

[envs.shut]
image = "org/sim"
free_kwargs = false

[envs.plain]
gymnasium_id = "X-v0"
"""))
    assert [catalog.get(env_id).free_kwargs for env_id in ("open", "shut", "plain")] == [True, False, False]
    assert not any(entry.free_kwargs for entry in load_catalog(None))  # no built-in takes free kwargs


def test_gpus_is_how_many_an_instance_needs(tmp_path):
    catalog = load_catalog(write(tmp_path, """
[envs.render]
image = "org/sim:gpu"
gpus = 2

[envs.plain]
gymnasium_id = "X-v0"
"""))
    assert [catalog.get(env_id).gpus for env_id in ("render", "plain")] == [2, 0]
    assert not any(entry.gpus for entry in load_catalog(None))  # every built-in runs on a CPU


def test_a_missing_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read it"):
        load_catalog(tmp_path / "nope.toml")
