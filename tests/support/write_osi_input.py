"""Writes the OSI input of beamtrace's --osi-ground-truth tests with ASAM's own tools,
independent of beamtrace: a SensorView trace (osi-python's messages, written by
asam-osi-utilities' SingleTraceWriter) of a host vehicle and two moving boxes, and a
glTF scene holding the two boxes (plain JSON, a base64 buffer).

The poses come as JSON on stdin: {"times": [...], "host": [[x, y, z, yaw], ...],
"boxes": {"7": [[x, y, z, yaw], ...], "8": [...]}, "sizes": {"7": [l, w, h], ...},
"host_size": [l, w, h], "bbcenter_to_rear": [x, y, z]}; the host's poses are its
reference point (the rear axle's centre), which the script turns into the bounding
box centre OSI's base.position asks for.

Box "7" is the glTF node named "7"; box "8" is the node "box_b" with extras.osi_id 8.

usage: write_osi_input.py OUT_DIR TRACE_NAME < poses.json
"""

import base64
import json
import math
import struct
import sys
from pathlib import Path

from osi3.osi_sensorview_pb2 import SensorView
from osi_utilities import SingleTraceWriter


def box_mesh(size):
    """A closed box centred on its node, in glTF's axes (y up): length along x, width
    along the world's y (glTF's -z), height along the world's z (glTF's y)."""
    l, w, h = (s / 2 for s in size)
    corners = [(x, y, z) for x in (-l, l) for y in (-h, h) for z in (-w, w)]
    faces = [
        (0, 1, 3, 2), (4, 6, 7, 5),  # x = -l, x = +l
        (0, 4, 5, 1), (2, 3, 7, 6),  # y = -h, y = +h
        (0, 2, 6, 4), (1, 5, 7, 3),  # z = -w, z = +w
    ]
    indices = []
    for a, b, c, d in faces:
        indices += [a, b, c, a, c, d]
    return corners, indices


def gltf(sizes):
    buffers, views, accessors, meshes, nodes = b"", [], [], [], []
    for name, size in sizes:
        corners, indices = box_mesh(size)
        pos = b"".join(struct.pack("<3f", *c) for c in corners)
        idx = b"".join(struct.pack("<H", i) for i in indices)
        for data, target in ((pos, 34962), (idx, 34963)):
            views.append({"buffer": 0, "byteOffset": len(buffers), "byteLength": len(data),
                          "target": target})
            buffers += data + b"\0" * (-len(data) % 4)
        lo = [min(c[k] for c in corners) for k in range(3)]
        hi = [max(c[k] for c in corners) for k in range(3)]
        accessors.append({"bufferView": len(views) - 2, "componentType": 5126, "count": 8,
                          "type": "VEC3", "min": lo, "max": hi})
        accessors.append({"bufferView": len(views) - 1, "componentType": 5123,
                          "count": len(indices), "type": "SCALAR"})
        meshes.append({"primitives": [{"attributes": {"POSITION": len(accessors) - 2},
                                       "indices": len(accessors) - 1}]})
        node = {"name": name, "mesh": len(meshes) - 1, "translation": [0, -50, 0]}
        if name == "box_b":
            node["extras"] = {"osi_id": 8}
        nodes.append(node)
    uri = "data:application/octet-stream;base64," + base64.b64encode(buffers).decode()
    return {
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": list(range(len(nodes)))}],
        "nodes": nodes,
        "meshes": meshes,
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": len(buffers), "uri": uri}],
    }


def set_base(base, position, yaw, size):
    base.position.x, base.position.y, base.position.z = position
    base.orientation.roll, base.orientation.pitch, base.orientation.yaw = 0.0, 0.0, yaw
    base.dimension.length, base.dimension.width, base.dimension.height = size


def views(spec):
    rear = spec["bbcenter_to_rear"]
    for k, t in enumerate(spec["times"]):
        v = SensorView()
        v.version.version_major, v.version.version_minor = 3, 7
        v.timestamp.seconds = int(math.floor(t))
        v.timestamp.nanos = int(round((t - math.floor(t)) * 1e9))
        v.host_vehicle_id.value = 1
        gt = v.global_ground_truth
        gt.timestamp.CopyFrom(v.timestamp)
        gt.host_vehicle_id.value = 1
        hx, hy, hz, hyaw = spec["host"][k]
        host = gt.moving_object.add()
        host.id.value = 1
        host.type = 2  # TYPE_VEHICLE
        # The box's centre: the reference point minus bbcenter_to_rear, turned by yaw.
        c, s = math.cos(hyaw), math.sin(hyaw)
        centre = (hx - (c * rear[0] - s * rear[1]), hy - (s * rear[0] + c * rear[1]), hz - rear[2])
        set_base(host.base, centre, hyaw, spec["host_size"])
        host.vehicle_attributes.bbcenter_to_rear.x = rear[0]
        host.vehicle_attributes.bbcenter_to_rear.y = rear[1]
        host.vehicle_attributes.bbcenter_to_rear.z = rear[2]
        for oid, poses in spec["boxes"].items():
            o = gt.moving_object.add()
            o.id.value = int(oid)
            o.type = 1  # TYPE_OTHER
            x, y, z, yaw = poses[k]
            set_base(o.base, (x, y, z), yaw, spec["sizes"][oid])
        yield v


def main() -> None:
    out, trace_name = Path(sys.argv[1]), sys.argv[2]
    spec = json.load(sys.stdin)
    scene = gltf([("7", spec["sizes"]["7"]), ("box_b", spec["sizes"]["8"])])
    (out / "boxes.gltf").write_text(json.dumps(scene))
    with SingleTraceWriter() as writer:
        writer.open(out / trace_name)
        for v in views(spec):
            writer.write_message(v)
    print(json.dumps({"scene": str(out / "boxes.gltf"), "trace": str(out / trace_name)}))


if __name__ == "__main__":
    main()
