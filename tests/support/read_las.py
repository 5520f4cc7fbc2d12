"""Reads LAS files with laspy (an implementation independent of beamtrace) and prints,
as JSON on stdout, each file's header and every point dimension — LAS's own and the
extra bytes the Extra Bytes VLR describes, by name.

Float dimensions are printed as the bit patterns of their values (float32 as 32 bits,
float64 as 64 bits), so the comparison on the Rust side is exact; the scaled x y z
(float64) are printed as numbers as well, for comparisons within the scale.

usage: read_las.py FILE.las [FILE.las ...]
"""

import json
import sys

import laspy
import numpy as np


def column(values) -> tuple:
    """The dtype as kind and size (F4, U2, ...) and the values, floats as their bits."""
    a = np.asarray(values)
    dtype = f"{a.dtype.kind.upper()}{a.dtype.itemsize}"
    if a.dtype.kind == "f":
        bits = {4: "<u4", 8: "<u8"}[a.dtype.itemsize]
        return dtype, a.view(bits).astype(np.uint64).tolist()
    return dtype, a.astype(np.int64).tolist()


def read(path: str) -> dict:
    las = laspy.read(path)
    h = las.header
    dims = list(las.point_format.dimension_names)
    extra = [d.name for d in las.point_format.extra_dimensions]
    dtypes, values = {}, {}
    for name in dims:
        dtypes[name], values[name] = column(las[name])
    return {
        "version": f"{h.version.major}.{h.version.minor}",
        "point_format": h.point_format.id,
        "points": int(h.point_count),
        "scales": [float(s) for s in h.scales],
        "offsets": [float(o) for o in h.offsets],
        "generating_software": h.generating_software,
        "system_identifier": h.system_identifier,
        "creation_date": None if h.creation_date is None else str(h.creation_date),
        "gps_time_type": int(h.global_encoding.gps_time_type),
        "wkt": bool(h.global_encoding.wkt),
        "vlrs": [[v.user_id, v.record_id] for v in h.vlrs],
        "extra": extra,
        "extra_descriptions": [d.description for d in las.point_format.extra_dimensions],
        "dtypes": dtypes,
        "values": values,
        # The scaled coordinates, in metres.
        "xyz": [np.asarray(las.x).tolist(), np.asarray(las.y).tolist(), np.asarray(las.z).tolist()],
    }


def main() -> None:
    json.dump({"files": [read(p) for p in sys.argv[1:]]}, sys.stdout)


if __name__ == "__main__":
    main()
