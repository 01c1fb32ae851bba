"""The checks, their registry `CHECKS`, and `run_check`/`run_all`, which run them.

A check takes a `Probe` and returns a one-line summary of what it saw; it raises `CheckFailed`
when the server is wrong and `CheckSkipped` when there is nothing to check.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

from platform_contracts.compliance.frames import check_frame
from platform_contracts.compliance.invalid_actions import invalid_actions
from platform_contracts.compliance.messages import one_line
from platform_contracts.compliance.probe import Probe
from platform_contracts.compliance.results import (
    CheckFailed,
    CheckResult,
    CheckSkipped,
    ComplianceOptions,
    Connection,
)
from platform_contracts.compliance.trajectories import outcome, same_trajectory
from platform_contracts.values import dict_from_datamap


def check_spec(probe: Probe) -> str:
    """The spec answers, names the environment, and its spaces and metadata decode."""
    if not probe.spec.env_id:
        raise CheckFailed("the spec has no env_id")
    try:
        dict_from_datamap(probe.spec.metadata)
    except Exception as exc:  # noqa: BLE001 - the server under test may fail in any way
        raise CheckFailed(f"the spec's metadata does not decode: {one_line(exc)}") from None
    probe.actions(1)
    render = probe.spec.render_mode or "none"
    spaces = f"observations {probe.observation_space}, actions {probe.action_space}"
    return f"{probe.spec.env_id}: {' '.join(spaces.split())}, render {render}"


def check_observations(probe: Probe) -> str:
    """Observations lie in the observation space after reset and after every step."""
    steps = 0
    for seed in (probe.options.seed, None):
        probe.observation(probe.reset(seed).observation, f"after reset(seed={seed})")
        for index, action in enumerate(probe.actions(probe.options.steps)):
            result = probe.step(action, f"step {index + 1}")
            probe.observation(result.observation, f"after step {index + 1}")
            steps += 1
            if result.terminated or result.truncated:
                break
    return f"2 resets and {steps} steps, every observation in its space"


def check_stepping(probe: Probe) -> str:
    """Sampled actions step; rewards are finite; ended episodes reset and step again."""
    probe.reset(probe.options.seed)
    episodes, steps, total = 1, 0, 0.0
    for index, action in enumerate(probe.actions(probe.options.steps * 3)):
        result = probe.step(action, f"step {index + 1}")
        if not math.isfinite(result.reward):
            raise CheckFailed(f"step {index + 1} returned the reward {result.reward}")
        try:
            dict_from_datamap(result.info)
        except Exception as exc:  # noqa: BLE001 - the server under test may fail in any way
            raise CheckFailed(f"the info of step {index + 1} does not decode: {one_line(exc)}") from None
        steps, total = steps + 1, total + result.reward
        if result.terminated or result.truncated:
            probe.reset()
            episodes += 1
    return f"{steps} sampled actions over {episodes} episode(s), total reward {total:.6g}"


def check_invalid_action(probe: Probe) -> str:
    """Actions outside the action space answer ERROR_CODE_INVALID_ACTION; the stream stays up."""
    probe.reset(probe.options.seed)
    invalid = [("no action", pb.Value()), *invalid_actions(probe.action_space)]
    for what, value in invalid:
        response = probe.call(env_pb.EnvRequest(step=env_pb.StepRequest(action=value)))
        if not response.HasField("error"):
            raise CheckFailed(f"the invalid action ({what}) was accepted")
        if response.error.code != env_pb.ERROR_CODE_INVALID_ACTION:
            code = env_pb.ErrorCode.Name(response.error.code)
            raise CheckFailed(f"the invalid action ({what}) answered {code}, not ERROR_CODE_INVALID_ACTION")
        probe.step(probe.actions(1)[0], f"a valid step after the invalid action ({what})")
    return (
        f"{len(invalid)} invalid actions refused ({', '.join(w for w, _ in invalid)}), the stream stayed up"
    )


def check_seeding(probe: Probe) -> str:
    """Two resets with the same seed give the same trajectory for the same actions."""
    seed = probe.options.seed
    first = probe.rollout(seed, probe.options.steps)
    second = probe.rollout(seed, probe.options.steps)
    same_trajectory(first, second, f"after reset(seed={seed}) again")
    return f"2 rollouts with seed {seed}: {len(first) - 1} identical steps"


def check_snapshot(probe: Probe) -> str:
    """snapshot -> k steps -> restore -> the same k steps, twice: identical results and frames."""
    options = probe.options
    last = probe.reset(options.seed).observation
    for index, action in enumerate(probe.actions(options.warmup_steps)):
        result = probe.step(action, f"warm-up step {index + 1}")
        if result.terminated or result.truncated:
            last = probe.reset(options.seed + index + 1).observation
        else:
            last = result.observation
    handle = probe.ok(env_pb.EnvRequest(snapshot=env_pb.SnapshotRequest()), "snapshot").snapshot.handle
    if not handle:
        raise CheckFailed("snapshot returned an empty handle")
    actions = probe.actions(options.snapshot_steps)
    render = probe.renders
    expected = [
        outcome(last, 0.0, False, False, None),
        *probe.replay(actions, render, "before the restore"),
    ]
    for attempt in ("first", "second"):
        restored = probe.ok(
            env_pb.EnvRequest(restore=env_pb.RestoreRequest(handle=handle)), f"{attempt} restore"
        )
        replayed = [
            outcome(restored.restore.observation, 0.0, False, False, None),
            *probe.replay(actions, render, f"after the {attempt} restore"),
        ]
        same_trajectory(expected, replayed, f"after the {attempt} restore", start="the restored observation")
    frames_note = " and frames" if render else ""
    return f"restore then {len(expected) - 1} steps, twice: identical observations, rewards{frames_note}"


def check_render(probe: Probe) -> str:
    """render returns a decodable frame of its declared size, the same size after steps."""
    if not probe.renders:
        raise CheckSkipped(f"the environment renders no frames (render_mode {probe.spec.render_mode!r})")
    sizes: list[tuple[str, tuple[int, int]]] = []
    reset = probe.reset(probe.options.seed, render=True)
    sizes.append(("the frame of reset(render=True)", check_frame(reset.frame, "reset(render=True)")))
    render = probe.ok(env_pb.EnvRequest(render=env_pb.RenderRequest()), "render").render
    sizes.append(("render after reset", check_frame(render.frame, "render after reset")))
    for index, action in enumerate(probe.actions(3)):
        result = probe.step(action, f"step {index + 1}", render=True)
        sizes.append((f"the frame of step {index + 1}", check_frame(result.frame, f"step {index + 1}")))
        if result.terminated or result.truncated:
            break
    render = probe.ok(env_pb.EnvRequest(render=env_pb.RenderRequest()), "render after steps").render
    sizes.append(("render after steps", check_frame(render.frame, "render after steps")))
    first_where, first = sizes[0]
    for where, size in sizes[1:]:
        if size != first:
            raise CheckFailed(f"{where} is {size[0]}x{size[1]}, {first_where} was {first[0]}x{first[1]}")
    return f"{len(sizes)} frames, all {first[0]}x{first[1]} ({render.frame.encoding})"


CHECKS: dict[str, Callable[[Probe], str]] = {
    "spec": check_spec,
    "observations": check_observations,
    "stepping": check_stepping,
    "invalid_action": check_invalid_action,
    "seeding": check_seeding,
    "snapshot": check_snapshot,
    "render": check_render,
}


def run_check(name: str, connection: Connection, options: ComplianceOptions | None = None) -> CheckResult:
    """Run the check `name` (a key of `CHECKS`) over `connection`; never raises for a failure."""
    check = CHECKS[name]
    try:
        probe = Probe(connection, options or ComplianceOptions())
        message = check(probe)
    except CheckSkipped as exc:
        return CheckResult(name, True, str(exc), skipped=True)
    except CheckFailed as exc:
        return CheckResult(name, False, str(exc))
    except Exception as exc:  # noqa: BLE001 - a bug in the server's answers that the check did not foresee
        return CheckResult(name, False, f"unexpected {one_line(exc)}")
    return CheckResult(name, True, message)


def run_all(
    connection: Connection, options: ComplianceOptions | None = None, names: Sequence[str] | None = None
) -> list[CheckResult]:
    """Run every check (or those named), in the order of `CHECKS`."""
    return [run_check(name, connection, options) for name in (names or CHECKS)]
