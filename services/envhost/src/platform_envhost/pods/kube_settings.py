"""The Kubernetes launcher's settings, from `PLATFORM_KUBE_*` environment variables."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# Where a pod's service account namespace is written (the env host's own, when it runs in a pod).
SERVICE_ACCOUNT_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def own_namespace(path: Path = SERVICE_ACCOUNT_NAMESPACE_FILE) -> str:
    """The namespace of this process's pod (its service account's), else `default`."""
    try:
        return path.read_text().strip() or "default"
    except OSError:
        return "default"


class KubeSettings(BaseSettings):
    """Where and how env pods run; every field is `PLATFORM_KUBE_<NAME>`."""

    model_config = SettingsConfigDict(env_prefix="PLATFORM_KUBE_", extra="ignore")

    namespace: str = Field(default_factory=own_namespace)
    image: str = ""
    image_pull_policy: str = "IfNotPresent"
    image_pull_secrets: str = ""  # comma-separated Secret names
    cpu_request: str = "500m"
    memory_request: str = "512Mi"
    cpu_limit: str = "2"
    memory_limit: str = "2Gi"
    node_selector: str = ""  # a JSON object
    tolerations: str = ""  # a JSON list
    gpu_node_selector: str = ""  # a JSON object, added for entries with gpus > 0
    gpu_tolerations: str = ""  # a JSON list, added for entries with gpus > 0
    service_account: str = "default"
    instance_port: int = Field(default=50051, ge=1, le=65535)
    ready_timeout: float = Field(default=120.0, gt=0)
    api_url: str = ""  # unset: in-cluster configuration, else ~/.kube/config

    @field_validator("namespace", "service_account")
    @classmethod
    def _dns_label(cls, value: str) -> str:
        if not _DNS_LABEL.match(value) or len(value) > 63:
            raise ValueError(f"must be a Kubernetes name (lower-case letters, digits and '-'), not {value!r}")
        return value

    @field_validator("image_pull_policy")
    @classmethod
    def _pull_policy(cls, value: str) -> str:
        if value not in _PULL_POLICIES:
            raise ValueError(f"must be one of {', '.join(_PULL_POLICIES)}, not {value!r}")
        return value

    @field_validator("cpu_request", "memory_request", "cpu_limit", "memory_limit")
    @classmethod
    def _quantity(cls, value: str) -> str:
        if not _QUANTITY.match(value):
            raise ValueError(f"must be a Kubernetes quantity such as 500m, 2 or 512Mi, not {value!r}")
        return value

    @field_validator("node_selector", "gpu_node_selector")
    @classmethod
    def _json_object(cls, value: str) -> str:
        parsed = _json(value, {})
        if not isinstance(parsed, dict) or not all(isinstance(v, str) for v in parsed.values()):
            raise ValueError(f'must be a JSON object of strings such as {{"pool": "envs"}}, not {value!r}')
        return value

    @field_validator("tolerations", "gpu_tolerations")
    @classmethod
    def _json_list(cls, value: str) -> str:
        parsed = _json(value, [])
        if not isinstance(parsed, list) or not all(isinstance(v, dict) for v in parsed):
            raise ValueError(f'must be a JSON list of tolerations such as [{{"key": "gpu", "operator": "Exists"}}], '
                             f"not {value!r}")
        return value

    def node_selector_for(self, gpus: int) -> dict[str, str]:
        """The node selector of an env pod needing `gpus` GPUs."""
        selector: dict[str, str] = dict(_json(self.node_selector, {}))
        if gpus > 0:
            selector.update(_json(self.gpu_node_selector, {}))
        return selector

    def tolerations_for(self, gpus: int) -> list[dict[str, Any]]:
        """The tolerations of an env pod needing `gpus` GPUs."""
        tolerations: list[dict[str, Any]] = list(_json(self.tolerations, []))
        if gpus > 0:
            tolerations += _json(self.gpu_tolerations, [])
        return tolerations

    @property
    def pull_secrets(self) -> list[str]:
        return [name.strip() for name in self.image_pull_secrets.split(",") if name.strip()]


def _json(text: str, empty: Any) -> Any:
    if not text.strip():
        return empty
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"is not valid JSON ({exc})") from None
