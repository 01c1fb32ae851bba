"""Your own Doom maps through the whole platform: `platform_sdk.upload_wad` (POST /v0/doom/wads)
stores a WAD the test writes, a session of another Doom environment plays one of its maps to
the exit (the recording keeps the outcome), and bad ids, maps and files say what is wrong."""

from __future__ import annotations

import httpx
import pytest
from platform_contracts.limits import MAX_WAD_BYTES
from platform_testing.doom_wads import write_corridor_wad
from platform_testing.platform import running_platform
from platform_testing.waiting import wait_for
from platform_wads import open_wad_store

import platform_sdk


def test_an_uploaded_map_is_played_to_its_exit_and_recorded(platform_stack, tmp_path) -> None:
    url = platform_stack.url
    path = write_corridor_wad(tmp_path / "memory_test.wad", ("MAP01", "MAP02"))
    wad = platform_sdk.upload_wad(path, url=url)
    assert (wad["name"], wad["maps"], wad["size"]) == ("memory_test.wad", ["MAP01", "MAP02"], path.stat().st_size)
    assert platform_sdk.upload_wad(path, url=url)["id"] == wad["id"]  # the same file: one WAD
    assert wad["id"] in [w["id"] for w in httpx.get(f"{url}/v0/doom/wads").json()["wads"]]

    kwargs = {"wad": wad["id"], "doom_map": "MAP02", "action_set": "full"}
    with platform_sdk.connect("freedoom-e1m1", url=url, kwargs=kwargs, record=True) as env:
        sid = env.session_id
        names = env.metadata["action_names"]
        assert env.metadata["doom_map"] == "MAP02"
        forward = names.index("MOVE_FORWARD")
        env.reset(seed=2)
        for steps in range(1, 60):
            _obs, _reward, terminated, truncated, info = env.step(forward)
            if terminated or truncated:
                break
        assert terminated and info["outcome"] == "exit", (steps, info)

    http = httpx.Client(base_url=url, timeout=30)
    meta = wait_for(lambda: (m := http.get(f"/v0/recordings/{sid}").json()).get("status") == "closed" and m,
                    what="the recording to close")
    assert meta["episodes"][0]["outcome"] == "exit" and meta["episodes"][0]["length"] == steps


def test_an_unknown_wad_a_missing_map_or_a_bad_file_says_what_exists(platform_stack, tmp_path) -> None:
    url = platform_stack.url
    wad = platform_sdk.upload_wad(write_corridor_wad(tmp_path / "one.wad", ("MAP05",)), url=url)
    with pytest.raises(platform_sdk.InvalidRequestError, match="no uploaded WAD 'wad-ffffffffffffffff': the uploaded WADs are") as caught:
        platform_sdk.connect("doom-basic", url=url, kwargs={"wad": "wad-ffffffffffffffff"})
    assert f"{wad['id']} (one.wad)" in str(caught.value) and caught.value.status == 422
    with pytest.raises(platform_sdk.InvalidRequestError, match=r"has no map 'MAP01'; its maps: MAP05") as caught:
        platform_sdk.connect("doom-basic", url=url, kwargs={"wad": wad["id"], "doom_map": "MAP01"})
    assert caught.value.status == 422

    not_a_wad = tmp_path / "notes.wad"
    not_a_wad.write_text("these are my notes")
    with pytest.raises(platform_sdk.InvalidRequestError, match="notes.wad is not a usable WAD: not a WAD"):
        platform_sdk.upload_wad(not_a_wad, url=url)
    big = tmp_path / "big.wad"
    with open(big, "wb") as file:
        file.truncate(MAX_WAD_BYTES + 1)
    with pytest.raises(platform_sdk.InvalidRequestError, match="big.wad is 20971521 bytes: the platform takes at most 20 MB"):
        platform_sdk.upload_wad(big, url=url)
    with pytest.raises(platform_sdk.InvalidRequestError, match="cannot upload the WAD"):
        platform_sdk.upload_wad(tmp_path / "missing.wad", url=url)


def test_wads_kept_in_s3_are_uploaded_copied_and_played(tmp_path, s3_server, s3_bucket) -> None:
    # PLATFORM_WADS=s3://...: the gateway puts the upload in the bucket, the env host copies it
    # from there to the session's folder (a real S3 API server: moto).
    env = {**s3_server.env(s3_bucket, prefix="platform/recordings"), "PLATFORM_WADS": f"s3://{s3_bucket}/platform/wads"}
    with running_platform(tmp_path / "platform", extra_env=env) as stack:
        wad = platform_sdk.upload_wad(write_corridor_wad(tmp_path / "s3.wad", ("E1M1",)), url=stack.url)
        store = open_wad_store(env["PLATFORM_WADS"], s3_server.endpoint, s3_server.access_key, s3_server.secret_key,
                               s3_server.region, secure=False)
        assert [r.id for r in store.records()] == [wad["id"]]
        assert not (tmp_path / "platform" / "data" / "wads").exists()  # nothing on the gateway's disk
        with platform_sdk.connect("doom-defend-the-center", url=stack.url,
                                  kwargs={"wad": wad["id"], "action_set": "full"}) as doom:
            assert doom.metadata["doom_map"] == "E1M1"  # the WAD's only map, on Freedoom Phase 1
            forward = doom.metadata["action_names"].index("MOVE_FORWARD")
            doom.reset(seed=1)
            for _ in range(60):
                *_, terminated, truncated, info = doom.step(forward)
                if terminated or truncated:
                    break
            assert terminated and info["outcome"] == "exit", info
