"""`DiscreteStepRequests` joins cached parts into the very request (and bytes) the SDK builds
field by field."""

from __future__ import annotations

import numpy as np
import pytest
from platform_sdk.client import batch_requests
from platform_sdk.client.batch_requests import DiscreteStepRequests
from simulusion.env.v1 import environment_pb2 as env_pb


def _field_by_field(actions: list[int], resetting: list[bool] | None, auto_reset: bool) -> env_pb.EnvRequest:
    request = env_pb.EnvRequest()
    for i, action in enumerate(actions):
        sub = request.batch.requests.add(index=i).request
        if resetting is not None and resetting[i]:
            sub.reset.SetInParent()
            continue
        sub.step.action.discrete = action
        if auto_reset:
            sub.step.auto_reset = True
    return request


@pytest.mark.parametrize("auto_reset", [False, True])
def test_steps_and_resets_are_the_messages_built_field_by_field(auto_reset: bool) -> None:
    builder = DiscreteStepRequests(6, auto_reset=auto_reset)
    rng = np.random.default_rng(0)
    for _ in range(20):
        actions = rng.integers(-3, 4, 6).tolist()
        resetting = rng.random(6) < 0.3
        built = builder.build(actions, resetting)
        expected = _field_by_field(actions, resetting.tolist(), auto_reset)
        assert built == expected
        assert built.SerializeToString() == expected.SerializeToString()
        assert [sub.index for sub in built.batch.requests] == list(range(6))


def test_without_resetting_every_sub_environment_steps() -> None:
    built = DiscreteStepRequests(3, auto_reset=False).build([0, 1, 0])
    assert built == _field_by_field([0, 1, 0], None, False)


def test_actions_past_the_cache_are_still_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_requests, "MAX_CACHED_ACTIONS", 2)
    builder = DiscreteStepRequests(2, auto_reset=False)
    for actions in ([0, 1], [2, 3], [4, 0], [2**40, -(2**40)]):
        assert builder.build(actions) == _field_by_field(actions, None, False)


def test_an_action_beyond_int64_is_refused() -> None:
    with pytest.raises(ValueError):
        DiscreteStepRequests(2, auto_reset=False).build([0, 2**70])
