"""`BlockingStepLink` against a stand-in env host on a real socket: framing (split, joined and
large frames), the open and its refusal, and how the link ends (the errors SessionStream reads)."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable, Iterator

import pytest
from platform_sdk.client.direct_link import BlockingStepLink, StepLinkRefusedError, direct_wanted
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.host.v1 import step_link_pb2 as link_pb
from platform_sdk.client.link_errors import ConnectionClosed

Serve = Callable[[socket.socket, link_pb.StepLinkOpen], None]


def frame(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data


def read_frame(sock: socket.socket) -> bytes:
    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    return exactly(struct.unpack("<I", exactly(4))[0])


@pytest.fixture
def env_host() -> Iterator[Callable[[Serve], str]]:
    """A one-connection stand-in env host running `serve` after reading the StepLinkOpen."""
    listeners: list[socket.socket] = []
    threads: list[threading.Thread] = []

    def start(serve: Serve) -> str:
        listener = socket.create_server(("127.0.0.1", 0))
        listeners.append(listener)

        def run() -> None:
            conn, _ = listener.accept()
            with conn:
                serve(conn, link_pb.StepLinkOpen.FromString(read_frame(conn)))

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        threads.append(thread)
        return f"127.0.0.1:{listener.getsockname()[1]}"

    yield start
    for listener in listeners:
        listener.close()
    for thread in threads:
        thread.join(5)


def opened(conn: socket.socket) -> None:
    conn.sendall(frame(link_pb.StepLinkOpened().SerializeToString()))


def test_the_open_carries_session_and_ticket_and_frames_come_back_whole(env_host: Callable[[Serve], str]) -> None:
    got: list[link_pb.StepLinkOpen] = []
    big = bytes(range(256)) * 1000  # 256 KB: more than the link's buffer

    def serve(conn: socket.socket, opening: link_pb.StepLinkOpen) -> None:
        got.append(opening)
        opened(conn)
        request = read_frame(conn)
        conn.sendall(frame(request)[:3])  # an answer split in two reads
        conn.sendall(frame(request)[3:])
        read_frame(conn)
        conn.sendall(frame(b"one") + frame(b"two"))  # two answers in one read
        read_frame(conn)
        conn.sendall(frame(big))
        assert read_frame(conn) == big

    link = BlockingStepLink(env_host(serve), "s-1", "the-ticket")
    assert got[0].session_id == "s-1" and got[0].ticket == "the-ticket"
    link.send(b"echo")
    assert link.recv(5) == b"echo"
    link.send(b"x")
    assert link.recv(5) == b"one" and link.recv(5) == b"two"
    link.send(b"y")
    assert link.recv(5) == big
    link.send(big)
    link.close()


def test_a_refused_open_raises_with_the_env_host_error(env_host: Callable[[Serve], str]) -> None:
    def serve(conn: socket.socket, opening: link_pb.StepLinkOpen) -> None:
        error = env_pb.Error(code=env_pb.ERROR_CODE_UNAUTHENTICATED, message="the step ticket expired")
        conn.sendall(frame(link_pb.StepLinkOpened(error=error).SerializeToString()))

    with pytest.raises(StepLinkRefusedError) as refused:
        BlockingStepLink(env_host(serve), "s-1", "old")
    assert refused.value.error.code == env_pb.ERROR_CODE_UNAUTHENTICATED
    assert str(refused.value) == "the step ticket expired"


def test_a_link_the_env_host_drops_ends_with_no_close_frame(env_host: Callable[[Serve], str]) -> None:
    done = threading.Event()

    def serve(conn: socket.socket, opening: link_pb.StepLinkOpen) -> None:
        opened(conn)
        done.wait(5)  # then closes, before the request is sent

    link = BlockingStepLink(env_host(serve), "s-1", "t")
    done.set()
    with pytest.raises(ConnectionClosed) as lost:
        link.recv(5)
    assert lost.value.rcvd is None and lost.value.sent is None  # SessionStream reconnects
    with pytest.raises(ConnectionClosed):
        link.send(b"after")
    assert link.last_message_unread


def test_close_and_end_session_say_how_the_link_ended(env_host: Callable[[Serve], str]) -> None:
    def serve(conn: socket.socket, opening: link_pb.StepLinkOpen) -> None:
        opened(conn)
        conn.recv(1)

    link = BlockingStepLink(env_host(serve), "s-1", "t")
    link.end_session("session s-1 (cartpole): the environment instance died")
    with pytest.raises(ConnectionClosed) as ended:
        link.send(b"step")
    assert ended.value.rcvd is not None and ended.value.rcvd.code == 4410
    assert "instance died" in ended.value.rcvd.reason
    link.close()  # keeps the first ending

    link = BlockingStepLink(env_host(serve), "s-2", "t")
    link.close()
    with pytest.raises(ConnectionClosed) as closed:
        link.recv(1)
    assert closed.value.rcvd is None and closed.value.sent is not None and closed.value.sent.code == 1000


def test_a_quiet_env_host_times_out_the_read(env_host: Callable[[Serve], str]) -> None:
    release = threading.Event()

    def serve(conn: socket.socket, opening: link_pb.StepLinkOpen) -> None:
        opened(conn)
        release.wait(5)

    link = BlockingStepLink(env_host(serve), "s-1", "t")
    with pytest.raises(TimeoutError):
        link.recv(0.05)
    release.set()
    link.close()


def test_platform_direct_turns_the_direct_path_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLATFORM_DIRECT", raising=False)
    assert direct_wanted(None) and not direct_wanted(False)
    for off in ("0", "false", "No", "off"):
        monkeypatch.setenv("PLATFORM_DIRECT", off)
        assert not direct_wanted(None) and direct_wanted(True)
    monkeypatch.setenv("PLATFORM_DIRECT", "1")
    assert direct_wanted(None)
