"""Environment previews: file names, atomic writes, and the preview route against a real
environment server (behind the stand-in broker of conftest.py)."""

from __future__ import annotations

import asyncio
import os

import pytest
import simplejpeg
from platform_gateway.previews import entry_hash, preview_name, write_atomic
from simulusion.control.v1 import control_pb2 as ctl

CARTPOLE = ctl.CatalogEntry(id="cartpole", description="Balance a pole", gymnasium_id="CartPole-v1")


def changed(entry: ctl.CatalogEntry, **fields: str) -> ctl.CatalogEntry:
    """A copy of `entry` with some fields set."""
    copy = ctl.CatalogEntry()
    copy.CopyFrom(entry)
    for key, value in fields.items():
        setattr(copy, key, value)
    return copy


def test_the_name_holds_the_id_and_a_short_hash_of_the_entry():
    name = preview_name(CARTPOLE)
    assert name == f"cartpole-{entry_hash(CARTPOLE)}"
    assert len(entry_hash(CARTPOLE)) == 12 and int(entry_hash(CARTPOLE), 16) >= 0
    assert preview_name(changed(CARTPOLE)) == name, "the same content, the same name"


@pytest.mark.parametrize(
    "change",
    [
        {"id": "cartpole2"},
        {"gymnasium_id": "CartPole-v0"},
        {"kwargs_json": '{"sutton_barto_reward": true}'},
        {"factory": "my_envs:make", "gymnasium_id": ""},
        {"path": "/opt/envs"},
        {"image": "my-org/cartpole:1"},
    ],
)
def test_a_changed_entry_gets_a_new_name(change):
    assert preview_name(changed(CARTPOLE, **change)) != preview_name(CARTPOLE)


def test_the_description_does_not_change_the_name():
    assert preview_name(changed(CARTPOLE, description="other words")) == preview_name(CARTPOLE)


def test_an_id_with_odd_characters_gives_a_plain_file_name():
    name = preview_name(ctl.CatalogEntry(id="../a b/c", gymnasium_id="CartPole-v1"))
    assert name.startswith("___a_b_c-") and "/" not in name


def test_write_atomic_creates_folders_replaces_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "previews" / "cartpole-0123456789ab.jpg"
    write_atomic(path, b"first")
    assert path.read_bytes() == b"first"
    write_atomic(path, b"second")
    assert path.read_bytes() == b"second"
    assert os.listdir(path.parent) == [path.name]


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path):
    path = tmp_path / "cartpole-0123456789ab.jpg"
    write_atomic(path, b"old")
    with pytest.raises(TypeError):
        write_atomic(path, "not bytes")  # type: ignore[arg-type]
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == [path.name]


async def test_listing_has_preview_urls_and_a_preview_is_made_once(broker, start_gateway, tmp_path):
    gateway = await start_gateway(cache_dir=tmp_path / "cache")
    listed = (await gateway.http.get("/v0/envs")).json()["data"]
    assert [(e["id"], e["preview"], e["preview_cached"]) for e in listed] == [
        ("cartpole", "/v0/envs/cartpole/preview", False)
    ]

    # Two requests at once make one session.
    first, second = await asyncio.gather(
        gateway.http.get("/v0/envs/cartpole/preview"), gateway.http.get("/v0/envs/cartpole/preview")
    )
    for response in (first, second):
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "image/jpeg"
        assert response.headers["cache-control"] == "max-age=86400"
    assert first.content == second.content
    assert simplejpeg.decode_jpeg(first.content).shape == (400, 600, 3)
    assert len(broker.sessions) == 1
    (session,) = broker.sessions.values()
    assert session.state == ctl.SESSION_STATE_CLOSED and not session.options.record, "closed, not recorded"

    files = [p.name for p in (tmp_path / "cache" / "previews").iterdir()]
    assert files == [f"{preview_name(CARTPOLE)}.jpg"]
    assert (await gateway.http.get("/v0/envs")).json()["data"][0]["preview_cached"] is True

    again = await gateway.http.get("/v0/envs/cartpole/preview")
    assert again.content == first.content and len(broker.sessions) == 1, "served from the cache"


async def test_an_unknown_env_is_a_404_naming_it(broker, start_gateway, tmp_path):
    gateway = await start_gateway(cache_dir=tmp_path)
    response = await gateway.http.get("/v0/envs/no-such-env/preview")
    assert response.status_code == 404
    assert "no-such-env" in response.json()["detail"] and "cartpole" in response.json()["detail"]
    assert not broker.sessions


async def test_an_env_without_frames_is_a_404_remembered(broker, start_gateway, new_env_server, tmp_path):
    text_only = new_env_server(gym_id="FrozenLake-v1", kwargs={"render_mode": "ansi"})
    await broker.use_env_server(text_only.address)
    broker.catalog = {"lake": "FrozenLake-v1"}
    gateway = await start_gateway(cache_dir=tmp_path)

    for _ in range(2):
        response = await gateway.http.get("/v0/envs/lake/preview")
        assert response.status_code == 404
        assert response.json() == {"detail": "lake renders no frames (render mode 'ansi')", "code": "no_frames"}
    assert len(broker.sessions) == 1, "the second request did not start the environment again"
    assert all(s.state == ctl.SESSION_STATE_CLOSED for s in broker.sessions.values())
    assert [p.suffix for p in (tmp_path / "previews").iterdir()] == [".noframes"]
    assert (await gateway.http.get("/v0/envs")).json()["data"][0]["preview_cached"] is False


async def test_a_failed_preview_is_a_503_naming_the_env_and_is_tried_again(
    broker, start_gateway, dead_env_host, tmp_path
):
    broker.address, broker.step_address = dead_env_host.address, ""
    gateway = await start_gateway(cache_dir=tmp_path)
    for attempt in (1, 2):
        response = await gateway.http.get("/v0/envs/cartpole/preview")
        assert response.status_code == 503
        body = response.json()
        assert body["detail"].startswith("the preview of cartpole failed") and body["log_tail"] == "Killed\n"
        assert len(broker.sessions) == attempt, "failures are not cached"
    assert not (tmp_path / "previews").exists() or not any((tmp_path / "previews").iterdir())


async def test_a_changed_entry_replaces_its_old_preview(broker, start_gateway, tmp_path):
    gateway = await start_gateway(cache_dir=tmp_path)
    assert (await gateway.http.get("/v0/envs/cartpole/preview")).status_code == 200
    broker.catalog = {"cartpole": "CartPole-v0"}  # same id, another definition
    assert (await gateway.http.get("/v0/envs")).json()["data"][0]["preview_cached"] is False
    assert (await gateway.http.get("/v0/envs/cartpole/preview")).status_code == 200
    new_name = preview_name(changed(CARTPOLE, gymnasium_id="CartPole-v0"))
    assert [p.name for p in (tmp_path / "previews").iterdir()] == [f"{new_name}.jpg"]
    assert len(broker.sessions) == 2
