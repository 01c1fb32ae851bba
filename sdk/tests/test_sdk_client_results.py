"""`platform_sdk.client.results`: a restore's info carries the environment server's `restore_s`."""

from __future__ import annotations

from platform_contracts.values import datamap_from_dict
from platform_sdk.client.results import restored_info
from simulusion.env.v1 import environment_pb2 as env_pb


def test_a_restores_info_holds_the_seconds_the_server_measured() -> None:
    result = env_pb.RestoreResponse(info=datamap_from_dict({"lives": 3}), seconds=0.25)
    assert restored_info(result) == {"lives": 3, "restore_s": 0.25}
    saved = env_pb.RestoreSavedResponse(seconds=1.5)
    assert restored_info(saved) == {"restore_s": 1.5}


def test_an_older_server_that_does_not_say_leaves_restore_s_out() -> None:
    assert restored_info(env_pb.RestoreResponse(info=datamap_from_dict({"lives": 3}))) == {"lives": 3}
    assert restored_info(env_pb.RestoreSavedResponse()) == {}
