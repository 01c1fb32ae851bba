"""Step tickets on the gRPC fallback `Environment/Connect`: the `ticket` metadata next to
`session-id`, checked like a step link's (`platform_bus.step_tickets`) before the stream
reaches the router.

A stream whose ticket is refused stays open and answers each request with the refusal (an
`EnvResponse` error, UNAUTHENTICATED or PERMISSION_DENIED), as the router answers a stream
of a session that does not run here; without a secret the router serves every stream itself.
"""

from __future__ import annotations

from typing import Any

import grpc
import grpc.aio
from google.protobuf.message import DecodeError
from platform_bus.step_tickets import TICKET_METADATA, TicketRefusedError, verify_ticket
from platform_contracts import subjects
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_envhost.router import SERVICE_NAME, Router


def _metadata(context: grpc.aio.ServicerContext[Any, Any], key: str) -> str:
    for name, value in context.invocation_metadata() or ():
        if name == key:
            return value if isinstance(value, str) else value.decode()
    return ""


def connect_handler(router: Router, host_id: str, ticket_secret: str | None) -> grpc.GenericRpcHandler:
    """The `Environment/Connect` handler: the router's own, behind a ticket check when
    `ticket_secret` is set."""
    if ticket_secret is None:
        return router.handler()
    secret = ticket_secret

    async def connect(request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        session_id = _metadata(context, subjects.SESSION_ID_METADATA)
        if session_id:  # without one the router answers "no session" itself
            try:
                verify_ticket(secret, _metadata(context, TICKET_METADATA), session_id, host_id)
            except TicketRefusedError as exc:
                await _refuse(context, exc)
                return
        await router.connect(request_iterator, context)

    method: grpc.RpcMethodHandler[bytes, bytes] = grpc.stream_stream_rpc_method_handler(
        connect, request_deserializer=None, response_serializer=None
    )
    return grpc.method_handlers_generic_handler(SERVICE_NAME, {"Connect": method})


async def _refuse(context: grpc.aio.ServicerContext[Any, Any], exc: TicketRefusedError) -> None:
    """Answer every request of the stream with the refusal until the client ends it."""
    while (raw := await context.read()) is not grpc.aio.EOF:
        try:
            request_id = env_pb.EnvRequest.FromString(raw).id
        except DecodeError:
            request_id = 0
        error = env_pb.Error(code=exc.code, message=exc.message)
        await context.write(env_pb.EnvResponse(id=request_id, error=error).SerializeToString())
