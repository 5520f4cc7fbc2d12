"""An independent ROS 2 subscriber: Eclipse Cyclone DDS (its Python binding, with its own
C library) with the ROS 2 message types declared here as IDL structs, as rmw maps them
to DDS (topic `rt/<name>`, type `<pkg>::msg::dds_::<Type>_`). It listens on the loopback
interface only, collects what beamtrace publishes, checks it against files that
`beamtrace run` wrote for the same scene, sensor and seed, and prints a JSON summary.

usage: ros2_subscriber.py --domain D --points TOPIC --pcd-dir DIR --rate HZ
         [--imu TOPIC --imu-csv FILE] [--frames N] [--ready FILE] [--timeout S]
         [--idle S] [--read-nothing]

- each PointCloud2 is decoded with numpy from its PointFields alone and compared, field
  by field as bits, with the PCD of the frame its stamp names (read by pypcd4; stamps are
  scenario time under --sim-time, so frame = stamp · rate);
- /tf_static is read by a reader made only after the first cloud came (late joining:
  it gets the transforms only if the publisher keeps them, transient local);
- /clock's values in arrival order; IMU messages against imu.csv's rows (same time).
"""

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass


def loopback_only_config() -> str:
    # Discovery and data on 127.0.0.1 only: unicast discovery of the well-known ports,
    # no multicast. A large receive buffer, since a cloud is many 64 KiB datagrams.
    return (
        "<CycloneDDS><Domain Id='any'><General>"
        "<Interfaces><NetworkInterface address='127.0.0.1'/></Interfaces>"
        "<AllowMulticast>false</AllowMulticast></General>"
        "<Discovery><ParticipantIndex>auto</ParticipantIndex>"
        "<MaxAutoParticipantIndex>30</MaxAutoParticipantIndex>"
        "<Peers><Peer address='127.0.0.1'/></Peers></Discovery>"
        "<Internal><SocketReceiveBufferSize min='default' max='4MB'/></Internal>"
        "</Domain></CycloneDDS>"
    )


os.environ["CYCLONEDDS_URI"] = loopback_only_config()

from cyclonedds.core import Policy, Qos  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.idl import IdlStruct  # noqa: E402
from cyclonedds.idl.annotations import final  # noqa: E402
from cyclonedds.idl.types import array, float64, int32, sequence, uint8, uint32  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcd_compare import compare_cloud  # noqa: E402


# The ROS 2 messages (Humble and later), as their .msg files define them.
@final
@dataclass
class Time(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: int32
    nanosec: uint32


@final
@dataclass
class Header(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    stamp: Time
    frame_id: str


@final
@dataclass
class PointField(IdlStruct, typename="sensor_msgs::msg::dds_::PointField_"):
    name: str
    offset: uint32
    datatype: uint8
    count: uint32


@final
@dataclass
class PointCloud2(IdlStruct, typename="sensor_msgs::msg::dds_::PointCloud2_"):
    header: Header
    height: uint32
    width: uint32
    fields: sequence[PointField]
    is_bigendian: bool
    point_step: uint32
    row_step: uint32
    data: sequence[uint8]
    is_dense: bool


@final
@dataclass
class Vector3(IdlStruct, typename="geometry_msgs::msg::dds_::Vector3_"):
    x: float64
    y: float64
    z: float64


@final
@dataclass
class Quaternion(IdlStruct, typename="geometry_msgs::msg::dds_::Quaternion_"):
    x: float64
    y: float64
    z: float64
    w: float64


@final
@dataclass
class Transform(IdlStruct, typename="geometry_msgs::msg::dds_::Transform_"):
    translation: Vector3
    rotation: Quaternion


@final
@dataclass
class TransformStamped(IdlStruct, typename="geometry_msgs::msg::dds_::TransformStamped_"):
    header: Header
    child_frame_id: str
    transform: Transform


@final
@dataclass
class TFMessage(IdlStruct, typename="tf2_msgs::msg::dds_::TFMessage_"):
    transforms: sequence[TransformStamped]


@final
@dataclass
class Imu(IdlStruct, typename="sensor_msgs::msg::dds_::Imu_"):
    header: Header
    orientation: Quaternion
    orientation_covariance: array[float64, 9]
    angular_velocity: Vector3
    angular_velocity_covariance: array[float64, 9]
    linear_acceleration: Vector3
    linear_acceleration_covariance: array[float64, 9]


@final
@dataclass
class Clock(IdlStruct, typename="rosgraph_msgs::msg::dds_::Clock_"):
    clock: Time


BEST_EFFORT = Qos(Policy.Reliability.BestEffort, Policy.History.KeepLast(1000))
TRANSIENT_LOCAL = Qos(
    Policy.Reliability.Reliable(duration(seconds=1)),
    Policy.Durability.TransientLocal,
    Policy.History.KeepLast(1),
)
RELIABLE = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(1000))


def ns(t: Time) -> int:
    return t.sec * 1_000_000_000 + t.nanosec


def take(reader, kind, n):
    """The valid samples a reader holds (a writer leaving sends invalid ones)."""
    return [m for m in reader.take(N=n) if isinstance(m, kind)]


def read_imu_csv(path: str) -> dict:
    rows = {}
    with open(path) as f:
        next(f)
        for line in f:
            t, ax, ay, az, gx, gy, gz = (float(v) for v in line.strip().split(","))
            rows[round(t * 1e9)] = (ax, ay, az, gx, gy, gz)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--domain", type=int, required=True)
    ap.add_argument("--points", required=True)
    ap.add_argument("--pcd-dir", required=True)
    ap.add_argument("--rate", type=float, required=True)
    ap.add_argument("--imu")
    ap.add_argument("--imu-csv")
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--ready")
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--idle", type=float, default=8)
    ap.add_argument("--read-nothing", action="store_true")
    a = ap.parse_args()

    dp = DomainParticipant(a.domain)
    points = DataReader(dp, Topic(dp, f"rt{a.points}", PointCloud2), qos=BEST_EFFORT)
    clock = DataReader(dp, Topic(dp, "rt/clock", Clock), qos=BEST_EFFORT)
    tf = DataReader(dp, Topic(dp, "rt/tf", TFMessage), qos=RELIABLE)
    imu = DataReader(dp, Topic(dp, f"rt{a.imu}", Imu), qos=BEST_EFFORT) if a.imu else None
    tf_static_topic = Topic(dp, "rt/tf_static", TFMessage)
    tf_static = None
    if a.ready:
        open(a.ready, "w").close()

    clouds, clocks, imus, statics, tfs = [], [], [], [], 0
    begun = last = time.monotonic()
    while time.monotonic() - begun < a.timeout:
        got = False
        if not a.read_nothing:
            for msg in take(points, PointCloud2, 100):
                got = True
                frame = round(ns(msg.header.stamp) / 1e9 * a.rate)
                pcd = os.path.join(a.pcd_dir, f"frame_{frame:06d}.pcd")
                fields = [(f.name, f.offset, f.datatype) for f in msg.fields]
                layout = (fields, msg.is_bigendian, msg.point_step, msg.width, msg.height)
                same = compare_cloud(layout, bytes(msg.data), pcd)
                clouds.append({"frame": frame, "frame_id": msg.header.frame_id, **same})
                if tf_static is None:
                    # Late joining: made after the static transforms were published.
                    tf_static = DataReader(dp, tf_static_topic, qos=TRANSIENT_LOCAL)
            for msg in take(clock, Clock, 1000):
                got = True
                clocks.append(ns(msg.clock))
            for msg in take(tf, TFMessage, 1000):
                got = True
                tfs += len(msg.transforms)
            if imu is not None:
                for msg in take(imu, Imu, 1000):
                    got = True
                    v, w = msg.linear_acceleration, msg.angular_velocity
                    imus.append((ns(msg.header.stamp), msg.header.frame_id, (v.x, v.y, v.z, w.x, w.y, w.z)))
            if tf_static is not None:
                for msg in take(tf_static, TFMessage, 10):
                    got = True
                    for t in msg.transforms:
                        tr, q = t.transform.translation, t.transform.rotation
                        statics.append([t.header.frame_id, t.child_frame_id, [tr.x, tr.y, tr.z], [q.x, q.y, q.z, q.w]])
        now = time.monotonic()
        if got:
            last = now
        done = len(clouds) >= a.frames and (tf_static is None or statics)
        if done or (now - last > a.idle and (clouds or a.read_nothing) and now - begun > a.idle):
            break
        time.sleep(0.005)

    summary = {"clouds": clouds, "clock": clocks, "tf_static": statics, "tf_transforms": tfs}
    if a.imu_csv:
        rows = read_imu_csv(a.imu_csv)
        mismatch = [m for m in imus if rows.get(m[0]) != m[2]]
        summary["imu"] = {
            "received": len(imus),
            "rows": len(rows),
            "frame_ids": sorted({m[1] for m in imus}),
            "mismatch": [[m[0], list(m[2]), list(rows.get(m[0], ()))] for m in mismatch[:5]],
            "mismatched": len(mismatch),
        }
    json.dump(summary, sys.stdout)


if __name__ == "__main__":
    main()
