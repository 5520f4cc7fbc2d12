//! ROS 2 topics over DDS with RustDDS, a DDS/RTPS implementation in pure Rust.
//!
//! ROS 2 maps a topic `/a/b` of type `pkg/msg/T` to the DDS topic `rt/a/b` of type
//! `pkg::msg::dds_::T_` (design article "Topic and Service name mapping to DDS"), whose
//! samples are the message's CDR bytes. The messages are beamtrace's own encodings
//! (`output::ros2`, the bytes a bag holds), so they are handed to RustDDS as bytes: a
//! serializer adapter that passes them through. `ros2-client`, the ROS 2 library on top
//! of RustDDS, publishes serde types only, which would have meant every message type
//! written a second time; it would add the ROS graph's node entry (`ros2 node list`),
//! which topics do not need (`ros2 topic list/echo/hz` and any subscriber match on the
//! DDS topics alone).

use super::{LiveError, LiveReport, Ros2Options, Topic, TopicQos, Transport};
use crate::output::FrameMessage;
use rustdds::no_key::{DataWriter, SerializerAdapter};
use rustdds::policy::{Durability, History, Reliability};
use rustdds::{
    DataWriterStatus, DomainParticipant, DomainParticipantBuilder, Publisher, QosPolicies,
    QosPolicyBuilder, RepresentationIdentifier, StatusEvented, TopicKind,
};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};

/// A message's CDR body (after the 4-byte encapsulation header, which RustDDS writes
/// itself from the adapter's encoding).
struct CdrBody(rustdds::bytes::Bytes);

/// Passes [`CdrBody`]'s bytes through as little-endian CDR.
struct PassThrough;

impl SerializerAdapter<CdrBody> for PassThrough {
    type Error = std::convert::Infallible;

    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::CDR_LE
    }

    fn to_bytes(value: &CdrBody) -> Result<rustdds::bytes::Bytes, Self::Error> {
        Ok(value.0.clone())
    }
}

/// The DDS topic of a ROS 2 topic: `rt` and the fully qualified name.
pub fn dds_topic(ros_topic: &str) -> String {
    format!("rt{ros_topic}")
}

/// The DDS type of a ROS 2 message type: `pkg/msg/T` → `pkg::msg::dds_::T_`.
pub fn dds_type(ros_type: &str) -> String {
    let mut parts: Vec<&str> = ros_type.split('/').collect();
    let name = parts.pop().unwrap_or_default();
    format!("{}::dds_::{name}_", parts.join("::"))
}

/// A writer per topic, made when the topic's first message comes.
struct Writer {
    writer: DataWriter<CdrBody, PassThrough>,
    /// Subscriptions matched now.
    matched: i32,
}

/// A DDS participant publishing ROS 2 topics.
pub struct DdsPublisher {
    domain: u16,
    // Dropped after the writers (field order), so they leave the domain first.
    writers: HashMap<String, Writer>,
    publisher: Publisher,
    participant: DomainParticipant,
}

impl DdsPublisher {
    /// Joins the domain (only the loopback interface when the options say so).
    pub fn new(o: &Ros2Options) -> Result<Self, LiveError> {
        let dds = |e: &dyn std::fmt::Display| LiveError::Dds {
            domain: o.domain_id,
            message: e.to_string(),
        };
        let mut builder = DomainParticipantBuilder::new(o.domain_id);
        if o.localhost_only {
            builder = builder.with_only_networks([IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        }
        let participant = builder.build().map_err(|e| dds(&e))?;
        let publisher = participant
            .create_publisher(&QosPolicies::qos_none())
            .map_err(|e| dds(&e))?;
        Ok(DdsPublisher {
            domain: o.domain_id,
            writers: HashMap::new(),
            publisher,
            participant,
        })
    }

    fn writer(&mut self, topic: &str, type_name: &str) -> Result<&mut Writer, LiveError> {
        if !self.writers.contains_key(topic) {
            let dds = |e: &dyn std::fmt::Display| LiveError::Dds {
                domain: self.domain,
                message: format!("topic {topic}: {e}"),
            };
            let qos = qos(TopicQos::of(topic, type_name));
            let t = self
                .participant
                .create_topic(
                    dds_topic(topic),
                    dds_type(type_name),
                    &qos,
                    TopicKind::NoKey,
                )
                .map_err(|e| dds(&e))?;
            let writer = self
                .publisher
                .create_datawriter_no_key::<CdrBody, PassThrough>(&t, Some(qos))
                .map_err(|e| dds(&e))?;
            self.writers
                .insert(topic.to_string(), Writer { writer, matched: 0 });
        }
        self.writers.get_mut(topic).ok_or(LiveError::Gone)
    }
}

/// The QoS of a topic: sensor data as `rclcpp::SensorDataQoS` (best effort, keep last
/// 5, volatile); `/tf` as tf2's broadcaster (reliable, keep last 100); `/tf_static`
/// as its static broadcaster (reliable, transient local, keep last 1); `/clock` as
/// simulators publish it (reliable, keep last 1; best-effort readers match it too).
/// Reliable writers never wait for acknowledgements: a write that would is refused.
/// An IMU's writer keeps its last 200 samples (2 s at 100 Hz) rather than 5: RustDDS
/// sends from its own thread, and samples written in a burst (as fast as possible, or
/// after a slow frame) would otherwise be replaced before they left. History depth is
/// no part of QoS matching, so readers see sensor-data QoS all the same.
fn qos(kind: TopicQos) -> QosPolicies {
    let reliable = Reliability::Reliable {
        max_blocking_time: rustdds::Duration::ZERO,
    };
    let (reliability, depth, durability) = match kind {
        TopicQos::SensorData => (Reliability::BestEffort, 5, Durability::Volatile),
        TopicQos::Imu => (Reliability::BestEffort, 200, Durability::Volatile),
        TopicQos::Tf => (reliable, 100, Durability::Volatile),
        TopicQos::TfStatic => (reliable, 1, Durability::TransientLocal),
        TopicQos::Clock => (reliable, 1, Durability::Volatile),
    };
    QosPolicyBuilder::new()
        .reliability(reliability)
        .history(History::KeepLast { depth })
        .durability(durability)
        .build()
}

impl Transport for DdsPublisher {
    fn advertise(&mut self, (topic, (type_name, _)): &Topic) -> Result<(), LiveError> {
        self.writer(topic, type_name).map(drop)
    }

    fn publish(&mut self, m: &FrameMessage) -> Result<bool, LiveError> {
        let body = rustdds::bytes::Bytes::copy_from_slice(m.data().get(4..).unwrap_or_default());
        let domain = self.domain;
        let w = self.writer(m.topic(), m.type_name())?;
        while let Some(status) = w.writer.try_recv_status() {
            if let DataWriterStatus::PublicationMatched { current, .. } = status {
                w.matched = current.count();
            }
        }
        match w.writer.write(CdrBody(body), None) {
            Ok(()) => Ok(true),
            Err(rustdds::dds::result::WriteError::WouldBlock { .. }) => Ok(false),
            Err(e) => Err(LiveError::Dds {
                domain,
                message: format!("writing {}: {e}", m.topic()),
            }),
        }
    }

    fn report(&self, report: &mut LiveReport) {
        let matched = self.writers.values().map(|w| w.matched.max(0) as usize);
        report.dds_matched = Some(matched.sum());
    }
}

/// How long the participant stays after the last write: RustDDS sends from its own
/// thread, and the last samples must leave before the participant goes.
const LINGER: std::time::Duration = std::time::Duration::from_millis(300);

impl Drop for DdsPublisher {
    fn drop(&mut self) {
        if !self.writers.is_empty() {
            std::thread::sleep(LINGER);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names ROS 2's DDS middlewares give (rmw_cyclonedds, rmw_fastrtps): what
    /// `ros2 topic echo` and the test's Cyclone DDS reader look for.
    #[test]
    fn ros_names_map_to_dds_as_rmw_does() {
        assert_eq!(dds_topic("/vlp_16/points"), "rt/vlp_16/points");
        assert_eq!(dds_topic("/tf_static"), "rt/tf_static");
        assert_eq!(
            dds_type("sensor_msgs/msg/PointCloud2"),
            "sensor_msgs::msg::dds_::PointCloud2_"
        );
        assert_eq!(
            dds_type("rosgraph_msgs/msg/Clock"),
            "rosgraph_msgs::msg::dds_::Clock_"
        );
    }
}
