"""What a frame holds: its fields and types as the README's field table gives them, the
organized grid, the world frame, and the sensor's description."""

import re

import numpy as np
import pytest

import beamtrace
from conftest import ROOT, assert_same_bits, read_pcd

# The README's PCD types as NumPy's.
PCD_TYPES = {"F4": "<f4", "U1": "u1", "U2": "<u2", "U4": "<u4"}


def readme_fields():
    """(name, NumPy type) of each row of the README's table of beamtrace's fields."""
    text = (ROOT / "README.md").read_text()
    table = text.split("| field | type | meaning |", 1)[1].split("\n\n", 1)[0]
    fields = []
    for row in table.splitlines()[2:]:
        names, kind = [c.strip() for c in row.strip("|").split("|")[:2]]
        for name in re.split(r"[ ,]+", names):
            fields.append((name, PCD_TYPES[kind]))
    return fields


def test_the_fields_are_the_readmes_table_in_order():
    with beamtrace.Simulator(sensor="vlp-16", thin=True) as sim:
        frame = sim.frame()
        info = sim.sensor_info()
    expected = readme_fields()
    assert len(expected) == 19
    assert [(n, frame.dtype[n].str.replace("|", "")) for n in frame.dtype.names] == expected
    assert [(f["name"], f["dtype"]) for f in info["fields"]] == expected
    assert frame.dtype.itemsize == sum(np.dtype(t).itemsize for _, t in expected)


def test_an_organized_frame_is_rings_by_columns_with_nan_cells():
    with beamtrace.Simulator(sensor="vlp-16", thin=True) as sim:
        info = sim.sensor_info()
        flat = sim.frame(t=0.0)
        grid = sim.frame(t=0.0, organized=True)
    # The VLP-16 datasheet: 16 channels; 0.2° steps at 10 Hz, so about 1800 columns.
    assert info["channels"] == 16
    assert grid.shape == (16, info["columns"]) == tuple(info["grid"])
    assert 1790 <= info["columns"] <= 1810
    hit = ~np.isnan(grid["x"])
    assert hit.sum() == len(flat)
    assert np.isnan(grid["y"][~hit]).all() and np.isnan(grid["z"][~hit]).all()
    # Each returned point sits in its ring's row.
    rows = np.nonzero(hit)[0]
    assert set(np.unique(grid["ring"][hit])) == set(np.unique(flat["ring"]))
    assert len(np.unique(rows)) == 16


def test_the_ouster_convention_organizes_by_default_as_its_driver(cli):
    with beamtrace.Simulator(sensor="os1-16", thin=True, fields="ouster") as sim:
        frame = sim.frame()
        info = sim.sensor_info()
    assert frame.shape[-2:] == (16, info["columns"])
    assert frame.dtype.names[:4] == ("x", "y", "z", "intensity")


def test_world_points_equal_run_world(cli):
    with beamtrace.Simulator(sensor="vlp-16", thin=True, world=True, position=(3, 1, 0)) as sim:
        frame = sim.frame()
    out = cli("--sensor", "vlp-16", "--thin", "--world", "--position", "3,1,0")
    assert_same_bits(frame, read_pcd(out / "frame_000000.pcd"))


def test_sensor_info_gives_the_datasheet_numbers():
    with beamtrace.Simulator(sensor="vlp-16") as sim:
        info = sim.sensor_info()
    assert info["sensor"] == "vlp-16"
    assert info["wavelength_nm"] == 903
    assert info["frame_rate_hz"] == 10
    assert info["max_range_m"] == pytest.approx(100, rel=0.3)
    assert info["beams"] == info["channels"] * info["columns"]
    assert info["subrays"] > 1
    units = {f["name"]: f["unit"] for f in info["fields"]}
    assert units["x"] == "m" and units["range"] == "m"
