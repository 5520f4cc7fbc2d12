//! ROS 2 messages as an MCAP file carries them: `sensor_msgs/msg/PointCloud2`,
//! `tf2_msgs/msg/TFMessage`, `sensor_msgs/msg/Imu`, `rosgraph_msgs/msg/Clock` and
//! `vision_msgs/msg/Detection3DArray` serialized as CDR (little-endian, the `cdr` message encoding), and their message
//! definitions as rosbag2 stores them (`ros2msg`: the message's own definition, then each
//! type it uses after a line of 80 `=` and `MSG: package/Type`). The live topics
//! (`crate::live`) publish the same bytes over DDS and Foxglove's WebSocket protocol.

use super::fields::Scalar;
use super::objects::{ObjectLabel, OrientedBox};
use super::records::Encoding;
use super::{CloudMeta, PointCloud, Viewpoint};
use crate::model::ImuSample;
use std::io;

/// The definitions of std_msgs/Header and the builtin_interfaces/Time it holds, as
/// every schema that uses a header carries them.
macro_rules! header_definitions {
    () => {
        concat!(
            "================================================================================\n",
            "MSG: std_msgs/Header\n",
            "builtin_interfaces/Time stamp\n",
            "string frame_id\n",
            "================================================================================\n",
            "MSG: builtin_interfaces/Time\n",
            "int32 sec\n",
            "uint32 nanosec\n",
        )
    };
}

/// The definition of geometry_msgs/Quaternion (its defaults: the identity), as the
/// schemas that use one carry it.
macro_rules! quaternion_definition {
    () => {
        concat!(
            "================================================================================\n",
            "MSG: geometry_msgs/Quaternion\n",
            "float64 x 0\n",
            "float64 y 0\n",
            "float64 z 0\n",
            "float64 w 1\n",
        )
    };
}

/// The definition of geometry_msgs/Vector3, as the schemas that use one carry it.
macro_rules! vector3_definition {
    () => {
        concat!(
            "================================================================================\n",
            "MSG: geometry_msgs/Vector3\n",
            "float64 x\n",
            "float64 y\n",
            "float64 z\n",
        )
    };
}

/// The schema name and definition of `sensor_msgs/msg/PointCloud2` (ROS 2 Humble and
/// later; comments left out).
pub const POINT_CLOUD2: (&str, &str) = (
    "sensor_msgs/msg/PointCloud2",
    concat!(
        "std_msgs/Header header\n",
        "uint32 height\n",
        "uint32 width\n",
        "PointField[] fields\n",
        "bool is_bigendian\n",
        "uint32 point_step\n",
        "uint32 row_step\n",
        "uint8[] data\n",
        "bool is_dense\n",
        header_definitions!(),
        "================================================================================\n",
        "MSG: sensor_msgs/PointField\n",
        "uint8 INT8    = 1\n",
        "uint8 UINT8   = 2\n",
        "uint8 INT16   = 3\n",
        "uint8 UINT16  = 4\n",
        "uint8 INT32   = 5\n",
        "uint8 UINT32  = 6\n",
        "uint8 FLOAT32 = 7\n",
        "uint8 FLOAT64 = 8\n",
        "string name\n",
        "uint32 offset\n",
        "uint8  datatype\n",
        "uint32 count\n",
    ),
);

/// The schema name and definition of `tf2_msgs/msg/TFMessage`.
pub const TF_MESSAGE: (&str, &str) = (
    "tf2_msgs/msg/TFMessage",
    concat!(
        "geometry_msgs/TransformStamped[] transforms\n",
        "================================================================================\n",
        "MSG: geometry_msgs/TransformStamped\n",
        "std_msgs/Header header\n",
        "string child_frame_id\n",
        "Transform transform\n",
        header_definitions!(),
        "================================================================================\n",
        "MSG: geometry_msgs/Transform\n",
        "Vector3 translation\n",
        "Quaternion rotation\n",
        vector3_definition!(),
        quaternion_definition!(),
    ),
);

/// The schema name and definition of `sensor_msgs/msg/Imu`.
pub const IMU: (&str, &str) = (
    "sensor_msgs/msg/Imu",
    concat!(
        "std_msgs/Header header\n",
        "geometry_msgs/Quaternion orientation\n",
        "float64[9] orientation_covariance\n",
        "geometry_msgs/Vector3 angular_velocity\n",
        "float64[9] angular_velocity_covariance\n",
        "geometry_msgs/Vector3 linear_acceleration\n",
        "float64[9] linear_acceleration_covariance\n",
        header_definitions!(),
        quaternion_definition!(),
        vector3_definition!(),
    ),
);

/// The schema name and definition of `rosgraph_msgs/msg/Clock`, the simulation time
/// that nodes with `use_sim_time` follow.
pub const CLOCK: (&str, &str) = (
    "rosgraph_msgs/msg/Clock",
    concat!(
        "builtin_interfaces/Time clock\n",
        "================================================================================\n",
        "MSG: builtin_interfaces/Time\n",
        "int32 sec\n",
        "uint32 nanosec\n",
    ),
);

/// The schema name and definition of `vision_msgs/msg/Detection3DArray` (vision_msgs
/// 4.x, ROS 2 Humble and later; comments left out), the 3D boxes that perception nodes
/// publish and RViz and Foxglove draw.
pub const DETECTION3D_ARRAY: (&str, &str) = (
    "vision_msgs/msg/Detection3DArray",
    concat!(
        "std_msgs/Header header\n",
        "Detection3D[] detections\n",
        header_definitions!(),
        "================================================================================\n",
        "MSG: vision_msgs/Detection3D\n",
        "std_msgs/Header header\n",
        "ObjectHypothesisWithPose[] results\n",
        "BoundingBox3D bbox\n",
        "string id\n",
        "================================================================================\n",
        "MSG: vision_msgs/ObjectHypothesisWithPose\n",
        "ObjectHypothesis hypothesis\n",
        "geometry_msgs/PoseWithCovariance pose\n",
        "================================================================================\n",
        "MSG: vision_msgs/ObjectHypothesis\n",
        "string class_id\n",
        "float64 score\n",
        "================================================================================\n",
        "MSG: geometry_msgs/PoseWithCovariance\n",
        "Pose pose\n",
        "float64[36] covariance\n",
        "================================================================================\n",
        "MSG: geometry_msgs/Pose\n",
        "Point position\n",
        "Quaternion orientation\n",
        "================================================================================\n",
        "MSG: geometry_msgs/Point\n",
        "float64 x\n",
        "float64 y\n",
        "float64 z\n",
        quaternion_definition!(),
        "================================================================================\n",
        "MSG: vision_msgs/BoundingBox3D\n",
        "geometry_msgs/Pose center\n",
        "geometry_msgs/Vector3 size\n",
        vector3_definition!(),
    ),
);

/// sensor_msgs/PointField's datatype of a scalar.
pub(crate) fn point_field_type(s: Scalar) -> u8 {
    match s {
        Scalar::U8 => 2,
        Scalar::U16 => 4,
        Scalar::U32 => 6,
        Scalar::F32 => 7,
    }
}

/// A CDR message being written: the 4-byte encapsulation header (CDR, little-endian),
/// then the fields, each aligned to its own size counted from after that header.
struct Cdr {
    buf: Vec<u8>,
}

/// Bytes before the message body.
const ENCAPSULATION: [u8; 4] = [0x00, 0x01, 0x00, 0x00];

impl Cdr {
    fn with_capacity(n: usize) -> Self {
        let mut buf = Vec::with_capacity(n + 64);
        buf.extend_from_slice(&ENCAPSULATION);
        Cdr { buf }
    }

    fn align(&mut self, n: usize) {
        let body = self.buf.len() - ENCAPSULATION.len();
        let pad = (n - body % n) % n;
        self.buf.resize(self.buf.len() + pad, 0);
    }

    fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    fn u32(&mut self, v: u32) {
        self.align(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    fn i32(&mut self, v: i32) {
        self.align(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    fn f64(&mut self, v: f64) {
        self.align(8);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A string: its length with the terminating NUL, the bytes, the NUL.
    fn string(&mut self, s: &str) {
        self.u32(s.len() as u32 + 1);
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
    }

    /// geometry_msgs/Pose of a box: its centre, then its rotation as x y z w.
    fn pose(&mut self, b: &OrientedBox) {
        let q = b.rotation;
        for v in b.center.to_array().into_iter().chain([q.x, q.y, q.z, q.w]) {
            self.f64(f64::from(v));
        }
    }

    /// std_msgs/Header: the stamp (builtin_interfaces/Time) and the frame id.
    fn header(&mut self, stamp_ns: u64, frame_id: &str) {
        let (sec, nanosec) = ros_time(stamp_ns);
        self.i32(sec);
        self.u32(nanosec);
        self.string(frame_id);
    }
}

/// builtin_interfaces/Time of `ns` nanoseconds: whole seconds (at most i32::MAX, some 68
/// years of scenario time) and the nanoseconds after them.
fn ros_time(ns: u64) -> (i32, u32) {
    let sec = i32::try_from(ns / 1_000_000_000).unwrap_or(i32::MAX);
    (sec, (ns % 1_000_000_000) as u32)
}

/// A size that must fit the message's 32-bit field; the error names it.
fn u32_of(n: usize, what: &str) -> io::Result<u32> {
    u32::try_from(n).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{what} is {n}, more than a PointCloud2 holds (2^32 − 1)"),
        )
    })
}

/// `cloud` as a CDR `sensor_msgs/msg/PointCloud2`: the fields of `meta` as PointFields,
/// packed little-endian records (the same bytes PCD's DATA binary holds), WIDTH × HEIGHT
/// as `meta` says (organized clouds keep their NaN cells), `is_dense` false when any
/// point has a non-finite x, y or z.
pub(crate) fn point_cloud2(
    stamp_ns: u64,
    frame_id: &str,
    meta: &CloudMeta,
    cloud: &PointCloud,
) -> io::Result<Vec<u8>> {
    let records = meta.records(false);
    let point_step = records.size();
    let data_len = point_step * cloud.points.len();
    let (width, height) = meta.size(cloud.points.len());
    let mut m = Cdr::with_capacity(data_len);
    m.header(stamp_ns, frame_id);
    m.u32(u32_of(height, "the height")?);
    m.u32(u32_of(width, "the width")?);
    let fields = meta.fields.fields();
    m.u32(fields.len() as u32);
    let mut offset = 0;
    for f in fields {
        m.string(f.name);
        m.u32(offset as u32);
        m.u8(point_field_type(f.scalar));
        m.u32(1);
        offset += f.scalar.size();
    }
    m.u8(0); // is_bigendian
    m.u32(point_step as u32);
    m.u32(u32_of(point_step * width, "the row step")?);
    m.u32(u32_of(data_len, "the data size")?);
    records.write(&mut m.buf, &cloud.points, Encoding::Binary)?;
    let dense = cloud
        .points
        .iter()
        .all(|p| p.x.is_finite() && p.y.is_finite() && p.z.is_finite());
    m.u8(u8::from(dense));
    Ok(m.buf)
}

/// A CDR `tf2_msgs/msg/TFMessage` of one transform: `child` (the sensor) in `parent`
/// (the world) at `pose` — the pose of the child's origin and axes in the parent, as TF
/// gives a transform.
pub(crate) fn tf_message(stamp_ns: u64, parent: &str, child: &str, pose: &Viewpoint) -> Vec<u8> {
    transforms_message(stamp_ns, parent, &[(child, *pose)])
}

/// A CDR `tf2_msgs/msg/TFMessage` of several transforms from one `parent`, each child
/// at its pose in it (a rig's mounts on `/tf_static`).
pub(crate) fn transforms_message(
    stamp_ns: u64,
    parent: &str,
    children: &[(&str, Viewpoint)],
) -> Vec<u8> {
    let mut m = Cdr::with_capacity(128 * children.len().max(1));
    m.u32(children.len() as u32);
    for (child, pose) in children {
        m.header(stamp_ns, parent);
        m.string(child);
        for t in pose.translation {
            m.f64(f64::from(t));
        }
        // geometry_msgs/Quaternion is x y z w; the viewpoint's is w x y z.
        let [w, x, y, z] = pose.rotation;
        for q in [x, y, z, w] {
            m.f64(f64::from(q));
        }
    }
    m.buf
}

/// A CDR `vision_msgs/msg/Detection3DArray` of `objects` in `frame_id`, stamped
/// `stamp_ns`: per object its box (`sensor_box`, or `world_box` when `world`: the
/// object at its points' time), its id the points' `instance` as text, and one
/// hypothesis, its class name with score 1 (ground truth) at the box's pose with a zero
/// covariance (an exact pose).
pub(crate) fn detections_message(
    stamp_ns: u64,
    frame_id: &str,
    objects: &[ObjectLabel],
    world: bool,
) -> Vec<u8> {
    let mut m = Cdr::with_capacity(64 + 700 * objects.len());
    m.header(stamp_ns, frame_id);
    m.u32(u32::try_from(objects.len()).unwrap_or(u32::MAX));
    for o in objects {
        let b = if world { &o.world_box } else { &o.sensor_box };
        m.header(stamp_ns, frame_id);
        m.u32(1);
        m.string(o.class_name());
        m.f64(1.0);
        m.pose(b);
        for _ in 0..36 {
            m.f64(0.0);
        }
        m.pose(b);
        for v in b.size.to_array() {
            m.f64(f64::from(v));
        }
        m.string(&o.id.to_string());
    }
    m.buf
}

/// A CDR `rosgraph_msgs/msg/Clock` at `ns` nanoseconds.
pub(crate) fn clock_message(ns: u64) -> Vec<u8> {
    let mut m = Cdr::with_capacity(8);
    let (sec, nanosec) = ros_time(ns);
    m.i32(sec);
    m.u32(nanosec);
    m.buf
}

/// A CDR `sensor_msgs/msg/Imu` of one sample in `frame_id`: angular velocity (rad/s)
/// and linear acceleration (m/s², gravity's reaction included) with diagonal
/// covariances `variances` (gyroscope, accelerometer); no orientation, which ROS says by
/// −1 in the first element of its covariance (the quaternion is the identity).
pub(crate) fn imu_message(
    stamp_ns: u64,
    frame_id: &str,
    sample: &ImuSample,
    variances: [f64; 2],
) -> Vec<u8> {
    let mut m = Cdr::with_capacity(400);
    m.header(stamp_ns, frame_id);
    for q in [0.0, 0.0, 0.0, 1.0] {
        m.f64(q);
    }
    let diagonal = |v: f64| [v, 0.0, 0.0, 0.0, v, 0.0, 0.0, 0.0, v];
    let mut none = [0.0; 9];
    none[0] = -1.0;
    let parts = [
        (None, none),
        (Some(sample.gyro), diagonal(variances[0])),
        (Some(sample.accel), diagonal(variances[1])),
    ];
    for (vector, covariance) in parts {
        for v in vector.map(|v| v.to_array()).into_iter().flatten() {
            m.f64(v);
        }
        for c in covariance {
            m.f64(c);
        }
    }
    m.buf
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of a TFMessage, laid out by hand from the CDR rules: a u32 sequence
    /// length, the header (i32 sec, u32 nanosec, string), the child frame string, then
    /// seven float64 aligned to 8 from the start of the body.
    #[test]
    fn tf_message_bytes_follow_cdr() {
        let pose = Viewpoint {
            translation: [1.0, 2.0, 3.0],
            rotation: [0.5, 0.5, -0.5, 0.5],
        };
        let got = tf_message(2_500_000_000, "world", "lidar", &pose);
        let mut want: Vec<u8> = vec![0, 1, 0, 0];
        want.extend(1u32.to_le_bytes());
        want.extend(2i32.to_le_bytes());
        want.extend(500_000_000u32.to_le_bytes());
        want.extend(6u32.to_le_bytes());
        want.extend(b"world\0");
        want.extend([0, 0]); // to 4
        want.extend(6u32.to_le_bytes());
        want.extend(b"lidar\0");
        // The body is 34 bytes so far: padded to 40 for the float64s.
        want.extend([0; 6]);
        for v in [1.0f64, 2.0, 3.0, 0.5, -0.5, 0.5, 0.5] {
            want.extend(v.to_le_bytes());
        }
        assert_eq!(got, want);
    }

    /// rosgraph_msgs/Clock is a bare builtin_interfaces/Time: i32 sec, u32 nanosec.
    #[test]
    fn clock_message_bytes_follow_cdr() {
        let mut want: Vec<u8> = vec![0, 1, 0, 0];
        want.extend(7i32.to_le_bytes());
        want.extend(250_000_000u32.to_le_bytes());
        assert_eq!(clock_message(7_250_000_000), want);
    }

    #[test]
    fn ros_time_splits_seconds_and_nanoseconds() {
        assert_eq!(ros_time(0), (0, 0));
        assert_eq!(ros_time(100_000_000), (0, 100_000_000));
        assert_eq!(ros_time(3_000_000_001), (3, 1));
        assert_eq!(ros_time(u64::MAX).0, i32::MAX);
    }
}
