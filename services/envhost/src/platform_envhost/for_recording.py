"""`ForRecording`: what an instance tells the platform and never the agent.

Answers of reset, step (and its `AutoReset`), hold (and its kept steps) and batch (each
sub-answer) may carry a `ForRecording` (the world changes the command applied, the observation
before sensor changes). The env host takes it out of every answer before the answer goes on
to the client, whatever the path (the step link of the gateway or of the SDK, gRPC), and keeps
it in the step events it publishes, for the recorder.

Only an instance that runs a world-change timeline (its kwargs' `world_changes`) fills it, so
a session without one never has its answers parsed for it (`Instance.has_timeline`); one with
a timeline has each reset, step and hold answer parsed and checked with `HasField`, and only an
answer that carries one is encoded again.
"""

from __future__ import annotations

from collections.abc import Iterator

from simulusion.env.v1 import environment_pb2 as env_pb

# The commands whose answers can carry a ForRecording.
CARRIERS = frozenset({"reset", "step", "hold", "batch"})


def _step_has(step: env_pb.StepResponse) -> bool:
    return step.HasField("for_recording") or (
        step.HasField("auto_reset") and step.auto_reset.HasField("final_for_recording"))


def carries(response: env_pb.EnvResponse) -> bool:
    """Whether any part of the answer holds a ForRecording."""
    kind = response.WhichOneof("result")
    if kind == "step":
        return _step_has(response.step)
    if kind == "reset":
        return response.reset.HasField("for_recording")
    if kind == "hold":
        hold = response.hold
        return hold.HasField("for_recording") or any(_step_has(step) for step in hold.kept)
    if kind == "batch":
        return any(carries(sub) for sub in response.batch.responses)
    return False


def _strip_step(step: env_pb.StepResponse) -> None:
    step.ClearField("for_recording")
    if step.HasField("auto_reset"):
        step.auto_reset.ClearField("final_for_recording")


def strip(response: env_pb.EnvResponse) -> None:
    """Remove every ForRecording from the answer, in place."""
    kind = response.WhichOneof("result")
    if kind == "step":
        _strip_step(response.step)
    elif kind == "reset":
        response.reset.ClearField("for_recording")
    elif kind == "hold":
        strip_hold(response.hold)
    elif kind == "batch":
        for sub in response.batch.responses:
            strip(sub)


def strip_hold(hold: env_pb.HoldResponse) -> None:
    """Remove the ForRecording of a hold answer and of each of its kept steps, in place."""
    hold.ClearField("for_recording")
    for step in hold.kept:
        _strip_step(step)


def step_changes(step: env_pb.StepResponse) -> list[str]:
    """The world changes (JSON) a step applied, in order: when it reset in the same step, those
    of the ending step (`final_for_recording`) then those of the reset (`for_recording`)."""
    changes: list[str] = []
    if step.HasField("auto_reset") and step.auto_reset.HasField("final_for_recording"):
        changes.extend(step.auto_reset.final_for_recording.world_changes_json)
    if step.HasField("for_recording"):
        changes.extend(step.for_recording.world_changes_json)
    return changes


def applied_changes(response: env_pb.EnvResponse) -> Iterator[str]:
    """The world changes (JSON) a reset, step or hold answer says it applied, in order (a hold's
    from its kept steps when it kept them, else from its own ForRecording). A batch's are its
    sub-answers' (see `batches`)."""
    kind = response.WhichOneof("result")
    if kind == "step":
        yield from step_changes(response.step)
    elif kind == "reset":
        yield from response.reset.for_recording.world_changes_json
    elif kind == "hold":
        hold = response.hold
        if hold.kept:
            for step in hold.kept:
                yield from step_changes(step)
        else:
            yield from hold.for_recording.world_changes_json


def for_the_client(answer: bytes) -> tuple[bytes, env_pb.EnvResponse]:
    """The answer as the client may see it, and the answer as it came (parsed).

    The bytes are `answer` itself when it carries no ForRecording (nothing is encoded again);
    otherwise the parsed answer without it, encoded. The parsed answer returned is then a new
    parse of `answer`, so it still holds everything.
    """
    response = env_pb.EnvResponse.FromString(answer)
    if not carries(response):
        return answer, response
    stripped = env_pb.EnvResponse.FromString(answer)
    strip(stripped)
    return stripped.SerializeToString(), response
