"""World changes: the one definition of a session's timeline of changes to its world.

A session's `world_changes` kwarg is a list of entries, each
``{"at": <int >= 0>, "change": <kind>, ...the kind's fields, "reveal": <bool, default false>}``.
`at` counts the session's steps across episodes (resets are not steps): the change is applied
just before the session's step `at` (0-based, after `at` steps), or at a reset that comes
first, so step `at` is the first under it. Several entries may share an `at`; they are applied
in list order. Values are relative to the model as built, so `"scale": 1.0` undoes an earlier
scale, and changes last through resets. "reveal": true puts the applied entry (as given) in
that answer's info["world_changes"]; otherwise the agent is not told.

The kinds (`KINDS`) and their fields live here and nowhere else: the broker checks a timeline
at create against the catalog entry's `world` facts (`WorldFacts`), the environment server
again against the live environment's, and docs/world-changes.md is generated from them
(`kinds_markdown`). `platform_envs.world_change_effects` applies them to a MuJoCo model and to
observations; `platform_envs.world_change_timeline` is the wrapper that does it at the
right steps.

This module imports nothing beyond the standard library (and `platform_contracts.session_kwargs`
and `platform_contracts.limits`, which are the same): the broker imports it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from platform_contracts.session_kwargs import WORLD_CHANGES
from platform_contracts.limits import MAX_WORLD_CHANGES

__all__ = [
    "KINDS",
    "MUJOCO_KINDS",
    "SENSOR_KINDS",
    "FieldSpec",
    "Kind",
    "WorldChange",
    "WorldChangeError",
    "WorldFacts",
    "kinds_markdown",
    "parse_timeline",
    "timeline_json",
    "world_state",
]

MAX_CHANGES = MAX_WORLD_CHANGES  # entries in one timeline (platform_contracts.limits)
MAX_SCALE = 100.0
MAX_POSITION_OFFSET = 10.0  # metres, along each axis
MAX_NOISE_STD = 100.0
NAMES_SHOWN = 40  # names listed in a message before "... (N in all)"
FACTS_KEYS = ("mujoco", "bodies", "actuators", "geoms", "observation_size", "sensors")


class WorldChangeError(ValueError):
    """A timeline (or a `world` facts table) is not valid.

    Attributes:
        path: where: "world_changes[2].body" (the entry and field at fault), "world_changes[2]"
            (the whole entry) or "world_changes" (the whole timeline).
        problem: what is wrong and what is allowed, in one line.
    """

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


@dataclass(frozen=True)
class WorldFacts:
    """What a timeline may name in one environment.

    From a catalog entry's `world` table (`from_mapping`, `from_json`: CatalogEntry.world_json)
    at create, and from the live environment in the environment server
    (`platform_envs.world_change_effects.live_facts`).

    Attributes:
        mujoco: a MuJoCo environment (the kinds other than the sensor kinds need one).
        bodies, actuators, geoms: the model's names (the world body left out).
        observation_size: the length of the flat observation (gymnasium.spaces.flatdim), which
            sensor kinds' indices index; None when not known (they are checked later).
        sensors: whether sensor kinds can act on the observation (a Box, or a Dict of Boxes).
    """

    mujoco: bool = False
    bodies: tuple[str, ...] = ()
    actuators: tuple[str, ...] = ()
    geoms: tuple[str, ...] = ()
    observation_size: int | None = None
    sensors: bool = True

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> WorldFacts:
        """Facts from a `world` table (its keys are FACTS_KEYS; all optional).

        Raises:
            ValueError: an unknown key or a value of the wrong type (the message says which).
        """
        unknown = sorted(set(raw) - set(FACTS_KEYS))
        if unknown:
            raise ValueError(f"unknown keys {unknown}; allowed: {', '.join(FACTS_KEYS)}")
        for key in ("mujoco", "sensors"):
            if key in raw and not isinstance(raw[key], bool):
                raise ValueError(f"'{key}' must be true or false")
        names: dict[str, tuple[str, ...]] = {}
        for key in ("bodies", "actuators", "geoms"):
            value = raw.get(key, [])
            if not isinstance(value, list) or not all(isinstance(name, str) and name for name in value):
                raise ValueError(f"'{key}' must be a list of names (non-empty strings)")
            names[key] = tuple(value)
        size = raw.get("observation_size")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            raise ValueError("'observation_size' must be an integer >= 0 (or left out when not known)")
        return cls(mujoco=raw.get("mujoco", False), observation_size=size, sensors=raw.get("sensors", True), **names)

    @classmethod
    def from_json(cls, text: str) -> WorldFacts | None:
        """Facts from CatalogEntry.world_json; None for "" (not known).

        Raises:
            ValueError: not a JSON object of facts.
        """
        if not text:
            return None
        raw = json.loads(text)
        if not isinstance(raw, dict):
            raise ValueError("world facts must be a JSON object")  # noqa: TRY004 - a bad value, one error type
        return cls.from_mapping(raw)

    def to_json(self) -> str:
        """The facts as CatalogEntry.world_json ("sensors" only when false)."""
        raw: dict[str, Any] = {
            "mujoco": self.mujoco,
            "bodies": list(self.bodies),
            "actuators": list(self.actuators),
            "geoms": list(self.geoms),
            "observation_size": self.observation_size,
        }
        if not self.sensors:
            raw["sensors"] = False
        return json.dumps(raw)


@dataclass(frozen=True)
class WorldChange:
    """One checked timeline entry.

    Attributes:
        index: its place in the timeline.
        at: the session step it comes in force before.
        change: its kind (a key of KINDS).
        reveal: whether the agent is told (info["world_changes"]).
        values: the kind's fields, checked, with defaults filled in (numbers as floats).
        entry: the entry as given (what `reveal` shows and records carry).
    """

    index: int
    at: int
    change: str
    reveal: bool
    values: Mapping[str, Any]
    entry: Mapping[str, Any]

    def applied(self, session_step: int) -> dict[str, Any]:
        """What a record of its application holds: the entry with "index" and "session_step"."""
        return {**self.entry, "index": self.index, "session_step": session_step}


@dataclass(frozen=True)
class _Context:
    facts: WorldFacts | None
    entry: Mapping[str, Any]
    path: str  # "world_changes[i]"

    def error(self, name: str, problem: str) -> WorldChangeError:
        return WorldChangeError(f"{self.path}.{name}", problem)


_Reader = Callable[[Any, str, _Context], Any]


@dataclass(frozen=True)
class FieldSpec:
    """One field of a kind.

    Attributes:
        name: its key in an entry.
        takes: what values it takes, for messages and docs ("a number, 0 < scale <= 100").
        help: what it does.
        required: whether an entry of the kind must have it.
        default: its value when left out (None: nothing).
        read: checks a value and returns it as used (raises WorldChangeError).
    """

    name: str
    takes: str
    help: str
    read: _Reader = field(repr=False)
    required: bool = True
    default: Any = None


@dataclass(frozen=True)
class Kind:
    """One kind of world change.

    Attributes:
        name: the value of an entry's "change".
        help: what it changes.
        fields: its own fields (besides at, change and reveal), in the order they are checked.
        needs_mujoco: only MuJoCo environments have it (else: the sensor kinds).
        exclusive: pairs of its fields an entry may not both have.
    """

    name: str
    help: str
    fields: tuple[FieldSpec, ...]
    needs_mujoco: bool = True
    exclusive: tuple[tuple[str, str], ...] = ()

    @property
    def field_names(self) -> tuple[str, ...]:
        """Every field an entry of this kind may have, in order."""
        return ("at", "change", *(spec.name for spec in self.fields), "reveal")


# --- values -------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _names(names: Sequence[str]) -> str:
    if not names:
        return "(none)"
    shown = ", ".join(names[:NAMES_SHOWN])
    return shown if len(names) <= NAMES_SHOWN else f"{shown}, ... ({len(names)} in all)"


def _scale_reader(low: float, low_inclusive: bool) -> _Reader:
    def read(value: Any, name: str, ctx: _Context) -> float:
        fits = _is_number(value) and (value >= low if low_inclusive else value > low) and value <= MAX_SCALE
        if not fits:
            sign = "<=" if low_inclusive else "<"
            raise ctx.error(name, f"must be a number, {low:g} {sign} scale <= {MAX_SCALE:g}, not {_shown(value)}")
        return float(value)

    return read


def _name_reader(what: str, plural: str) -> _Reader:
    article = "an" if what[0] in "aeiou" else "a"

    def read(value: Any, name: str, ctx: _Context) -> str:
        if not isinstance(value, str) or not value:
            raise ctx.error(name, f"must be the name of {article} {what} (a string), not {_shown(value)}")
        facts = ctx.facts
        if facts is not None and facts.mujoco:
            known: tuple[str, ...] = getattr(facts, plural)
            if value not in known:
                raise ctx.error(name, f"no {what} {value!r}: the {plural} are {_names(known)}")
        return value

    return read


def _read_position_offset(value: Any, name: str, ctx: _Context) -> tuple[float, float, float]:
    if (
        not isinstance(value, list)
        or len(value) != 3
        or not all(_is_number(v) and abs(v) <= MAX_POSITION_OFFSET for v in value)
    ):
        raise ctx.error(
            name, f"must be [dx, dy, dz] in metres, each from -{MAX_POSITION_OFFSET:g} to "
            f"{MAX_POSITION_OFFSET:g}, not {_shown(value)}",
        )
    return float(value[0]), float(value[1]), float(value[2])


def _read_indices(value: Any, name: str, ctx: _Context) -> tuple[int, ...]:
    if not isinstance(value, list) or not value or not all(_is_int(i) and i >= 0 for i in value):
        raise ctx.error(name, f"must be a non-empty list of integers >= 0 (places in the flat observation), "
                        f"not {_shown(value)}")
    if len(set(value)) != len(value):
        raise ctx.error(name, f"must not repeat an index: {_shown(value)}")
    size = ctx.facts.observation_size if ctx.facts is not None else None
    if size is not None:
        outside = [i for i in value if i >= size]
        if outside:
            raise ctx.error(name, f"index {outside[0]} is out of range: the flat observation has {size} "
                            f"values (indices 0 to {size - 1})")
    return tuple(value)


def _read_sensor_offset(value: Any, name: str, ctx: _Context) -> float | tuple[float, ...]:
    if _is_number(value):
        return float(value)
    if not isinstance(value, list) or not value or not all(_is_number(v) for v in value):
        raise ctx.error(name, f"must be a number, or a non-empty list of numbers (one per index), not {_shown(value)}")
    indices = ctx.entry.get("indices")
    if isinstance(indices, list):
        expected: int | None = len(indices)
        against = f"indices has {expected}"
    else:
        expected = ctx.facts.observation_size if ctx.facts is not None else None
        against = f"without indices it must have one per value of the flat observation, {expected}"
    if expected is not None and len(value) != expected:
        raise ctx.error(name, f"has {len(value)} numbers but {against}")
    return tuple(float(v) for v in value)


def _read_std(value: Any, name: str, ctx: _Context) -> float:
    if not _is_number(value) or not 0 <= value <= MAX_NOISE_STD:
        raise ctx.error(name, f"must be a number, 0 <= std <= {MAX_NOISE_STD:g}, not {_shown(value)}")
    return float(value)


def _read_seed(value: Any, name: str, ctx: _Context) -> int:
    if not _is_int(value) or value < 0:
        raise ctx.error(name, f"must be an integer >= 0, not {_shown(value)}")
    return int(value)


# --- the kinds ----------------------------------------------------------------------------

_SCALE_HELP = "times the value as built (1 undoes an earlier scale)"
KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind(
            "mass",
            "A body's mass and rotational inertia (body_mass, body_inertia) = as built x scale.",
            (
                FieldSpec("body", "a body's name", "the body", _name_reader("body", "bodies")),
                FieldSpec("scale", f"a number, 0 < scale <= {MAX_SCALE:g}", _SCALE_HELP, _scale_reader(0.0, False)),
            ),
        ),
        Kind(
            "friction",
            "The friction of a body's geoms, one geom, or every geom (geom_friction) = as built x scale.",
            (
                FieldSpec("body", "a body's name", "its geoms (leave out body and geom: every geom)",
                          _name_reader("body", "bodies"), required=False),
                FieldSpec("geom", "a geom's name", "that geom only", _name_reader("geom", "geoms"), required=False),
                FieldSpec("scale", f"a number, 0 < scale <= {MAX_SCALE:g}", _SCALE_HELP, _scale_reader(0.0, False)),
            ),
            exclusive=(("body", "geom"),),
        ),
        Kind(
            "motor_strength",
            "An actuator's strength, or every actuator's (gainprm[0] and biasprm[0:3]) = as built x scale.",
            (
                FieldSpec("actuator", "an actuator's name", "the actuator (left out: every actuator)",
                          _name_reader("actuator", "actuators"), required=False),
                FieldSpec("scale", f"a number, 0 <= scale <= {MAX_SCALE:g}", _SCALE_HELP + "; 0: no force",
                          _scale_reader(0.0, True)),
            ),
        ),
        Kind(
            "position",
            "Moves a body by offset from where it was built: body_pos of a fixed body; body_pos and "
            "mocap_pos of a mocap body; a free body's qpos now and its qpos0 (and the environment's "
            "init_qpos) for later resets.",
            (
                FieldSpec("body", "a body's name", "the body", _name_reader("body", "bodies")),
                FieldSpec("offset", f"[dx, dy, dz], metres, each within +-{MAX_POSITION_OFFSET:g}",
                          "from the position as built ([0, 0, 0] undoes an earlier offset)", _read_position_offset),
            ),
        ),
        Kind(
            "sensor_offset",
            "Adds offset to what the agent sees (the flat observation, gymnasium.spaces.flatten), "
            "clipped to the observation space.",
            (
                FieldSpec("indices", "a list of integers >= 0", "places in the flat observation (left out: all)",
                          _read_indices, required=False),
                FieldSpec("offset", "a number, or a list of numbers (one per index)",
                          "added to those values (0 undoes an earlier offset)", _read_sensor_offset),
            ),
            needs_mujoco=False,
        ),
        Kind(
            "sensor_noise",
            "Gaussian noise on what the agent sees, drawn from numpy.random.default_rng([seed, "
            "session_step]) (the same for every agent and after a restore), clipped to the "
            "observation space.",
            (
                FieldSpec("indices", "a list of integers >= 0", "places in the flat observation (left out: all)",
                          _read_indices, required=False),
                FieldSpec("std", f"a number, 0 <= std <= {MAX_NOISE_STD:g}",
                          "the noise's standard deviation (0 ends earlier noise)", _read_std),
                FieldSpec("seed", "an integer >= 0", "seeds the noise", _read_seed, required=False, default=0),
            ),
            needs_mujoco=False,
        ),
    )
}
MUJOCO_KINDS = frozenset(name for name, kind in KINDS.items() if kind.needs_mujoco)
SENSOR_KINDS = frozenset(name for name, kind in KINDS.items() if not kind.needs_mujoco)

COMMON_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("at", "an integer >= 0", "the session step the change comes before (steps counted across episodes)"),
    ("change", "one of " + ", ".join(KINDS), "the kind of change"),
    ("reveal", "true or false (default false)", "tell the agent: the entry in that step's info[\"world_changes\"]"),
)
_KIND_LIST = ", ".join(KINDS)


# --- parsing ------------------------------------------------------------------------------


def parse_timeline(
    value: Any, facts: WorldFacts | None = None, *, path: str = WORLD_CHANGES
) -> tuple[WorldChange, ...]:
    """The checked entries of a timeline (None or [] for none).

    Args:
        value: the `world_changes` kwarg as JSON values (lists, dicts, numbers, strings).
        facts: what the environment has; None checks the entries' form only (names, index
            ranges and whether the environment is a MuJoCo one are not known).
        path: the name of the timeline in error paths.

    Raises:
        WorldChangeError: for the first bad entry (in list order), naming the field at fault
            and what it allows.
    """
    if value is None:
        return ()
    if not isinstance(value, list):
        raise WorldChangeError(path, f"must be a list of changes like [{_EXAMPLE}], not {_shown(value)}")
    if len(value) > MAX_CHANGES:
        raise WorldChangeError(path, f"has {len(value)} changes: at most {MAX_CHANGES}")
    return tuple(_parse_entry(i, raw, facts, f"{path}[{i}]") for i, raw in enumerate(value))


_EXAMPLE = '{"at": 100, "change": "mass", "body": "torso", "scale": 2.0}'


def _parse_entry(index: int, raw: Any, facts: WorldFacts | None, path: str) -> WorldChange:
    if not isinstance(raw, dict) or not all(isinstance(key, str) for key in raw):
        raise WorldChangeError(path, f"must be an object like {_EXAMPLE}, not {_shown(raw)}")
    ctx = _Context(facts, raw, path)
    kind = _kind_of(raw, ctx)
    allowed = kind.field_names
    for key in raw:
        if key not in allowed:
            raise ctx.error(key, f"{kind.name} has no field {key!r}: its fields are {', '.join(allowed)}")
    at: Any = raw.get("at")
    if "at" not in raw:
        raise ctx.error("at", "missing: the session step the change comes before, an integer >= 0")
    if not _is_int(at) or at < 0:
        raise ctx.error("at", f"must be an integer >= 0 (the session step the change comes before), not {_shown(at)}")
    reveal = raw.get("reveal", False)
    if not isinstance(reveal, bool):
        raise ctx.error("reveal", f"must be true or false, not {_shown(reveal)}")
    for first, second in kind.exclusive:
        if first in raw and second in raw:
            raise ctx.error(second, f"{kind.name} takes {first} or {second}, not both")
    values: dict[str, Any] = {}
    for spec in kind.fields:
        if spec.name not in raw:
            if spec.required:
                raise ctx.error(spec.name, f"missing: {kind.name} needs {spec.name}, {spec.takes} ({spec.help})")
            if spec.default is not None:
                values[spec.name] = spec.default
            continue
        values[spec.name] = spec.read(raw[spec.name], spec.name, ctx)
    return WorldChange(index=index, at=at, change=kind.name, reveal=reveal, values=values, entry=_copy_json(raw))


def _kind_of(raw: Mapping[str, Any], ctx: _Context) -> Kind:
    if "change" not in raw:
        raise ctx.error("change", f"missing: the kind of change, one of {_KIND_LIST}")
    name = raw["change"]
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise ctx.error("change", f"unknown kind {_shown(name)}: the kinds are {_KIND_LIST}")
    facts = ctx.facts
    if facts is not None:
        if kind.needs_mujoco and not facts.mujoco:
            raise ctx.error("change", f"{name} needs a MuJoCo environment and this one is not: "
                            f"it allows {', '.join(sorted(SENSOR_KINDS)) if facts.sensors else 'no kinds'}")
        if not kind.needs_mujoco and not facts.sensors:
            raise ctx.error("change", f"{name} needs an observation that is a Box or a Dict of Boxes, "
                            "and this environment's is not")
    return kind


def _copy_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_json(item) for item in value]
    return value


def timeline_json(changes: Iterable[WorldChange]) -> str:
    """The timeline as JSON: its entries as given."""
    return json.dumps([change.entry for change in changes])


# --- the world a timeline leaves ---------------------------------------------------------

EVERY = "*"  # the target of an entry that leaves out its body/geom/actuator/indices: all of them
_NEUTRAL: dict[str, Any] = {  # each kind's setting equal to the model as built
    "mass": 1.0, "friction": 1.0, "motor_strength": 1.0, "position": (0.0, 0.0, 0.0),
    "sensor_offset": 0.0, "sensor_noise": (0.0, 0),
}


def _targets(change: WorldChange) -> list[tuple[str, Any]]:
    """The (target, setting) pairs one checked entry puts in force; target EVERY: all of them."""
    values = change.values
    if change.change in ("mass", "position"):
        return [("body:" + values["body"], values["scale" if change.change == "mass" else "offset"])]
    if change.change == "friction":
        target = ("geom:" + values["geom"]) if "geom" in values else (
            ("body:" + values["body"]) if "body" in values else EVERY)
        return [(target, values["scale"])]
    if change.change == "motor_strength":
        return [(("actuator:" + values["actuator"]) if "actuator" in values else EVERY, values["scale"])]
    if change.change == "sensor_offset":
        offset = values["offset"]
        if "indices" not in values:
            if isinstance(offset, tuple):  # one per value of the flat observation
                return [(EVERY, 0.0)] + [(f"index:{i}", v) for i, v in enumerate(offset)]
            return [(EVERY, offset)]
        each = offset if isinstance(offset, tuple) else (offset,) * len(values["indices"])
        return [(f"index:{i}", v) for i, v in zip(values["indices"], each, strict=True)]
    std = values["std"]  # sensor_noise: the seed does not matter while std is 0
    setting = (std, values["seed"]) if std > 0 else _NEUTRAL["sensor_noise"]
    if "indices" not in values:
        return [(EVERY, setting)]
    return [(f"index:{i}", setting) for i in values["indices"]]


def world_state(changes: Iterable[WorldChange]) -> frozenset[tuple[str, str, Any]]:
    """The settings in force after `changes` (applied in order), as (kind, target, setting).

    Two times whose states are equal have the same world. A target is what an entry names:
    "body:<name>" (mass, position, friction), "geom:<name>" (friction), "actuator:<name>"
    (motor_strength), "index:<i>" (sensor kinds, one per index) or "*" (the entry left its
    target out: every geom, actuator or index). A setting is the scale, the offset, or
    (std, seed) for noise. A later entry for the same target replaces the earlier one, a "*"
    entry replaces every earlier one of its kind, and a setting equal to what the target would
    have without it (the "*" setting of its kind, else the model as built: scale 1, offset 0,
    std 0) is left out. Body and geom friction targets are kept apart: which geoms a body has
    is the model's, not the timeline's.
    """
    state: dict[tuple[str, str], Any] = {}
    for change in changes:
        kind = change.change
        for target, setting in _targets(change):
            if target == EVERY:
                for key in [key for key in state if key[0] == kind]:
                    del state[key]
            state[(kind, target)] = setting
    settled: set[tuple[str, str, Any]] = set()
    for (kind, target), setting in state.items():
        baseline = _NEUTRAL[kind] if target == EVERY else state.get((kind, EVERY), _NEUTRAL[kind])
        if setting != baseline:
            settled.add((kind, target, setting))
    return frozenset(settled)


# --- docs ---------------------------------------------------------------------------------


def kinds_markdown() -> str:
    """The kinds and their fields as Markdown tables (docs/world-changes.md holds this text)."""
    lines = ["Every entry has these fields:", "", "| Field | Takes | What it does |", "|---|---|---|"]
    lines += [f"| `{name}` | {takes} | {help_text} |" for name, takes, help_text in COMMON_FIELDS]
    for kind in KINDS.values():
        needs = "MuJoCo environments only." if kind.needs_mujoco else (
            "Any environment whose observation is a Box or a Dict of Boxes.")
        lines += ["", f"### `{kind.name}`", "", kind.help, "", needs, "",
                  "| Field | Takes | What it does |", "|---|---|---|"]
        for spec in kind.fields:
            required = "" if spec.required else (
                f" (optional, default {spec.default})" if spec.default is not None else " (optional)")
            lines.append(f"| `{spec.name}` | {spec.takes}{required} | {spec.help} |")
        for first, second in kind.exclusive:
            lines += ["", f"An entry takes `{first}` or `{second}`, not both."]
    return "\n".join(lines) + "\n"
