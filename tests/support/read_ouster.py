"""Decodes Ouster lidar packets with ouster-sdk, the independent decoder of the Ouster
packet tests, and prints what it read as JSON on stdout.

Usage: read_ouster.py OUT_DIR METADATA.json PACKETS.bin [METADATA.json PACKETS.bin ...]

PACKETS.bin holds UDP payloads, each preceded by its length as a little-endian u32.
For each pair the output holds the metadata as ouster-sdk parsed it (and the issues
its validator found), each packet's header as ouster-sdk reads it, and each frame the
FrameBatcher assembled: column headers, and the files in OUT_DIR that hold its channel
fields (little-endian int64, staggered, row-major, rows = channels; and the first
range destaggered by ouster-sdk's `destagger`, RANGE_DESTAGGERED) and the XYZLut's
points of each return (little-endian float64 x y z per pixel, metres, Ouster's
sensor frame).
"""

import json
import os
import struct
import sys

import numpy as np
from ouster.sdk import core


def read_payloads(path):
    with open(path, "rb") as f:
        data = f.read()
    out, at = [], 0
    while at < len(data):
        (n,) = struct.unpack_from("<I", data, at)
        out.append(data[at + 4 : at + 4 + n])
        at += 4 + n
    return out


def describe_info(info, issues):
    fmt = info.format
    return {
        "prod_line": info.prod_line,
        "sn": str(info.sn),
        "init_id": info.init_id,
        "fw_rev": info.fw_rev,
        "image_rev": info.image_rev,
        "prod_pn": info.prod_pn,
        "lidar_mode": str(info.config.lidar_mode),
        "udp_profile_lidar": str(fmt.udp_profile_lidar),
        "columns_per_frame": fmt.columns_per_frame,
        "columns_per_packet": fmt.columns_per_packet,
        "pixels_per_column": fmt.pixels_per_column,
        "column_window": [int(c) for c in fmt.column_window],
        "pixel_shift_by_row": [int(s) for s in fmt.pixel_shift_by_row],
        "beam_altitude_angles": [float(a) for a in info.beam_altitude_angles],
        "beam_azimuth_angles": [float(a) for a in info.beam_azimuth_angles],
        "beam_to_lidar_transform": np.asarray(info.beam_to_lidar_transform).ravel().tolist(),
        "lidar_to_sensor_transform": np.asarray(info.lidar_to_sensor_transform).ravel().tolist(),
        "udp_dest": info.config.udp_dest,
        "udp_port_lidar": info.config.udp_port_lidar,
        "critical": [str(i) for i in issues.critical],
        "warning": [str(i) for i in issues.warning],
    }


def describe_packet(p, info, payload):
    return {
        "size": len(payload),
        "valid": str(p.validate(info)),
        "packet_type": p.packet_type(),
        "frame_id": p.frame_id(),
        "init_id": p.init_id(),
        "prod_sn": p.prod_sn(),
        "crc": p.crc(),
        "calculated_crc": p.calculate_crc(),
        "thermal_shutdown": int(p.thermal_shutdown()),
        "shot_limiting": int(p.shot_limiting()),
    }


def save(array, dtype, path):
    np.ascontiguousarray(array, dtype=dtype).tofile(path)
    return path


def describe_frame(frame, info, xyzlut, prefix):
    fields = {}
    for name in frame.fields:
        a = frame.field(name)
        if a.ndim == 2:
            fields[name] = save(a, "<i8", f"{prefix}_{name}.i64")
    # The first return's range as ouster-sdk destaggers it (pixel_shift_by_row).
    destaggered = core.destagger(info, frame.field("RANGE"))
    fields["RANGE_DESTAGGERED"] = save(destaggered, "<i8", f"{prefix}_RANGE_destaggered.i64")
    xyz = {}
    for name in ("RANGE", "RANGE2"):
        if frame.has_field(name):
            points = xyzlut(frame.field(name)).reshape(-1, 3)
            xyz[name] = save(points, "<f8", f"{prefix}_{name}_xyz.f64")
    return {
        "frame_id": frame.frame_id,
        "timestamp": frame.timestamp.tolist(),
        "measurement_id": frame.measurement_id.tolist(),
        "status": frame.status.tolist(),
        "fields": fields,
        "xyz": xyz,
    }


def decode(out_dir, case, meta_path, packets_path):
    with open(meta_path) as f:
        text = f.read()
    info, issues = core.parse_and_validate_metadata(text)
    if info is None:
        return {"info": None, "critical": [str(i) for i in issues.critical]}
    pf = core.PacketFormat(info)
    batcher = core.FrameBatcher(info)
    xyzlut = core.XYZLut(info)
    packets, frames = [], []
    frame = core.LidarFrame(info)
    for payload in read_payloads(packets_path):
        if len(payload) != pf.lidar_packet_size:
            # The packet cannot be read as this format's; the test sees the size.
            packets.append({"size": len(payload)})
            continue
        p = core.LidarPacket(pf)
        p.buf[:] = np.frombuffer(payload, dtype=np.uint8)
        packets.append(describe_packet(p, info, payload))
        if batcher.batch(p, frame):
            prefix = os.path.join(out_dir, f"case{case}_frame{len(frames)}")
            frames.append(describe_frame(frame, info, xyzlut, prefix))
            frame = core.LidarFrame(info)
    return {
        "info": describe_info(info, issues),
        "packet_size": pf.lidar_packet_size,
        "packets": packets,
        "frames": frames,
    }


def main():
    out_dir, args = sys.argv[1], sys.argv[2:]
    out = [decode(out_dir, i // 2, args[i], args[i + 1]) for i in range(0, len(args), 2)]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
