"""The evals' logs in the recordings storage, a folder and S3 (moto's real S3 API server):
whole, by byte range, their sizes, a missing one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from platform_evals.config import Settings
from platform_evals.errors import EvalNotFoundError
from platform_evals.log_storage import LogStorage, open_log_storage
from platform_testing.s3_server import S3Server


@pytest.fixture(params=["folder", "s3"])
def storage(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LogStorage:
    if request.param == "folder":
        return open_log_storage(Settings(recordings=str(tmp_path / "recordings")))
    server: S3Server = request.getfixturevalue("s3_server")
    for name, value in server.env(request.getfixturevalue("s3_bucket")).items():
        monkeypatch.setenv(name, value)
    return open_log_storage(Settings())


def test_a_log_kept_and_read_back(storage: LogStorage, tmp_path: Path) -> None:
    data = os.urandom(300_000)
    source = tmp_path / "x.eval"
    source.write_bytes(data)
    storage.put("ev-0123456789ab", "x.eval", source)
    assert storage.size("ev-0123456789ab", "x.eval") == len(data)
    assert storage.read("ev-0123456789ab", "x.eval", 1000, 5000) == data[1000:6000]
    copy = tmp_path / "copy.eval"
    storage.fetch("ev-0123456789ab", "x.eval", copy)
    assert copy.read_bytes() == data
    for name in ("y.eval", "../x.eval"):
        with pytest.raises(EvalNotFoundError):
            storage.size("ev-0123456789ab", name)
