"""The table of this host's instances: launch, stop, and watch for processes that die."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from platform_contracts.session_kwargs import WAD, WORLD_CHANGES, merged_kwargs
from platform_contracts.trace_setup import SPAN_FILE_VARIABLE
from platform_sdk.launch.containers import NoDockerEngineError
from platform_sdk.launch.instance_launch import InstanceProcess, LaunchError, LaunchSpec, launch_instance
from simulusion.control.v1 import control_pb2 as control_pb
from simulusion.session.v1.options_pb2 import SessionOptions

from platform_envhost.deferred_events import take_owed_frames
from platform_envhost.errors import InstanceGone, StartFailed
from platform_envhost.instance_env import instance_env
from platform_envhost.instance_spans import instance_span_file
from platform_envhost.pods.pod_instances import PodInstance
from platform_envhost.pods.pod_launcher import ClaimConflict, PodLauncher, PodUnavailableError
from platform_envhost.pods.pod_manifests import PodPlan, files_path
from platform_envhost.session_instance import Instance, State
from platform_envhost.session_wads import SessionWads

log = logging.getLogger(__name__)

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
# A dead instance is kept this long, so its session's requests answer UNAVAILABLE, not NOT_FOUND.
DEAD_TTL_S = 600.0
# How long a stopped instance's session stays in the heartbeat's `ended_session_ids` (as long as
# the broker counts a placement no beat has listed).
ENDED_KEPT_S = 120.0
STOP_TIMEOUT_S = 5.0
# A stop waits this long for a request in flight to finish (its frame is then taken for the
# recording); a longer one (a slow step: a heavy robot's substeps, a slow user environment) is
# abandoned, and its client gets "session ... was closed": a close never waits for a step.
IN_FLIGHT_GRACE_S = 1.0
# A process that was busy with an abandoned request gets this long after SIGTERM before SIGKILL:
# a step inside native code (MuJoCo's substeps) does not see SIGTERM until it returns.
BUSY_KILL_AFTER_S = 1.0


def _json_object(text: str, what: str) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StartFailed(f"{what} is not valid JSON: {exc}", code="invalid_argument") from None
    if not isinstance(value, dict):
        raise StartFailed(f"{what} must be a JSON object, not {type(value).__name__}", code="invalid_argument")
    return value


def launch_spec(entry: control_pb.CatalogEntry, options: SessionOptions) -> LaunchSpec:
    """The launcher's spec for a catalog entry and a session's options: the session's kwargs over
    the entry's, its JPEG quality, its sub-environments (`num_envs` > 1: one instance hosting
    that many).

    The platform's own kwargs (world_changes, endless, wad, doom_map) travel in the options'
    typed fields, and go back into the kwargs here (`session_kwargs.merged_kwargs`): the
    instance, `python -m platform_sdk --kwargs`, takes them out of its kwargs itself, and a
    Docker image runs the SDK it was built with, whose older versions know them only there.
    """
    kwargs = _json_object(entry.kwargs_json, f"the kwargs of environment {entry.id!r} in the catalog")
    kwargs.update(_json_object(options.kwargs_json, f"the kwargs of environment {entry.id!r}"))
    try:
        kwargs = merged_kwargs(kwargs, options)
    except ValueError as exc:  # an entry_json the broker would have refused
        raise StartFailed(f"the world changes of environment {entry.id!r} are not valid JSON: {exc}",
                          code="invalid_argument") from None
    if not entry.gymnasium_id and not entry.factory and not entry.image:
        raise StartFailed(f"environment {entry.id!r} has neither a gymnasium_id nor a factory nor an image",
                          code="invalid_argument")
    return LaunchSpec(gymnasium_id=entry.gymnasium_id, factory=entry.factory, path=entry.path, kwargs=kwargs,
                      image=entry.image, jpeg_quality=options.jpeg_quality, num_envs=max(1, options.num_envs))


class InstanceTable:
    """This host's instances by session id.

    A warm pool instance is started under its pool slot id (`pooled`), not recorded, and is
    not a session until `claim` gives it one: it is listed under the slot id, holds a slot of
    capacity, and its death is not reported (`on_crash` is for sessions).

    Args:
        run_dir: where the instances' sockets and logs go (this host's own folder).
        on_crash: called once for each instance that dies without being stopped.
        wads: copies of uploaded WADs for Doom sessions (default: from PLATFORM_WADS, in run_dir).
        pods: the Kubernetes launcher (PLATFORM_LAUNCHER=kubernetes): every instance is a pod;
            None: a local process (or a `docker run` of an image entry).
    """

    def __init__(self, run_dir: Path, capacity: int, *, on_crash: Callable[[Instance], Awaitable[None]],
                 ready_timeout: float = 60.0, dead_ttl: float = DEAD_TTL_S, wads: SessionWads | None = None,
                 pods: PodLauncher | None = None) -> None:
        self.run_dir = run_dir
        self._pods = pods
        self._wads = wads or SessionWads(run_dir)
        self.capacity = capacity
        self._on_crash = on_crash
        self._ready_timeout = ready_timeout
        self._dead_ttl = dead_ttl
        self._instances: dict[str, Instance] = {}
        self._starting: dict[str, asyncio.Future[Instance]] = {}
        self._pooled: set[str] = set()  # slot ids of warm pool instances not claimed yet
        self._ended: dict[str, float] = {}  # session id -> when its instance was stopped (or failed to start)
        self._tasks: set[asyncio.Task[Any]] = set()
        # Told the environment id of each instance that dies unasked, a warm one too (the metrics).
        self.on_dead: Callable[[str], None] | None = None

    def get(self, session_id: str) -> Instance | None:
        return self._instances.get(session_id)

    def instances(self) -> list[Instance]:
        return list(self._instances.values())

    def is_pooled(self, session_id: str) -> bool:
        """Whether `session_id` names a warm pool instance (started or starting) not claimed yet."""
        return session_id in self._pooled

    def starting(self) -> list[str]:
        """Sessions whose instance is being launched."""
        return list(self._starting)

    @property
    def running(self) -> int:
        """Instances holding a slot: starting, running or being stopped."""
        busy = sum(1 for i in self._instances.values() if i.state in (State.RUNNING, State.STOPPING))
        return busy + len(self._starting)

    def recently_ended(self) -> list[str]:
        """Sessions whose instances were stopped, or failed to start, in the last `ENDED_KEPT_S`
        seconds (the heartbeat's `ended_session_ids`)."""
        kept_since = time.monotonic() - ENDED_KEPT_S
        self._ended = {sid: at for sid, at in self._ended.items() if at >= kept_since}
        return list(self._ended)

    def _note_ended(self, session_id: str) -> None:
        self._ended[session_id] = time.monotonic()

    async def start(self, session_id: str, entry: control_pb.CatalogEntry, options: SessionOptions, *,
                    pooled: bool = False) -> tuple[Instance, bool]:
        """Launch the session's instance with its options and get its spec; returns it and
        whether it is new.

        A start of a session that is already running (a retried request) returns that one.
        `pooled`: a warm pool instance under the slot id `session_id`, never recorded.

        Raises:
            StartFailed: at capacity ("unavailable"), bad kwargs or a failing factory
                ("invalid_argument"), the instance does not answer ("internal").
        """
        existing = self._instances.get(session_id)
        if existing is not None:
            if existing.state is State.RUNNING:
                return existing, False
            raise StartFailed(f"session {session_id} is {existing.state.value} on this env host",
                              code="failed_precondition")
        if session_id in self._starting:
            return await asyncio.shield(self._starting[session_id]), False
        if self.running >= self.capacity:
            raise StartFailed(f"env host is at capacity ({self.running}/{self.capacity} instances)",
                              code="unavailable")
        future: asyncio.Future[Instance] = asyncio.get_running_loop().create_future()
        self._starting[session_id] = future
        if pooled:
            options = _unrecorded(options)
            self._pooled.add(session_id)
        try:
            instance = await self._launch(session_id, entry, options)
        except BaseException as exc:
            self._pooled.discard(session_id)
            self._note_ended(session_id)
            future.set_exception(exc if isinstance(exc, Exception) else StartFailed("start cancelled"))
            future.exception()  # retrieved: waiters get it through their own await
            raise
        else:
            future.set_result(instance)
        finally:
            del self._starting[session_id]
        self._instances[session_id] = instance
        self._spawn(self._watch(instance))
        return instance, True

    async def _launch(self, session_id: str, entry: control_pb.CatalogEntry, options: SessionOptions) -> Instance:
        spec = launch_spec(entry, options)
        kwargs_json = json.dumps(spec.kwargs)  # as asked: an uploaded WAD by its id, not this host's copy
        self.run_dir.mkdir(parents=True, exist_ok=True)
        name = _UNSAFE_NAME.sub("_", session_id)
        spec = dataclasses.replace(spec, kwargs=await self._wads.localize(entry.factory, name, spec.kwargs))
        try:
            return await self._launch_spec(session_id, entry, options, spec, kwargs_json)
        except BaseException:
            self._wads.remove(name)
            raise

    async def _start_process(self, session_id: str, entry: control_pb.CatalogEntry, spec: LaunchSpec) -> InstanceProcess:
        """Start the instance: a pod with the Kubernetes launcher, else a local process (or a
        `docker run`)."""
        name = _UNSAFE_NAME.sub("_", session_id)
        if self._pods is None:
            span_file = instance_span_file(self.run_dir, name)
            process = await launch_instance(spec, self.run_dir, name, ready_timeout=self._ready_timeout,
                                            transport="frames",  # an image speaks gRPC whatever this says
                                            # none of the platform's settings; where its spans go
                                            env={**instance_env(), SPAN_FILE_VARIABLE: str(span_file)})
            process.span_file = span_file
            return process
        pooled = session_id in self._pooled
        plan = PodPlan(spec=spec, name="", envhost_id=self._pods.envhost_id, gpus=entry.gpus,
                       session_id="" if pooled else session_id, pool_env=entry.id if pooled else "",
                       slot=session_id if pooled else "")
        wad_copy = spec.kwargs.get(WAD)
        if isinstance(wad_copy, str) and Path(wad_copy).parent == self._wads.folder(name):
            # this host's copy of an uploaded WAD (`session_wads`): the pod gets its bytes in its Secret
            key = Path(wad_copy).name
            plan.files[key] = Path(wad_copy).read_bytes()
            plan.spec = dataclasses.replace(spec, kwargs={**spec.kwargs, WAD: files_path(key)})
            self._wads.remove(name)
        return await self._pods.launch(plan)

    async def _launch_spec(self, session_id: str, entry: control_pb.CatalogEntry, options: SessionOptions,
                           spec: LaunchSpec, kwargs_json: str) -> Instance:
        try:
            process = await self._start_process(session_id, entry, spec)
        except (NoDockerEngineError, PodUnavailableError) as exc:  # this host or cluster cannot: not the caller's fault
            raise StartFailed(f"environment {entry.id!r} of session {session_id} cannot start on env host "
                              f"{self.run_dir.name}: {exc}", code="unavailable") from None
        except LaunchError as exc:  # its message carries the log tail
            raise StartFailed(f"environment {entry.id!r} of session {session_id} failed to start: {exc}",
                              code="invalid_argument") from None
        # The timeline the instance runs: the session's (SessionOptions.world_changes), else the
        # catalog entry's own, as the merged kwargs hold it; read from them, never decoded again.
        timeline = spec.kwargs.get(WORLD_CHANGES)
        instance = Instance(session_id, options, kwargs_json, process,
                            timeline=timeline if isinstance(timeline, list) else [])
        try:
            await asyncio.wait_for(instance.request_spec(), self._ready_timeout)
        except BaseException as exc:
            await instance.close_stream()
            await process.stop()
            if isinstance(exc, (InstanceGone, TimeoutError)):
                raise StartFailed(f"environment {entry.id!r} of session {session_id} did not answer its spec: "
                                  f"{str(exc) or 'timed out'}\n--- instance log tail ---\n{process.log_tail()}") from None
            raise
        return instance

    async def claim(self, slot_id: str, session_id: str, options: SessionOptions) -> Instance:
        """Give the warm pool instance `slot_id` to a session made with `options` (the broker
        claims only for options that are the pool's defaults but for the record settings and
        auto_reset): it is re-keyed to `session_id` (its log file renamed to match).

        A pod (the Kubernetes launcher) is claimed by a label patch guarded by its resource
        version; when another claimer changed it first (409 Conflict), the next warm pod of the
        same environment is tried, as Agones allocates game servers.

        Raises:
            StartFailed: no live warm instance `slot_id` (nor, for pods, another of its
                environment) ("not_found"), or `session_id` is taken ("failed_precondition").
        """
        instance = self._instances.get(slot_id)
        if slot_id not in self._pooled or instance is None or instance.state is not State.RUNNING:
            raise StartFailed(f"no warm pool instance {slot_id} on this env host", code="not_found")
        if session_id in self._instances or session_id in self._starting:
            raise StartFailed(f"session {session_id} already has an instance on this env host",
                              code="failed_precondition")
        if self._pods is not None:
            slot_id, instance = await self._claim_pod(slot_id, instance, session_id)
            if self._instances.get(slot_id) is not instance or instance.state is not State.RUNNING:
                raise StartFailed(f"warm pool pod {slot_id} ended while it was claimed", code="not_found")
            if session_id in self._instances:
                raise StartFailed(f"session {session_id} already has an instance on this env host",
                                  code="failed_precondition")
        self._pooled.discard(slot_id)
        del self._instances[slot_id]
        instance.session_id = session_id
        instance.take_options(options)
        instance.last_active_at = time.time()
        self._instances[session_id] = instance
        if not isinstance(instance.process, PodInstance):
            _rename_log(instance, self.run_dir / f"{_UNSAFE_NAME.sub('_', session_id)}.log")
        return instance

    async def _claim_pod(self, slot_id: str, instance: Instance, session_id: str) -> tuple[str, Instance]:
        """Label the warm pod of `slot_id` (else the next warm pod of its environment whose
        label patch does not conflict) as `session_id`'s; returns the slot and instance taken."""
        assert self._pods is not None
        candidates = [(slot_id, instance)] + [
            (other_id, other) for other_id in sorted(self._pooled)
            if other_id != slot_id and (other := self._instances.get(other_id)) is not None
            and other.env_id == instance.env_id and other.state is State.RUNNING]
        conflicts: list[str] = []
        for candidate_id, candidate in candidates:
            if candidate_id not in self._pooled or not isinstance(candidate.process, PodInstance):
                continue
            self._pooled.discard(candidate_id)  # no other claim of this host takes it meanwhile
            try:
                await self._pods.claim(candidate.process, session_id)
            except ClaimConflict as exc:
                conflicts.append(str(exc))
                self._spawn(self._drop_conflicted(candidate_id, candidate))
                continue
            except LaunchError as exc:
                self._pooled.add(candidate_id)
                raise StartFailed(f"claiming warm pool pod {candidate.process.name} failed: {exc}",
                                  code="unavailable") from None
            self._pooled.add(candidate_id)  # discarded by the caller, with the table's other records
            return candidate_id, candidate
        raise StartFailed(f"no warm pool pod of {instance.env_id} could be claimed on this env host: "
                          f"{'; '.join(conflicts)}", code="not_found")

    async def _drop_conflicted(self, slot_id: str, instance: Instance) -> None:
        """Forget a warm pod another claimer took (it is theirs now: not stopped here)."""
        if self._instances.get(slot_id) is instance:
            del self._instances[slot_id]
            instance.state = State.STOPPED
            await instance.close_stream()

    async def stop(self, session_id: str) -> Instance | None:
        """Stop the session's instance; returns it, or None when there was nothing to stop
        (unknown, or already being stopped by another caller)."""
        starting = self._starting.get(session_id)
        if starting is not None:
            try:
                await asyncio.shield(starting)
            except Exception:  # noqa: BLE001 - the start failed, and answers for itself
                return None
        instance = self._instances.get(session_id)
        if instance is None or instance.state in (State.STOPPING, State.STOPPED):
            return None
        if instance.state is State.RUNNING:
            instance.state = State.STOPPING
            busy = False
            try:  # let a request in flight finish, if it does so soon
                await asyncio.wait_for(instance.lock.acquire(), IN_FLIGHT_GRACE_S)
            except TimeoutError:
                busy = True
                log.info("stopping %s with a request in flight for over %g s: abandoning it",
                         instance.describe(), IN_FLIGHT_GRACE_S)
            else:
                try:  # the frame of its last step, when it was asked to render it later
                    await asyncio.wait_for(take_owed_frames(instance), STOP_TIMEOUT_S)
                except (InstanceGone, TimeoutError) as exc:
                    log.warning("stopping %s: its last frame could not be taken: %s", instance.describe(), exc)
                finally:
                    instance.lock.release()
            await instance.close_stream()  # the abandoned request fails: its client hears "closed"
            await instance.process.stop(BUSY_KILL_AFTER_S if busy else STOP_TIMEOUT_S)
            instance.state = State.STOPPED
        self._wads.remove(_UNSAFE_NAME.sub("_", session_id))
        self._instances.pop(session_id, None)
        self._pooled.discard(session_id)
        self._note_ended(session_id)
        return instance

    async def stop_all(self) -> list[Instance]:
        """Stop every instance (at shutdown); returns those that were running."""
        stopped = await asyncio.gather(*(self.stop(sid) for sid in list(self._instances)),
                                       return_exceptions=True)
        for instance in list(self._instances.values()):  # half-stopped or dead: make sure no process is left
            try:
                await instance.process.stop(STOP_TIMEOUT_S)
            except OSError as exc:
                log.warning("stopping the process of %s failed: %s", instance.describe(), exc)
        return [i for i in stopped if isinstance(i, Instance)]

    async def broken(self, instance: Instance, detail: str) -> None:
        """The stream of a live instance broke: wait briefly for the process to exit, else
        kill it; either way the session is dead and reported once."""
        try:
            await asyncio.wait_for(instance.dead.wait(), STOP_TIMEOUT_S)
            return  # the watcher saw the exit and reported it
        except TimeoutError:
            pass
        if instance.state is not State.RUNNING:
            return
        instance.mark_dead(f"environment instance of {instance.describe()} stopped answering: {detail}")
        await instance.close_stream()
        await instance.process.stop(STOP_TIMEOUT_S)
        self._spawn(self._report_crash(instance))

    async def _watch(self, instance: Instance) -> None:
        code = await instance.process.wait()
        if instance.state is not State.RUNNING:
            return
        pod = instance.process if isinstance(instance.process, PodInstance) else None
        ending = f"ended: {pod.how_it_ended()}" if pod is not None else f"died with exit code {code}"
        instance.mark_dead(f"environment instance of {instance.describe()} {ending}")
        if pod is not None:  # its log tail is read: the failed pod goes (with its Secret)
            self._spawn(pod.stop())
        log.warning("%s\n%s", instance.failure, instance.log_tail)
        self._wads.remove(_UNSAFE_NAME.sub("_", instance.session_id))
        await instance.close_stream()
        self._spawn(self._report_crash(instance))

    async def _report_crash(self, instance: Instance) -> None:
        """Tell `on_crash`, then forget the dead instance after `dead_ttl` (a warm pool
        instance: at once, unreported)."""
        if self.on_dead is not None:
            self.on_dead(instance.env_id)
        if instance.session_id in self._pooled:
            self._pooled.discard(instance.session_id)
            if self._instances.get(instance.session_id) is instance:
                del self._instances[instance.session_id]
            return
        try:
            await self._on_crash(instance)
        except Exception:
            log.exception("reporting the crash of %s failed", instance.describe())
        finally:
            instance.crash_stored.set()  # reported or not, its requests are answered now
        await asyncio.sleep(self._dead_ttl)
        if self._instances.get(instance.session_id) is instance:
            del self._instances[instance.session_id]

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def pooled(self) -> list[str]:
        """Slot ids of the warm pool instances (started or starting) not claimed yet."""
        return sorted(self._pooled)

    async def close(self) -> None:
        """Cancel the watchers (after `stop_all`)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def _unrecorded(options: SessionOptions) -> SessionOptions:
    """`options` without recording (a warm pool instance records nothing until it is claimed)."""
    copy = SessionOptions()
    copy.CopyFrom(options)
    copy.record = copy.record_frames = False
    copy.life = ""
    return copy


def _rename_log(instance: Instance, path: Path) -> None:
    """Move the instance's log to `path` (the process keeps writing to it); kept on failure."""
    try:
        instance.process.log_path.replace(path)
    except OSError as exc:
        log.warning("%s: its log stays at %s: %s", instance.describe(), instance.process.log_path, exc)
        return
    instance.process.log_path = path
