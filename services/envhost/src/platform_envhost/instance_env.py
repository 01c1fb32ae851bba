"""The environment of an environment instance: the env host's own, less the platform's settings.

Instances run users' code (catalog factories), so they get none of the platform's settings: no
`PLATFORM_*` variable (the NATS URL, the env host's NATS user and password in managed mode, the
step ticket secret, database and S3 credentials, tokens) and no `NATS_*` one (the nats CLI's).
They need none: what an instance is to do comes on its command line, and it talks only to its
env host, over its socket. Without NATS credentials an instance cannot use the bus of a
managed-mode platform (docs/architecture.md, "The bus in managed mode"). The one exception is
`PLATFORM_LOG_FORMAT` (`KEPT`), no secret: instances write their log lines as the platform does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from platform_contracts.log_lines import LOG_FORMAT_VARIABLE

SCRUBBED_PREFIXES = ("PLATFORM_", "NATS_")
KEPT = frozenset({LOG_FORMAT_VARIABLE})
# The env host's own name in traces: an instance names itself (platform-env-server) instead.
SCRUBBED_NAMES = frozenset({"OTEL_SERVICE_NAME"})


def instance_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`environ` (default: this process's) without the variables named by `SCRUBBED_PREFIXES`
    (but those in `KEPT`) and `SCRUBBED_NAMES`."""
    source = os.environ if environ is None else environ
    return {name: value for name, value in source.items()
            if (name in KEPT or not name.upper().startswith(SCRUBBED_PREFIXES)) and name.upper() not in SCRUBBED_NAMES}


def kept_variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The settings in `KEPT` that `environ` (default: this process's) sets: what an instance in
    a pod gets of the env host's settings."""
    source = os.environ if environ is None else environ
    return {name: source[name] for name in sorted(KEPT) if name in source}
