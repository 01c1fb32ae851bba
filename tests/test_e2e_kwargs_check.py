"""A session's kwargs through the real platform (issue 29): only those its catalog entry declares
reach the environment; any other is a 422 naming the declared ones, and nothing starts, unless the
entry opts in with `free_kwargs = true`, whose kwargs then reach the environment as given."""

from __future__ import annotations

import textwrap

import httpx
from platform_testing.platform import running_platform

CATALOG = textwrap.dedent(
    """
    [envs.lake-free]
    gymnasium_id = "FrozenLake-v1"
    free_kwargs = true

    [envs.lake]
    gymnasium_id = "FrozenLake-v1"
    options.is_slippery = { type = "bool", default = true }
    """
)


def test_undeclared_kwargs_are_refused_and_free_ones_reach_the_environment(tmp_path):
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(CATALOG)
    with (
        running_platform(tmp_path / "platform", extra_env={"PLATFORM_CATALOG": str(catalog)}) as stack,
        httpx.Client(base_url=stack.url, timeout=90) as http,
    ):
        envs = {entry["id"]: entry for entry in http.get("/v0/envs").json()["data"]}
        assert (envs["lake-free"]["free_kwargs"], envs["lake"]["free_kwargs"], envs["ant"]["free_kwargs"]) == (
            True, False, False)

        # xml_file opens any path on the env host: refused before anything starts.
        for path in ("/etc/passwd", "/nonexistent/model.xml"):
            refused = http.post("/v0/sessions", json={"env_id": "ant", "kwargs": {"frame_skip": 5, "xml_file": path}})
            assert refused.status_code == 422, refused.text
            body = refused.json()
            assert (body["code"], body["field"]) == ("invalid_argument", "kwargs.xml_file")
            declared = ", ".join(option["name"] for option in envs["ant"]["options"])
            assert body["detail"] == (f"kwargs.xml_file is not an option of 'ant': it takes {declared} "
                                      "(a catalog.toml entry takes other kwargs with free_kwargs = true)")
            assert path not in body["detail"]  # the same answer for a file that exists and one that does not
        for env_id, kwargs, field in (
            ("lake", {"is_slippery": False, "map_name": "8x8"}, "kwargs.map_name"),  # it takes is_slippery, endless
            ("pong", {"game": "breakout"}, "kwargs.game"),  # the entry's own kwarg is fixed
            ("cartpole", {"wad": "wad-1"}, "kwargs.wad"),  # Doom's own
        ):
            refused = http.post("/v0/sessions", json={"env_id": env_id, "kwargs": kwargs})
            assert refused.status_code == 422 and refused.json()["field"] == field, refused.text
            assert refused.json()["detail"].startswith(f"{field} is not an option of '{env_id}': it takes ")
        assert http.get("/v0/sessions", params={"include_closed": True}).json()["count"] == 0  # nothing started

        # A free_kwargs entry takes kwargs it does not declare, and the environment gets them:
        # on the 8x8 map, not slippery, "down" from the start is state 8 (4 on the 4x4 one).
        created = http.post("/v0/sessions", json={"env_id": "lake-free",
                                                  "kwargs": {"map_name": "8x8", "is_slippery": False}})
        assert created.status_code == 201, created.text
        session_id = created.json()["id"]
        try:
            assert http.post(f"/v0/sessions/{session_id}/reset", json={"seed": 0}).status_code == 200
            step = http.post(f"/v0/sessions/{session_id}/step", json={"action": 1})
            assert step.status_code == 200, step.text
            assert step.json()["observation"] == 8
        finally:
            http.delete(f"/v0/sessions/{session_id}")
