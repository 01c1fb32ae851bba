"""Catalog options through the real platform: `GET /v0/envs` describes what each environment
accepts, a create's kwargs are checked against it before anything starts (422 naming the kwarg),
and an accepted control rate option reaches the environment."""

from __future__ import annotations

import textwrap

import httpx
from platform_testing.platform import running_platform

CATALOG = textwrap.dedent(
    """
    [envs.lake]
    gymnasium_id = "FrozenLake-v1"
    family = "Toy text"
    kwargs = { is_slippery = false }
    options.map_name = { type = "choice", choices = ["4x4", "8x8"], default = "4x4", help = "The map." }
    options.is_slippery = { type = "bool", help = "Moves may slip sideways." }
    """
)


def test_options_are_listed_checked_and_reach_the_environment(tmp_path):
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(CATALOG)
    with (
        running_platform(tmp_path / "platform", extra_env={"PLATFORM_CATALOG": str(catalog)}) as stack,
        httpx.Client(base_url=stack.url, timeout=90) as http,
    ):
        envs = {entry["id"]: entry for entry in http.get("/v0/envs").json()["data"]}
        pong = envs["pong"]
        assert pong["family"] == "Atari"
        options = {option["name"]: option for option in pong["options"]}
        assert options["frameskip"] == {
            "name": "frameskip", "type": "int", "default": 4, "minimum": 1, "maximum": 60, "choices": None,
            "help": options["frameskip"]["help"],
        }
        assert "metadata.control_rate = 60 / frameskip" in options["frameskip"]["help"]
        assert options["mode"]["choices"] == [0, 1] and options["endless"]["default"] is False
        lake = envs["lake"]
        assert lake["family"] == "Toy text"
        assert [(o["name"], o["default"]) for o in lake["options"]] == [
            ("map_name", "4x4"), ("is_slippery", False), ("endless", False)]  # its kwargs are its defaults

        refused = http.post("/v0/sessions", json={"env_id": "pong", "kwargs": {"frameskip": 0}})
        assert refused.status_code == 422, refused.text
        body = refused.json()
        assert (body["code"], body["field"]) == ("invalid_argument", "kwargs.frameskip")
        assert body["detail"].startswith("kwargs.frameskip of 'pong' must be an integer from 1 to 60, not 0")
        wrong_map = http.post("/v0/sessions", json={"env_id": "lake", "kwargs": {"map_name": "16x16"}})
        assert wrong_map.status_code == 422 and wrong_map.json()["field"] == "kwargs.map_name"
        assert 'must be one of "4x4", "8x8", not "16x16"' in wrong_map.json()["detail"]
        assert http.get("/v0/sessions", params={"include_closed": True}).json()["count"] == 0  # nothing started

        created = http.post("/v0/sessions", json={"env_id": "pong", "kwargs": {"frameskip": 2}})
        assert created.status_code == 201, created.text
        session = created.json()
        assert session["metadata"]["control_rate"] == 30 and session["metadata"]["frameskip"] == 2
        assert http.delete(f"/v0/sessions/{session['id']}").status_code == 200
