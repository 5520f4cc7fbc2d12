"""A received sensor_msgs/PointCloud2 against the PCD file of the same frame: its data
unpacked with numpy from its PointFields alone (offsets, datatypes, byte order), the
PCD read by pypcd4, both independent of beamtrace; fields compared as bits."""

import os

import numpy as np
from pypcd4 import PointCloud

# sensor_msgs/PointField datatypes.
NUMPY = {1: "i1", 2: "u1", 3: "i2", 4: "u2", 5: "i4", 6: "u4", 7: "f4", 8: "f8"}


def bits(col: np.ndarray) -> np.ndarray:
    """A column as unsigned integers of its size: floats compared as their bits."""
    return col.view(f"u{col.dtype.itemsize}")


def compare_cloud(layout, data: bytes, pcd_path: str) -> dict:
    """layout: ([(name, offset, datatype)], is_bigendian, point_step, width, height)."""
    fields, big, step, width, height = layout
    dtype = np.dtype(
        {
            "names": [f[0] for f in fields],
            "formats": [(">" if big else "<") + NUMPY[f[2]] for f in fields],
            "offsets": [f[1] for f in fields],
            "itemsize": step,
        }
    )
    cloud = np.frombuffer(data, dtype=dtype, count=width * height)
    out = {"points": int(width * height), "height": int(height), "width": int(width)}
    if not os.path.exists(pcd_path):
        return {**out, "equal": False, "why": f"no file {pcd_path}"}
    pcd = PointCloud.from_path(pcd_path)
    names = list(pcd.fields)
    if names != list(dtype.names):
        return {**out, "equal": False, "why": f"fields {list(dtype.names)} vs PCD {names}"}
    if (int(pcd.metadata.width), int(pcd.metadata.height)) != (width, height):
        size = f"{pcd.metadata.width}x{pcd.metadata.height}"
        return {**out, "equal": False, "why": f"{width}x{height} vs PCD {size}"}
    for name in names:
        col = np.ascontiguousarray(cloud[name]).astype(cloud[name].dtype.newbyteorder("="))
        want = np.ascontiguousarray(np.asarray(pcd.pc_data[name])).astype(col.dtype)
        if not np.array_equal(bits(col), bits(want)):
            return {**out, "equal": False, "why": f"field {name} differs"}
    return {**out, "equal": True, "why": ""}
