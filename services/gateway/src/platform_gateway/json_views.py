"""JSON views of the broker's and the environments' protobuf messages, for the REST API."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote

import numpy as np
from platform_contracts.json_values import space_to_json
from platform_contracts.limits import DEFAULT_JPEG_QUALITY
from platform_contracts.values import json_from_datamap, python_from_value
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb

from platform_contracts.teams import owning_team
from platform_gateway.session_options import kwargs_from_json, options_to_json


def state_name(state: ctl.SessionState.ValueType) -> str:
    """"running" for SESSION_STATE_RUNNING, and so on."""
    return ctl.SessionState.Name(state).removeprefix("SESSION_STATE_").lower()


def session_to_json(info: ctl.SessionInfo) -> dict[str, Any]:
    """A session: its id, every option it was made with, its state, spec and where it runs."""
    spec = info.spec
    has_spec = info.HasField("spec")
    return {
        "id": info.id,
        **options_to_json(info.options),
        "team": owning_team(info.options.team),
        "state": state_name(info.state),
        "created_at": info.created_at,
        "last_active_at": info.last_active_at,
        "observation_space": space_to_json(spec.observation_space) if spec.HasField("observation_space") else None,
        "action_space": space_to_json(spec.action_space) if spec.HasField("action_space") else None,
        "render_mode": spec.render_mode or None,
        "metadata": json_from_datamap(spec.metadata) if has_spec else {},
        "observation_labels": labels_json(spec),
        "host_id": info.host_id or None,
        "reason": info.reason or None,
        "log_tail": info.log_tail or None,
        "stream_full_since": info.stream_full_since or None,
    }


def entry_to_json(entry: ctl.CatalogEntry, *, preview_cached: bool) -> dict[str, Any]:
    """A catalog entry, with the URL of its preview and whether that preview is cached."""
    return {
        "id": entry.id,
        "description": entry.description,
        "gymnasium_id": entry.gymnasium_id or None,
        "factory": entry.factory or None,
        "path": entry.path or None,
        "kwargs": kwargs_from_json(entry.kwargs_json),
        "family": entry.family,
        "options": [option_json(option) for option in entry.options],
        "free_kwargs": entry.free_kwargs,
        "gpus": entry.gpus,
        "preview": f"/v0/envs/{quote(entry.id, safe='')}/preview",
        "preview_cached": preview_cached,
    }


def option_json(option: ctl.EnvOption) -> dict[str, Any]:
    """One option a catalog entry declares (`schemas.envs.EnvOptionPublic`)."""
    return {
        "name": option.name,
        "type": option.type,
        "default": json.loads(option.default_json) if option.default_json else None,
        "minimum": _bound(option, "minimum"),
        "maximum": _bound(option, "maximum"),
        "choices": [json.loads(choice) for choice in option.choices_json] if option.choices_json else None,
        "help": option.help,
    }


def _bound(option: ctl.EnvOption, name: str) -> int | float | None:
    """A bound as its option's type: 1 for an int option, 0.5 for a float one; None when unset."""
    if not option.HasField(name):  # type: ignore[arg-type]
        return None
    value: float = getattr(option, name)
    return int(value) if option.type == "int" and value.is_integer() else value


def value_json(value: values_pb.Value) -> Any:
    """An observation as JSON: arrays as nested lists, non-finite floats as strings ("inf", "nan")."""
    if not value.WhichOneof("kind"):
        return None
    return _jsonable(python_from_value(value))


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind == "f":
            bad = ~np.isfinite(obj)
            if bad.any():
                out = obj.astype(object)
                out[bad] = obj[bad].astype(str)
                return out.tolist()
        return obj.tolist()
    if isinstance(obj, np.generic):
        return _jsonable(np.asarray(obj)) if obj.dtype.kind == "f" else obj.item()
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, tuple):
        return [_jsonable(v) for v in obj]
    return obj


def _number(x: float) -> float | str:
    return x if np.isfinite(x) else str(x)


def labels_json(spec: env_pb.SpecResponse) -> dict[str, list[int]] | None:
    """The observation labels as {name: [start, stop]} (slices of the flat observation), or None."""
    if not spec.observation_labels:
        return None
    return {label.name: [label.start, label.stop] for label in spec.observation_labels}


def reset_json(
    result: env_pb.ResetResponse | env_pb.RestoreResponse | env_pb.RestoreSavedResponse,
    spec: env_pb.SpecResponse | None = None,
) -> dict[str, Any]:
    return {
        "observation": value_json(result.observation),
        "info": json_from_datamap(result.info),
        "observation_labels": labels_json(spec) if spec is not None else None,
    }


def restore_json(
    result: env_pb.RestoreResponse | env_pb.RestoreSavedResponse, spec: env_pb.SpecResponse | None = None
) -> dict[str, Any]:
    """A restore's (or restore_saved's) answer: a reset's with `restore_s`."""
    return {**reset_json(result, spec), "restore_s": restore_seconds(result)}


def restore_seconds(result: env_pb.RestoreResponse | env_pb.RestoreSavedResponse) -> float | None:
    """The seconds the environment server says the restore took; None when it does not say (an older one)."""
    return result.seconds if result.HasField("seconds") else None


def step_json(result: env_pb.StepResponse, spec: env_pb.SpecResponse | None = None,
              final_obs: bool = True, observation: bool = True) -> dict[str, Any]:
    """A step's answer. After an auto-reset (or an endless restart) the observation and info are
    the new episode's first, and info holds `final_obs` (unless `final_obs` is False), `final_info`
    (and `restarted`). Without `observation` the answer's observation is null and never turned
    into JSON (an Atari screen is 100,800 numbers: tens of milliseconds)."""
    info = json_from_datamap(result.info)
    if result.HasField("auto_reset"):
        if final_obs:
            info["final_obs"] = value_json(result.auto_reset.final_observation)
        info["final_info"] = json_from_datamap(result.auto_reset.final_info)
        if not (result.terminated or result.truncated):
            info["restarted"] = True
    return {
        "observation": value_json(result.observation) if observation else None,
        "reward": _number(result.reward),
        "terminated": result.terminated,
        "truncated": result.truncated,
        "info": info,
        "observation_labels": labels_json(spec) if spec is not None else None,
    }


def hold_json(result: env_pb.HoldResponse) -> dict[str, Any]:
    """A hold's answer; frames as base64 JPEG strings."""
    return {
        "steps": result.steps,
        "rewards": [_number(r) for r in result.rewards],
        "frames": [base64.b64encode(frame_jpeg(frame)).decode() for frame in result.frames],
        "observation": value_json(result.observation),
        "terminated": result.terminated,
        "truncated": result.truncated,
        "info": json_from_datamap(result.info),
    }


def saved_snapshot_json(saved: env_pb.SavedSnapshot) -> dict[str, Any]:
    return {
        "id": saved.id,
        "label": saved.label,
        "session_id": saved.session_id,
        "env_id": saved.env_id,
        "kwargs": kwargs_from_json(saved.kwargs_json),
        "created_at": saved.created_at,
        "seq": saved.seq,
        "size_bytes": saved.size_bytes,
    }


def frame_jpeg(frame: env_pb.Frame, observation: values_pb.Value | None = None) -> bytes:
    """The frame as JPEG bytes: raw RGB frames, a frame that is its `observation` (an Atari
    screen, encoding "observation") and a frame painted from it (CartPole, "painted:"), are
    encoded here.

    Raises:
        ValueError: an "observation" frame without its image observation.
    """
    if frame.encoding == "jpeg":
        return frame.data
    if frame.encoding == "observation":  # platform_contracts.frames.OBSERVATION
        if observation is None or observation.WhichOneof("kind") != "tensor":
            raise ValueError("a frame that is its observation came without an image observation")
        from platform_contracts.frames import observation_jpeg  # imports simplejpeg: only when needed

        return observation_jpeg(frame, observation.tensor.data)
    if frame.encoding.startswith("painted:"):  # platform_contracts.painted_frames
        if observation is None or observation.WhichOneof("kind") != "tensor":
            raise ValueError("a painted frame came without its observation")
        from platform_contracts.painted_frames import painted_jpeg

        tensor = observation.tensor
        return painted_jpeg(frame, np.frombuffer(tensor.data, dtype=np.dtype(tensor.dtype)))
    import simplejpeg

    array = np.frombuffer(frame.data, dtype=np.uint8).reshape(frame.height, frame.width, 3)
    encoded: bytes = simplejpeg.encode_jpeg(np.ascontiguousarray(array), quality=DEFAULT_JPEG_QUALITY,
                                            colorspace="RGB")
    return encoded
