"""The protocol limits of `platform_contracts.limits` are the ones the parts really apply."""

from __future__ import annotations

import nats
from platform_contracts import limits, names
from platform_local import nats_process


def test_the_launchers_nats_config_is_the_payload_limit() -> None:
    # platform_local runs without the contracts package: its value is checked against the limit here.
    assert nats_process.MAX_PAYLOAD == limits.NATS_MAX_PAYLOAD


async def test_the_nats_server_takes_messages_up_to_the_payload_limit(nats_server) -> None:
    nc = await nats.connect(nats_server.url)
    try:
        assert nc.max_payload == limits.NATS_MAX_PAYLOAD
    finally:
        await nc.close()


def test_hold_limits_fit_each_other() -> None:
    assert limits.max_hold_steps(frames=True) == limits.MAX_HOLD_STEPS_WITH_FRAMES < limits.MAX_HOLD_STEPS
    assert limits.max_hold_steps(frames=False) == limits.MAX_HOLD_STEPS


def test_name_patterns_take_what_their_rules_say() -> None:
    assert limits.AGENT_NAME.fullmatch("policy.value-2_a")
    assert not limits.AGENT_NAME.fullmatch("a b") and not limits.AGENT_NAME.fullmatch("a/b")
    longest = "x" * names.MAX_LIFE_NAME_LENGTH
    assert names.LIFE_NAME.fullmatch(longest) and not names.LIFE_NAME.fullmatch(longest + "x")
    assert not names.LIFE_NAME.fullmatch("") and not names.LIFE_NAME.fullmatch("robot 1")
