"""The gRPC glue: serve one instance (`EnvInstance` or `VectorInstance`) as
`simulusion.env.v1.Environment/Connect`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

import grpc
from platform_contracts.limits import MAX_GRPC_MESSAGE_BYTES
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import environment_pb2_grpc as env_grpc

from platform_sdk.server.addresses import bindable_socket_path, socket_path
from platform_sdk.server.errors import StartupError

__all__ = ["EnvironmentServicer", "Instance", "socket_path", "start_server"]

SERVER_OPTIONS = [
    ("grpc.max_send_message_length", MAX_GRPC_MESSAGE_BYTES),  # frames and observations can be large
    ("grpc.max_receive_message_length", MAX_GRPC_MESSAGE_BYTES),
    ("grpc.so_reuseport", 0),
]


class Instance(Protocol):
    """What the server serves: `EnvInstance` or `VectorInstance`."""

    def handle(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse: ...

    def after_answer(self) -> None: ...


class EnvironmentServicer(env_grpc.EnvironmentServicer):
    """Answers each stream's requests in order, one at a time, from the one instance.

    Commands run on the event loop thread: there is one instance and its commands are
    serialized anyway, and a hop to a worker thread would cost more than a CartPole step.
    """

    def __init__(self, instance: Instance) -> None:
        self.instance = instance

    async def Connect(
        self,
        request_iterator: AsyncIterator[env_pb.EnvRequest],
        context: grpc.aio.ServicerContext[env_pb.EnvRequest, env_pb.EnvResponse],
    ) -> AsyncIterator[env_pb.EnvResponse]:
        handle, after_answer = self.instance.handle, self.instance.after_answer
        async for request in request_iterator:
            yield handle(request)
            after_answer()  # the answer is out: work that can wait for it (render_later frames)


async def start_server(instance: Instance, listen: str) -> tuple[grpc.aio.Server, str]:
    """Start serving `instance` on `listen`; returns the server and the address it is bound to.

    Args:
        listen: "unix:/path/x.sock" or "HOST:PORT" (port 0 picks a free port).

    Raises:
        StartupError: the address is malformed or cannot be bound.
    """
    server = grpc.aio.server(options=SERVER_OPTIONS)
    env_grpc.add_EnvironmentServicer_to_server(EnvironmentServicer(instance), server)
    address = _bindable(listen)
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as exc:
        raise StartupError(f"cannot listen on {listen}: {exc}") from None
    if not address.startswith("unix:"):
        if port == 0:
            raise StartupError(f"cannot listen on {listen}")
        address = f"{address.rsplit(':', 1)[0]}:{port}"
    await server.start()
    return server, address


def _bindable(listen: str) -> str:
    path = bindable_socket_path(listen)
    if path is not None:
        return f"unix:{path}"
    host, sep, port = listen.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise StartupError(f"--listen must be 'unix:/path/x.sock' or 'HOST:PORT', not {listen!r}")
    return listen
