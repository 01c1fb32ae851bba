"""The server to deploy to, from what the user typed: `user@host`, `user@host:port`,
`ssh://user@host:port`, or an `ssh ...` command line as providers show it (`ssh root@1.2.3.4 -p 22045 -i ~/.ssh/key`,
`ssh -p 41234 root@host -L 8080:localhost:8080`, `-l user`, `-o Port=`, `-o User=`,
`-o IdentityFile=`, a leading `$ `, IPv6 addresses). Options that do not change where to connect
(forwardings, verbosity, tty) are ignored; a jump host (`-J`, `-o ProxyJump`/`ProxyCommand`) is
refused with what to do instead."""

from __future__ import annotations

import getpass
import shlex
from dataclasses import dataclass
from urllib.parse import urlsplit

from .errors import ToolError

DEFAULT_SSH_PORT = 22

# OpenSSH's options that take an argument (`man ssh`); every other letter is a flag.
_OPTIONS_WITH_ARGUMENT = set("BbcDEeFIiJLlmOoPpQRSWw")


@dataclass(frozen=True)
class SshTarget:
    """Where to connect: the host, its SSH port, the user and the key the target named (if any)."""

    host: str
    port: int
    user: str
    identity: str | None = None

    @property
    def destination(self) -> str:
        """`user@host` as `ssh` takes it."""
        return f"{self.user}@{self.host}"

    def ssh_command(self, *options: str) -> str:
        """The `ssh` command line that reaches this server, with `options` before the destination."""
        words = ["ssh", *options]
        if self.port != DEFAULT_SSH_PORT:
            words += ["-p", str(self.port)]
        if self.identity:
            words += ["-i", self.identity]
        words.append(self.destination)
        return shlex.join(words)


def parse_target(text: str, port: int | None = None, identity: str | None = None) -> SshTarget:
    """The server that `text` names; `port` and `identity` (the tool's own -p and -i) win over
    what `text` says."""
    text = text.strip()
    if text.startswith("$"):
        text = text[1:].strip()
    if not text:
        raise ToolError("no server given: pass user@host, ssh://user@host:port or the ssh command your provider shows")
    if text.startswith("ssh://"):
        found = _parse_url(text)
    elif text.split(maxsplit=1)[0] == "ssh":
        found = _parse_ssh_command(text)
    elif any(c.isspace() for c in text):
        raise ToolError(f"cannot read {text!r} as a server: pass user@host, ssh://user@host:port or an ssh command line")
    else:
        found = _parse_destination(text)
    host, found_port, user, found_identity = found
    if not host:
        raise ToolError(f"no host in {text!r}: pass user@host, ssh://user@host:port or an ssh command line")
    chosen_port = port if port is not None else found_port if found_port is not None else DEFAULT_SSH_PORT
    if not 0 < chosen_port < 65536:
        raise ToolError(f"SSH port {chosen_port} is out of range (1-65535)")
    return SshTarget(host=host, port=chosen_port, user=user or getpass.getuser(),
                     identity=identity if identity is not None else found_identity)


_Found = tuple[str, "int | None", "str | None", "str | None"]


def _parse_url(text: str) -> _Found:
    parts = urlsplit(text)
    try:
        url_port = parts.port
    except ValueError as exc:
        raise ToolError(f"bad port in {text!r}: {exc}") from None
    return parts.hostname or "", url_port, parts.username, None


def _parse_destination(text: str) -> _Found:
    """`[user@]host`, where host may be `host:port` (one colon), `[v6]`, `[host]:port` or a bare
    IPv6 address."""
    user, _, host = text.rpartition("@")
    found_port: int | None = None
    if host.startswith("[") and "]" in host:
        inside, _, rest = host[1:].partition("]")
        host = inside
        if rest.startswith(":"):
            found_port = _port(rest[1:], text)
    elif host.count(":") == 1:
        host, _, port_text = host.partition(":")
        found_port = _port(port_text, text)
    return host, found_port, user or None, None


def _port(value: str, context: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ToolError(f"bad SSH port {value!r} in {context!r}") from None


def _parse_ssh_command(text: str) -> _Found:
    try:
        words = shlex.split(text)[1:]
    except ValueError as exc:
        raise ToolError(f"cannot read the ssh command {text!r}: {exc}") from None
    destination: str | None = None
    found_port: int | None = None
    user: str | None = None
    identity: str | None = None
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.startswith("-") or word == "-":
            if destination is not None:
                break  # the remote command: not ours to run
            destination = word
            continue
        if word == "--":
            continue
        letters = word[1:]
        for position, letter in enumerate(letters):
            if letter not in _OPTIONS_WITH_ARGUMENT:
                continue
            value = letters[position + 1:]
            if not value:
                if i >= len(words):
                    raise ToolError(f"ssh option -{letter} needs a value in {text!r}")
                value = words[i]
                i += 1
            if letter == "p":
                found_port = _port(value, text)
            elif letter == "l":
                user = value
            elif letter == "i":
                identity = value
            elif letter == "J":
                raise _jump_refused(text)
            elif letter == "o":
                found_port, user, identity = _ssh_config_option(value, text, found_port, user, identity)
            break
    if destination is None:
        raise ToolError(f"no user@host in the ssh command {text!r}")
    if destination.startswith("ssh://"):
        host, url_port, url_user, _ = _parse_url(destination)
    else:
        host, url_port, url_user, _ = _parse_destination(destination)
    return host, found_port if found_port is not None else url_port, user or url_user, identity


def _ssh_config_option(option: str, text: str, port: int | None, user: str | None,
                       identity: str | None) -> tuple[int | None, str | None, str | None]:
    """What an `-o Key=Value` (or `-o "Key Value"`) changes: the port, user or key."""
    key, _, value = option.replace("=", " ", 1).partition(" ")
    key, value = key.strip().lower(), value.strip()
    if key == "port":
        port = _port(value, text)
    elif key == "user":
        user = value
    elif key == "identityfile":
        identity = value
    elif key in ("proxyjump", "proxycommand"):
        raise _jump_refused(text)
    return port, user, identity


def _jump_refused(text: str) -> ToolError:
    return ToolError(f"{text!r} goes through a jump host, which gpu_server.py does not do: "
                     "run it on the jump host, or forward the server's SSH port and deploy to that")
