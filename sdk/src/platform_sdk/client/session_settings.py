"""`SessionSettings`: every option of `connect`, `make_vec` and `resume`, spelled once.

A session is made from its environment (a catalog id and its kwargs), for a vector session its
number of sub-environments, and these settings: where the platform is and who asks (`url`,
`token`), what the platform records (`record`, `record_frames`, `life`, `frame_every`,
`max_frames`, `durable`), how frames are encoded (`jpeg_quality`), how steps end episodes (`auto_reset`)
and how the stream is kept (`reconnect_timeout`, `direct`). The platform checks the create's
fields (POST /v0/sessions) and names the one at fault; so does this for the few it can tell at
once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SessionSettings:
    """How a session is made and reached (see `connect` for what each one does).

    `reset()` after `close()` opens a new session with the same settings, and a session's
    `env.spec` makes others with them (`SessionOpener`).
    """

    url: str | None = None
    token: str | None = None
    record: bool = False
    jpeg_quality: int | None = None
    record_frames: bool = False
    auto_reset: bool = False
    life: str | None = None
    frame_every: int | None = None
    max_frames: int | None = None
    reconnect_timeout: float = 30.0
    direct: bool | None = None
    durable: bool = False

    def create_fields(self, kwargs: Mapping[str, Any] | None, num_envs: int | None = None) -> dict[str, Any]:
        """The fields of the create request (POST /v0/sessions) besides `env_id`; None: left out."""
        return {
            "kwargs": dict(kwargs or {}),
            "record": self.record,
            "record_frames": self.record_frames or None,
            "life": self.life,
            "frame_every": self.frame_every,
            "max_frames": self.max_frames,
            "jpeg_quality": self.jpeg_quality,
            "auto_reset": self.auto_reset or None,
            "num_envs": num_envs,
            "durable": self.durable or None,
        }

    def __repr__(self) -> str:  # never the token: specs and settings get printed
        shown = ", ".join(f"{name}={value!r}" for name, value in vars(self).items()
                          if name != "token" and value != type(self).__dataclass_fields__[name].default)
        return f"SessionSettings({shown})"
