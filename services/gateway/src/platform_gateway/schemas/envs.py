"""Catalog entries."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class EnvOptionPublic(BaseModel):
    """One kwarg an environment accepts (its catalog file declares it). A session's kwargs are
    checked against these (422 naming `kwargs.<name>`); a kwarg not listed is refused (422) unless
    the entry has `free_kwargs`."""

    name: str = Field(description="the kwarg's name", examples=["frameskip"])
    type: Literal["int", "float", "bool", "string", "choice", "list"] = Field(
        description='"list": a list of distinct strings, each one of `choices` when it has them')
    default: Any = Field(description="the value when the kwarg is not given; null: the environment's own")
    minimum: int | float | None = Field(default=None, description="inclusive lower bound (int and float options)")
    maximum: int | float | None = Field(default=None, description="inclusive upper bound (int and float options)")
    choices: list[Any] | None = Field(default=None, description='the allowed values of a "choice" option, or the '
                                      'names a "list" option takes')
    help: str = Field(default="", description="one line on what it does")


class EnvPublic(BaseModel):
    id: str = Field(description="the catalog id to pass as `env_id` when creating a session")
    description: str = ""
    gymnasium_id: str | None = None
    factory: str | None = Field(default=None, description='"module:function" building the environment')
    path: str | None = None
    kwargs: dict[str, Any] = Field(default_factory=dict, description="the entry's default keyword arguments")
    family: str = Field(description='its family: "Classic control", "Atari", "Doom", "Gymnasium MuJoCo", '
                        '"DeepMind Control", "MuJoCo Menagerie", or for catalog.toml entries their own '
                        '(default "Custom")', examples=["Atari"])
    options: list[EnvOptionPublic] = Field(
        default_factory=list, description="the kwargs it accepts, each with its type, default, range or choices and help"
    )
    free_kwargs: bool = Field(
        default=False, description="whether a session may pass kwargs `options` does not list: they reach the "
        "environment unchecked (its catalog.toml entry has `free_kwargs = true`); false: any other kwarg is a 422"
    )
    gpus: int = Field(
        default=0, description="GPUs its instance needs (its catalog.toml entry's `gpus`); with a pod per session "
        "(PLATFORM_LAUNCHER=kubernetes) the pod asks for that many `nvidia.com/gpu` and lands on a GPU node"
    )
    preview: str = Field(
        description="URL of the entry's preview frame (JPEG), e.g. `/v0/envs/cartpole/preview`"
    )
    preview_cached: bool = Field(
        description="whether the preview is made already (else the first request for it starts a session)"
    )


class EnvsPublic(BaseModel):
    data: list[EnvPublic]
    count: int
