"""A session's world changes: its timeline and the log of the changes applied so far.

The timeline is the session's `world_changes` kwarg (`SessionOptions.world_changes`, checked by
the broker at create and by the instance against its live model when it starts;
`platform_contracts.world_changes`), or the catalog entry's own: the entries as written, as the
instance's kwargs hold them (`instance_table.launch_spec`). The instance says in each answer which
changes it applied (`ForRecording.world_changes_json`: the entry, its "index" in the timeline
and "session_step"); the env host adds "seq" (the step event carrying it; 0 for a session that
is not recorded), "time" (unix seconds) and, for a vector session, "env_index", logs a line for
each, and answers `WorldChangesRequest` from this log (GET /v0/sessions/{id}/world-changes).

The log is the env host's, not the instance's: it is not part of a snapshot, restoring one
does not shorten it, and a change met again after a restore is logged again.
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from simulusion.env.v1 import environment_pb2 as env_pb

log = logging.getLogger(__name__)

# The most applied changes a session's log keeps: the oldest go first (a timeline is short,
# but each restore of a snapshot can apply its changes again).
MAX_LOGGED_CHANGES = 10_000


class WorldChangeLog:
    """The timeline and applied world changes of one session.

    Args:
        timeline: the session's timeline, its entries as written.
        describe: names the session in log lines ("session s1 (cartpole)").
        vector: the session has sub-environments: entries name theirs ("env_index").
    """

    def __init__(self, timeline: list[Any], describe: Callable[[], str], vector: bool = False) -> None:
        self.timeline = timeline
        self._timeline_json = json.dumps(timeline)
        self._describe = describe
        self.vector = vector  # set once the instance's spec says so
        self._applied: deque[str] = deque(maxlen=MAX_LOGGED_CHANGES)
        self._dropped = 0

    def __len__(self) -> int:
        return len(self._applied)

    def add(self, changes: Iterable[str], seq: int, now: float, env_index: int = 0) -> None:
        """Log the changes (JSON objects, as the instance sent them) applied by the command whose
        step event is `seq` (0: not recorded)."""
        for text in changes:
            try:
                entry = json.loads(text)
            except json.JSONDecodeError as exc:
                log.error("%s: the instance sent a world change that is not JSON (%s): %r",
                          self._describe(), exc, text[:200])
                continue
            if not isinstance(entry, dict):
                log.error("%s: the instance sent a world change that is not a JSON object: %r",
                          self._describe(), text[:200])
                continue
            entry["seq"] = seq
            entry["time"] = now
            if self.vector:
                entry["env_index"] = env_index
            where = f"sub-environment {env_index}, " if self.vector else ""
            log.info("%s: %ssession step %s: world change %s applied (seq %d): %s", self._describe(), where,
                     entry.get("session_step", "?"), entry.get("index", "?"), seq, text)
            if len(self._applied) == MAX_LOGGED_CHANGES:
                if not self._dropped:
                    log.warning("%s: more than %d world changes applied: the oldest leave the env host's log "
                                "(a recording keeps them all)", self._describe(), MAX_LOGGED_CHANGES)
                self._dropped += 1
            self._applied.append(json.dumps(entry))

    def answer(self, request_id: int) -> bytes:
        """The answer to a WorldChangesRequest: the timeline and the log, oldest first."""
        return env_pb.EnvResponse(id=request_id, world_changes=env_pb.WorldChangesResponse(
            timeline_json=self._timeline_json, applied_json=list(self._applied))).SerializeToString()
