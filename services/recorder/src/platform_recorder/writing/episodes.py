"""Turn an episode's step events into arrays and write them as an `.npz` file, atomically.

Layout of `episode-NNNNNN.npz` (T = number of steps; docs/recording-format.md says it all):
    observations        T+1 rows: the reset/restore observation, then each step's
                        (Dict -> `observations.<key>`, Tuple -> `observations.<i>`, nested alike)
    actions             T rows, same naming rule
    rewards             float64 (T,)
    terminated          bool (T,)
    truncated           bool (T,)
    seq                 uint64 (T,): the step events' seq
    agent.<name>        float64 (T,) or (T, k): numeric agent data, NaN where a step had none
    info.is_success     bool (T,): the step infos' `is_success` (only when every step has it; see
                        platform_recorder.writing.step_columns)
    teacher.action      rows like `actions` (same naming rule): row t from the `teacher_action` of
                        the info that came with observation t (the reset's, then each step's but
                        the last's), zeros where absent; teacher.valid bool (T,) says where
                        (only when some step has it; see platform_recorder.writing.teacher_columns)
    state.<name>        float64 (T+1, stop - start): the labelled parts of each observation as it
                        truly was: before sensor world changes (`ForRecording.true_observation`)
                        where a row has one (with the session's spec and labels; see
                        platform_recorder.writing.state_columns)
    outcome             0-d str: the last step's `info["outcome"]` (when it has one)
    frames              JPEG bytes per observation row (fixed-width bytes, b"" where none)
    frames_rgb          uint8 (T+1, H, W, 3) for raw "rgb" frames (zeros where none)
    life_start          0-d int64, a life's sessions only: the life step before its first step
    frame_steps         int64, thinned lives only: the life step of each kept frame (then
                        `frames`/`frames_rgb` hold only the kept frames; see life_columns)
    restarted           bool (T,), endless files: the step ended its episode and the environment
                        restarted in place (the step's reset event follows it in the file): its
                        terminated/truncated rows are False (as the agent saw it) and observation
                        row t+1 is the restart's (the new start; its frame and state rows too)
    final_observations  rows like `observations` (same naming rule), one per restart in order:
                        the observation the restarted episode ended with; final_terminated and
                        final_truncated bool (R,) how it ended, final_outcome str (R,) its info's
                        `outcome` ("" where none; only when one has one)
An episode that did not start with a reset/restore has T observation rows.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from platform_contracts.values import python_from_value
from platform_contracts.frame_thinning import thinning
from platform_recorder.writing.held_observations import HeldObservations
from platform_recorder.writing.life_columns import FRAME_STEPS, LIFE_START, episode_life_start, thin_frames
from platform_recorder.writing.lives import LifePlace
from platform_recorder.writing.npz_files import RowBytes
from platform_recorder.writing.observation_frames import encode_observation_frames, has_frame
from platform_recorder.writing.state_columns import state_columns
from platform_recorder.writing.step_columns import (
    OUTCOME_COLUMN,
    agent_columns,
    outcome_column,
    outcome_text,
    step_success,
    success_column,
)
from platform_recorder.writing.teacher_columns import teacher_columns
from simulusion.bus.v1 import events_pb2
from simulusion.env.v1 import environment_pb2, values_pb2

log = logging.getLogger(__name__)

START_KINDS = ("reset", "restore")
RESTARTED = "restarted"
FINAL_OBSERVATIONS = "final_observations"
# Tensor columns with rows of at least this many bytes (image observations) are kept as their
# rows' bytes, which the npz encoder streams (`npz_files.RowBytes`), not joined into one array.
ROW_BYTES_FROM = 4096


def _flatten(value: values_pb2.Value, prefix: str, out: dict[str, Any]) -> None:
    kind = value.WhichOneof("kind")
    if kind == "dict":
        for entry in value.dict.entries:
            _flatten(entry.value, f"{prefix}.{entry.name}", out)
    elif kind == "tuple":
        for i, item in enumerate(value.tuple.values):
            _flatten(item, f"{prefix}.{i}", out)
    elif kind is not None:
        out[prefix] = python_from_value(value)


def _uniform_column(values: Sequence[values_pb2.Value], seqs: Sequence[int] = (),
                    held: HeldObservations | None = None) -> np.ndarray | RowBytes | None:
    """The rows stacked at once when all are tensors of one dtype and shape, or all discrete
    (the common case, e.g. CartPole: no per-row decoding), as `RowBytes` when they are large;
    else None. A row whose seq (`seqs`) `held` holds has its data there (checked when held)."""
    if not values:
        return None
    kind = values[0].WhichOneof("kind")
    if kind == "discrete":
        for value in values:
            if value.WhichOneof("kind") != "discrete":
                return None
        return np.array([v.discrete for v in values], dtype=np.int64)
    if kind != "tensor":
        return None
    first = values[0].tensor
    dtype_name, shape = first.dtype, first.shape
    tensors = []
    for value in values:
        if value.WhichOneof("kind") != "tensor":
            return None
        tensor = value.tensor
        if tensor.dtype != dtype_name or tensor.shape != shape:
            return None
        tensors.append(tensor)
    try:
        dtype = np.dtype(dtype_name)
    except TypeError:
        return None
    dims = tuple(shape)
    row_bytes = dtype.itemsize * math.prod(dims)
    in_held = [seq in held for seq in seqs] if held else [False] * len(tensors)
    if any(not is_held and len(t.data) != row_bytes for t, is_held in zip(tensors, in_held)):
        return None  # a malformed tensor: the row-by-row path reports it
    if row_bytes >= ROW_BYTES_FROM:
        return RowBytes(TensorRows(tensors, seqs, held), dtype, dims)
    return np.frombuffer(b"".join(t.data for t in tensors), dtype=dtype).reshape((len(values), *dims))


class TensorRows(Sequence[bytes]):
    """The data of tensors, row by row, each row's bytes made when it is read (from `held` for a
    row whose seq it holds): the npz encoder streams them, so the episode's image rows never all
    exist as bytes at once (for a Pong episode that was 80 MB of fresh memory, whose page faults
    cost more than deflating it)."""

    def __init__(self, tensors: Sequence[values_pb2.Tensor], seqs: Sequence[int] = (),
                 held: HeldObservations | None = None) -> None:
        self._tensors = tensors
        self._seqs = seqs
        self._held = held

    def __len__(self) -> int:
        return len(self._tensors)

    def _row(self, index: int) -> bytes:
        held = self._held
        if held and self._seqs[index] in held:
            return held.data(self._seqs[index])
        return self._tensors[index].data

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._row(i) for i in range(len(self))[index]]
        return self._row(range(len(self))[index])

    def __iter__(self) -> Iterator[bytes]:
        return (self._row(i) for i in range(len(self)))


def _columns(values: Sequence[values_pb2.Value], prefix: str, where: str) -> dict[str, np.ndarray | RowBytes]:
    """Stack the rows of values into one array per leaf (`prefix`, `prefix.key`, ...)."""
    uniform = _uniform_column(values)
    if uniform is not None:
        return {prefix: uniform}
    rows: list[dict[str, Any]] = []
    for value in values:
        flat: dict[str, Any] = {}
        _flatten(value, prefix, flat)
        rows.append(flat)
    keys: list[str] = []
    for flat in rows:
        keys.extend(k for k in flat if k not in keys)
    out: dict[str, np.ndarray | RowBytes] = {}
    for key in keys:
        try:
            out[key] = np.stack([np.asarray(flat[key]) for flat in rows])
        except (KeyError, ValueError) as exc:
            log.error("%s: column %s skipped, its rows do not stack (%s)", where, key, exc)
    return out


def _observation_columns(values: Sequence[values_pb2.Value], seqs: Sequence[int], held: HeldObservations | None,
                         where: str, prefix: str = "observations") -> dict[str, np.ndarray | RowBytes]:
    """The observation columns; rows `held` holds are read from it (streamed when uniform)."""
    if not held:
        return _columns(values, prefix, where)
    uniform = _uniform_column(values, seqs, held)
    if uniform is not None:
        return {prefix: uniform}
    whole = [held.value(seq) if seq in held else value for value, seq in zip(values, seqs)]
    return _columns(whole, prefix, where)


def _true_observation_columns(
    start: events_pb2.StepEvent | None, start_kind: str, results: Sequence[environment_pb2.StepResponse],
    observations: Sequence[values_pb2.Value], seqs: Sequence[int], held: HeldObservations | None, where: str,
    restarts: Mapping[int, events_pb2.StepEvent] | None = None,
) -> dict[str, np.ndarray | RowBytes] | None:
    """The observation columns as they were before sensor changes (`ForRecording.true_observation`,
    where a row has one; the observation itself elsewhere); None when no row has one. The row
    after a restart (`restarts`: the restart's reset by step row) is its reset's."""
    carriers: list[environment_pb2.ForRecording | None] = []
    if start is not None:
        carriers.append(start.reset.for_recording if start_kind == "reset" and start.reset.HasField("for_recording")
                        else None)
    restarts = restarts or {}
    for row, r in enumerate(results):
        restart = restarts.get(row)
        if restart is not None:
            carriers.append(restart.reset.for_recording if restart.reset.HasField("for_recording") else None)
        else:
            carriers.append(r.for_recording if r.HasField("for_recording") else None)
    trues = [c.true_observation if c is not None and c.HasField("true_observation") else None for c in carriers]
    if all(true is None for true in trues):
        return None
    values = [observation if true is None else true for observation, true in zip(observations, trues)]
    # A row whose true value is used is not read from `held` (which has the observation seen).
    rows = [seq if true is None else -1 for seq, true in zip(seqs, trues)]
    return _observation_columns(values, rows, held, where)


def _frame_columns(frames: Sequence[environment_pb2.Frame | None], where: str) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    jpeg = [f.data if f is not None and f.encoding == "jpeg" else b"" for f in frames]
    if any(jpeg):
        out["frames"] = np.array(jpeg, dtype=bytes)
    rgb = [f if f is not None and f.encoding == "rgb" and f.data else None for f in frames]
    shapes = {(f.height, f.width) for f in rgb if f is not None}
    if len(shapes) == 1:
        height, width = shapes.pop()
        stack = np.zeros((len(frames), height, width, 3), dtype=np.uint8)
        for i, frame in enumerate(rgb):
            if frame is not None:
                stack[i] = np.frombuffer(frame.data, dtype=np.uint8).reshape(height, width, 3)
        out["frames_rgb"] = stack
    elif shapes:
        log.error("%s: rgb frames of several sizes %s, not recorded", where, sorted(shapes))
    return out


def _observation_infos(
    start: events_pb2.StepEvent | None, start_kind: str, results: Sequence[environment_pb2.StepResponse],
    restarts: Mapping[int, events_pb2.StepEvent] | None = None,
) -> list[values_pb2.DataMap | None]:
    """The info that came with each step's observation: the start's (reset or restore), then each
    step's but the last's (the final observation's, which no step answers); after a restart
    (`restarts`) its reset's (the new start's)."""
    first = getattr(start, start_kind) if start is not None else None
    infos: list[values_pb2.DataMap | None] = [first.info if first is not None and first.HasField("info") else None]
    restarts = restarts or {}
    for row, r in enumerate(results[:-1]):
        restart = restarts.get(row)
        source = restart.reset if restart is not None else r
        infos.append(source.info if source.HasField("info") else None)
    return infos[: len(results)]


def _restart_resets(
    ordered: Sequence[events_pb2.StepEvent], kinds: Sequence[str | None], start: events_pb2.StepEvent | None
) -> dict[int, events_pb2.StepEvent]:
    """An endless file's restarts in place: the reset event that right follows an ended step (seq
    order), by that step's row."""
    restarts: dict[int, events_pb2.StepEvent] = {}
    row = -1
    for i, (event, kind) in enumerate(zip(ordered, kinds)):
        if kind == "step":
            row += 1
        elif kind == "reset" and event is not start and i > 0 and kinds[i - 1] == "step":
            result = ordered[i - 1].step.result
            if result.terminated or result.truncated:
                restarts[row] = event
    return restarts


def _restart_columns(
    results: Sequence[environment_pb2.StepResponse], restarts: Mapping[int, events_pb2.StepEvent],
    step_seqs: Sequence[int], held: HeldObservations | None, where: str, endless: bool,
) -> dict[str, np.ndarray | RowBytes]:
    """`restarted` (endless files) and, when some step restarted, the `final_*` rows of its
    restarts (see the module docstring)."""
    if not endless and not restarts:
        return {}
    rows = sorted(restarts)
    restarted = np.zeros(len(results), dtype=bool)
    restarted[rows] = True
    out: dict[str, np.ndarray | RowBytes] = {RESTARTED: restarted}
    if not rows:
        return out
    out.update(_observation_columns([results[r].observation for r in rows], [step_seqs[r] for r in rows], held,
                                    where, FINAL_OBSERVATIONS))
    out["final_terminated"] = np.array([results[r].terminated for r in rows], dtype=bool)
    out["final_truncated"] = np.array([results[r].truncated for r in rows], dtype=bool)
    outcomes = [outcome_text(results[r]) for r in rows]
    if any(text is not None for text in outcomes):
        out["final_outcome"] = np.array([text or "" for text in outcomes], dtype=str)
    return out


def build_episode(
    events: Sequence[events_pb2.StepEvent],
    where: str = "",
    spec: Mapping[str, Any] | None = None,
    life: LifePlace | None = None,
    held: HeldObservations | None = None,
    endless: bool = False,
) -> tuple[dict[str, np.ndarray | RowBytes], dict[str, Any]]:
    """The arrays of an episode and its summary (length, return, start, flags, seq range,
    `is_success` and `outcome` when the last step has them).

    Args:
        events: the episode's events; sorted by seq here.
        where: names the session and episode in log lines.
        spec: the session's spec as recording.json keeps it (`observation_space` in its JSON
            form, `observation_labels`); with labels, the episode gets `state.<name>` columns.
        life: the session's place in its life: adds `life_start` (and, with thinning, keeps only
            the frames of kept life steps, with `frame_steps`).
        held: the observation data of events read back light (`read_part(held=...)`).
        endless: a file of an endless run: it gets `restarted` (and `final_*` rows for its
            restarts in place: a reset event right after an ended step, `endless_files`).
    """
    ordered = sorted(events, key=lambda e: e.seq)
    kinds = [e.WhichOneof("kind") for e in ordered]
    start = ordered[0] if ordered and kinds[0] in START_KINDS else None
    start_kind = kinds[0] if start is not None and kinds[0] is not None else "none"
    steps = [e for e, kind in zip(ordered, kinds) if kind == "step"]
    restarts = _restart_resets(ordered, kinds, start)
    restart_seqs = {e.seq for e in restarts.values()}
    extra = [e.seq for e, kind in zip(ordered, kinds) if e is not start and kind != "step" and e.seq not in restart_seqs]
    if extra:
        log.error("%s: events %s start an episode in the middle of one; left out of the arrays", where, extra)
    transitions = [e.step for e in steps]
    results = [t.result for t in transitions]
    observations: list[values_pb2.Value] = []
    frames: list[environment_pb2.Frame | None] = []
    if start is not None:
        observations.append(getattr(start, start_kind).observation)
        frames.append(start.reset.frame if start_kind == "reset" and start.reset.HasField("frame") else None)
    seqs = [start.seq] if start is not None else []
    for row, (event, result) in enumerate(zip(steps, results)):
        restart = restarts.get(row)  # the row after a restart in place is the new start
        if restart is not None:
            observations.append(restart.reset.observation)
            frames.append(restart.reset.frame if restart.reset.HasField("frame") else None)
            seqs.append(restart.seq)
        else:
            observations.append(result.observation)
            frames.append(result.frame if result.HasField("frame") else None)
            seqs.append(event.seq)
    arrays = _observation_columns(observations, seqs, held, where)
    actions = _columns([t.action for t in transitions], "actions", where)
    arrays.update(actions or {"actions": np.zeros((0,), dtype=np.float64)})
    true_columns = _true_observation_columns(start, start_kind, results, observations, seqs, held, where, restarts)
    arrays.update(state_columns(arrays if true_columns is None else true_columns, spec, where))
    rewards = np.array([r.reward for r in results], dtype=np.float64)
    arrays["rewards"] = rewards
    # A restart in place reports neither terminated nor truncated (how it ended: final_terminated...)
    terminated = np.array([r.terminated and row not in restarts for row, r in enumerate(results)], dtype=bool)
    truncated = np.array([r.truncated and row not in restarts for row, r in enumerate(results)], dtype=bool)
    arrays["terminated"], arrays["truncated"] = terminated, truncated
    arrays["seq"] = np.array([e.seq for e in steps], dtype=np.uint64)
    arrays.update(_restart_columns(results, restarts, [e.seq for e in steps], held, where, endless))
    arrays.update(agent_columns(transitions, where))
    arrays.update(success_column(results, where))
    arrays.update(teacher_columns(_observation_infos(start, start_kind, results, restarts), actions, where))
    arrays.update(outcome_column(results))
    if life is not None and ordered:
        arrays[LIFE_START] = np.array(episode_life_start(life.offset, ordered), dtype=np.int64)
        if thinning(life.frame_every, life.max_frames) and any(has_frame(f) for f in frames):
            rows = ([start] if start is not None else []) + steps
            kept, arrays[FRAME_STEPS] = thin_frames(rows, frames, life)
            frames, observations = [frames[i] for i in kept], [observations[i] for i in kept]
            seqs = [seqs[i] for i in kept]
    frames = encode_observation_frames(frames, observations, where, seqs, held)
    arrays.update(_frame_columns(frames, where))
    total = float(rewards.sum())
    summary = {
        "length": len(steps),
        "return": total if math.isfinite(total) else str(total),
        "start": start_kind,
        "terminated": bool(results and terminated[-1]),
        "truncated": bool(results and truncated[-1]),
        "first_seq": ordered[0].seq if ordered else 0,
        "last_seq": ordered[-1].seq if ordered else 0,
        "agent_keys": sorted(k[len("agent.") :] for k in arrays if k.startswith("agent.")),
    }
    success = step_success(results[-1]) if results else None
    if success is not None:
        summary["is_success"] = success  # the episode's outcome: its last step's
    if OUTCOME_COLUMN in arrays:
        summary["outcome"] = str(arrays[OUTCOME_COLUMN])
    if LIFE_START in arrays:
        summary[LIFE_START] = int(np.asarray(arrays[LIFE_START]))
    return arrays, summary
