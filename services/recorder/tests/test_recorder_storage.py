"""The Storage protocol, the same checks on a folder and on a real S3 API server (moto), and the
settings that choose one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from platform_recorder.storage.folder import FolderStorage
from platform_recorder.storage.interface import (
    ObjectExistsError,
    ObjectNotFoundError,
    StorageConfigError,
    StorageUnavailableError,
)
from platform_recorder.storage.opening import storage_from_settings
from platform_recorder.storage.s3 import S3Storage, open_s3_storage
from platform_testing.ports import free_port
from platform_testing.s3_server import S3Server


@pytest.fixture(params=["folder", "s3"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "folder":
        return FolderStorage(tmp_path / "recordings")
    return request.getfixturevalue("s3_storage")


def test_put_get_ranges_sizes_and_missing_keys(storage: Any) -> None:
    data = bytes(range(256)) * 40
    storage.put_atomic("s-1/episode-000000.npz", data)
    storage.put_atomic("s-1/meta.json", memoryview(b'{"a": 1}'))
    assert storage.get("s-1/episode-000000.npz") == data
    assert storage.get_range("s-1/episode-000000.npz", 250, 10) == data[250:260]
    assert storage.get_range("s-1/episode-000000.npz", len(data) - 3, 10) == data[-3:]  # fewer at the end
    assert storage.get_range("s-1/episode-000000.npz", len(data) + 5, 10) == b""
    assert storage.get_range("s-1/episode-000000.npz", 5, 0) == b""
    assert storage.size("s-1/episode-000000.npz") == len(data)
    assert storage.exists("s-1/meta.json") and not storage.exists("s-1/nothing.json")
    storage.put_atomic("s-1/meta.json", b'{"a": 2}')  # replaced whole
    assert storage.get("s-1/meta.json") == b'{"a": 2}'
    for read in (storage.get, storage.size, lambda key: storage.get_range(key, 0, 4)):
        with pytest.raises(ObjectNotFoundError, match="s-1/nothing.json"):
            read("s-1/nothing.json")
    with pytest.raises(ObjectNotFoundError):
        storage.get_range("s-1/nothing.json", 0, 0)
    for bad in ("../x", "/abs", "a//b", "a/./b", "a\\b", ""):
        with pytest.raises(ValueError, match="not a storage key"):
            storage.put_atomic(bad, b"x")


def test_list_children_and_delete_prefix(storage: Any) -> None:
    for key in (
        "s-1/meta.json",
        "s-1/manifest.json",
        "s-1/episode-000000.npz",
        "s-10/meta.json",
        "s-1-0/meta.json",
        "s-1-1/meta.json",
        "snapshots/snap-1/state.bin",
    ):
        storage.put_atomic(key, key.encode())
    assert storage.list("s-1/") == ["s-1/episode-000000.npz", "s-1/manifest.json", "s-1/meta.json"]
    assert storage.list("s-1") == storage.list("s-1/")  # a folder, not a name prefix
    assert storage.list_sizes("s-10/") == {"s-10/meta.json": len(b"s-10/meta.json")}
    assert storage.children() == ["s-1", "s-1-0", "s-1-1", "s-10", "snapshots"]
    assert storage.children("", name_prefix="s-1-") == ["s-1-0", "s-1-1"]
    assert storage.children("snapshots/") == ["snap-1"]
    assert storage.list("nothing/") == [] and storage.children("nothing/") == []
    assert storage.delete_prefix("s-1/") == 3
    assert storage.list("s-1/") == [] and storage.exists("s-10/meta.json")
    assert storage.delete_prefix("s-1/") == 0


def test_a_new_folder_is_written_whole_once_and_says_where_it_lives(storage: Any) -> None:
    storage.put_new_folder("snapshots/snap-1", [("state.bin", b"state"), ("snapshot.json", b"{}")])
    assert storage.list("snapshots/snap-1/") == ["snapshots/snap-1/snapshot.json", "snapshots/snap-1/state.bin"]
    assert storage.get("snapshots/snap-1/state.bin") == b"state"
    with pytest.raises(ObjectExistsError, match="snapshots/snap-1 exists"):
        storage.put_new_folder("snapshots/snap-1", [("state.bin", b"other")])
    assert storage.get("snapshots/snap-1/state.bin") == b"state"
    assert storage.children("snapshots/") == ["snap-1"]  # no temporary folder left
    assert storage.remove_stale_temporaries("snapshots/", 0) == 0
    if storage.local_root is not None:  # a local folder: its keys are files there
        assert (storage.local_root / "snapshots" / "snap-1" / "state.bin").read_bytes() == b"state"
    else:
        assert storage.needs_manifest


def test_a_folder_storage_keeps_no_temporary_file(tmp_path: Path) -> None:
    storage = FolderStorage(tmp_path / "deep" / "recordings")
    storage.put_atomic("s-1/episode-000000.npz", b"x" * 100, sync_folder=False)
    storage.sync_folder("s-1/")
    assert sorted(p.name for p in (tmp_path / "deep" / "recordings" / "s-1").iterdir()) == [
        "episode-000000.npz"
    ]


def test_settings_pick_a_folder_or_s3(tmp_path: Path, s3_server: S3Server, s3_bucket: str) -> None:
    folder = storage_from_settings(str(tmp_path / "rec"))
    assert isinstance(folder, FolderStorage) and folder.root == tmp_path / "rec"
    env = s3_server.env(s3_bucket, prefix="team/recordings")
    s3 = storage_from_settings(
        env["PLATFORM_RECORDINGS"],
        endpoint=f"http://{s3_server.endpoint}",
        access_key=s3_server.access_key,
        secret_key=s3_server.secret_key,
        region=s3_server.region,
    )  # the scheme in the endpoint turns TLS off
    assert isinstance(s3, S3Storage) and (s3.bucket, s3.prefix) == (s3_bucket, "team/recordings/")
    assert s3.client.bucket_exists(s3_bucket)  # a missing bucket is made at start
    s3.put_atomic("s-1/meta.json", b"{}")
    assert s3.client.stat_object(s3_bucket, "team/recordings/s-1/meta.json").size == 2
    again = storage_from_settings(  # an existing bucket is used as it is
        env["PLATFORM_RECORDINGS"],
        endpoint=s3_server.endpoint,
        access_key=s3_server.access_key,
        secret_key=s3_server.secret_key,
        secure=False,
    )
    assert again.get("s-1/meta.json") == b"{}"


@pytest.mark.parametrize(
    ("recordings", "endpoint", "access", "secret", "named"),
    [
        ("s3://bucket-a/p", "", "k", "s", "PLATFORM_S3_ENDPOINT"),
        ("s3://bucket-a/p", "127.0.0.1:9", "", "s", "PLATFORM_S3_ACCESS_KEY"),
        ("s3://bucket-a/p", "127.0.0.1:9", "k", "", "PLATFORM_S3_SECRET_KEY"),
        ("s3:///p", "127.0.0.1:9", "k", "s", "no bucket"),
        ("s3://Bad_Bucket/p", "127.0.0.1:9", "k", "s", "PLATFORM_RECORDINGS"),
        ("s3://bucket-a/a/../b", "127.0.0.1:9", "k", "s", "PLATFORM_RECORDINGS"),
        ("gs://bucket-a/p", "", "", "", "PLATFORM_RECORDINGS"),
        ("s3://bucket-a/p", "ftp://127.0.0.1:9", "k", "s", "PLATFORM_S3_ENDPOINT"),
    ],
)
def test_bad_s3_settings_name_the_variable(
    recordings: str, endpoint: str, access: str, secret: str, named: str
) -> None:
    with pytest.raises(StorageConfigError, match=named):
        storage_from_settings(recordings, endpoint=endpoint, access_key=access, secret_key=secret)


def test_an_unreachable_endpoint_fails_at_start_naming_it() -> None:
    endpoint = f"127.0.0.1:{free_port()}"
    with pytest.raises(StorageUnavailableError, match=f"s3://bucket-a/p/ at {endpoint}"):
        open_s3_storage("s3://bucket-a/p", endpoint, "k", "s", secure=False)
