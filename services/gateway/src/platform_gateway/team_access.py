"""Which team's resources a caller reaches: the one place that decides (PLATFORM_MODE=managed).

Every resource belongs to a team: a session (`SessionOptions.team`, set here from the caller,
never from the request), its recordings (meta.json `team`), saved snapshots (`team`),
comparisons (`team`), GPU machines, their experiments and evals (`team`) and Doom WADs (the teams that uploaded them). A caller reaches only its own
team's (training runs are the gateway's own rows: `run_store` reads and writes only the team
`list_filter` gives, so `/v0/runs/{run_id}` needs no guard here):

- a route whose path names a resource (`/sessions/{session_id}/...`, `/recordings/{recording_id}`,
  ...) passes `TeamAccess.guard` first (the API router installs it on every route, so a new
  route with one of `OWNED_PATH_PARAMETERS` is covered without a check of its own); a resource
  of another team answers 404 with the very message a missing one gets;
- listings keep only the caller's team's (`visible`, or the team filter passed to the service);
- the WebSocket stream asks `require` for its session.

Services enforce it too: the env host restores only its session's team's saved snapshots.

On a self-hosted platform everyone is in the one team: nothing is looked up and no route pays
for it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from platform_contracts.recorder_json import message_to_json
from platform_contracts.teams import owning_team

from platform_gateway.broker import BrokerClient
from platform_gateway.errors import GatewayError, NotFoundError, SessionNotFoundError
from platform_gateway.identity.authenticator import Identity
from platform_gateway.evals import EvalsClient
from platform_gateway.experiments import ExperimentsClient
from platform_gateway.machines import MachinesClient
from platform_gateway.recorder import RecorderClient
from platform_gateway.wad_uploads import WadUploads

T = TypeVar("T")
_MAX_KNOWN = 100_000  # owners remembered (an owner never changes)

# A resource's owning teams (a WAD may have several), or None when there is no such resource.
OwnerLookup = Callable[[str], Awaitable[frozenset[str] | None]]


class TeamAccess:
    """Decides what a caller of which team reaches.

    Args:
        managed: PLATFORM_MODE=managed; otherwise every check passes without a look-up.
    """

    def __init__(self, managed: bool, broker: BrokerClient, recorder: RecorderClient, wads: WadUploads,
                 machines: MachinesClient | None = None, experiments: ExperimentsClient | None = None,
                 evals: EvalsClient | None = None) -> None:
        self.managed = managed
        self._owners: dict[str, OwnerLookup] = {
            "session_id": self._session_owner,
            "recording_id": self._recording_owner,
            "snapshot_id": self._snapshot_owner,
            "comparison_id": self._comparison_owner,
            "wad_id": self._wad_owner,
            "machine_id": self._machine_owner,
            "experiment_id": self._experiment_owner,
            "eval_id": self._eval_owner,
        }
        self._evals = evals
        self._machines = machines
        self._experiments = experiments
        self._broker = broker
        self._recorder = recorder
        self._wads = wads
        self._known: OrderedDict[tuple[str, str], frozenset[str]] = OrderedDict()

    def team_of(self, identity: Identity) -> str:
        """The team a resource the caller makes belongs to."""
        return identity.team if self.managed else owning_team("")

    def list_filter(self, identity: Identity) -> str | None:
        """The team to filter a listing by (None: every resource is the caller's team's)."""
        return identity.team if self.managed else None

    def sees(self, identity: Identity, team: str | None) -> bool:
        """Whether the caller reaches a resource recorded with `team` (empty: the default team)."""
        return not self.managed or owning_team(team) == identity.team

    def visible(self, identity: Identity, items: Iterable[T], team: Callable[[T], str | None]) -> list[T]:
        """The items the caller reaches, in their order."""
        return [item for item in items if self.sees(identity, team(item))]

    async def guard(self, path_params: dict[str, str], identity: Identity) -> None:
        """Refuse, as missing, a path that names a resource of another team.

        Raises:
            NotFoundError: a resource of another team, or none (the same message either way).
        """
        if not self.managed:
            return
        for name, value in path_params.items():
            if name in self._owners:
                await self.require(name, value, identity)

    async def require(self, kind: str, resource_id: str, identity: Identity) -> None:
        """Raises NotFoundError unless the resource `kind` (a path parameter's name, e.g.
        "session_id") `resource_id` exists and belongs to the caller's team."""
        if not self.managed:
            return
        owners = self._known.get((kind, resource_id))
        # Remembered owners only ever grow (a team that uploads a WAD another team has owns it
        # too): a refusal reads them again, so a new owner is never refused from memory.
        if owners is None or identity.team not in owners:
            try:
                owners = await self._owners[kind](resource_id)
            except NotFoundError:
                owners = None
            if owners is not None:
                self._remember((kind, resource_id), owners)
        if owners is None or identity.team not in owners:
            raise missing(kind, resource_id, identity.team)

    def _remember(self, key: tuple[str, str], owners: frozenset[str]) -> None:
        self._known[key] = owners
        if len(self._known) > _MAX_KNOWN:
            self._known.popitem(last=False)

    async def _session_owner(self, session_id: str) -> frozenset[str]:
        return frozenset({owning_team((await self._broker.get_session(session_id)).options.team)})

    async def _recording_owner(self, recording_id: str) -> frozenset[str]:
        meta = message_to_json((await self._recorder.get_recording(recording_id)).recording)
        return frozenset({owning_team(meta.get("team"))})

    async def _snapshot_owner(self, snapshot_id: str) -> frozenset[str]:
        return frozenset({owning_team((await self._recorder.get_saved_snapshot(snapshot_id)).team)})

    async def _comparison_owner(self, comparison_id: str) -> frozenset[str]:
        return frozenset({owning_team((await self._recorder.get_comparison(comparison_id)).get("team"))})

    async def _machine_owner(self, machine_id: str) -> frozenset[str]:
        if self._machines is None:
            raise NotFoundError(f"machine '{machine_id}' not found")
        return frozenset({owning_team((await self._machines.get(machine_id)).team)})

    async def _eval_owner(self, eval_id: str) -> frozenset[str]:
        if self._evals is None:
            raise NotFoundError(f"eval '{eval_id}' not found")
        return frozenset({owning_team((await self._evals.get(eval_id)).eval.team)})

    async def _experiment_owner(self, experiment_id: str) -> frozenset[str]:
        if self._experiments is None:
            raise NotFoundError(f"experiment '{experiment_id}' not found")
        return frozenset({owning_team((await self._experiments.get(experiment_id)).team)})

    async def _wad_owner(self, wad_id: str) -> frozenset[str]:
        record = await self._wads.get(wad_id)
        return frozenset(record.teams or (owning_team(""),))


def missing(kind: str, resource_id: str, team: str) -> GatewayError:
    """The answer for a resource that does not exist for `team` (the same whether it exists in
    another team or nowhere)."""
    if kind == "session_id":
        return SessionNotFoundError(f"unknown session '{resource_id}'")
    if kind == "wad_id":
        return NotFoundError(f"no uploaded WAD '{resource_id}' in team '{team}' (GET /v0/doom/wads lists them)")
    noun = {"recording_id": "recording", "snapshot_id": "saved snapshot", "comparison_id": "comparison",
            "machine_id": "machine", "experiment_id": "experiment", "eval_id": "eval"}[kind]
    return NotFoundError(f"{noun} '{resource_id}' not found")
