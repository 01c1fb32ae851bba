"""The agent data rules (platform_envhost.agent_data): what is recorded, and the warning for each rule."""

from __future__ import annotations

from typing import Any

import numpy as np
from platform_contracts.values import datamap_from_dict, dict_from_datamap
from platform_envhost.agent_data import AgentNames, check_agent_data, with_warnings
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb


def _check(agent: dict[str, Any], names: AgentNames | None = None) -> tuple[dict[str, Any] | None, list[str]]:
    recorded, warnings = check_agent_data(datamap_from_dict(agent), names or AgentNames())
    return (dict_from_datamap(recorded) if recorded is not None else None), warnings


def test_numbers_are_recorded_as_they_came_without_a_copy() -> None:
    agent = datamap_from_dict({"confidence": 0.82, "compute_s": 0.013})
    recorded, warnings = check_agent_data(agent, AgentNames())
    assert recorded is agent and warnings == []


def test_booleans_and_integers_become_numbers_and_lists_float64_arrays() -> None:
    recorded, warnings = _check({"refused": False, "accepted": True, "count": 3, "probs": [0.25, 0.75],
                                 "logits": np.array([1, 2, 3], dtype=np.int32), "one": np.float32(0.5)})
    assert warnings == []
    assert recorded is not None
    assert (recorded["refused"], recorded["accepted"], recorded["count"], recorded["one"]) == (0.0, 1.0, 3.0, 0.5)
    assert all(isinstance(recorded[k], float) for k in ("refused", "accepted", "count", "one"))
    for name, expected in (("probs", [0.25, 0.75]), ("logits", [1.0, 2.0, 3.0])):
        assert recorded[name].dtype == np.float64 and recorded[name].tolist() == expected


def test_each_broken_value_is_left_out_with_a_warning_naming_it_and_its_rule() -> None:
    recorded, warnings = _check({
        "ok": 1.5,
        "policy": "ppo",
        "nan": float("nan"),
        "inf_list": [1.0, float("inf")],
        "long": list(range(257)),
        "empty": [],
        "nested": {"a": 1},
        "grid": np.zeros((2, 2)),
        "words": ["a", "b"],
        "bad name!": 1.0,
        "none": None,
    })
    assert recorded == {"ok": 1.5}
    by_name = {line.split("'")[1]: line for line in warnings}
    assert set(by_name) == {"policy", "nan", "inf_list", "long", "empty", "nested", "grid", "words", "bad name!",
                            "none"}
    assert "a string" in by_name["policy"] and "finite numbers, booleans or lists" in by_name["policy"]
    assert "nan is not finite" in by_name["nan"]
    assert "inf is not finite" in by_name["inf_list"]
    assert "a list of 257 numbers; lists hold at most 256" in by_name["long"]
    assert "an empty list" in by_name["empty"]
    assert "a map" in by_name["nested"]
    assert "shape (2, 2)" in by_name["grid"] and "flat" in by_name["grid"]
    assert "a list holding text" in by_name["words"]
    assert "names are letters, digits, '_', '.' and '-'" in by_name["bad name!"]
    assert "null" in by_name["none"]
    assert all(line.startswith(f"agent data {name!r} left out: ") for name, line in by_name.items())


def test_a_list_of_256_numbers_and_names_with_dots_and_dashes_are_fine() -> None:
    recorded, warnings = _check({"policy.value-head_2": list(range(256))})
    assert warnings == [] and recorded is not None
    assert recorded["policy.value-head_2"].shape == (256,)


def test_a_name_keeps_the_shape_of_its_first_value() -> None:
    names = AgentNames()
    recorded, warnings = _check({"q": [1.0, 2.0], "v": 0.5}, names)
    assert warnings == [] and recorded is not None and recorded["q"].tolist() == [1.0, 2.0]
    assert names.shapes == {"q": 2, "v": -1}
    recorded, warnings = _check({"q": [1.0, 2.0, 3.0], "v": [0.5]}, names)
    assert recorded is None
    assert sorted(warnings) == [
        "agent data 'q' left out: a name keeps the shape of its first value (a list of 2), not a list of 3",
        "agent data 'v' left out: a name keeps the shape of its first value (a number), not a list of 1",
    ]
    recorded, warnings = _check({"q": np.array([3.0, 4.0]), "v": True}, names)
    assert warnings == [] and recorded is not None and recorded["v"] == 1.0


def test_a_name_that_broke_a_rule_first_takes_its_shape_from_its_first_good_value() -> None:
    names = AgentNames()
    _check({"x": "text"}, names)
    recorded, warnings = _check({"x": [1.0, 2.0]}, names)
    assert warnings == [] and recorded is not None
    assert names.shapes == {"x": 2}


def test_at_most_32_names_a_step() -> None:
    agent = {f"n{i:02d}": float(i) for i in range(40)}
    recorded, warnings = _check(agent)
    assert recorded is not None and sorted(recorded) == [f"n{i:02d}" for i in range(32)]
    assert warnings == [f"agent data 'n{i:02d}' left out: at most 32 names a step" for i in range(32, 40)]


def test_at_most_256_names_a_recording() -> None:
    names = AgentNames()
    for start in range(0, 256, 32):
        recorded, warnings = _check({f"n{i:03d}": 1.0 for i in range(start, start + 32)}, names)
        assert warnings == [] and recorded is not None and len(recorded) == 32
    recorded, warnings = _check({"n000": 2.0, "late": 1.0}, names)
    assert recorded == {"n000": 2.0}  # known names go on
    assert warnings == ["agent data 'late' left out: at most 256 names a recording"]


def test_empty_agent_data_records_nothing() -> None:
    assert check_agent_data(values_pb.DataMap(), AgentNames()) == (None, [])


def test_warnings_are_appended_to_the_response_and_the_sdk_parse_sees_both() -> None:
    response = env_pb.EnvResponse(id=9)
    response.step.reward = 1.0
    response.step.observation.discrete = 3
    raw = response.SerializeToString()
    assert with_warnings(raw, []) is raw
    changed = with_warnings(raw, ["agent data 'a' left out: x", "agent data 'b' left out: y"])
    assert changed.startswith(raw)  # the response itself is not re-encoded
    parsed = env_pb.EnvResponse.FromString(changed)
    assert parsed.id == 9 and parsed.WhichOneof("result") == "step" and parsed.step == response.step
    assert list(parsed.warnings) == ["agent data 'a' left out: x", "agent data 'b' left out: y"]

