"""The Inspect tasks' words to the model (platform_sdk.inspect_tasks): observations and action
spaces as text, the `act` tool's schema, answers checked against the action space (each wrong
one named with what was expected) and the default action."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from platform_sdk.inspect_tasks.actions import act_tool, check_action, default_action
from platform_sdk.inspect_tasks.conversation import FRAME_LEFT_OUT, Conversation
from platform_sdk.inspect_tasks.frames import shows_frames
from platform_sdk.inspect_tasks.observation_text import action_space_text, observation_text
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, ContentImage, ContentText

BOX = spaces.Box(low=np.array([-1.0, 0.0], dtype=np.float32), high=np.array([1.0, 2.0], dtype=np.float32))


def test_observations_are_written_by_their_labels_or_values_and_images_are_only_described():
    space = spaces.Box(-10, 10, shape=(3,), dtype=np.float64)
    assert observation_text(np.array([0.5, -1.25, 3.0]), space) == "[0.5, -1.25, 3]"
    labels = [("height", 0, 1), ("velocity", 1, 3)]
    assert observation_text(np.array([0.5, -1.25, 3.0]), space, labels) == "height: [0.5]\nvelocity: [-1.25, 3]"
    pixels = spaces.Box(0, 255, shape=(210, 160, 3), dtype=np.uint8)
    assert "shape [210, 160, 3]" in observation_text(pixels.sample(), pixels)
    both = spaces.Dict({"a": spaces.Discrete(3), "b": spaces.Box(0, 1, shape=(2,))})
    assert observation_text({"a": 2, "b": np.array([0.25, 1.0])}, both) == "a: 2\nb: [0.25, 1]"


def test_action_spaces_are_described_with_their_names_and_bounds():
    assert action_space_text(spaces.Discrete(2)) == "one integer from 0 to 1"
    assert action_space_text(spaces.Discrete(3, start=-1), ["left", "stay", "right"]) == (
        "one integer from -1 to 1:\n  -1: left\n  0: stay\n  1: right")
    assert action_space_text(BOX, ["hip", "knee"]) == (
        "a list of 2 numbers, by position:\n  0 (hip): within [-1, 1]\n  1 (knee): within [0, 2]")
    assert action_space_text(spaces.Box(-1, 1, shape=(6,))) == "a list of 6 numbers, each within [-1, 1]"
    assert action_space_text(spaces.MultiDiscrete([5, 2])) == (
        "a list of 2 integers, by position:\n  0: from 0 to 4\n  1: from 0 to 1")
    with pytest.raises(ValueError, match="only Discrete, Box, MultiDiscrete and MultiBinary"):
        action_space_text(spaces.Text(5))


def test_the_act_tool_is_typed_after_the_action_space():
    discrete = act_tool(spaces.Discrete(4)).parameters.properties["action"]
    assert (discrete.type, discrete.minimum, discrete.maximum) == ("integer", 0, 3)
    box = act_tool(BOX).parameters.properties["action"]
    assert box.type == "array" and box.items is not None and box.items.type == "number"
    assert act_tool(BOX).parameters.required == ["action"]


@pytest.mark.parametrize(("value", "space", "action"), [
    (1, spaces.Discrete(2), 1), ("1", spaces.Discrete(2), 1), (1.0, spaces.Discrete(2), 1),
    ([0.5, 2.0], BOX, [0.5, 2.0]), ("[0.5, 2]", BOX, [0.5, 2.0]), (0.25, spaces.Box(-1, 1, shape=(1,)), [0.25]),
    ([4, 1], spaces.MultiDiscrete([5, 2]), [4, 1]), ([1, 0, 1], spaces.MultiBinary(3), [1, 0, 1]),
])
def test_valid_answers_become_actions(value, space, action):
    checked = check_action(value, space)
    assert checked.problem is None and space.contains(np.asarray(checked.action, dtype=space.dtype).reshape(
        space.shape or ())) and np.asarray(checked.action).tolist() == action


@pytest.mark.parametrize(("value", "space", "problem"), [
    (7, spaces.Discrete(2), "7 is not a valid action: expected one integer from 0 to 1"),
    (True, spaces.Discrete(2), "true is not a valid action"),
    (0.5, spaces.Discrete(2), "0.5 is not a valid action"),
    ("left", spaces.Discrete(2), '"left" is not a valid action'),
    ([0.5], BOX, "the action has 1 values, the environment takes 2"),
    ([0.5, 3.0], BOX, "[0.5, 3] is outside the action space: expected a list of 2 numbers"),
    ([float("nan"), 1.0], BOX, "its values must be finite"),
    ([5, 1], spaces.MultiDiscrete([5, 2]), "[5, 1] is outside the action space"),
])
def test_invalid_answers_are_named_with_what_was_expected(value, space, problem):
    checked = check_action(value, space)
    assert checked.action is None and checked.problem is not None and problem in checked.problem


def test_the_default_action_is_the_first_choice_or_zeros_within_bounds():
    assert default_action(spaces.Discrete(3, start=-1)) == -1
    assert default_action(BOX).tolist() == [0.0, 0.0]
    assert default_action(spaces.Box(1, 2, shape=(2,))).tolist() == [1.0, 1.0]
    assert default_action(spaces.MultiDiscrete([5, 2])).tolist() == [0, 0]


def test_frames_auto_shows_them_to_providers_that_take_images():
    assert shows_frames("auto", "openai/gpt-4o") and shows_frames("auto", "anthropic/claude-sonnet-4-0")
    assert not shows_frames("auto", "mockllm/model") and not shows_frames("auto", "vllm/some/model")
    assert shows_frames("on", "mockllm/model") and not shows_frames("off", "openai/gpt-4o")
    with pytest.raises(ValueError, match="frames='always'"):
        shows_frames("always", "openai/gpt-4o")


def test_the_model_is_sent_the_opening_and_the_last_turns_and_only_the_latest_frame():
    messages = [ChatMessageSystem(content="rules"), ChatMessageUser(content="play")]
    conversation = Conversation(messages, history=1)
    for step in range(3):
        conversation.begin_turn(ChatMessageUser(content=[ContentText(text=f"obs {step}"),
                                                         ContentImage(image="data:image/jpeg;base64,AA==")]))
        conversation.add(ChatMessageAssistant(content=f"answer {step}"))
    assert [m.text for m in conversation.window()] == ["rules", "play", f"obs 1\n{FRAME_LEFT_OUT}", "answer 1",
                                                       "obs 2", "answer 2"]
    images = [part for m in messages if isinstance(m.content, list) for part in m.content
              if isinstance(part, ContentImage)]
    assert len(images) == 1 and len(messages) == 8  # the sample keeps every message
