"""Reads a PCD file with pypcd4 (an implementation independent of beamtrace) and prints
its header and every field as JSON on stdout.

Float fields are printed as the bit patterns of their float32 values, so the comparison
on the Rust side is exact and does not depend on decimal printing.

usage: read_pcd.py FILE.pcd
"""

import json
import sys

import numpy as np
from pypcd4 import PointCloud


def main() -> None:
    pc = PointCloud.from_path(sys.argv[1])
    meta = pc.metadata
    data = pc.pc_data
    values = {}
    dtypes = {}
    for name in pc.fields:
        column = np.asarray(data[name])
        dtypes[name] = f"{column.dtype.kind.upper()}{column.dtype.itemsize}"
        if column.dtype.kind == "f":
            values[name] = column.astype("<f4").view("<u4").tolist()
        else:
            values[name] = column.astype(np.uint64).tolist()
    out = {
        "version": str(meta.version),
        "fields": list(pc.fields),
        "size": list(meta.size),
        "type": list(meta.type),
        "count": list(meta.count),
        "width": meta.width,
        "height": meta.height,
        "points": pc.points,
        "viewpoint": list(meta.viewpoint),
        "data": meta.data.value,
        "dtypes": dtypes,
        "values": values,
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
