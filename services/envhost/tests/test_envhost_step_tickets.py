"""Step tickets at a real env host with PLATFORM_STEP_TICKET_SECRET: every step link and gRPC
stream must bring a valid ticket for its session on this host; a refusal names what is wrong."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from typing import Any

import grpc
import grpc.aio
from envhost_testkit import EnvHostProcess, new_session_id, start_session, stop_session
from platform_bus.step_tickets import TICKET_METADATA, mint_ticket
from platform_contracts import subjects
from platform_contracts.framing import encode_frame, read_frame
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.host.v1 import step_link_pb2 as link_pb

SECRET = "test-step-ticket-secret-0123456789abcdef"
UNAUTHENTICATED, DENIED = env_pb.ERROR_CODE_UNAUTHENTICATED, env_pb.ERROR_CODE_PERMISSION_DENIED
RESET = env_pb.EnvRequest(id=1, reset=env_pb.ResetRequest(seed=1))


async def open_link(address: str, session_id: str, ticket: str) -> tuple[link_pb.StepLinkOpened, Any, Any]:
    host, _, port = address.rpartition(":")
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), 10)
    writer.write(encode_frame(link_pb.StepLinkOpen(session_id=session_id, ticket=ticket).SerializeToString()))
    opened = link_pb.StepLinkOpened.FromString(await asyncio.wait_for(read_frame(reader), 10))
    return opened, reader, writer


async def refusal(address: str, session_id: str, ticket: str) -> env_pb.Error:
    """The env host's error for a link opened with `ticket`, checking it then closes the link."""
    opened, reader, writer = await open_link(address, session_id, ticket)
    try:
        assert opened.HasField("error"), "the link was opened"
        assert await asyncio.wait_for(reader.read(1), 10) == b"", "the refused link stayed open"
        return opened.error
    finally:
        writer.close()


async def test_links_open_only_with_a_valid_ticket(envhost_factory: Any, nats_client: Any) -> None:
    host: EnvHostProcess = envhost_factory(PLATFORM_STEP_TICKET_SECRET=SECRET)
    assert "step tickets required" in host.log()
    session_id = new_session_id()
    assert not (await start_session(nats_client, host.host_id, session_id)).HasField("error")
    address = host.step_address

    opened, reader, writer = await open_link(address, session_id, mint_ticket(SECRET, session_id, host.host_id))
    assert not opened.HasField("error"), opened
    writer.write(encode_frame(RESET.SerializeToString()))
    assert env_pb.EnvResponse.FromString(await asyncio.wait_for(read_frame(reader), 30)).HasField("reset")
    writer.close()

    missing = await refusal(address, session_id, "")
    assert missing.code == UNAUTHENTICATED and "needs a ticket and none was given" in missing.message
    expired = await refusal(address, session_id, mint_ticket(SECRET, session_id, host.host_id, now=time.time() - 600))
    assert expired.code == UNAUTHENTICATED and "expired" in expired.message
    forged = await refusal(address, session_id, mint_ticket("x" * 40, session_id, host.host_id))
    assert forged.code == UNAUTHENTICATED and "bad signature" in forged.message
    other = new_session_id()
    another_session = await refusal(address, session_id, mint_ticket(SECRET, other, host.host_id))
    assert another_session.code == DENIED
    assert another_session.message == (f"session {session_id} on env host {host.host_id}: "
                                       f"the step ticket is for session {other}, not this one")
    another_host = await refusal(address, session_id, mint_ticket(SECRET, session_id, "elsewhere"))
    assert another_host.code == DENIED and "for env host elsewhere, not this one" in another_host.message
    # The ticket is checked before the session: no ticket learns nothing about what runs here.
    unknown = await refusal(address, other, "")
    assert unknown.code == UNAUTHENTICATED
    assert "refused: session" in host.log()
    assert (await stop_session(nats_client, host.host_id, session_id)).stopped


async def test_grpc_streams_need_the_ticket_metadata(envhost_factory: Any, nats_client: Any) -> None:
    host: EnvHostProcess = envhost_factory(PLATFORM_STEP_TICKET_SECRET=SECRET)
    session_id = new_session_id()
    await start_session(nats_client, host.host_id, session_id)

    async def first_answer(*metadata: tuple[str, str]) -> env_pb.EnvResponse:
        async with grpc.aio.insecure_channel(host.address) as channel:
            call = channel.stream_stream("/simulusion.env.v1.Environment/Connect",
                                         request_serializer=env_pb.EnvRequest.SerializeToString,
                                         response_deserializer=env_pb.EnvResponse.FromString)(
                metadata=((subjects.SESSION_ID_METADATA, session_id), *metadata))
            await call.write(RESET)
            answer = await asyncio.wait_for(call.read(), 30)
            await call.done_writing()
            return answer

    good = await first_answer((TICKET_METADATA, mint_ticket(SECRET, session_id, host.host_id)))
    assert good.HasField("reset"), good
    refused = await first_answer()
    assert refused.id == 1 and refused.error.code == UNAUTHENTICATED
    assert "needs a ticket" in refused.error.message
    denied = await first_answer((TICKET_METADATA, mint_ticket(SECRET, "s-other", host.host_id)))
    assert denied.error.code == DENIED and "for session s-other" in denied.error.message
    assert (await stop_session(nats_client, host.host_id, session_id)).stopped


def test_a_short_secret_stops_the_env_host_at_start(tmp_path: Any) -> None:
    env = {**os.environ, "PLATFORM_STEP_TICKET_SECRET": "short", "PLATFORM_ENVHOST_RUN_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "platform_envhost"], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2
    assert "PLATFORM_STEP_TICKET_SECRET" in done.stderr and "at least 32 bytes" in done.stderr
