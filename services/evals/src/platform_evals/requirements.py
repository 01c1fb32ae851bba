"""What an eval's virtual environment on the machine holds: the pinned Inspect packages, the
model provider's package and the packages the eval asks for (one pip requirement each).

A task of the platform's own SDK (`platform_sdk/episodes`) gets `platform-sdk[inspect]` from the
wheel the platform serves (`PLATFORM_WHEEL`: fetched on the machine by `bootstrap`, so it is the
SDK of the running platform) in place of inspect-evals."""

from __future__ import annotations

import re

from platform_evals.errors import InvalidEvalError
from platform_evals.machine_side.bootstrap import PLATFORM_WHEEL

INSPECT_AI = "inspect-ai==0.3.285"
INSPECT_EVALS_VERSION = "0.26.0"
MAX_PACKAGES = 20

# The package each provider of Inspect needs (its docs' "Providers"); a provider missing here
# needs none, or comes from a package the eval names in `packages`.
PROVIDER_PACKAGES: dict[str, tuple[str, ...]] = {
    "openai": ("openai",), "openai-api": ("openai",), "anthropic": ("anthropic",), "google": ("google-genai",),
    "mistral": ("mistralai",), "grok": ("xai-sdk",), "groq": ("groq",), "together": ("openai",),
    "fireworks": ("openai",), "deepseek": ("openai",), "openrouter": ("openai",), "perplexity": ("openai",),
    "ollama": ("openai",), "llama-cpp-python": ("openai",), "vllm": ("vllm",), "sglang": ("sglang",),
    "hf": ("transformers", "torch", "accelerate"), "azureai": ("azure-ai-inference",),
    "bedrock": ("aioboto3",), "cf": (), "goodfire": ("goodfire",), "transformer_lens": ("transformer_lens",),
}
# A pip requirement: a name with extras and a version, or a URL / path the machine can reach.
_REQUIREMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-\[\],]*(\s*[=<>!~]=?\s*[A-Za-z0-9.*+!\-]+(\s*,\s*[=<>!~]=?\s*"
                          r"[A-Za-z0-9.*+!\-]+)*)?$|^(git\+)?https://\S+$|^/\S+$")


def provider_of(model: str) -> str:
    provider, slash, name = model.partition("/")
    if not slash or not provider or not name:
        raise InvalidEvalError(f"model {model!r}: write provider/model, e.g. openai/gpt-4o-mini or "
                               "anthropic/claude-sonnet-4-0", field="model")
    return provider


def checked_packages(packages: list[str]) -> list[str]:
    if len(packages) > MAX_PACKAGES:
        raise InvalidEvalError(f"packages: {len(packages)} given; at most {MAX_PACKAGES}", field="packages")
    for package in packages:
        if not _REQUIREMENT.match(package.strip()) or package.strip().startswith("-"):
            raise InvalidEvalError(f"packages: {package!r} is not a pip requirement (a name with an optional "
                                   "version such as 'openai>=1.60', an https:// or git+https:// URL, or an "
                                   "absolute path on the machine)", field="packages")
    return [package.strip() for package in packages]


def is_platform_task(task: str) -> bool:
    """A task of the platform's SDK (`platform_sdk/episodes`), not of inspect_evals."""
    return task.startswith("platform_sdk/")


def requirements_for(model: str, packages: list[str], task_dependency: str = "", task: str = "") -> list[str]:
    """The environment's requirements, pinned Inspect first; for a task of the platform's SDK,
    its served wheel with the `inspect` extra instead of inspect-evals."""
    if is_platform_task(task):
        tasks = PLATFORM_WHEEL
    else:
        evals = f"inspect-evals[{task_dependency}]" if task_dependency else "inspect-evals"
        tasks = f"{evals}=={INSPECT_EVALS_VERSION}"
    provider = PROVIDER_PACKAGES.get(provider_of(model), ())
    found = [INSPECT_AI, tasks, *provider, *checked_packages(packages)]
    return list(dict.fromkeys(found))
