"""The SSH command a provider shows, pasted as is, read into where to connect: the user, host and
port of the machine and of each bastion (`-J`) on the way. Standard library only.

What it reads, as OpenSSH does (`ssh -G -F /dev/null ...` is the tests' oracle): `user@host`,
`-p`, `-l`, `-o Port=`/`-o User=`/`-o Hostname=`/`-o ProxyJump=` (also `-oPort=22` and
`-o "Port 22"`), `-J` (several bastions comma-separated, each `[user@]host[:port]`),
`ssh://[user@]host[:port]`, IPv6 (`[2001:db8::1]`, `root@2001:db8::1`), a leading `$ ` or `ssh`
prompt. The first `-p`, `-l`, `-J` or `-o` of a kind wins; a `user@` in the destination wins
over `-l`. What does not matter to the platform is skipped: the forwardings (`-L -R -D`), `-i`
(the platform always uses its own key), `-N -T -t -A -C -v -q -X -Y` and every other option.
What the platform cannot use is an `UnusableSshCommandError` saying what to paste instead.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from dataclasses import dataclass

DEFAULT_PORT = 22
DEFAULT_USER = "root"

# ssh's options that take an argument (`man ssh`): their argument is not the destination.
_WITH_ARGUMENT = set("BbcDEeFIiJLlmOopQRSWw")
# Options with no argument (flags), any of which may be grouped: `-NT`, `-tt`, `-vvv`.
_FLAGS = set("46AaCfGgKkMNnqsTtVvXxYy")
_HOSTNAME = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$")
_USER = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.@-]*$")


class UnusableSshCommandError(ValueError):
    """A pasted SSH command the platform cannot use; the message says what to paste instead."""


@dataclass(frozen=True)
class SshHop:
    """One hop: `user@host:port` (an IPv6 host without brackets)."""

    user: str
    host: str
    port: int

    @property
    def address(self) -> str:
        """`host:port`, an IPv6 host in brackets: how the platform names the hop."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.user}@{self.address}"


@dataclass(frozen=True)
class SshTarget:
    """Where a pasted command connects: the machine, through `jumps` (bastions, in order).
    `tunnel`: a machine behind NAT reached through its reverse tunnel (`machine` is then the
    tunnel's loopback port on the platform); never set from a pasted command."""

    machine: SshHop
    jumps: tuple[SshHop, ...] = ()
    tunnel: bool = False


def parse_ssh_command(command: str, default_user: str = DEFAULT_USER) -> SshTarget:
    """Read a pasted SSH command (or an `ssh://` URL).

    Args:
        command: what the provider shows, e.g. ``ssh root@203.0.113.7 -p 22045 -i ~/.ssh/key``.
        default_user: the user when the command names none (ssh would take the local user's).

    Raises:
        UnusableSshCommandError: not an SSH command the platform can use; says what to paste.
    """
    words = _words(command)
    _refuse_known_unusable(words, command)
    if words and words[0].startswith("ssh://"):
        words = ["ssh", *words]
    if not words or words[0] not in ("ssh", "ssh.exe") and not words[0].endswith("/ssh"):
        raise UnusableSshCommandError(
            f"not an SSH command: {_shown(command)}; paste the `ssh ...` line your provider shows for the machine, "
            "e.g. `ssh root@203.0.113.7 -p 22045`, or ssh://user@host:port")
    options, host = _options_and_host(words[1:])
    if host is None:
        raise UnusableSshCommandError(f"the SSH command names no machine: {_shown(command)}; it needs user@host")
    port = _port(options.get("port"), "-p")
    user = options.get("user") or default_user
    host = options.get("hostname") or host
    machine = SshHop(_checked_user(user), _checked_host(host), port if port is not None else DEFAULT_PORT)
    jumps = _jumps(options.get("proxyjump", ""), default_user)
    if options.get("proxycommand"):
        raise UnusableSshCommandError(
            "the SSH command uses ProxyCommand, which the platform does not run; paste a command that reaches the "
            "machine directly or through bastions with -J user@bastion:port")
    return SshTarget(machine, jumps)


def _words(command: str) -> list[str]:
    text = command.strip()
    text = re.sub(r"^\s*(\$|#|>|%)\s+", "", text)  # a shell prompt pasted with it
    text = " ".join(line.rstrip("\\").strip() for line in text.splitlines())  # a command continued with \
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise UnusableSshCommandError(f"cannot read the SSH command ({exc}): {_shown(command)}") from None


def _refuse_known_unusable(words: list[str], command: str) -> None:
    if words[:3] == ["gcloud", "compute", "ssh"] or (words[:1] == ["gcloud"] and "ssh" in words):
        raise UnusableSshCommandError(
            "`gcloud compute ssh` is gcloud's own command, not SSH: run it once with --dry-run "
            "(`gcloud compute ssh INSTANCE --dry-run`) and paste the `ssh ...` line it prints")
    if any(w.lower().endswith("ssh.runpod.io") or "@ssh.runpod.io" in w.lower() for w in words):
        raise _runpod_proxy()


def _runpod_proxy() -> UnusableSshCommandError:
    return UnusableSshCommandError(
        "RunPod's ssh.runpod.io proxy is not a full SSH connection (no commands, no port forwarding): paste the "
        "pod's \"SSH over exposed TCP\" command instead, e.g. `ssh root@203.0.113.7 -p 22045`")


def _options_and_host(args: list[str]) -> tuple[dict[str, str], str | None]:
    """ssh's options by lower-case -o name, and the destination's host. As in OpenSSH, the first
    of each kind wins, in the order written: the destination's `user@` and an ssh:// URL's port
    count as a `-l` and a `-p` where the destination stands."""
    options: dict[str, str] = {}
    host: str | None = None
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            if host is None and i < len(args):
                host = _take_destination(options, args[i])
            break
        if not word.startswith("-") or word == "-":
            if host is None:
                host = _take_destination(options, word)
                continue
            break  # the remote command: the rest is not ssh's
        letters = word[1:]
        while letters:
            letter, letters = letters[0], letters[1:]
            if letter in _WITH_ARGUMENT:
                if letters:
                    value, letters = letters, ""
                elif i < len(args):
                    value = args[i]
                    i += 1
                else:
                    raise UnusableSshCommandError(f"the SSH option -{letter} needs a value")
                _option(options, letter, value)
            elif letter not in _FLAGS:
                raise UnusableSshCommandError(f"ssh has no option -{letter}")
    return options, host


def _take_destination(options: dict[str, str], destination: str) -> str:
    user, host, port = _destination(destination)
    if host.lower().endswith("ssh.runpod.io"):
        raise _runpod_proxy()
    if user:
        options.setdefault("user", user)
    if port is not None:
        options.setdefault("port", str(port))
    return host


_LETTER_OPTIONS = {"p": "port", "l": "user", "J": "proxyjump"}


def _option(options: dict[str, str], letter: str, value: str) -> None:
    if letter in _LETTER_OPTIONS:
        options.setdefault(_LETTER_OPTIONS[letter], value)
    elif letter == "o":
        match = re.match(r"^\s*([A-Za-z]+)\s*(?:=\s*|\s+)(.*)$", value)
        if not match:
            raise UnusableSshCommandError(f"cannot read the SSH option -o {value!r}: it needs Name=value")
        options.setdefault(match.group(1).lower(), match.group(2).strip())


def _destination(destination: str) -> tuple[str, str, int | None]:
    """`[user@]host`, or `ssh://[user@]host[:port]`: user ("" if none), host, port (None if none)."""
    if destination.startswith("ssh://"):
        rest = destination.removeprefix("ssh://").rstrip("/")
        user, _, hostport = rest.rpartition("@")
        host, port = _host_and_port(hostport, destination)
        return user.split(";")[0], host, port
    user, _, host = destination.rpartition("@")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return user, host, None


def _host_and_port(hostport: str, shown: str) -> tuple[str, int | None]:
    """`host`, `host:port`, `[v6]`, `[v6]:port`, or a bare IPv6 address (no port)."""
    if hostport.startswith("["):
        host, _, rest = hostport[1:].partition("]")
        if rest and not rest.startswith(":"):
            raise UnusableSshCommandError(f"cannot read the address in {shown!r}")
        return host, _port(rest[1:], shown) if rest else None
    if hostport.count(":") > 1:
        return hostport, None  # a bare IPv6 address
    host, _, port = hostport.partition(":")
    return host, _port(port, shown) if port else None


def _port(value: str | None, what: str) -> int | None:
    if value is None:
        return None
    try:
        port = int(value)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise UnusableSshCommandError(f"bad port {value!r} in {what}: a port is a number from 1 to 65535")
    return port


def _jumps(value: str, default_user: str) -> tuple[SshHop, ...]:
    if not value or value.lower() == "none":
        return ()
    hops = []
    for part in value.split(","):
        part = part.strip()
        if part.startswith("ssh://"):
            user, host, port = _destination(part)
        else:
            user, _, hostport = part.rpartition("@")
            host, port = _host_and_port(hostport, f"-J {value}")
        hops.append(SshHop(_checked_user(user or default_user), _checked_host(host),
                           port if port is not None else DEFAULT_PORT))
    return tuple(hops)


def _checked_host(host: str) -> str:
    if not host:
        raise UnusableSshCommandError("the SSH command names no host")
    try:
        return str(ipaddress.ip_address(host.split("%")[0]))
    except ValueError:
        pass
    if not _HOSTNAME.match(host) or len(host) > 253:
        raise UnusableSshCommandError(f"{host!r} is not a host name or an IP address")
    return host


def _checked_user(user: str) -> str:
    if not _USER.match(user) or len(user) > 64:
        raise UnusableSshCommandError(f"{user!r} is not a user name")
    return user


def _shown(command: str) -> str:
    text = " ".join(command.split())
    return repr(text if len(text) <= 200 else text[:200] + "...")
