"""Frames that are their observations (Frame encoding "observation", as an Atari session that
records frames sends them): the recorder JPEG-encodes them from the recorded observations, with
the environment server's encoder and the quality the frame names, thinned lives included; and
painted frames (CartPole's), painted from the observations first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces as gs
from platform_contracts.frames import OBSERVATION, jpeg_bytes
from platform_contracts.painted_frames import cartpole_frame, painted_jpeg
from platform_contracts.spaces import space_to_proto
from platform_contracts.values import tensor_from_array
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import closed, episode_events, load_episode, started, subject_of
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

HEIGHT, WIDTH, QUALITY = 12, 20, 60


def screen(seq: int) -> np.ndarray:
    """A recognisable screen per seq."""
    array = np.random.default_rng(seq).integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    array[:, : seq % WIDTH] = 0
    return array


def screen_obs(seq: int) -> pb.Value:
    return pb.Value(tensor=tensor_from_array(screen(seq)))


def screen_spec() -> env_pb.SpecResponse:
    return env_pb.SpecResponse(
        env_id="screen",
        observation_space=space_to_proto(gs.Box(0, 255, (HEIGHT, WIDTH, 3), np.uint8)),
        action_space=space_to_proto(gs.Discrete(2)),
    )


def with_observation_frames(events: list[Any], height: int = HEIGHT) -> list[Any]:
    marker = env_pb.Frame(encoding=OBSERVATION, width=WIDTH, height=height, quality=QUALITY)
    for event in events:
        result = event.reset if event.WhichOneof("kind") == "reset" else event.step.result
        result.frame.CopyFrom(marker)
    return events


def write(tmp_path: Path, events: list[Any], last_seq: int, **life: Any) -> None:
    messages = [started("s1", spec=screen_spec(), **life), *events, closed("s1", last_seq=last_seq)]
    RecordingWriter(tmp_path).process([(subject_of(m), m.SerializeToString()) for m in messages])


def frames(arrays: dict[str, np.ndarray]) -> list[bytes]:
    return [bytes(f) for f in arrays["frames"]]


def test_observation_frames_are_the_jpegs_of_their_observations(tmp_path: Path) -> None:
    events = with_observation_frames(episode_events("s1", 1, 0, 4, obs=screen_obs))
    write(tmp_path, events, last_seq=5)
    arrays = load_episode(tmp_path, "s1", 0)
    assert frames(arrays) == [jpeg_bytes(screen(seq), QUALITY) for seq in range(1, 6)]
    assert np.array_equal(arrays["observations"], np.stack([screen(seq) for seq in range(1, 6)]))


def test_a_frame_whose_observation_is_not_its_size_is_left_out_and_the_rest_recorded(
        tmp_path: Path, caplog: Any) -> None:
    events = with_observation_frames(episode_events("s1", 1, 0, 3, obs=screen_obs))
    events[2].step.result.frame.height = HEIGHT + 1  # not the observation's size
    write(tmp_path, events, last_seq=4)
    recorded = frames(load_episode(tmp_path, "s1", 0))
    expected = [jpeg_bytes(screen(seq), QUALITY) for seq in range(1, 5)]
    assert recorded == [expected[0], expected[1], b"", expected[3]]
    assert "episode 0: the frame of row 2 is not recorded" in caplog.text
    assert f"not a {HEIGHT + 1} x {WIDTH} x 3 frame" in caplog.text


def test_a_thinned_life_encodes_only_the_frames_it_keeps(tmp_path: Path) -> None:
    events = with_observation_frames(episode_events("s1", 1, 0, 6, obs=screen_obs))
    write(tmp_path, events, last_seq=7, life="robot-1", frame_every=3)
    arrays = load_episode(tmp_path, "s1", 0)
    assert arrays["frame_steps"].tolist() == [0, 3, 6]  # the life's first reset row, steps 3 and 6
    assert frames(arrays) == [jpeg_bytes(screen(seq), QUALITY) for seq in (1, 4, 7)]
    assert arrays["observations"].shape == (7, HEIGHT, WIDTH, 3)  # every observation kept


def with_painted_frames(events: list[Any]) -> list[Any]:
    for event in events:
        result = event.reset if event.WhichOneof("kind") == "reset" else event.step.result
        result.frame.CopyFrom(cartpole_frame(0.5, 2.4, QUALITY))
    return events


def test_painted_frames_are_the_jpegs_of_their_pictures_painted_from_the_observations(tmp_path: Path) -> None:
    """A CartPole session's frames come painted (`platform_contracts.painted_frames`): the
    recorder paints each from the row's observation (`cartpole_obs`: its position is the seq)."""
    events = with_painted_frames(episode_events("s1", 1, 0, 3))
    messages = [started("s1"), *events, closed("s1", last_seq=4)]
    RecordingWriter(tmp_path).process([(subject_of(m), m.SerializeToString()) for m in messages])
    arrays = load_episode(tmp_path, "s1", 0)
    expected = [painted_jpeg(cartpole_frame(0.5, 2.4, QUALITY), np.array([seq, 0.5, -0.5, 1.0], np.float32))
                for seq in range(1, 5)]
    assert frames(arrays) == expected
    assert expected[0] != expected[1], "the rows differ (the cart moves)"


def test_a_painted_frame_no_painter_knows_is_left_out_and_the_rest_recorded(tmp_path: Path, caplog: Any) -> None:
    events = with_painted_frames(episode_events("s1", 1, 0, 2))
    events[1].step.result.frame.encoding = "painted:pendulum"  # from a newer environment server
    messages = [started("s1"), *events, closed("s1", last_seq=3)]
    RecordingWriter(tmp_path).process([(subject_of(m), m.SerializeToString()) for m in messages])
    recorded = frames(load_episode(tmp_path, "s1", 0))
    assert recorded[1] == b"" and recorded[0] and recorded[2]
    assert "the frame of row 1 is not recorded: no painter 'pendulum'" in caplog.text
