"""Agent data: what a step may carry, what breaks a rule (left out, with a warning), and how it
is recorded (`agent.<name>`, NaN where a step had none, `agent_keys` in meta.json)."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import httpx
import numpy as np
import platform_sdk
import pytest
from platform_testing.waiting import wait_for


def _closed_meta(folder: Path):
    def check():
        path = folder / "meta.json"
        meta = json.loads(path.read_text()) if path.exists() else {}
        return meta if meta.get("status") == "closed" and meta.get("episodes") else None

    return wait_for(check, what=f"recording {folder} to be closed")


@pytest.mark.parametrize(
    ("agent", "rule"),
    [
        ({"bad name!": 1.0}, "letters, digits"),
        ({"nan": math.nan}, "finite"),
        ({"inf": math.inf}, "finite"),
        ({"text": "high"}, "number"),
        ({"long": list(range(257))}, "256"),
        ({f"k{i}": 1.0 for i in range(33)}, "32"),
    ],
)
def test_agent_data_that_breaks_a_rule_is_left_out_with_a_warning(platform_stack, agent, rule):
    with platform_sdk.connect("cartpole", url=platform_stack.url, record=True) as env:
        env.reset(seed=0)
        with pytest.warns(platform_sdk.PlatformWarning, match=rule):
            _obs, reward, *_ = env.step(1, agent=agent)
        assert reward == 1.0, "the step itself went through"
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            env.step(1, agent={"confidence": 0.5})  # the session goes on, no warning
        body = json.dumps({"action": 0, "agent": agent})  # NaN and Infinity as Python writes them
        rest = httpx.post(f"{platform_stack.url}/v0/sessions/{env.session_id}/step", content=body,
                          headers={"content-type": "application/json"}).json()
        assert rest["warnings"] and any(rule in line for line in rest["warnings"])


def test_a_name_keeps_the_shape_of_its_first_value(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url) as env:
        env.reset(seed=0)
        env.step(1, agent={"logits": [0.1, 0.9]})
        with pytest.warns(platform_sdk.PlatformWarning, match="shape"):
            env.step(1, agent={"logits": [0.1, 0.2, 0.7]})


def test_agent_data_is_recorded_per_step(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url, record=True) as env:
        sid = env.session_id
        env.reset(seed=3)
        env.step(1, agent={"confidence": 0.82, "compute_s": 0.013, "refused": False, "logits": [0.2, 0.8]})
        env.step(0)
        env.step(1, agent={"refused": True})
    meta = _closed_meta(Path(platform_stack.recordings) / sid)
    assert set(meta["agent_keys"]) == {"confidence", "compute_s", "refused", "logits"}
    data = np.load(Path(platform_stack.recordings) / sid / meta["episodes"][0]["file"])
    confidence = data["agent.confidence"]
    assert confidence.dtype == np.float64 and confidence[0] == 0.82 and np.isnan(confidence[1:]).all()
    assert data["agent.refused"][0] == 0.0 and np.isnan(data["agent.refused"][1]) and data["agent.refused"][2] == 1.0
    assert data["agent.logits"].shape == (3, 2) and data["agent.logits"][0].tolist() == [0.2, 0.8]
