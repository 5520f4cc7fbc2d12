"""Shared fixtures of the Python API tests: the repository root as the working
directory (the bundled scene and configs are looked up there, as for the CLI), and
the `beamtrace` binary whose files the API's frames are compared with."""

import os
import pathlib
import subprocess

import numpy as np
import pytest
from pypcd4 import PointCloud

ROOT = pathlib.Path(__file__).resolve().parents[2]


def binary() -> pathlib.Path:
    """`BEAMTRACE_BIN`, else the debug build under the Cargo target folder."""
    given = os.environ.get("BEAMTRACE_BIN")
    if given:
        return pathlib.Path(given)
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "debug" / "beamtrace"


@pytest.fixture(autouse=True)
def in_root(monkeypatch):
    monkeypatch.chdir(ROOT)


@pytest.fixture
def cli(tmp_path):
    """Runs `beamtrace run ARGS --out <tmp>` and returns the output folder."""

    def run(*args, out="cli"):
        folder = tmp_path / out
        cmd = [str(binary()), "run", *map(str, args), "--out", str(folder), "--no-picture"]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        return folder

    return run


def read_pcd(path) -> np.ndarray:
    """The records of a PCD file as pypcd4, an independent reader, reads them."""
    return PointCloud.from_path(str(path)).pc_data


def assert_same_bits(array: np.ndarray, records: np.ndarray):
    """Every field of `array` equals `records`' field of that name bit for bit (NaN
    cells included), and both have the same fields in the same order."""
    assert array.dtype.names == records.dtype.names
    assert array.shape == records.shape
    for name in array.dtype.names:
        a, b = array[name], records[name]
        assert a.dtype == b.dtype, name
        width = np.dtype(f"u{a.dtype.itemsize}")
        assert np.array_equal(a.view(width), b.view(width)), f"field {name} differs"
