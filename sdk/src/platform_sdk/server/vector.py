"""A vector instance: one server hosting several copies of an environment (sub-environments).

Each sub-environment is its own `EnvInstance` (own snapshots, own RNG: seeded by the resets
sent to it; nothing is seeded here). `batch` requests go to sub-environments by index; a plain
request goes to sub-environment 0, except `spec` (the shared spec with `num_envs`) and `close`
(closes them all).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from opentelemetry import trace
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk.server.batch import answer_batch
from platform_sdk.server.instance import EnvInstance, answer_traced


class VectorInstance:
    """Several `EnvInstance`s of one environment behind one `handle`.

    Args:
        subs: the sub-environments (at least one), in index order.
        tracer: makes a span per request whose `trace_context` is valid; None for no spans.
    """

    def __init__(self, subs: Sequence[EnvInstance], *, tracer: trace.Tracer | None = None) -> None:
        if not subs:
            raise ValueError("a vector instance needs at least one sub-environment")
        self.subs = tuple(subs)
        self.env_id = self.subs[0].env_id
        self._tracer = tracer
        self._spec = env_pb.SpecResponse()
        self._spec.CopyFrom(self.subs[0].spec)
        self._spec.num_envs = len(self.subs)
        self._batch = functools.partial(answer_batch, self.subs)

    @property
    def spec(self) -> env_pb.SpecResponse:
        """The answer to `spec`: sub-environment 0's with `num_envs`."""
        return self._spec

    @property
    def closed(self) -> bool:
        return all(sub.closed for sub in self.subs)

    def handle(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        """Answer one request; never raises: failures are answered with `error`."""
        return answer_traced(self._tracer, self.env_id, request, self._answer)

    def after_answer(self) -> None:
        """Nothing waits for an answer here: `render_later` is for single environments."""

    def close(self) -> None:
        """Close every sub-environment (idempotent)."""
        for sub in self.subs:
            sub.close()

    def _answer(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        command = request.WhichOneof("command")
        response = env_pb.EnvResponse(id=request.id)
        if command == "batch":
            self._batch(request, response)
        elif command in ("spec", "close") and not self.closed:
            if command == "spec":
                response.spec.CopyFrom(self._spec)
            else:
                self.close()
                response.close.SetInParent()
        else:  # sub-environment 0 (after close: answers "the environment is closed")
            self.subs[0].answer_into(request, response)
        return response
