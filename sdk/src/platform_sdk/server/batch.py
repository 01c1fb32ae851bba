"""`batch`: requests to the sub-environments of a vector instance, answered together, in order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from simulusion.env.v1 import environment_pb2 as env_pb


class SubEnvironment(Protocol):
    """What a batch needs of a sub-environment (an `EnvInstance`)."""

    def answer_into(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None: ...


def answer_batch(
    subs: Sequence[SubEnvironment], request: env_pb.EnvRequest, response: env_pb.EnvResponse
) -> None:
    """Answer each sub-request by its sub-environment into `response.batch`, in order.

    A sub-request naming a sub-environment that does not exist, or holding another batch, is
    answered with an INVALID_ARGUMENT error; the others are answered as usual.
    """
    count = len(subs)
    responses = response.batch.responses
    response.batch.SetInParent()  # an empty batch still answers `batch`
    for sub in request.batch.requests:
        index, sub_request = sub.index, sub.request
        sub_response = responses.add()
        if index < count and sub_request.WhichOneof("command") != "batch":
            subs[index].answer_into(sub_request, sub_response)
            continue
        sub_response.id = sub_request.id
        sub_response.error.code = env_pb.ERROR_CODE_INVALID_ARGUMENT
        if index >= count:
            sub_response.error.message = (
                f"sub-environment {index} does not exist: this instance has {count} (0 to {count - 1})"
            )
        else:
            sub_response.error.message = "a batch cannot hold another batch"
