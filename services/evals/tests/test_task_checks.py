"""The refusals and notes of an eval before it runs, from inspect_evals' own metadata and a
machine's facts; the environment's requirements; the request's checks."""

from __future__ import annotations

import pytest
from platform_evals.errors import InvalidEvalError
from platform_evals.eval_request import checked_request
from platform_evals.requirements import requirements_for
from platform_evals.task_catalog import task_needs
from platform_evals.task_checks import check_task, platform_task_notes
from simulusion.evals.v1 import evals_pb2 as pb
from simulusion.machines.v1 import machines_pb2 as machines_pb


def machine(docker: str = "", gpus: int = 0) -> machines_pb.Machine:
    facts = machines_pb.MachineFacts(docker=docker, gpus=[machines_pb.Gpu(index=i) for i in range(gpus)])
    return machines_pb.Machine(id="m-0123456789ab", name="box", facts=facts)


def test_a_sandboxed_task_needs_docker() -> None:
    needs = task_needs("inspect_evals/cybench")
    assert needs is not None and needs.sandbox == ("solver",) and needs.dependency == "cybench"
    with pytest.raises(InvalidEvalError, match="Docker sandbox.*sandbox_type=k8s") as refused:
        check_task(needs, machine(), 0, {})
    assert refused.value.field == "task"
    notes = check_task(needs, machine(docker="Docker version 27.1.1"), 0, {})
    assert any("sandbox images" in note for note in notes) and any("downloads its data" in n for n in notes)
    assert check_task(needs, machine(), 0, {"sandbox_type": "k8s"})  # Kubernetes, which cybench supports


def test_data_that_ships_says_nothing_and_downloads_are_noted() -> None:
    assert check_task(task_needs("inspect_evals/agent_threat_bench_autonomy_hijack"), machine(), 0, {}) == []
    (note,) = check_task(task_needs("inspect_evals/gpqa_diamond"), machine(), 0, {})
    assert "gpqa_diamond.csv" in note
    (unknown,) = check_task(task_needs("my_package/my_task"), machine(), 0, {})
    assert "knows nothing" in unknown


def test_requirements_pin_inspect_and_add_the_provider_and_the_task_extra() -> None:
    assert requirements_for("openai/gpt-4o", [], "cybench") == [
        "inspect-ai==0.3.285", "inspect-evals[cybench]==0.26.0", "openai"]
    assert requirements_for("mockllm/model", ["my-models>=1.2"]) == [
        "inspect-ai==0.3.285", "inspect-evals==0.26.0", "my-models>=1.2"]



def test_the_platforms_own_task_gets_the_served_sdk_and_no_inspect_evals() -> None:
    assert requirements_for("scripted_agent/balance", ["/home/me/agent"], "", "platform_sdk/episodes") == [
        "inspect-ai==0.3.285", "platform-sdk[inspect] @ $PLATFORM_URL/v0/wheels/platform-sdk", "/home/me/agent"]
    (note,) = platform_task_notes("platform_sdk/episodes")
    assert "the platform's own task" in note and "/v0/wheels/platform-sdk" in note


@pytest.mark.parametrize(("change", "field"), [
    ({"task": "bad task"}, "task"), ({"model": "gpt-4o"}, "model"), ({"task_args_json": "[1]"}, "task_args"),
    ({"model_args_json": "{"}, "model_args"), ({"secrets": {"PLATFORM_TOKEN": "x"}}, "secrets"),
    ({"secrets": {"1X": "x"}}, "secrets"), ({"packages": ["--extra-index-url=https://x"]}, "packages"),
    ({"epochs": 101}, "epochs")])
def test_bad_requests_name_their_field(change: dict[str, object], field: str) -> None:
    request = pb.CreateEvalRequest(task="inspect_evals/gpqa_diamond", model="openai/gpt-4o")
    for name, value in change.items():
        if isinstance(value, dict):
            getattr(request, name).update(value)
        elif isinstance(value, list):
            getattr(request, name).extend(value)
        else:
            setattr(request, name, value)
    with pytest.raises(InvalidEvalError) as refused:
        checked_request(request)
    assert refused.value.field == field
