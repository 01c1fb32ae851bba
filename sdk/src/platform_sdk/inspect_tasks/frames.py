"""Whether the model is shown the environment's frame, and the frame as message content."""

from __future__ import annotations

import base64
from typing import Literal

from inspect_ai.model import ContentImage

FramesSetting = Literal["auto", "on", "off"]
FRAMES_SETTINGS: tuple[FramesSetting, ...] = ("auto", "on", "off")

# Inspect's model providers whose chat APIs take images (with `frames=auto`, a model of any other
# provider, e.g. a local or a mock one, gets text alone; `frames=on` shows frames to any model).
IMAGE_PROVIDERS = frozenset({"openai", "anthropic", "google", "vertex", "grok", "mistral", "bedrock", "azureai",
                             "openrouter"})


def shows_frames(setting: str, model: str) -> bool:
    """Whether `model` ("provider/name") is shown frames under `setting`."""
    if setting not in FRAMES_SETTINGS:
        raise ValueError(f"frames={setting!r}: choose one of {', '.join(FRAMES_SETTINGS)}")
    if setting == "auto":
        return model.split("/", 1)[0] in IMAGE_PROVIDERS
    return setting == "on"


def frame_content(jpeg: bytes) -> ContentImage:
    """A JPEG frame as an image the model sees (a data URI, so the log keeps it)."""
    return ContentImage(image="data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii"))
