"""A Doom session on an uploaded WAD: the env host copies it from the store (PLATFORM_WADS) to
the session's own folder, plays it, and removes the copy when the session stops; an unknown
id or a missing map fails the start naming what exists."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envhost_testkit import EnvHostProcess, new_session_id, start_session, stop_session
from platform_contracts.values import dict_from_datamap
from platform_testing.doom_wads import write_corridor_wad
from platform_wads import WadRecord, open_wad_store, wad_id
from simulusion.control.v1 import control_pb2 as control_pb

DOOM_BASIC = control_pb.CatalogEntry(id="doom-basic", factory="platform_envs.doom:make_env",
                                     kwargs_json='{"scenario": "basic"}')


def _stored_wad(store_dir: Path, tmp_path: Path) -> WadRecord:
    path = write_corridor_wad(tmp_path / "corridor.wad", ("MAP01", "MAP02"))
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    record = WadRecord(wad_id(digest), "corridor.wad", len(data), digest, "PWAD", ("MAP01", "MAP02"), time.time())
    return open_wad_store(store_dir).put(record, path)


async def test_a_session_plays_its_own_copy_of_an_uploaded_wad(
    envhost_factory: Callable[..., EnvHostProcess], nats_client: Any, tmp_path: Path
) -> None:
    record = _stored_wad(tmp_path / "wads", tmp_path)
    host = envhost_factory(PLATFORM_WADS=str(tmp_path / "wads"))
    session_id = new_session_id()
    reply = await start_session(nats_client, host.host_id, session_id, entry=DOOM_BASIC, wad=record.id,
                                doom_map="map02")  # SessionOptions' fields, as the broker hands them on
    assert not reply.HasField("error"), reply.error
    copy = host.run_dir / host.host_id / f"{session_id}.wads" / f"{record.id}.wad"
    assert copy.read_bytes() == (tmp_path / "corridor.wad").read_bytes()
    metadata = dict_from_datamap(reply.spec.metadata)
    assert (metadata["doom_map"], metadata["wad"]) == ("MAP02", f"{record.id}.wad"), metadata
    assert (await stop_session(nats_client, host.host_id, session_id)).stopped
    assert not copy.parent.exists()


async def test_an_unknown_wad_or_a_missing_map_fails_the_start_naming_what_exists(
    envhost_factory: Callable[..., EnvHostProcess], nats_client: Any, tmp_path: Path
) -> None:
    host = envhost_factory(PLATFORM_WADS=str(tmp_path / "wads"))
    reply = await start_session(nats_client, host.host_id, new_session_id(), entry=DOOM_BASIC,
                                kwargs_json='{"wad": "wad-0000000000000000"}')
    assert reply.error.code == "invalid_argument", reply.error
    assert "no uploaded WAD 'wad-0000000000000000': no WAD has been uploaded" in reply.error.message

    record = _stored_wad(tmp_path / "wads", tmp_path)  # in the kwargs, as a broker before issue 28 sent them
    reply = await start_session(nats_client, host.host_id, new_session_id(), entry=DOOM_BASIC,
                                kwargs_json=f'{{"wad": "{record.id}", "doom_map": "E1M1"}}')
    assert reply.error.code == "invalid_argument", reply.error
    assert reply.error.message == (f"kwargs.doom_map: the WAD {record.id} (corridor.wad) has no map 'E1M1'; "
                                   "its maps: MAP01, MAP02")
    assert not list((host.run_dir / host.host_id).glob("*.wads"))
