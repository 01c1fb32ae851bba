"""The settings of a DeepMind Control environment, checked, and loading its suite task.

dm_control is imported only when a task is loaded; without it the error names the install
command.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from platform_envs.adapters.dmc_render import RENDER_QUALITIES, prepare_model
from platform_envs.errors import EnvError

INSTALL_COMMAND = "pip install 'platform-envs[dmc]'"
RENDER_MODES: tuple[str, ...] = ("rgb_array",)


class DmControlError(EnvError, ValueError):
    """A DeepMind Control task cannot be built or stepped; the message says why."""


def catalog_id(domain: str, task: str) -> str:
    """The catalog id of a suite task: `dmc-<domain>-<task>` with '_' as '-'."""
    return f"dmc-{domain}-{task}".replace("_", "-")


@dataclass(frozen=True)
class DmcConfig:
    """The arguments of `make_env`, checked (see `platform_envs.adapters.dmc.make_env`)."""

    domain: str
    task: str
    substeps: int | None
    time_limit: float | None
    height: int
    width: int
    camera_id: int | str
    render_mode: str | None
    render_quality: str
    task_kwargs: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def make(
        cls,
        domain: str,
        task: str,
        substeps: Any = None,
        time_limit: Any = None,
        render_size: Any = (240, 320),
        camera_id: Any = 0,
        render_mode: Any = "rgb_array",
        render_quality: Any = "fast",
        task_kwargs: Mapping[str, Any] | None = None,
    ) -> DmcConfig:
        """The checked settings.

        Raises:
            DmControlError: a bad setting; the message names it and what it must be.
        """
        task_kwargs = dict(task_kwargs or {})
        # suite names use '_': "swingup-sparse" is read as "swingup_sparse"
        domain, task = str(domain).replace("-", "_"), str(task).replace("-", "_")
        name = f"{domain}/{task}"
        if substeps is not None and (not _is_int(substeps) or substeps < 1):
            raise DmControlError(f"{name}: substeps must be an int >= 1 or None, not {substeps!r}")
        if time_limit is not None and (
            isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not time_limit > 0
        ):
            raise DmControlError(
                f"{name}: time_limit must be seconds > 0 (inf for none) or None, not {time_limit!r}"
            )
        try:
            height, width = (int(v) for v in render_size)
        except (TypeError, ValueError):
            raise DmControlError(
                f"{name}: render_size must be (height, width), not {render_size!r}"
            ) from None
        if height < 1 or width < 1:
            raise DmControlError(f"{name}: render_size must be positive, not {render_size!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise DmControlError(f"{name}: render_mode must be 'rgb_array' or None, not {render_mode!r}")
        if render_quality not in RENDER_QUALITIES:
            raise DmControlError(
                f"{name}: render_quality must be one of {RENDER_QUALITIES}, not {render_quality!r}"
            )
        if not _is_int(task_kwargs.get("random", 0)):
            raise DmControlError(
                f"{name}: random (the construction seed) must be an int, not {task_kwargs['random']!r}"
            )
        if not isinstance(camera_id, str) and not _is_int(camera_id):
            raise DmControlError(f"{name}: camera_id must be an int or a camera's name, not {camera_id!r}")
        limit = None if time_limit is None else float(time_limit)
        return cls(
            domain, task, substeps, limit, height, width, camera_id, render_mode, render_quality, task_kwargs
        )

    @property
    def name(self) -> str:
        """ "domain/task", for messages."""
        return f"{self.domain}/{self.task}"

    @property
    def env_id(self) -> str:
        return catalog_id(self.domain, self.task)

    def make_kwargs(self) -> dict[str, Any]:
        """The `make_env` kwargs (less `render_mode`) that build an environment like this."""
        return {
            "domain": self.domain,
            "task": self.task,
            "substeps": self.substeps,
            "time_limit": self.time_limit,
            "render_size": (self.height, self.width),
            "camera_id": self.camera_id,
            "render_quality": self.render_quality,
            **self.task_kwargs,
        }


def load(config: DmcConfig) -> Any:
    """`suite.load` of the task with its construction seed (`random`, default 0), its model's
    visual settings prepared for `config.render_quality`; the `control.Environment`.

    Raises:
        DmControlError: dm-control is missing, an unknown domain or task, bad task kwargs, or a
            camera the model does not have.
    """
    suite = import_suite()
    domain, task = config.domain, config.task
    if (domain, task) not in suite.ALL_TASKS:
        tasks = suite.TASKS_BY_DOMAIN.get(domain)
        if tasks is None:
            domains = ", ".join(sorted(suite.TASKS_BY_DOMAIN))
            raise DmControlError(f"unknown DeepMind Control domain {domain!r}; domains: {domains}")
        raise DmControlError(f"unknown task {task!r} of domain {domain!r}; its tasks: {', '.join(tasks)}")
    try:
        env = suite.load(domain, task, task_kwargs={"random": 0, **config.task_kwargs})
    except TypeError as exc:
        raise DmControlError(f"{config.name}: bad task kwargs {config.task_kwargs!r}: {exc}") from None
    _check_camera(config, env.physics)
    prepare_model(env.physics.model, config.render_quality, config.height, config.width)
    return env


def import_suite() -> Any:
    """`dm_control.suite`, or an error naming the install command."""
    try:
        from dm_control import suite
    except ImportError as exc:
        raise DmControlError(
            f"DeepMind Control tasks need dm-control, which is not installed: {INSTALL_COMMAND} ({exc})"
        ) from None
    return suite


def physics_error() -> type[Exception]:
    """dm_control's error for a simulation that became unstable."""
    from dm_control.rl import control

    error: type[Exception] = control.PhysicsError
    return error


def _check_camera(config: DmcConfig, physics: Any) -> None:
    import mujoco

    camera, count = config.camera_id, physics.model.ncam
    if isinstance(camera, str):
        if mujoco.mj_name2id(physics.model.ptr, mujoco.mjtObj.mjOBJ_CAMERA, camera) < 0:
            raise DmControlError(f"{config.name}: no camera named {camera!r}")
    elif not -1 <= camera < max(count, 1):  # 0 with no camera: the free camera
        raise DmControlError(f"{config.name}: camera_id must be -1 (free) or in [0, {count}), not {camera!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
