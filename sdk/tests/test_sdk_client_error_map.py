"""One map from the platform's answers to the SDK's errors: the same failure said over REST (an
HTTP status), in an `EnvResponse` (an error code) or by a WebSocket close code gives the same
error class."""

from __future__ import annotations

import pytest
from platform_sdk import errors
from platform_sdk.client.error_map import error_from_close, error_from_env, error_from_http
from simulusion.env.v1 import environment_pb2 as env_pb

SAME_FAILURE = [
    # (HTTP status and body, environment protocol error code, close code, the SDK's error)
    (404, {"detail": "unknown session s-1"}, env_pb.ERROR_CODE_NOT_FOUND, 4404, errors.SessionNotFoundError),
    (422, {"detail": "bad action"}, env_pb.ERROR_CODE_INVALID_ACTION, None, errors.InvalidActionError),
    (422, {"detail": "bad argument"}, env_pb.ERROR_CODE_INVALID_ARGUMENT, None, errors.InvalidActionError),
    (410, {"detail": "closed"}, env_pb.ERROR_CODE_SESSION_CLOSED, 4410, errors.SessionClosedError),
    (410, {"detail": "died", "log_tail": "READY"}, env_pb.ERROR_CODE_UNAVAILABLE, None, errors.EnvironmentCrashedError),
    (503, {"detail": "no broker"}, None, 1013, errors.PlatformUnavailableError),
    (409, {"detail": "reset first"}, env_pb.ERROR_CODE_FAILED_PRECONDITION, None, errors.PlatformError),
]


@pytest.mark.parametrize(("status", "body", "code", "close", "expected"), SAME_FAILURE)
def test_one_failure_is_one_error_class_on_every_surface(
    status: int, body: dict[str, str], code: int | None, close: int | None, expected: type[errors.PlatformError]
) -> None:
    rest = error_from_http(status, body)
    assert type(rest) is expected and rest.status == status and body["detail"] in str(rest)
    if code is not None:
        error = env_pb.Error(code=code, message=body["detail"], log_tail=body.get("log_tail", ""))
        stream = error_from_env(error, "session s-1 (cartpole), step 3", "s-1")
        assert type(stream) is expected and stream.session_id == "s-1"
        assert str(stream).startswith(f"session s-1 (cartpole), step 3: {body['detail']}")
    if close is not None:
        closed = error_from_close(close, body["detail"], "s-1")
        assert type(closed) is expected and closed.session_id == "s-1" and body["detail"] in str(closed)


def test_a_crash_carries_its_log_tail_either_way() -> None:
    rest = error_from_http(410, {"detail": "the instance died", "log_tail": "Traceback: boom"})
    error = env_pb.Error(code=env_pb.ERROR_CODE_UNAVAILABLE, message="the instance died", log_tail="Traceback: boom")
    stream = error_from_env(error, "session s-1 (cartpole), reset", "s-1")
    for crashed in (rest, stream):
        assert isinstance(crashed, errors.EnvironmentCrashedError)
        assert crashed.log_tail == "Traceback: boom" and "--- instance log tail ---" in str(crashed)


def test_statuses_without_a_class_of_their_own_say_their_status() -> None:
    error = error_from_http(500, {"detail": "boom"})
    assert type(error) is errors.PlatformError and str(error) == "HTTP 500: boom"
    assert str(error_from_http(418, "plain text")) == "HTTP 418: plain text"


def test_a_refused_token_and_a_lost_connection_on_the_stream() -> None:
    refused = error_from_close(4401, "the API token is not valid", "s-1")
    assert type(refused) is errors.PlatformError and refused.status == 401
    lost = error_from_close(None, "no close frame", "s-1")
    assert type(lost) is errors.PlatformUnavailableError and "(None: no close frame)" in str(lost)
