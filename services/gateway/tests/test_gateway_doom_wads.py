"""POST/GET /v0/doom/wads on a real uvicorn: uploads streamed and checked, kept under
PLATFORM_WADS (a folder here; platform_wads' own tests cover S3), limits and bad files."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from platform_contracts.limits import MAX_WAD_BYTES
from platform_testing.doom_wads import raw_wad, write_corridor_wad




@pytest.fixture
async def wad_gateway(start_gateway: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("PLATFORM_WADS", str(tmp_path / "wads"))
    return await start_gateway()


async def test_an_uploaded_wad_is_kept_under_its_content_id_with_its_maps(wad_gateway: Any,
                                                                          tmp_path: Path) -> None:
    data = write_corridor_wad(tmp_path / "corridor.wad", ("MAP01", "MAP02")).read_bytes()
    response = await wad_gateway.http.post("/v0/doom/wads", params={"name": "corridor.wad"}, content=data,
                                           headers={"Content-Type": "application/octet-stream"})
    assert response.status_code == 201, response.text
    wad = response.json()
    assert wad["id"].startswith("wad-") and len(wad["id"]) == 20
    assert (wad["name"], wad["size"], wad["kind"], wad["maps"]) == ("corridor.wad", len(data), "PWAD", ["MAP01", "MAP02"])
    assert (tmp_path / "wads" / f"{wad['id']}.wad").read_bytes() == data

    again = await wad_gateway.http.post("/v0/doom/wads", params={"name": "copy.wad"}, content=data)
    assert again.status_code == 200 and again.json() == wad  # the same bytes: the first record
    listed = (await wad_gateway.http.get("/v0/doom/wads")).json()
    assert listed == {"wads": [wad]}
    assert (await wad_gateway.http.get(f"/v0/doom/wads/{wad['id']}")).json() == wad
    missing = await wad_gateway.http.get("/v0/doom/wads/wad-0000000000000000")
    assert missing.status_code == 404
    assert missing.json()["detail"] == f"no uploaded WAD 'wad-0000000000000000': the uploaded WADs are {wad['id']} (corridor.wad)"


@pytest.mark.parametrize(("name", "body", "message"), [
    ("../../etc/evil.wad", b"PWAD", "name '../../etc/evil.wad' is a path: give the file's name alone, e.g. 'evil.wad'"),
    ("C:\\maps\\m.wad", b"PWAD", "is a path"),
    ("maps.zip", b"PWAD", "name 'maps.zip' must be a file name ending in .wad"),
    (".hidden.wad", b"PWAD", "must be a file name ending in .wad"),
    ("empty.wad", b"", "the upload is empty"),
    ("text.wad", b"hello, this is not a WAD", "text.wad is not a usable WAD: not a WAD: it starts with b'hell'"),
    ("cut.wad", raw_wad([("MAP01", b""), ("THINGS", b"x" * 10)])[:-4], "does not lie within"),
    ("nomap.wad", raw_wad([("PLAYPAL", b"x" * 10)]), "nomap.wad is not a usable WAD: a PWAD with 1 lumps and no map"),
])
async def test_a_bad_name_or_a_file_that_is_not_a_wad_is_a_422_saying_what_is_wrong(
    wad_gateway: Any, name: str, body: bytes, message: str, tmp_path: Path
) -> None:
    response = await wad_gateway.http.post("/v0/doom/wads", params={"name": name}, content=body)
    assert response.status_code == 422, response.text
    assert message in response.json()["detail"]
    assert not list((tmp_path / "wads").glob("*.json"))  # nothing kept


async def test_an_upload_over_20_mb_is_a_413_whether_declared_or_streamed(wad_gateway: Any,
                                                                         tmp_path: Path) -> None:
    host, port = wad_gateway.url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"POST /v0/doom/wads?name=big.wad HTTP/1.1\r\nHost: {host}\r\nContent-Length: {MAX_WAD_BYTES + 1}\r\n"
                 "Content-Type: application/octet-stream\r\n\r\nPWAD".encode())
    await writer.drain()
    head = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)).decode()
    assert head.startswith("HTTP/1.1 413"), head  # answered before the body is sent
    writer.close()

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as it arrives
        for _ in range(21):
            yield b"\0" * (1024 * 1024)

    response = await wad_gateway.http.post("/v0/doom/wads", params={"name": "big.wad"}, content=chunks())
    assert response.status_code == 413, response.text
    assert response.json()["detail"] == (f"the request body is over {MAX_WAD_BYTES} bytes (20 MiB), the most "
                                         "POST /v0/doom/wads takes (platform_contracts.limits)")
    assert not list((tmp_path / "wads").glob("*.json"))


async def test_a_team_that_uploads_a_wad_another_team_was_refused_then_reaches_it(
        start_gateway: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Managed: the gateway remembers a WAD's owners; a team refused it (not an owner yet) that then
    uploads the same bytes owns it too, at once (the remembered owners are read again on a refusal)."""
    monkeypatch.setenv("PLATFORM_WADS", str(tmp_path / "wads"))
    admin = "wads-operator-token"
    gateway = await start_gateway(auth="token", admin_token=admin, mode="managed",
                                  database_url=f"sqlite:///{tmp_path}/platform.db")

    async def member(team: str) -> dict[str, str]:
        made = await gateway.http.post("/v0/tokens", json={"name": team, "team": team},
                                       headers={"Authorization": f"Bearer {admin}"})
        return {"Authorization": f"Bearer {made.json()['token']}"}

    red, blue = await member("red"), await member("blue")
    data = write_corridor_wad(tmp_path / "shared.wad").read_bytes()
    wad = (await gateway.http.post("/v0/doom/wads", params={"name": "shared.wad"}, content=data, headers=red)).json()
    assert (await gateway.http.get(f"/v0/doom/wads/{wad['id']}", headers=red)).status_code == 200  # remembered
    assert (await gateway.http.get(f"/v0/doom/wads/{wad['id']}", headers=blue)).status_code == 404
    uploaded = await gateway.http.post("/v0/doom/wads", params={"name": "mine.wad"}, content=data, headers=blue)
    assert uploaded.status_code in (200, 201) and uploaded.json()["id"] == wad["id"]
    assert (await gateway.http.get(f"/v0/doom/wads/{wad['id']}", headers=blue)).status_code == 200
