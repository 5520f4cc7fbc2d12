//! A run's packets: encoded on the frame loop's thread, sent or written by the sender's.

use super::host_cpu::HostThreads;
use super::http::HttpApi;
use super::sender::{FramePackets, PacketSinks, Redirect, Sender};
use super::{HttpReport, JobError, JobReport, PacketOutput, SenderReport};
use crate::output::packets::{
    LivoxDevice, LivoxDeviceReport, Pacing, Packet, PacketEncoder, PcapOptions, UdpSink,
    LIVOX_HOST_IMU_PORT, LIVOX_HOST_POINT_PORT, LIVOX_IMU_PORT, LIVOX_POINT_PORT,
};
use crate::output::write_atomic;
use crate::sensor::Sensor;
use std::net::{SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

/// The frames' packets: the encoder on this thread, the writer on its own.
pub(super) struct PacketStream {
    pub(super) encoder: Box<dyn PacketEncoder>,
    sender: Sender,
    real_time: bool,
    /// Frames simulated but held back until all are (`PacketOutput::preload`).
    preloaded: Option<Vec<FramePackets>>,
    /// In real time: when the sensor's clock started, which is when the first frame's
    /// packets were ready (start-up and the first frame's warm-up are not the stream's).
    pub(super) clock: Option<Instant>,
    /// In real time: how long the last frame took from its submission until its packets
    /// were ready (after the first, whose warm-up is no guide), so that frames that
    /// could not be ready before they are due are not simulated at all.
    pub(super) ready_after: Duration,
    /// The Ouster HTTP API, whose clients may change where the packets go.
    http: Option<HttpApi>,
    /// The Livox device, whose host may change where the data goes and stop it.
    livox: Option<LivoxDevice>,
}

/// What a stream's packets' servers report at its end.
pub(super) struct Served {
    pub sent: SenderReport,
    pub http: Option<HttpReport>,
    pub livox: Option<LivoxDeviceReport>,
}

impl PacketStream {
    pub(super) fn start(
        p: &PacketOutput,
        encoder: Box<dyn PacketEncoder>,
        http: Option<HttpApi>,
        host: &HostThreads,
    ) -> Result<Self, JobError> {
        let data_port = p.format.data_port(p.udp);
        let mut udp = p
            .udp
            .map(|to| UdpSink::new(to).map(|sink| sink.with_data_port(data_port)))
            .transpose()
            .map_err(JobError::Sink)?;
        let livox = livox_device(p, &mut udp)?;
        let pcap = p.pcap.clone().map(|path| {
            let options = PcapOptions {
                start: p.start,
                ..PcapOptions::default()
            };
            (path, options)
        });
        Ok(PacketStream {
            encoder,
            sender: Sender::spawn(PacketSinks { udp, pcap }, host.clone())?,
            real_time: p.real_time,
            preloaded: p.preload.then(Vec::new),
            clock: None,
            ready_after: Duration::ZERO,
            http,
            livox,
        })
    }

    /// Sends a frame's packets, or holds them while preloading.
    pub(super) fn send(
        &mut self,
        packets: Vec<Packet>,
        submitted: Instant,
    ) -> Result<(), JobError> {
        if let Some(held) = &mut self.preloaded {
            held.push(FramePackets {
                packets,
                submitted,
                ready: Instant::now(),
                pacing: Pacing::AsFastAsPossible,
                redirect: None,
            });
            return Ok(());
        }
        if self.clock.is_some() {
            self.ready_after = submitted.elapsed();
        }
        let pacing = self.pacing();
        // Looked at as each frame leaves: a destination set while preloading applies
        // to the first frame sent.
        let mut redirect = Redirect {
            data: self.http.as_mut().and_then(HttpApi::redirect),
            ports: Vec::new(),
        };
        let mut packets = packets;
        if let Some(device) = &self.livox {
            let (points, imu) = device.sends();
            packets.retain(|p| {
                if p.port == LIVOX_HOST_POINT_PORT {
                    points
                } else {
                    imu
                }
            });
            let (points_to, imu_to) = device.destinations();
            redirect.data = Some(points_to);
            redirect.ports.push((LIVOX_HOST_IMU_PORT, imu_to));
        }
        self.sender.send(FramePackets {
            packets,
            submitted,
            ready: Instant::now(),
            pacing,
            redirect: (redirect.data.is_some() || !redirect.ports.is_empty())
                .then(|| Box::new(redirect)),
        })
    }

    /// Sends the held frames (the clock starts now) and what the encoder still holds,
    /// waits for the writer, and stops the HTTP API after the last packet left.
    pub(super) fn finish(mut self) -> Result<Served, JobError> {
        for frame in self.preloaded.take().unwrap_or_default() {
            self.send(frame.packets, Instant::now())?;
        }
        let last = self.encoder.finish();
        let flushed = !last.is_empty();
        if flushed {
            self.send(last, Instant::now())?;
        }
        let mut sent = self.sender.finish()?;
        if flushed {
            // The flush of held firings is not a frame.
            sent.latency_ms.pop();
        }
        Ok(Served {
            sent,
            http: self.http.take().map(HttpApi::finish),
            livox: self.livox.take().map(LivoxDevice::finish),
        })
    }

    /// When this frame's packets leave (the sensor's clock starts at the first).
    fn pacing(&mut self) -> Pacing {
        match self.real_time {
            true => Pacing::RealTime {
                start: *self.clock.get_or_insert_with(Instant::now),
            },
            false => Pacing::AsFastAsPossible,
        }
    }
}

/// Ouster's metadata JSON beside the pcap file, with the same stem (`packets.json` for
/// `packets.pcap`, where ouster-sdk looks for it): the packets cannot be decoded
/// without it.
pub(super) fn write_packet_metadata(
    p: &PacketOutput,
    sensor: &Sensor,
    report: &mut JobReport,
) -> Result<(), JobError> {
    let (Some(pcap), Some(metadata)) = (&p.pcap, p.format.metadata(sensor, p.start, p.udp)?) else {
        return Ok(());
    };
    let path = pcap.with_extension("json");
    write_atomic(&path, |w| w.write_all(metadata.to_json_string().as_bytes()))?;
    report.run_files.push(path);
    Ok(())
}

/// The calibration a decoder of the pcap file needs beside it (the HDL-64E S3's YAML,
/// `packets.yaml` for `packets.pcap`, where ROS drivers are pointed at it).
pub(super) fn write_packet_calibration(
    p: &PacketOutput,
    report: &mut JobReport,
) -> Result<(), JobError> {
    let (Some(pcap), Some((text, extension))) = (&p.pcap, p.format.calibration()) else {
        return Ok(());
    };
    let path = pcap.with_extension(extension);
    write_atomic(&path, |w| w.write_all(text.as_bytes()))?;
    report.run_files.push(path);
    Ok(())
}

/// The Livox device `p` asks for, its data leaving `udp` from the lidar's ports.
fn livox_device(
    p: &PacketOutput,
    udp: &mut Option<UdpSink>,
) -> Result<Option<LivoxDevice>, JobError> {
    let Some(ip) = p.livox_device else {
        return Ok(None);
    };
    let Some(sink) = udp.take() else {
        return Ok(None);
    };
    let from = |port| SocketAddr::V4(SocketAddrV4::new(ip, port));
    let sink = sink
        .with_source(LIVOX_HOST_POINT_PORT, from(LIVOX_POINT_PORT))
        .and_then(|s| s.with_source(LIVOX_HOST_IMU_PORT, from(LIVOX_IMU_PORT)))
        .map_err(JobError::Sink)?;
    let SocketAddr::V4(host) = sink.destination() else {
        return Err(JobError::LivoxDevice(
            "the Livox protocol is IPv4: give --to an IPv4 address".into(),
        ));
    };
    *udp = Some(sink);
    let device = LivoxDevice::start(
        ip,
        host,
        crate::sensor::livox::MID_360.device_type,
        LIVOX_SERIAL,
    )
    .map_err(|e| JobError::LivoxDevice(format!("cannot be the Livox device at {ip}: {e}")))?;
    // The SDK takes a lidar's data only once it found and configured it (2–3 s: its
    // discovery broadcast is once a second): the frames wait for that, not lost to it.
    device.wait_for_host(LIVOX_HOST_WAIT);
    Ok(Some(device))
}

/// The simulated Mid-360's serial number, as its discovery answer gives it.
const LIVOX_SERIAL: &str = "BT360SIM0000001";

/// How long a Livox stream waits for a host to configure the device before it sends
/// anyway (to --to).
pub const LIVOX_HOST_WAIT: Duration = Duration::from_secs(30);
