"""Reads a binary OSI trace of SensorData with ASAM's own readers, independent of
beamtrace: asam-osi-utilities opens the trace (OSI's file naming parsed by its own
parser), osi-python (ASAM's protobuf bindings of the OSI specification) decodes the
messages. Prints JSON on stdout: the parsed file name, then per message its header
and every detection, each converted from OSI's spherical coordinates to Cartesian by
the specification's formula (Spherical3d: the frame's x axis turned by azimuth about
z, then by elevation about the new y axis, right-hand rule), in float64.

usage: read_osi.py TRACE.osi
"""

import json
import math
import sys
from pathlib import Path

from osi_utilities import ChannelSpecification, MessageType, open_channel
from osi_utilities.filename import parse_osi_trace_filename


def cartesian(p):
    d, az, el = p.distance, p.azimuth, p.elevation
    return [d * math.cos(el) * math.cos(az), d * math.cos(el) * math.sin(az), -d * math.sin(el)]


def vec(v):
    return [v.x, v.y, v.z]


def rpy(o):
    return [o.roll, o.pitch, o.yaw]


def ground_truth(view):
    gt = view.global_ground_truth
    return {
        "timestamp": view.timestamp.seconds + view.timestamp.nanos * 1e-9,
        "host_vehicle_id": view.host_vehicle_id.value,
        "objects": {
            str(o.id.value): {"position": vec(o.base.position), "rpy": rpy(o.base.orientation)}
            for o in gt.moving_object
        },
    }


def message(sd):
    lidar = sd.feature_data.lidar_sensor
    header = lidar[0].header
    detections = [
        {
            "xyz": cartesian(d.position),
            "distance": d.position.distance,
            "intensity": d.intensity,
            "reflectivity": d.reflectivity,
            "epw": d.echo_pulse_width,
            "beam": d.beam_id.value,
            "object": d.object_id.value,
            "existence": d.existence_probability,
        }
        for d in lidar[0].detection
    ]
    return {
        "version": [sd.version.version_major, sd.version.version_minor, sd.version.version_patch],
        "timestamp": sd.timestamp.seconds + sd.timestamp.nanos * 1e-9,
        "sensor_id": sd.sensor_id.value,
        "mount": {"position": vec(sd.mounting_position.position),
                  "rpy": rpy(sd.mounting_position.orientation)},
        "host": {"position": vec(sd.host_vehicle_location.position),
                 "rpy": rpy(sd.host_vehicle_location.orientation)},
        "lidar_sensors": len(lidar),
        "cycle_counter": header.cycle_counter,
        "valid_detections": header.number_of_valid_detections,
        "header_mount": vec(header.mounting_position.position),
        "detections": detections,
        "sensor_views": [ground_truth(v) for v in sd.sensor_view],
    }


def main() -> None:
    path = Path(sys.argv[1])
    spec = ChannelSpecification(path=path, message_type=MessageType.SENSOR_DATA)
    with open_channel(spec) as channel:
        messages = [message(m) for m in channel]
    name = parse_osi_trace_filename(path.name)
    json.dump({"name": {k: str(v) for k, v in name.items()}, "messages": messages}, sys.stdout)


if __name__ == "__main__":
    main()
