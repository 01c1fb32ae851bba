"""The stream's answers as text: orjson's, reading back as the standard library's would."""

from __future__ import annotations

import json

import numpy as np
import pytest
from platform_gateway import json_views
from platform_gateway.stream_json import answer_text
from platform_contracts.values import value_from_python


def test_an_answer_with_an_observation_reads_back_as_the_standard_librarys() -> None:
    observation = json_views.value_json(value_from_python({
        "joints": np.random.default_rng(0).normal(size=348),
        "contact": np.array([np.inf, -np.inf, np.nan, 0.5], dtype=np.float32),
        "count": np.int64(7),
    }))
    answer = {"id": 3, "op": "step", "result": {"observation": observation, "reward": 1e-05, "info": {"lives": 2}}}

    text = answer_text(answer)

    assert json.loads(text) == json.loads(json.dumps(answer))
    assert json.loads(text)["result"]["observation"]["contact"] == ["inf", "-inf", "nan", 0.5]
    assert " " not in text  # compact


def test_numpy_values_and_integer_keys_are_written_as_json() -> None:
    text = answer_text({"id": 1, "result": {"array": np.arange(3, dtype=np.float32), 5: "five"}})

    assert json.loads(text) == {"id": 1, "result": {"array": [0.0, 1.0, 2.0], "5": "five"}}


def test_what_orjson_refuses_falls_back_to_the_standard_library() -> None:
    big = 2**70  # past orjson's 64-bit integers

    assert json.loads(answer_text({"id": 1, "result": {"seed": big}})) == {"id": 1, "result": {"seed": big}}


def test_a_value_that_is_not_json_names_its_type() -> None:
    with pytest.raises(TypeError, match="object"):
        answer_text({"id": 1, "result": object()})
