"""The WAD store on a folder and on a real S3 API server (moto's server mode)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from platform_testing.s3_server import S3Server
from platform_wads import WadNotFoundError, WadRecord, WadStore, WadStoreError, open_wad_store, wad_id


@pytest.fixture(params=["folder", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[WadStore]:
    if request.param == "folder":
        yield open_wad_store(tmp_path / "wads")
        return
    server: S3Server = request.getfixturevalue("s3_server")
    bucket: str = request.getfixturevalue("s3_bucket")
    yield open_wad_store(f"s3://{bucket}/wads", server.endpoint, server.access_key, server.secret_key,
                         server.region, secure=False)


def _record(path: Path, name: str, maps: tuple[str, ...] = ("MAP01",)) -> WadRecord:
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    return WadRecord(wad_id(digest), name, len(data), digest, "PWAD", maps, time.time())


def test_a_stored_wad_is_listed_described_and_copied_byte_for_byte(store: WadStore, tmp_path: Path) -> None:
    first, second = tmp_path / "a.wad", tmp_path / "b.wad"
    first.write_bytes(b"PWAD" + bytes(range(256)) * 40)
    second.write_bytes(b"PWAD" + b"other" * 100)
    a = store.put(_record(first, "a.wad", ("MAP01", "MAP02")), first)
    b = store.put(_record(second, "b.wad"), second)

    assert [r.id for r in store.records()] == [a.id, b.id]
    assert store.get(a.id) == a and store.get(a.id).maps == ("MAP01", "MAP02")  # type: ignore[union-attr]
    copy = tmp_path / "session" / "copy.wad"
    assert store.copy_to(b.id, copy) == b
    assert copy.read_bytes() == second.read_bytes()


def test_the_same_bytes_uploaded_again_keep_their_first_record(store: WadStore, tmp_path: Path) -> None:
    path = tmp_path / "a.wad"
    path.write_bytes(b"PWAD" + b"x" * 1000)
    first = store.put(_record(path, "first.wad"), path)
    again = store.put(_record(path, "renamed.wad"), path)
    assert again == first and again.name == "first.wad"
    assert len(store.records()) == 1


def test_an_unknown_or_malformed_id_is_named_with_the_ids_there_are(store: WadStore, tmp_path: Path) -> None:
    with pytest.raises(WadNotFoundError, match=r"no uploaded WAD 'wad-0000000000000000': no WAD has been uploaded"):
        store.require("wad-0000000000000000")
    path = tmp_path / "a.wad"
    path.write_bytes(b"PWAD" + b"y" * 10)
    stored = store.put(_record(path, "mine.wad"), path)
    with pytest.raises(WadNotFoundError, match=rf"'../etc/passwd': the uploaded WADs are {stored.id} \(mine.wad\)"):
        store.require("../etc/passwd")
    assert store.get("../etc/passwd") is None


def test_bad_settings_name_what_to_fix(tmp_path: Path) -> None:
    with pytest.raises(WadStoreError, match="PLATFORM_WADS='http://x': expected a folder or s3://bucket/prefix"):
        open_wad_store("http://x")
    with pytest.raises(WadStoreError, match="PLATFORM_S3_ENDPOINT and PLATFORM_S3_ACCESS_KEY and PLATFORM_S3_SECRET_KEY"):
        open_wad_store("s3://bucket/wads")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(WadStoreError, match="cannot make the folder"):
        open_wad_store(blocker / "wads")
