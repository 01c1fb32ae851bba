"""The platform's own SSH key (ed25519), made on first use at PLATFORM_SSH_KEY: the private half
mode 0600 in a folder mode 0700, the public half beside it (`.pub`). Users add its public line to
a machine's `~/.ssh/authorized_keys`; the platform logs in with it and with nothing else."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import asyncssh

KEY_COMMENT = "simulusion-platform"


@dataclass(frozen=True)
class PlatformKey:
    """The loaded key. `private` never leaves the service: not in replies, not in logs."""

    path: Path
    private: asyncssh.SSHKey

    @property
    def public_line(self) -> str:
        """`ssh-ed25519 AAAA... simulusion-platform`."""
        return self.private.export_public_key("openssh").decode().strip()

    @property
    def fingerprint(self) -> str:
        """`SHA256:...`."""
        return str(self.private.get_fingerprint("sha256"))

    @property
    def authorized_keys_line(self) -> str:
        """The line to add to `~/.ssh/authorized_keys` on a machine."""
        return self.public_line

    def __repr__(self) -> str:
        return f"PlatformKey(path={str(self.path)!r}, fingerprint={self.fingerprint!r})"


class PlatformKeyError(RuntimeError):
    """The key file cannot be made or read; the message names the file and PLATFORM_SSH_KEY."""


def load_or_create_key(path: Path) -> PlatformKey:
    """The key at `path`, made there when missing.

    Raises:
        PlatformKeyError: the file cannot be made or read, or holds no private key.
    """
    path = path.expanduser()
    try:
        if not path.exists():
            return _create(path)
        private = asyncssh.read_private_key(path)
    except (OSError, asyncssh.KeyImportError, ValueError) as exc:
        raise PlatformKeyError(f"cannot use the platform's SSH key {path} (PLATFORM_SSH_KEY): {exc}") from None
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)  # ssh refuses a private key others can read; so does the platform
    return PlatformKey(path, private)


def _create(path: Path) -> PlatformKey:
    folder_existed = path.parent.exists()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not folder_existed:
        os.chmod(path.parent, 0o700)  # whatever the umask
    private = asyncssh.generate_private_key("ssh-ed25519", comment=KEY_COMMENT)
    data = private.export_private_key("openssh")
    # made 0600 from the start, and only if nobody made it meanwhile (another replica)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return PlatformKey(path, asyncssh.read_private_key(path))
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    key = PlatformKey(path, private)
    path.with_name(path.name + ".pub").write_text(key.public_line + "\n")
    return key
