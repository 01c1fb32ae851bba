"""Episode files: the one-pass .npz encoder writes what numpy.load reads back, bit for bit."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
from platform_recorder.writing.npz_files import RowBytes, encode_npz


def _round_trip(arrays: dict[str, np.ndarray], tmp_path: Path) -> dict[str, np.ndarray]:
    path = tmp_path / "episode.npz"
    path.write_bytes(encode_npz(arrays))
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None  # every member's CRC checks
        assert all(info.compress_type == zipfile.ZIP_DEFLATED for info in archive.infolist())
    with np.load(path) as loaded:
        return {name: loaded[name] for name in loaded.files}


def test_every_column_kind_reads_back_the_same(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    arrays = {
        "observations": rng.random((11, 4)).astype(np.float32),
        "actions": np.arange(10, dtype=np.int64),
        "rewards": np.ones(10),
        "terminated": np.array([False] * 9 + [True]),
        "agent.value": np.array([np.nan, 1.5, np.inf, -2.0]),
        "frames_rgb": rng.integers(0, 255, (3, 8, 6, 3), dtype=np.uint8),
        "fortran": np.asfortranarray(rng.random((5, 3))),
        "outcome": np.array("win"),  # a 0-d string array keeps its shape
        "seq": np.arange(1, 11, dtype=np.uint64),
        "empty": np.zeros((0, 4), dtype=np.float64),
        "big.endian": np.arange(4, dtype=">i4"),
        "frames": np.array([b"\xff\xd8jpeg", b"", b"\xff\xd8"]),  # fixed-width bytes (JPEG frames)
        "names": np.array(["left", "up"]),  # unicode
        "when": np.array(["2026-11-29"], dtype="datetime64[D]"),
    }
    loaded = _round_trip(arrays, tmp_path)
    assert sorted(loaded) == sorted(arrays)
    for name, array in arrays.items():
        assert loaded[name].dtype == array.dtype, name
        assert loaded[name].shape == array.shape, name
        np.testing.assert_array_equal(loaded[name], array, err_msg=name)


def test_the_file_is_what_numpy_writes_member_for_member(tmp_path: Path) -> None:
    arrays = {"observations": np.linspace(0, 1, 400).reshape(100, 4), "actions": np.zeros(99, dtype=np.int8)}
    ours = zipfile.ZipFile(io.BytesIO(bytes(encode_npz(arrays))))
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    numpys = zipfile.ZipFile(buffer)
    assert ours.namelist() == numpys.namelist() == ["observations.npy", "actions.npy"]
    for name in ours.namelist():
        assert ours.read(name) == numpys.read(name)  # the same .npy bytes inside


def test_object_arrays_go_through_numpy_and_need_pickle_to_load(tmp_path: Path) -> None:
    arrays = {"odd": np.array([{"a": 1}, None], dtype=object), "rewards": np.ones(2)}
    path = tmp_path / "odd.npz"
    path.write_bytes(encode_npz(arrays))
    with np.load(path, allow_pickle=True) as loaded:
        assert loaded["odd"][0] == {"a": 1}
        np.testing.assert_array_equal(loaded["rewards"], np.ones(2))


def test_a_column_of_row_bytes_is_the_same_member_as_its_array(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    screens = rng.integers(0, 4, (7, 21, 16, 3), dtype=np.uint8)  # image observations, row by row
    rows = RowBytes([screen.tobytes() for screen in screens], np.dtype(np.uint8), (21, 16, 3))
    assert rows.shape == screens.shape and len(rows) == 7 and rows.nbytes == screens.nbytes
    np.testing.assert_array_equal(np.asarray(rows), screens)
    ours = zipfile.ZipFile(io.BytesIO(bytes(encode_npz({"observations": rows, "rewards": np.ones(6)}))))
    assert ours.read("observations.npy") == zipfile.ZipFile(io.BytesIO(bytes(
        encode_npz({"observations": screens})))).read("observations.npy")
    loaded = _round_trip({"observations": rows, "empty": RowBytes([], np.dtype(np.float32), (64, 64))}, tmp_path)
    np.testing.assert_array_equal(loaded["observations"], screens)
    assert loaded["empty"].shape == (0, 64, 64) and loaded["empty"].dtype == np.float32
