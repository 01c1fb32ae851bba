"""Your own maps: WAD files read by their directory (`wad_format`), and a Doom environment that
plays a map of a WAD the test writes (`platform_testing.doom_wads`) to its exit."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
from doom_required import require_vizdoom
from platform_envs.doom import DoomEnv, make_env
from platform_envs.doom.errors import DoomError
from platform_testing.doom_wads import raw_wad, write_corridor_wad
from platform_wads.wad_format import WadFormatError, read_wad_file

require_vizdoom()


def _forward(env: DoomEnv) -> int:
    return env.metadata["action_names"].index("MOVE_FORWARD")


def _walk(env: DoomEnv, action: int, limit: int = 100) -> tuple[int, bool, dict] | None:
    """Take `action` from a reset until the episode ends: (steps, terminated, info); None if it
    has not ended after `limit` steps."""
    env.reset(seed=1)
    for steps in range(1, limit + 1):
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return steps, terminated, info
    return None


def test_a_wads_directory_names_its_kind_and_maps(tmp_path: Path) -> None:
    directory = read_wad_file(write_corridor_wad(tmp_path / "two.wad", ("MAP01", "MAP07")))
    assert (directory.kind, directory.maps, directory.lumps) == ("PWAD", ("MAP01", "MAP07"), 6)
    assert directory.base_game() == "freedoom2.wad"
    assert read_wad_file(write_corridor_wad(tmp_path / "ep.wad", ("E1M1",))).base_game() == "freedoom1.wad"


@pytest.mark.parametrize(("data", "message"), [
    (b"PWA", "not a WAD: 3 bytes, shorter than a WAD's 12-byte header"),
    (b"ZIP!" + bytes(20), r"not a WAD: it starts with b'ZIP!', not b'IWAD' or b'PWAD'"),
    (raw_wad([("MAP01", b""), ("THINGS", b"x")])[:-8], "its directory of 2 lumps at byte 13 does not lie within its 37 bytes"),
    (raw_wad([("MAP01", b""), ("THINGS", b"x")]).replace(b"\x01\x00\x00\x00THINGS", b"\xff\x00\x00\x00THINGS"),
     r"lump 1 \(255 bytes at byte 12\) does not lie within"),
    (raw_wad([("PLAYPAL", b"abc"), ("TEXTMAP", b"x")]), "a PWAD with 2 lumps and no map"),
])
def test_a_file_that_is_not_a_whole_wad_with_a_map_says_what_is_wrong(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "bad.wad"
    path.write_bytes(data)
    with pytest.raises(WadFormatError, match=message):
        read_wad_file(path)


def test_a_map_of_your_own_is_played_to_its_exit_on_any_scenario(tmp_path: Path) -> None:
    wad = write_corridor_wad(tmp_path / "corridor.wad", ("MAP01", "MAP02"))
    for scenario in ("basic", "freedoom-e1m1"):
        env = make_env(scenario, wad=str(wad), doom_map="map02", action_set="full")
        try:
            assert env.metadata["doom_map"] == "MAP02" and env.metadata["wad"] == "corridor.wad"
            assert _walk(env, 0, limit=30) is None, f"{scenario}: standing still ended the episode"
            ended = _walk(env, _forward(env))
            assert ended is not None, f"{scenario}: walking forward never reached the exit"
            steps, terminated, info = ended
            assert terminated and info["outcome"] == "exit", (scenario, info)
            assert steps < 40, steps  # the exit line is 192 map units ahead
        finally:
            env.close()


def test_a_wads_first_map_is_the_default_and_a_missing_map_is_named_with_those_there_are(tmp_path: Path) -> None:
    wad = write_corridor_wad(tmp_path / "corridor.wad", ("MAP03", "MAP04"))
    env = make_env("basic", wad=wad)
    try:
        assert env.doom_map == "MAP03"
    finally:
        env.close()
    with pytest.raises(DoomError, match=r"basic: no map 'MAP01' in the WAD corridor.wad; its maps: MAP03, MAP04"):
        make_env("basic", wad=wad, doom_map="MAP01")
    with pytest.raises(DoomError, match=r"freedoom-e1m1: no map 'MAP07' in freedoom-e1m1's WAD; its maps: E1M1, E1M2"):
        make_env("freedoom-e1m1", doom_map="MAP07")
    with pytest.raises(DoomError, match="cannot read the WAD"):
        make_env("basic", wad=tmp_path / "missing.wad")
    with pytest.raises(DoomError, match="wad must be the path of a WAD file, not 3"):
        make_env("basic", wad=3)  # type: ignore[arg-type]


def test_another_map_of_a_scenarios_own_wad(tmp_path: Path) -> None:
    env = make_env("freedoom-e1m1", doom_map="E1M2")
    try:
        obs, _ = env.reset(seed=3)
        assert env.metadata["doom_map"] == "E1M2" and obs["screen"].std() > 10
    finally:
        env.close()


def test_a_snapshot_on_your_own_map_restores_onto_this_sessions_copy(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write_corridor_wad(tmp_path / "a" / "wad-0123456789abcdef.wad")
    env = make_env("basic", wad=first, action_set="full")
    try:
        turn = env.metadata["action_names"].index("TURN_LEFT")
        env.reset(seed=5)
        for _ in range(3):
            env.step(turn)
        state = pickle.dumps(env)
        expected = [env.step(turn)[0]["screen"] for _ in range(3)]
    finally:
        env.close()
    # another session's copy of the same WAD; the first session's is gone
    second = shutil.copy(first, tmp_path / "b" / first.name)
    make_env("basic", wad=second).close()
    shutil.rmtree(tmp_path / "a")
    restored = pickle.loads(state)
    try:
        assert restored.wad == str(second)
        for screen in expected:
            np.testing.assert_array_equal(restored.step(turn)[0]["screen"], screen)
    finally:
        restored.close()
