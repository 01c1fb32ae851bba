"""Which `PLATFORM_*` variables each service reads: its settings classes' fields (as pydantic-settings
maps them to variables) and the few variables read outside them, so a deployment that sets a
variable no service reads (a typo, a setting that moved) fails its test."""

from __future__ import annotations

from functools import cache

from pydantic_settings import BaseSettings

PLATFORM_SERVICES = ("gateway", "broker", "envhost", "recorder", "machines", "evals")

# Read with os.environ, not through a settings class: each service's NATS user in managed mode
# (platform_bus.connection), and the log level of the services that take it from the environment.
_EVERY_SERVICE = frozenset({"PLATFORM_NATS_USER", "PLATFORM_NATS_PASSWORD"})
_ALSO_READ = {
    "recorder": {"PLATFORM_LOG_LEVEL"},
    "machines": {"PLATFORM_LOG_LEVEL"},
    "evals": {"PLATFORM_LOG_LEVEL"},
}


def settings_classes(service: str) -> list[type[BaseSettings]]:
    """The settings classes `service` loads from the environment."""
    from platform_wads.settings import WadSettings

    if service == "gateway":
        from platform_gateway.config import Settings as Gateway

        return [Gateway, WadSettings]  # the WAD uploads' store (platform_gateway.wad_uploads)
    if service == "broker":
        from platform_broker.config import Settings as Broker

        return [Broker]
    if service == "envhost":
        from platform_envhost.config import Settings as EnvHost
        from platform_envhost.pods.kube_settings import KubeSettings

        # sessions' WAD copies (platform_envhost.session_wads); the pod launcher's PLATFORM_KUBE_*
        return [EnvHost, KubeSettings, WadSettings]
    if service == "recorder":
        from platform_recorder.config import Settings as Recorder

        return [Recorder]
    if service == "machines":
        from platform_machines.config import Settings as Machines

        return [Machines]
    if service == "evals":
        from platform_evals.config import Settings as Evals

        return [Evals]
    raise ValueError(f"unknown service {service!r}; the services: {', '.join(PLATFORM_SERVICES)}")


def variables_of(settings: type[BaseSettings]) -> set[str]:
    """The environment variables a settings class reads (its prefix, each field's name or alias)."""
    prefix = settings.model_config.get("env_prefix", "")
    names = set()
    for name, info in settings.model_fields.items():
        alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
        names.add(alias.upper() if alias else f"{prefix}{name}".upper())
    return names


@cache
def read_by(service: str) -> frozenset[str]:
    """Every `PLATFORM_*` variable `service` reads."""
    names = set(_EVERY_SERVICE) | _ALSO_READ.get(service, set())
    for settings in settings_classes(service):
        names |= variables_of(settings)
    return frozenset(name for name in names if name.startswith("PLATFORM_"))
