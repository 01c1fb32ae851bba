"""The SSH connection to the server, with asyncssh, and its failures as one sentence each.

Host keys are trusted on first use, as `ssh -o StrictHostKeyChecking=accept-new` does, in the same
~/.ssh/known_hosts that `ssh` reads (so the printed tunnel command connects without a question):
an unknown server's key is added there; a key different from the one recorded refuses the
connection. The user's ~/.ssh/config is not read: the target says where to connect. Keys: the
one given with -i, else what `ssh` would offer (the agent at $SSH_AUTH_SOCK, ~/.ssh/id_*)."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncssh

from .errors import ToolError
from .progress import Say
from .target import DEFAULT_SSH_PORT, SshTarget

CONNECT_TIMEOUT_S = 20
KEEPALIVE_INTERVAL_S = 30
CLOSE_WAIT_S = 3


def known_hosts_path() -> Path:
    return Path("~", ".ssh", "known_hosts").expanduser()


class _TrustOnFirstUse(asyncssh.SSHClient):
    """Accepts a server's key that known_hosts has no entry for (asyncssh asks only about keys it
    did not find trusted there) and remembers it; a host with other keys recorded is refused."""

    def __init__(self, known: asyncssh.SSHKnownHosts) -> None:
        self.known = known
        self.new_key: asyncssh.SSHKey | None = None
        self.changed_key: asyncssh.SSHKey | None = None

    def validate_host_public_key(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> bool:
        recorded = self.known.match(host, addr, port)[0]
        if recorded:
            self.changed_key = key
            return False
        self.new_key = key
        return True


@asynccontextmanager
async def connect(target: SshTarget, say: Say) -> AsyncIterator[asyncssh.SSHClientConnection]:
    """An open connection to `target`; ToolError when it cannot be made."""
    known = _read_known_hosts()
    client = _TrustOnFirstUse(known)
    options: dict[str, object] = {}
    if target.identity:
        options["client_keys"] = [_load_identity(target.identity)]
    say(f"connecting to {target.destination} port {target.port}")
    try:
        connection, _ = await asyncio.wait_for(
            asyncssh.create_connection(
                lambda: client, target.host, target.port, username=target.user, known_hosts=known,
                config=None, keepalive_interval=KEEPALIVE_INTERVAL_S, **options),
            CONNECT_TIMEOUT_S)
    except asyncssh.HostKeyNotVerifiable:
        raise ToolError(_changed_key_message(target, client.changed_key)) from None
    except asyncssh.PermissionDenied:
        key = f"the key {target.identity}" if target.identity else "your SSH agent's and ~/.ssh's keys"
        raise ToolError(f"authentication refused by {target.destination} port {target.port}: it did not accept "
                        f"{key} (give the right key with -i, or add its .pub to the server's "
                        "~/.ssh/authorized_keys)") from None
    except (TimeoutError, asyncio.TimeoutError):
        raise ToolError(f"cannot reach {target.host} port {target.port}: no answer within {CONNECT_TIMEOUT_S} s "
                        "(is the address right, the server up, the port open?)") from None
    except socket.gaierror as exc:
        raise ToolError(f"cannot reach {target.host}: unknown host ({exc.strerror})") from None
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise ToolError(f"cannot reach {target.host} port {target.port}: {reason}") from None
    except asyncssh.Error as exc:
        raise ToolError(f"SSH to {target.destination} port {target.port} failed: {exc.reason}") from None
    if client.new_key is not None:
        _remember_host_key(target, client.new_key)
        say(f"first connection to this server: its host key ({_fingerprint(client.new_key)}) is now in "
            f"{known_hosts_path()}")
    try:
        yield connection
    finally:
        connection.close()
        try:  # a loaded or gone server may never answer the close: the tool does not wait on it
            await asyncio.wait_for(connection.wait_closed(), CLOSE_WAIT_S)
        except (TimeoutError, asyncio.TimeoutError):
            connection.abort()


def _read_known_hosts() -> asyncssh.SSHKnownHosts:
    path = known_hosts_path()
    try:
        return asyncssh.read_known_hosts(str(path)) if path.is_file() else asyncssh.import_known_hosts("")
    except (OSError, ValueError) as exc:
        raise ToolError(f"cannot read {path}: {exc}") from None


def _load_identity(identity: str) -> asyncssh.SSHKeyPair:
    path = Path(identity).expanduser()
    try:
        keys = asyncssh.load_keypairs([str(path)])
    except FileNotFoundError:
        raise ToolError(f"the key file {identity} does not exist") from None
    except asyncssh.KeyImportError as exc:
        if "passphrase" in str(exc).lower():
            raise ToolError(f"the key {identity} is protected by a passphrase: add it to your SSH agent "
                            f"(ssh-add {identity}) and leave out -i") from None
        raise ToolError(f"cannot read the key {identity}: {exc}") from None
    except OSError as exc:
        raise ToolError(f"cannot read the key {identity}: {exc.strerror or exc}") from None
    if not keys:
        raise ToolError(f"no private key in {identity}")
    return keys[0]


def _host_pattern(target: SshTarget) -> str:
    return target.host if target.port == DEFAULT_SSH_PORT else f"[{target.host}]:{target.port}"


def _remember_host_key(target: SshTarget, key: asyncssh.SSHKey) -> None:
    path = known_hosts_path()
    algorithm, encoded = key.export_public_key("openssh").decode().split()[:2]
    line = f"{_host_pattern(target)} {algorithm} {encoded}\n"
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        existing = path.read_bytes() if path.is_file() else b""
        with path.open("a") as out:
            if existing and not existing.endswith(b"\n"):
                out.write("\n")
            out.write(line)
        if not existing:
            os.chmod(path, 0o600)
    except OSError as exc:
        raise ToolError(f"cannot record the server's host key in {path}: {exc.strerror or exc}") from None


def _fingerprint(key: asyncssh.SSHKey) -> str:
    return f"{key.get_algorithm()} {key.get_fingerprint()}"


def _changed_key_message(target: SshTarget, offered: asyncssh.SSHKey | None) -> str:
    pattern = _host_pattern(target)
    offered_text = f" (it now offers {_fingerprint(offered)})" if offered is not None else ""
    return (f"the host key of {target.host} port {target.port} changed{offered_text}: refusing to connect. "
            f"If the server was reinstalled, remove the old key with ssh-keygen -R '{pattern}' and deploy again")

