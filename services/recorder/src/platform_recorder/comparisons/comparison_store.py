"""Comparisons: the documents `python -m platform_sdk.agents.compare` makes (several agents run
from one saved snapshot, with their measures), kept in the recordings storage.

Layout: `<recordings>/comparisons/<id>.json`, one object per comparison, written whole by one
`Storage.put_atomic` (a folder storage: temporary file and rename; S3: one PUT), never changed
afterwards. Ids are "cmp-" + 12 hex digits; `created` is when the recorder stored it (ISO 8601,
UTC, milliseconds). Non-finite numbers are written as the strings "nan", "inf" and "-inf", as in
meta.json.

The document is the caller's; the store checks only what it can cheaply and what its readers
rely on: an object of at most MAX_COMPARISON_BYTES, a non-empty `env`, a non-empty list of
`agents` each an object with a distinct non-empty `name`, whole numbers where the document has
counts, a `recording_id` that can name a recording. Summaries (what a listing shows) are kept in
memory once read: a stored comparison never changes.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from platform_contracts.limits import MAX_COMPARISON_BYTES
from platform_contracts.teams import owning_team
from platform_recorder.errors import InvalidRecordingIdError, RecorderError
from platform_recorder.layout import COMPARISONS_DIR, check_recording_id
from platform_recorder.meta import encode_json
from platform_recorder.storage.interface import ObjectNotFoundError, Storage
from platform_recorder.storage.opening import as_storage

log = logging.getLogger(__name__)

ID_PREFIX = "cmp-"
ID_PATTERN = re.compile(r"^cmp-[0-9a-f]{12}$")
# What a listing shows of each comparison.
SUMMARY_FIELDS = ("id", "created", "env", "steps", "window", "team")
_COUNTS = ("warmup", "steps", "window", "seed", "first_step")
_AGENT_COUNTS = ("steps", "episodes")


class InvalidComparisonError(RecorderError, ValueError):
    """A comparison document the store does not take (the message says what to fix)."""

    code = "invalid_argument"


class ComparisonTooLargeError(InvalidComparisonError):
    """A comparison document larger than MAX_COMPARISON_BYTES."""


class ComparisonNotFoundError(RecorderError, LookupError):
    code = "not_found"


def new_comparison_id() -> str:
    return ID_PREFIX + secrets.token_hex(6)


def created_now() -> str:
    """Now as the store writes `created`: ISO 8601 in UTC with milliseconds, e.g. 2026-12-02T18:00:00.123Z."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def too_large_message(size: int) -> str:
    return (f"the comparison is {size} bytes; the most stored is {MAX_COMPARISON_BYTES} bytes "
            f"({MAX_COMPARISON_BYTES // (1024 * 1024)} MiB): keep fewer reward windows (a larger --window) "
            "or fewer agents")


def _key(comparison_id: str) -> str:
    return f"{COMPARISONS_DIR}/{comparison_id}.json"


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_document(document: Any) -> dict[str, Any]:
    """`document` if the store takes it (see the module); raises InvalidComparisonError naming
    the member at fault."""
    if not isinstance(document, dict):
        raise InvalidComparisonError(f"a comparison must be a JSON object, not {type(document).__name__}")
    env = document.get("env")
    if not isinstance(env, str) or not env:
        raise InvalidComparisonError("'env' is required: the catalog id of the environment compared in")
    for name in _COUNTS:
        value = document.get(name)
        if value is not None and not _whole(value):
            raise InvalidComparisonError(f"{name!r} must be a whole number or null, not {value!r}")
    for name, kind in (("world_changes", list), ("kwargs", dict)):
        value = document.get(name)
        if value is not None and not isinstance(value, kind):
            raise InvalidComparisonError(f"{name!r} must be a JSON {'list' if kind is list else 'object'} or null")
    agents = document.get("agents")
    if not isinstance(agents, list) or not agents:
        raise InvalidComparisonError("'agents' is required: a non-empty list of objects, one per agent, each "
                                     "with its 'name'")
    seen: set[str] = set()
    for i, agent in enumerate(agents):
        where = f"agents[{i}]"
        if not isinstance(agent, dict):
            raise InvalidComparisonError(f"{where} must be an object with the agent's 'name', not "
                                         f"{type(agent).__name__}")
        agent_name = agent.get("name")
        if not isinstance(agent_name, str) or not agent_name:
            raise InvalidComparisonError(f"{where}.name is required: a non-empty string")
        if agent_name in seen:
            raise InvalidComparisonError(f"{where}.name: two agents are named {agent_name!r}; give each its own name")
        seen.add(agent_name)
        for count in _AGENT_COUNTS:
            value = agent.get(count)
            if value is not None and not _whole(value):
                raise InvalidComparisonError(f"{where}.{count} must be a whole number or null, not {value!r}")
        for member in ("session_id", "recording_id"):
            value = agent.get(member)
            if value is not None and not isinstance(value, str):
                raise InvalidComparisonError(f"{where}.{member} must be a string or null")
        if agent.get("recording_id"):
            try:
                check_recording_id(agent["recording_id"])
            except InvalidRecordingIdError as exc:
                raise InvalidComparisonError(f"{where}.recording_id: {exc}") from None
        for member, kind in (("measures", dict), ("reward_windows", list)):
            value = agent.get(member)
            if value is not None and not isinstance(value, kind):
                raise InvalidComparisonError(
                    f"{where}.{member} must be a JSON {'list' if kind is list else 'object'} or null")
    return document


def summary(document: dict[str, Any]) -> dict[str, Any]:
    """What a listing shows of a comparison: id, created, env, the agents' names, steps, window
    and team (the default team for a comparison stored before teams)."""
    out = {name: document.get(name) for name in SUMMARY_FIELDS}
    out["team"] = owning_team(out["team"])
    out["agents"] = [a.get("name") for a in document.get("agents", []) if isinstance(a, dict)]
    return out


class ComparisonStore:
    """The comparisons under `comparisons/` of the recordings storage (several recorders may share
    it); a path: a folder storage."""

    def __init__(self, recordings: Storage | Path | str) -> None:
        self.storage = as_storage(recordings)
        self._summaries: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def save(self, document: dict[str, Any]) -> dict[str, Any]:
        """Store a comparison; the stored document, with its new `id` and `created` (any the
        caller gave are replaced).

        Raises:
            InvalidComparisonError: see `check_document`.
            ComparisonTooLargeError: larger than MAX_COMPARISON_BYTES once stored.
        """
        check_document(document)
        stored: dict[str, Any] = {"id": "", "created": created_now()}
        stored.update((k, v) for k, v in document.items() if k not in ("id", "created"))
        for _ in range(3):  # a new id when one is taken (48 random bits: never, in practice)
            stored["id"] = new_comparison_id()
            if not self.storage.exists(_key(stored["id"])):
                break
        data = encode_json(stored)
        if len(data) > MAX_COMPARISON_BYTES:
            raise ComparisonTooLargeError(too_large_message(len(data)))
        self.storage.put_atomic(_key(stored["id"]), data)
        stored = json.loads(data)  # what a get returns (non-finite numbers as strings)
        with self._lock:
            self._summaries[stored["id"]] = summary(stored)
        log.info("stored comparison %s of %s: %s", stored["id"], stored["env"],
                 ", ".join(a["name"] for a in stored["agents"]))
        return stored

    def get(self, comparison_id: Any) -> dict[str, Any]:
        """The stored document.

        Raises:
            InvalidComparisonError: `comparison_id` is not a string.
            ComparisonNotFoundError: no such comparison (also any id not "cmp-" + 12 hex digits).
        """
        if not isinstance(comparison_id, str) or not comparison_id:
            raise InvalidComparisonError("'id' is required: a comparison's id, 'cmp-' and 12 hex digits")
        if not ID_PATTERN.match(comparison_id):
            raise ComparisonNotFoundError(
                f"comparison {comparison_id!r} not found: comparison ids are 'cmp-' and 12 hex digits")
        try:
            document = json.loads(self.storage.get(_key(comparison_id)))
        except ObjectNotFoundError:
            raise ComparisonNotFoundError(f"comparison {comparison_id!r} not found") from None
        if not isinstance(document, dict):
            raise RecorderError(f"comparison {comparison_id!r} in {self.storage.description} is not a JSON object")
        return document

    def list_summaries(self) -> list[dict[str, Any]]:
        """Every comparison's summary (`summary`), newest first."""
        ids = []
        for key in self.storage.list(f"{COMPARISONS_DIR}/"):
            name = key.removeprefix(f"{COMPARISONS_DIR}/").removesuffix(".json")
            if key.endswith(".json") and ID_PATTERN.match(name):  # not a temporary file of a write
                ids.append(name)
        out = []
        for comparison_id in ids:
            with self._lock:
                known = self._summaries.get(comparison_id)
            if known is None:
                try:
                    known = summary(self.get(comparison_id))
                except ComparisonNotFoundError:
                    continue
                except (OSError, ValueError, RecorderError) as exc:
                    log.warning("comparison %s is unreadable, not listed: %s", comparison_id, exc)
                    continue
                with self._lock:
                    self._summaries[comparison_id] = known
            out.append(dict(known))
        out.sort(key=lambda s: (str(s.get("created") or ""), s["id"]), reverse=True)
        return out
