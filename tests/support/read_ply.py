"""Reads a PLY file with plyfile (an implementation independent of beamtrace) and prints
its vertex element as JSON on stdout: format, property names and numpy dtypes, and every
value.

Float values are printed as the bit patterns of their float32 values, so the comparison
on the Rust side is exact and does not depend on decimal printing.

usage: read_ply.py FILE.ply
"""

import json
import sys

import numpy as np
from plyfile import PlyData


def main() -> None:
    ply = PlyData.read(sys.argv[1])
    vertex = ply["vertex"]
    values = {}
    dtypes = {}
    for prop in vertex.properties:
        column = np.asarray(vertex.data[prop.name])
        dtypes[prop.name] = f"{column.dtype.kind.upper()}{column.dtype.itemsize}"
        if column.dtype.kind == "f":
            values[prop.name] = column.astype("<f4").view("<u4").tolist()
        else:
            values[prop.name] = column.astype(np.uint64).tolist()
    out = {
        "text": bool(ply.text),
        "byte_order": ply.byte_order,
        "count": vertex.count,
        "fields": [p.name for p in vertex.properties],
        "dtypes": dtypes,
        "values": values,
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
