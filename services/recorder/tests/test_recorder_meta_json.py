"""meta.json's bytes: the encoder that keeps the spaces' JSON gives what json gives, every time."""

from __future__ import annotations

import json

from platform_recorder.meta import MetaEncoder, encode_json


def _meta(bound: float) -> dict:
    return {
        "id": "s-1",
        "kwargs": {"frameskip": 4},
        "observation_space": {"type": "Box", "low": [0.0] * 1000, "high": [bound] * 1000},
        "action_space": {"type": "Discrete", "n": 6},
        "episodes": [],
        "last_seq": 0,
    }


def test_meta_bytes_are_json_and_follow_what_changes() -> None:
    encoder = MetaEncoder()
    meta = _meta(255.0)
    assert encoder.encode(meta) == encode_json(meta)
    meta["episodes"].append({"index": 0, "length": 7, "return": float("nan")})  # non-finite: a string
    meta["last_seq"] = 8
    assert encoder.encode(meta) == encode_json(meta)
    assert json.loads(encoder.encode(meta))["episodes"][0]["return"] == "nan"
    meta["observation_space"] = _meta(float("inf"))["observation_space"]  # a new value (a reload)
    assert json.loads(encoder.encode(meta))["observation_space"]["high"][0] == "inf"
    assert list(json.loads(encoder.encode(meta))) == list(meta)  # members in meta's order
