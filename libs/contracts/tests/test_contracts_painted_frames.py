"""Painted frames (`platform_contracts.painted_frames`): the picture from the observation, and a
clear error for what cannot be painted. (Its likeness to Gymnasium's own picture is checked where
Gymnasium renders: sdk/tests/test_sdk_server_painted_frames.py.)"""

from __future__ import annotations

import numpy as np
import pytest
import simplejpeg
from platform_contracts.painted_frames import cartpole_frame, is_painted, painted_array, painted_jpeg
from simulusion.env.v1 import environment_pb2 as env_pb

BLACK, POLE, AXLE = (0, 0, 0), (202, 152, 101), (129, 132, 203)


def test_the_cart_stands_where_the_observation_puts_it() -> None:
    frame = cartpole_frame(0.5, 2.4, 75)
    assert is_painted(frame) and (frame.width, frame.height) == (600, 400)
    for position, centre in ((0.0, 300), (1.2, 450), (-2.4, 0)):
        picture = painted_array(frame, np.array([position, 0.0, 0.0, 0.0], np.float32))
        cart_row = picture[290]  # a row through the cart (its top is row 284, the track row 299)
        columns = np.flatnonzero((cart_row == BLACK).all(axis=1))
        assert abs((columns.min() + columns.max()) / 2 - max(centre, 12)) <= 13
        assert (picture[299] == BLACK).all(), "the track"


def test_the_pole_leans_with_the_angle_and_its_length_is_the_environments() -> None:
    upright = painted_array(cartpole_frame(0.5, 2.4, 75), np.zeros(4, np.float32))
    rows = np.flatnonzero((upright == POLE).all(axis=2).any(axis=1))
    assert rows.max() - rows.min() + 1 == pytest.approx(125 + 5, abs=3)  # scale 125 px/m x 1 m, from the axle
    assert (upright == AXLE).all(axis=2).any()
    longer = painted_array(cartpole_frame(1.0, 2.4, 75), np.zeros(4, np.float32))
    assert np.flatnonzero((longer == POLE).all(axis=2).any(axis=1)).size > rows.size + 100
    leaning = painted_array(cartpole_frame(0.5, 2.4, 75), np.array([0, 0, 0.2, 0], np.float32))
    top_row = np.flatnonzero((leaning == POLE).all(axis=2).any(axis=1)).min()
    top_columns = np.flatnonzero((leaning[top_row] == POLE).all(axis=1))
    assert top_columns.mean() > 310, "a positive angle leans the pole right"


def test_the_jpeg_decodes_to_the_picture() -> None:
    frame = cartpole_frame(0.5, 2.4, 90)
    observation = np.array([0.3, 0, -0.1, 0], np.float32)
    decoded = simplejpeg.decode_jpeg(painted_jpeg(frame, observation))
    assert decoded.shape == (400, 600, 3)
    assert np.abs(decoded.astype(int) - painted_array(frame, observation).astype(int)).mean() < 3


def test_what_cannot_be_painted_says_why() -> None:
    with pytest.raises(ValueError, match="no painter 'pendulum'"):
        painted_array(env_pb.Frame(encoding="painted:pendulum"), np.zeros(3))
    with pytest.raises(ValueError, match="cannot paint"):
        painted_array(env_pb.Frame(encoding="painted:cartpole", data=b"short"), np.zeros(4))
    with pytest.raises(ValueError, match="cannot paint"):
        painted_array(cartpole_frame(0.5, 2.4, 75), np.zeros(1))
