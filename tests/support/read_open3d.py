"""Reads a PCD or PLY file with Open3D's tensor reader (open3d.t.io.read_point_cloud, an
implementation independent of beamtrace) and prints every attribute it found as JSON:
its dtype and values. Open3D gathers x, y and z into `positions`; they are printed as
the three fields x, y and z.

Float values are printed as the bit patterns of their float32 values (NaN included),
so the comparison on the Rust side is exact.

usage: read_open3d.py FILE...  (prints one JSON object per file, keyed by its path;
Open3D is slow to import, so one run reads them all)
"""

import json
import sys

import numpy as np
import open3d as o3d

KINDS = {"Float32": "F4", "UInt8": "U1", "UInt16": "U2", "UInt32": "U4", "Int32": "I4"}


def column(values: np.ndarray):
    if values.dtype.kind == "f":
        return values.astype("<f4").view("<u4").tolist()
    return values.astype(np.int64).tolist()


def read(path: str) -> dict:
    pc = o3d.t.io.read_point_cloud(path)
    dtypes = {}
    values = {}
    for name in pc.point:
        tensor = pc.point[name]
        data = tensor.numpy()
        kind = KINDS.get(str(tensor.dtype), str(tensor.dtype))
        if name == "positions":
            for i, axis in enumerate("xyz"):
                dtypes[axis] = kind
                values[axis] = column(data[:, i])
        else:
            dtypes[name] = kind
            values[name] = column(data.reshape(-1))
    return {"fields": sorted(dtypes), "dtypes": dtypes, "values": values}


def main() -> None:
    # Open3D prints its warnings (e.g. a skipped property) on stdout, where the JSON
    # goes; a skipped field shows as a missing one instead.
    o3d.utility.set_verbosity_level(o3d.utility.VerbosityLevel.Error)
    json.dump({path: read(path) for path in sys.argv[1:]}, sys.stdout)


if __name__ == "__main__":
    main()
