"""Reads MCAP files with the `mcap` package and decodes their ROS 2 messages with
`mcap-ros2-support` (implementations independent of beamtrace), and prints, as JSON on
stdout, each file's header, summary, metadata records and messages in file order. A
sensor_msgs/msg/PointCloud2's data is unpacked with numpy from its PointFields alone
(offsets, datatypes), floats printed as their float32 bits so the comparison on the Rust
side is exact.

usage: read_mcap.py FILE.mcap [FILE.mcap ...]
"""

import json
import sys

import numpy as np
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

# sensor_msgs/msg/PointField datatypes.
NUMPY = {1: "i1", 2: "u1", 3: "i2", 4: "u2", 5: "i4", 6: "u4", 7: "f4", 8: "f8"}


def time(t) -> list:
    return [t.sec, t.nanosec]


def cloud(msg) -> dict:
    dtype = np.dtype(
        {
            "names": [f.name for f in msg.fields],
            "formats": [("<" if not msg.is_bigendian else ">") + NUMPY[f.datatype] for f in msg.fields],
            "offsets": [f.offset for f in msg.fields],
            "itemsize": msg.point_step,
        }
    )
    data = np.frombuffer(bytes(msg.data), dtype=dtype, count=msg.width * msg.height)
    dtypes, values = {}, {}
    for name in dtype.names:
        col = data[name]
        dtypes[name] = f"{col.dtype.kind.upper()}{col.dtype.itemsize}"
        if col.dtype.kind == "f":
            values[name] = col.astype("<f4").view("<u4").tolist()
        else:
            values[name] = col.astype(np.uint64).tolist()
    return {
        "stamp": time(msg.header.stamp),
        "frame_id": msg.header.frame_id,
        "height": msg.height,
        "width": msg.width,
        "fields": [[f.name, f.offset, f.datatype, f.count] for f in msg.fields],
        "is_bigendian": bool(msg.is_bigendian),
        "point_step": msg.point_step,
        "row_step": msg.row_step,
        "data_len": len(msg.data),
        "is_dense": bool(msg.is_dense),
        "dtypes": dtypes,
        "values": values,
    }


def tf(msg) -> dict:
    return {
        "transforms": [
            {
                "stamp": time(t.header.stamp),
                "frame_id": t.header.frame_id,
                "child_frame_id": t.child_frame_id,
                "translation": [t.transform.translation.x, t.transform.translation.y, t.transform.translation.z],
                "rotation_xyzw": [
                    t.transform.rotation.x,
                    t.transform.rotation.y,
                    t.transform.rotation.z,
                    t.transform.rotation.w,
                ],
            }
            for t in msg.transforms
        ]
    }


def imu(msg) -> dict:
    def vec(v) -> list:
        return [v.x, v.y, v.z]

    return {
        "stamp": time(msg.header.stamp),
        "frame_id": msg.header.frame_id,
        "orientation_xyzw": [msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w],
        "orientation_covariance": list(msg.orientation_covariance),
        "angular_velocity": vec(msg.angular_velocity),
        "angular_velocity_covariance": list(msg.angular_velocity_covariance),
        "linear_acceleration": vec(msg.linear_acceleration),
        "linear_acceleration_covariance": list(msg.linear_acceleration_covariance),
    }


def detections(msg) -> dict:
    def pose(p) -> dict:
        o = p.orientation
        return {"position": [p.position.x, p.position.y, p.position.z], "orientation_xyzw": [o.x, o.y, o.z, o.w]}

    return {
        "stamp": time(msg.header.stamp),
        "frame_id": msg.header.frame_id,
        "detections": [
            {
                "stamp": time(d.header.stamp),
                "frame_id": d.header.frame_id,
                "id": d.id,
                "results": [
                    {
                        "class_id": r.hypothesis.class_id,
                        "score": r.hypothesis.score,
                        "pose": pose(r.pose.pose),
                        "covariance": list(r.pose.covariance),
                    }
                    for r in d.results
                ],
                "center": pose(d.bbox.center),
                "size": [d.bbox.size.x, d.bbox.size.y, d.bbox.size.z],
            }
            for d in msg.detections
        ],
    }


def read(path: str) -> dict:
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()], validate_crcs=True)
        header = reader.get_header()
        summary = reader.get_summary()
        messages = []
        for schema, channel, message, decoded in reader.iter_decoded_messages(log_time_order=False):
            entry = {
                "topic": channel.topic,
                "schema": schema.name,
                "schema_encoding": schema.encoding,
                "message_encoding": channel.message_encoding,
                "log_time": message.log_time,
                "publish_time": message.publish_time,
                "sequence": message.sequence,
            }
            if schema.name == "sensor_msgs/msg/PointCloud2":
                entry["cloud"] = cloud(decoded)
            elif schema.name == "tf2_msgs/msg/TFMessage":
                entry["tf"] = tf(decoded)
            elif schema.name == "sensor_msgs/msg/Imu":
                entry["imu"] = imu(decoded)
            elif schema.name == "vision_msgs/msg/Detection3DArray":
                entry["detections"] = detections(decoded)
            messages.append(entry)
        stats = summary.statistics
        metadata = {m.name: dict(m.metadata) for m in reader.iter_metadata()}
        return {
            "profile": header.profile,
            "library": header.library,
            "schemas": sorted(s.name for s in summary.schemas.values()),
            "channels": sorted(c.topic for c in summary.channels.values()),
            "message_count": stats.message_count,
            "chunks": len(summary.chunk_indexes),
            "compression": sorted({c.compression for c in summary.chunk_indexes}),
            "messages": messages,
            "metadata": metadata,
        }


def main() -> None:
    json.dump({"files": [read(p) for p in sys.argv[1:]]}, sys.stdout)


if __name__ == "__main__":
    main()
