"""`wire.error_code` reads a serialized EnvResponse's error code like protobuf does."""

from __future__ import annotations

import pytest
from platform_contracts.values import tensor_from_array
from platform_gateway.wire import error_code
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb


@pytest.mark.parametrize(
    "response",
    [
        env_pb.EnvResponse(id=1, step=env_pb.StepResponse(reward=1.0)),
        env_pb.EnvResponse(id=2**63 + 5, step=env_pb.StepResponse(
            observation=values_pb.Value(tensor=tensor_from_array([[1.0] * 300] * 3)))),
        env_pb.EnvResponse(),
        env_pb.EnvResponse(id=7, error=env_pb.Error(code=env_pb.ERROR_CODE_UNAVAILABLE, message="x" * 500,
                                                   log_tail="y" * 3000)),
        env_pb.EnvResponse(id=8, error=env_pb.Error(code=env_pb.ERROR_CODE_INVALID_ACTION)),
        env_pb.EnvResponse(id=9, error=env_pb.Error(message="no code")),
    ],
)
def test_error_code_matches_protobuf(response: env_pb.EnvResponse) -> None:
    expected = response.error.code if response.HasField("error") else None
    assert error_code(response.SerializeToString()) == expected


def test_error_after_the_result_is_found() -> None:
    # Field order is not guaranteed on the wire: the result first, then the error.
    result = env_pb.EnvResponse(id=3, render=env_pb.RenderResponse(frame=env_pb.Frame(data=b"\x12" * 50)))
    error = env_pb.EnvResponse(error=env_pb.Error(code=env_pb.ERROR_CODE_UNAVAILABLE))
    data = result.SerializeToString() + error.SerializeToString()
    assert env_pb.EnvResponse.FromString(data).error.code == env_pb.ERROR_CODE_UNAVAILABLE
    assert error_code(data) == env_pb.ERROR_CODE_UNAVAILABLE


def test_truncated_bytes_read_as_no_error() -> None:
    data = env_pb.EnvResponse(id=300, step=env_pb.StepResponse(reward=2.0)).SerializeToString()
    assert error_code(data[:3]) is None
    assert error_code(b"\xff\xff") is None
