"""The environment of an environment instance: the env host's own, less the platform's settings.

Instances run users' code (catalog factories), so they get none of the platform's settings: no
`PLATFORM_*` variable (the NATS URL, the env host's NATS user and password in managed mode, the
step ticket secret, database and S3 credentials, tokens) and no `NATS_*` one (the nats CLI's).
They need none: what an instance is to do comes on its command line, and it talks only to its
env host, over its socket. Without NATS credentials an instance cannot use the bus of a
managed-mode platform (docs/architecture.md, "The bus in managed mode").
"""

from __future__ import annotations

import os
from collections.abc import Mapping

SCRUBBED_PREFIXES = ("PLATFORM_", "NATS_")


def instance_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`environ` (default: this process's) without the variables named by `SCRUBBED_PREFIXES`."""
    source = os.environ if environ is None else environ
    return {name: value for name, value in source.items() if not name.upper().startswith(SCRUBBED_PREFIXES)}
