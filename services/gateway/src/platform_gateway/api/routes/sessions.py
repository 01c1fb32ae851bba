"""Sessions: create, list, get, close, and the environment commands over REST."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response, status
from platform_bus.recent_spans import gather_recent_spans
from platform_contracts import limits
from platform_contracts.session_kwargs import WAD

from platform_gateway.api.deps import AccessDep, BrokerDep, CommandsDep, GatewayDep, IdentityDep, StreamsDep
from platform_gateway.errors import InvalidArgumentError, NotFoundError, ResourceExhaustedError
from platform_gateway.identity.authenticator import Identity
from platform_gateway.json_views import frame_jpeg, session_to_json
from platform_gateway.schemas.sessions import (
    ErrorPublic,
    HoldBody,
    HoldResult,
    ResetBody,
    ResetResult,
    RestoreBody,
    RestoreResult,
    RestoreSavedBody,
    SavedSnapshotPublic,
    SaveSnapshotBody,
    SessionCreate,
    PageLeft,
    SessionKeep,
    SessionPublic,
    SessionsPublic,
    SnapshotResult,
    StepBody,
    StepResult,
    StepTicketPublic,
    WorldChangesPublic,
)
from platform_gateway.session_directory import gone_error
from platform_gateway.schemas.traces import SessionTracePublic
from platform_gateway.session_options import options_from_body
from platform_gateway.session_traces import MAX_STEPS, session_trace
from platform_gateway.team_access import TeamAccess

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorPublic} for code in (404, 409, 410, 422, 429, 500, 501, 503, 504)
}
router = APIRouter(prefix="/sessions", tags=["sessions"], responses=_ERRORS)


@router.post("", response_model=SessionPublic, status_code=status.HTTP_201_CREATED)
async def create_session(body: SessionCreate, broker: BrokerDep, streams: StreamsDep, access: AccessDep,
                         identity: IdentityDep, gateway: GatewayDep) -> SessionPublic:
    """Start a session of a catalog environment; answers once its instance runs.

    With `life`, the recording appends to that life; 409 while another open session records it.
    On a managed platform the session is the caller's team's (so are its recordings and snapshots),
    and a team past one of its quotas gets 429. A team's web app sessions due to close with their
    page (a closed tab) are closed first when they stand in the way (PageSessions.close_due)."""
    options = options_from_body(body)
    options.team = access.team_of(identity)
    await _check_wad(options.wad if options.HasField(WAD) else None, access, identity)
    try:
        info = await broker.create_session(options)
    except ResourceExhaustedError:
        if not await gateway.pages.close_due(options.team):
            raise
        info = await broker.create_session(options)
    streams.directory.remember(info)
    return SessionPublic.model_validate(session_to_json(info))


@router.get("", response_model=SessionsPublic)
async def list_sessions(broker: BrokerDep, access: AccessDep, identity: IdentityDep,
                        include_closed: bool = False) -> SessionsPublic:
    team = access.list_filter(identity)
    sessions = [SessionPublic.model_validate(session_to_json(s)) for s in await broker.list_sessions(include_closed, team)
                if access.sees(identity, s.options.team)]
    return SessionsPublic(data=sessions, count=len(sessions))


@router.get("/{session_id}", response_model=SessionPublic)
async def get_session(session_id: str, broker: BrokerDep) -> SessionPublic:
    return SessionPublic.model_validate(session_to_json(await broker.get_session(session_id)))


@router.delete("/{session_id}", response_model=SessionPublic)
async def close_session(session_id: str, broker: BrokerDep, streams: StreamsDep, gateway: GatewayDep) -> SessionPublic:
    """Stop the session's instance; answers with the closed session. A request in flight (a slow
    step) is not waited for: its client gets 410, the session closed while it was in flight."""
    streams.drop(session_id)  # first: the request in flight fails as closed, not as a broken stream
    info = await broker.close_session(session_id, "closed by the client")
    streams.forget(session_id)
    gateway.pages.forget(session_id)
    return SessionPublic.model_validate(session_to_json(info))


@router.post("/{session_id}/left", response_model=PageLeft)
async def page_left(session_id: str, gateway: GatewayDep) -> PageLeft:
    """The page of a page session (closes_with_page) went away or reloads (the web app sends this
    on `pagehide`): unless a stream opens again, the session closes PLATFORM_PAGE_LEFT_GRACE_S
    seconds after its last stream closed. `closes_in_s` is null when it stays open (kept, or
    recording)."""
    await gateway.streams.directory.running(session_id)  # 404 unknown, 410 closed
    return PageLeft(closes_in_s=gateway.pages.left(session_id))


@router.put("/{session_id}/keep", response_model=SessionKeep)
async def keep_session(session_id: str, body: SessionKeep, gateway: GatewayDep) -> SessionKeep:
    """Keep a page's session (closes_with_page) open after its page's streams close, or stop
    keeping it (then it closes PLATFORM_PAGE_SESSION_GRACE_S seconds after its last stream)."""
    await gateway.streams.directory.running(session_id)  # 404 unknown, 410 closed
    gateway.pages.keep(session_id, body.keep)
    return SessionKeep(keep=gateway.pages.kept(session_id))


@router.get("/{session_id}/keep", response_model=SessionKeep)
async def session_kept(session_id: str, gateway: GatewayDep) -> SessionKeep:
    """Whether the session is kept open after its page's streams close."""
    await gateway.streams.directory.running(session_id)
    return SessionKeep(keep=gateway.pages.kept(session_id))


async def _check_wad(wad: object, access: TeamAccess, identity: Identity) -> None:
    """A Doom session's `wad` kwarg (`SessionOptions.wad`) must name one of the caller's team's WADs
    (else: 422, as for a missing one, naming the team's)."""
    if isinstance(wad, str) and access.managed:
        try:
            await access.require("wad_id", wad, identity)
        except NotFoundError as exc:
            raise InvalidArgumentError(f"kwargs.{WAD}: {exc.message}", field=f"kwargs.{WAD}") from None


_TICKET = (
    "A ticket to open the session's step link on its env host directly, skipping the gateway: connect to "
    "`address` (framed TCP, simulusion/host/v1/step_link.proto) and send a StepLinkOpen with `ticket`. The "
    f"ticket opens a link for {limits.STEP_TICKET_TTL_S} s; the link stays up after that. 409 when the direct path "
    "is not offered (no PLATFORM_STEP_TICKET_SECRET, PLATFORM_DIRECT_STEPS=false, or no step link address): "
    "then step over `/v0/sessions/{id}/stream`."
)


@router.post("/{session_id}/ticket", response_model=StepTicketPublic, description=_TICKET)
async def step_ticket(session_id: str, gateway: GatewayDep) -> StepTicketPublic:
    directory = gateway.streams.directory
    info = await directory.fresh(session_id)  # the broker's word: a ticket is asked once per link
    error = gone_error(info)
    if error is not None:
        raise error
    directory.remember(info)
    return StepTicketPublic.model_validate(gateway.tickets.direct(info))


@router.post("/{session_id}/reset", response_model=ResetResult)
async def reset(session_id: str, commands: CommandsDep, body: ResetBody | None = None) -> ResetResult:
    body = body or ResetBody()
    return ResetResult.model_validate(await commands.reset(session_id, body.seed, body.options))


@router.post("/{session_id}/step", response_model=StepResult)
async def step(session_id: str, body: StepBody, commands: CommandsDep) -> StepResult:
    """One step; the action is JSON for the session's action space."""
    return StepResult.model_validate(await commands.step(session_id, body.action, body.agent, body.auto_reset))


_HOLD = (
    "Repeat one action for up to `steps` steps in one uninterrupted stretch; stops early when the episode "
    f"ends. Frames (one JPEG per step) for up to {limits.MAX_HOLD_STEPS_WITH_FRAMES} steps; without frames up "
    f"to {limits.MAX_HOLD_STEPS:,}."
)


@router.post("/{session_id}/hold", response_model=HoldResult, description=_HOLD)
async def hold(session_id: str, body: HoldBody, commands: CommandsDep) -> HoldResult:
    return HoldResult.model_validate(await commands.hold(session_id, body.action, body.steps, body.frames, body.agent))


@router.post("/{session_id}/saved-snapshots", response_model=SavedSnapshotPublic, status_code=status.HTTP_201_CREATED)
async def save_snapshot(session_id: str, commands: CommandsDep,
                        body: SaveSnapshotBody | None = None) -> SavedSnapshotPublic:
    """Keep the session's current state durably: it survives crashes and restarts of every service.
    `POST /v0/sessions` of the same environment then `/restore-saved` (or `platform_sdk.resume(id)`)
    carries on from it exactly."""
    return SavedSnapshotPublic.model_validate(await commands.save_snapshot(session_id, (body or SaveSnapshotBody()).label))


@router.post("/{session_id}/restore-saved", response_model=RestoreResult)
async def restore_saved(session_id: str, body: RestoreSavedBody, commands: CommandsDep) -> RestoreResult:
    """Return the session to a saved snapshot of the same environment and arguments."""
    return RestoreResult.model_validate(await commands.restore_saved(session_id, body.id))


@router.post("/{session_id}/snapshot", response_model=SnapshotResult)
async def snapshot(session_id: str, commands: CommandsDep) -> SnapshotResult:
    """Keep the full state (RNG included) in the instance; returns a handle for /restore."""
    return SnapshotResult.model_validate(await commands.snapshot(session_id))


@router.post("/{session_id}/restore", response_model=RestoreResult)
async def restore(session_id: str, body: RestoreBody, commands: CommandsDep) -> RestoreResult:
    return RestoreResult.model_validate(await commands.restore(session_id, body.handle))


@router.get("/{session_id}/world-changes", response_model=WorldChangesPublic)
async def world_changes(session_id: str, commands: CommandsDep) -> WorldChangesPublic:
    """The session's world-change timeline (its `world_changes` kwarg) and the changes applied so far,
    oldest first. 404 for an unknown session; 410 once it has ended: a recorded session's changes are then
    in its recording's `world_changes` (GET /v0/recordings/{id})."""
    return WorldChangesPublic.model_validate(await commands.world_changes(session_id))


@router.get("/{session_id}/trace", response_model=SessionTracePublic)
async def session_trace_route(session_id: str, broker: BrokerDep, gateway: GatewayDep,
                              steps: Annotated[int, Query(ge=1, le=MAX_STEPS, description="how many of the "
                                                          "newest traced steps")] = 20) -> SessionTracePublic:
    """The session's newest traced steps as spans, from every service's memory of its last minutes
    (each hop's name, service, start and duration: the web app's trace view). A step is traced when
    its client traces it (an SDK with tracing on) or the env host starts a trace for it
    (`OTEL_TRACES_SAMPLER`); the services answer within about a second, the ones that do not are
    left out. 404 for an unknown session."""
    await broker.get_session(session_id)
    answers = await gather_recent_spans(gateway.nc, session_id, steps)
    return session_trace(session_id, answers, steps)


@router.get(
    "/{session_id}/render",
    response_class=Response,
    responses={200: {"content": {"image/jpeg": {}}, "description": "the current frame as JPEG"}},
)
async def render(session_id: str, commands: CommandsDep) -> Response:
    frame = await commands.render(session_id)
    return Response(frame_jpeg(frame), media_type="image/jpeg")
