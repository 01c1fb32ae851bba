"""The messages of an episode: all of them stay in the sample (its transcript), but the model is
sent a bounded window: the opening messages and the last `history` decisions, so a call's
length does not grow with the episode. Only the current observation keeps its frame."""

from __future__ import annotations

from inspect_ai.model import ChatMessage, ChatMessageUser, ContentImage, ContentText

FRAME_LEFT_OUT = "(the frame of this step is no longer shown)"


class Conversation:
    """Appends to `messages` (the sample's, beginning with the opening messages) one turn per
    decision: its observation, then the model's answers and what they were told."""

    def __init__(self, messages: list[ChatMessage], history: int) -> None:
        if history < 0:
            raise ValueError(f"history={history}: it must be 0 or more")
        self.messages = messages
        self.history = history
        self._opening = len(messages)
        self._turn_starts: list[int] = []

    def begin_turn(self, observation: ChatMessageUser) -> None:
        """A new decision: the previous observation loses its frame."""
        if self._turn_starts:
            _drop_frames(self.messages[self._turn_starts[-1]])
        self._turn_starts.append(len(self.messages))
        self.messages.append(observation)

    def add(self, message: ChatMessage) -> None:
        self.messages.append(message)

    def window(self) -> list[ChatMessage]:
        """What the model is sent: the opening messages, the last `history` whole turns and the
        current one."""
        kept = self._turn_starts[-(self.history + 1):]
        start = kept[0] if kept else len(self.messages)
        return self.messages[:self._opening] + self.messages[start:]


def _drop_frames(message: ChatMessage) -> None:
    if isinstance(message.content, list) and any(isinstance(part, ContentImage) for part in message.content):
        message.content = [ContentText(text=FRAME_LEFT_OUT) if isinstance(part, ContentImage) else part
                           for part in message.content]
