"""`SessionSettings`: one options type for `connect`, `make_vec` and `resume`; `make_vec` takes
every option `connect` takes, and sends them in the create request as `connect` does."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from gymnasium.vector import AutoresetMode
from platform_sdk import errors
from platform_sdk.client import session as session_module
from platform_sdk.client.remote_env import RemoteEnv, SessionOpener
from platform_sdk.client.session_settings import SessionSettings
from platform_sdk.client.vector_env import make_vec, vector_autoreset_mode

CONNECT_OPTIONS: dict[str, Any] = {"record": True, "jpeg_quality": 70, "record_frames": True, "life": "robot-1",
                                   "frame_every": 4, "max_frames": 1000, "durable": True}


class _Refused(Exception):
    """Raised by the stand-in REST client once it has seen the create request."""


class _CreateRecorder:
    """A REST client that keeps each create request's fields, then refuses it."""

    created: ClassVar[list[tuple[str, dict[str, Any]]]] = []

    def __init__(self, url: str, token: str | None) -> None:
        self.url, self.token = url, token

    def create_session(self, env_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        type(self).created.append((env_id, fields))
        raise _Refused(env_id)

    def close(self) -> None:
        pass


@pytest.fixture
def created(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    _CreateRecorder.created = []
    monkeypatch.setattr(session_module, "RestClient", _CreateRecorder)
    return _CreateRecorder.created


def test_the_create_fields_leave_out_what_was_not_given() -> None:
    fields = SessionSettings().create_fields(None)
    assert {name: value for name, value in fields.items() if value is not None} == {"kwargs": {}, "record": False}
    assert SessionSettings(**CONNECT_OPTIONS).create_fields({"g": 9.0}, 4) == {
        "kwargs": {"g": 9.0}, "record": True, "record_frames": True, "life": "robot-1", "frame_every": 4,
        "max_frames": 1000, "jpeg_quality": 70, "auto_reset": None, "num_envs": 4, "durable": True}


def test_settings_never_show_the_token() -> None:
    settings = SessionSettings(url="http://p.test", token="s3cret", record=True)
    assert repr(settings) == "SessionSettings(url='http://p.test', record=True)"
    assert "s3cret" not in repr(SessionOpener("cartpole", {}, settings).spec(500))


def test_make_vec_sends_every_option_connect_sends(created: list[tuple[str, dict[str, Any]]]) -> None:
    with pytest.raises(_Refused):
        RemoteEnv("cartpole", kwargs={"g": 1}, url="http://p.test", **CONNECT_OPTIONS)
    with pytest.raises(_Refused):
        make_vec("cartpole", 3, url="http://p.test", kwargs={"g": 1}, **CONNECT_OPTIONS)
    (_, single), (_, vector) = created
    assert vector == {**single, "num_envs": 3}


def test_auto_reset_is_the_same_step_autoreset_of_a_vector_session(created: list[tuple[str, dict[str, Any]]]) -> None:
    with pytest.raises(_Refused):
        make_vec("cartpole", 2, url="http://p.test", auto_reset=True)
    with pytest.raises(_Refused):
        make_vec("cartpole", 2, url="http://p.test", autoreset_mode="SameStep")
    assert [fields["auto_reset"] for _, fields in created] == [True, True]
    assert vector_autoreset_mode("cartpole", None, False) is AutoresetMode.NEXT_STEP
    assert vector_autoreset_mode("cartpole", "Disabled", False) is AutoresetMode.DISABLED
    with pytest.raises(errors.InvalidRequestError, match="auto_reset=True is autoreset_mode SAME_STEP"):
        make_vec("cartpole", 2, auto_reset=True, autoreset_mode=AutoresetMode.NEXT_STEP)
    with pytest.raises(errors.InvalidRequestError, match="autoreset_mode must be one of"):
        make_vec("cartpole", 2, autoreset_mode="Sometimes")


def test_settings_or_options_not_both() -> None:
    with pytest.raises(TypeError, match="not both"):
        RemoteEnv("cartpole", settings=SessionSettings(), record=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'recrod'"):
        RemoteEnv("cartpole", recrod=True)
