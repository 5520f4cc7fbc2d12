//! The packet writer thread: sends each frame's packets over UDP (paced) and/or writes
//! them to a pcap file, behind a bounded queue. The simulation never waits for it unless
//! the queue is full (back-pressure, so memory stays flat); nothing is dropped on the
//! way. The pcap file is written atomically: it appears, whole, when the stream ends.

use super::host_cpu::HostThreads;
use super::JobError;
use crate::output::packets::{
    Pacing, Packet, PcapError, PcapOptions, PcapWriter, SendStats, UdpSink,
};
use crate::output::AtomicFiles;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;
use std::time::Instant;

/// Frames queued for the writer at most: beyond this the simulation waits.
pub const QUEUE_FRAMES: usize = 4;

/// Where a frame's packets go.
pub struct PacketSinks {
    pub udp: Option<UdpSink>,
    pub pcap: Option<(PathBuf, PcapOptions)>,
}

/// One frame's packets, when they leave, and when its simulation began (for the
/// latency figures).
pub struct FramePackets {
    pub packets: Vec<Packet>,
    pub submitted: Instant,
    /// When the frame was handed to the writer: in real time it is late if that was
    /// after its first packet's send time. A writer that wakes up late sends a ready
    /// frame late (counted per packet) rather than dropping it.
    pub ready: Instant,
    pub pacing: Pacing,
    /// Where this frame's packets and the next go over UDP, when a client changed
    /// where they go; `None`: where the last frame's went.
    pub redirect: Option<Box<Redirect>>,
}

/// New destinations a client set.
#[derive(Debug, Clone, Default)]
pub struct Redirect {
    /// The data packets' (and, at their own ports, the side packets').
    pub data: Option<SocketAddr>,
    /// The packets to these side ports (the first of each pair).
    pub ports: Vec<(u16, SocketAddr)>,
}

/// What the writer did.
#[derive(Debug, Clone, Default)]
pub struct SenderReport {
    pub udp: Option<SendStats>,
    /// Frames not sent because they were ready only after their first packet's send
    /// time (real time): sent late, they would arrive in a burst no real sensor sends.
    pub late_frames: u64,
    pub pcap_packets: u64,
    /// Per frame: from its submission to the GPU to its last packet sent (ms).
    pub latency_ms: Vec<f64>,
}

/// The writer thread and its queue.
pub struct Sender {
    queue: Option<SyncSender<FramePackets>>,
    thread: Option<JoinHandle<Result<SenderReport, JobError>>>,
}

impl Sender {
    /// Starts the writer thread, counted among `host`'s threads while it runs.
    pub fn spawn(sinks: PacketSinks, host: HostThreads) -> Result<Sender, JobError> {
        let (queue, rx) = sync_channel(QUEUE_FRAMES);
        let thread = std::thread::Builder::new()
            .name("packets".into())
            .spawn(move || {
                host.register_current();
                let written = write_all(sinks, rx);
                host.retire_current();
                written
            })
            .map_err(JobError::Thread)?;
        Ok(Sender {
            queue: Some(queue),
            thread: Some(thread),
        })
    }

    /// Queues a frame's packets, waiting while the queue is full. If the writer has
    /// stopped, its error comes back here.
    pub fn send(&mut self, frame: FramePackets) -> Result<(), JobError> {
        let sent = self.queue.as_ref().map(|q| q.send(frame));
        match sent {
            Some(Ok(())) => Ok(()),
            _ => Err(self.join().err().unwrap_or(JobError::WriterGone)),
        }
    }

    /// Ends the stream: the writer sends what is queued, finishes the pcap file and
    /// reports.
    pub fn finish(mut self) -> Result<SenderReport, JobError> {
        self.join()
    }

    fn join(&mut self) -> Result<SenderReport, JobError> {
        self.queue = None;
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(JobError::WriterGone),
            None => Err(JobError::WriterGone),
        }
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        // Closing the queue ends the writer; an unfinished pcap file is removed.
        self.queue = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The writer thread's body.
fn write_all(sinks: PacketSinks, rx: Receiver<FramePackets>) -> Result<SenderReport, JobError> {
    let PacketSinks { udp, pcap } = sinks;
    let mut state = Writer {
        udp,
        report: SenderReport::default(),
        error: None,
    };
    match pcap {
        None => state.drain(&rx, None::<&mut PcapWriter<io::Sink>>),
        Some((path, options)) => {
            let mut files = AtomicFiles::default();
            let written = files.write(&path, |out| {
                let mut pcap = PcapWriter::new(out, options).map_err(pcap_io)?;
                state.drain(&rx, Some(&mut pcap));
                state.report.pcap_packets = pcap.packets_written();
                pcap.into_inner().map(drop).map_err(pcap_io)?;
                match state.error.take() {
                    // The stream failed: no pcap file is left to pass for a whole one.
                    Some(e) => Err(io::Error::other(e.to_string())),
                    None => Ok(()),
                }
            });
            if let Some(e) = state.error.take() {
                return Err(e);
            }
            written?;
            files.commit()?;
        }
    }
    if let Some(e) = state.error {
        return Err(e);
    }
    state.report.udp = state.udp.map(|u| u.stats);
    Ok(state.report)
}

fn pcap_io(e: PcapError) -> io::Error {
    match e {
        PcapError::Io(e) => e,
        other => io::Error::new(io::ErrorKind::InvalidInput, other.to_string()),
    }
}

/// A frame ready more than this long after its first packet's send time is late (s).
const LATE_FRAME_S: f64 = 5e-3;

fn is_late(frame: &FramePackets) -> bool {
    let (Pacing::RealTime { start }, Some(first)) = (frame.pacing, frame.packets.first()) else {
        return false;
    };
    let ready_s = frame.ready.saturating_duration_since(start).as_secs_f64();
    ready_s > first.time_s + LATE_FRAME_S
}

struct Writer {
    udp: Option<UdpSink>,
    report: SenderReport,
    /// The first error; the writer stops at it (the queue's next send reports it).
    error: Option<JobError>,
}

impl Writer {
    /// Writes frames until the queue closes or an error stops it.
    fn drain<W: io::Write>(
        &mut self,
        rx: &Receiver<FramePackets>,
        mut pcap: Option<&mut PcapWriter<W>>,
    ) {
        while let Ok(frame) = rx.recv() {
            if let Err(e) = self.frame(&frame, pcap.as_deref_mut()) {
                self.error = Some(e);
                return;
            }
        }
    }

    fn frame<W: io::Write>(
        &mut self,
        frame: &FramePackets,
        mut pcap: Option<&mut PcapWriter<W>>,
    ) -> Result<(), JobError> {
        // Before the lateness check: a skipped frame's change of destination still holds.
        if let (Some(to), Some(udp)) = (&frame.redirect, &mut self.udp) {
            if let Some(data) = to.data {
                udp.redirect(data).map_err(JobError::Sink)?;
            }
            for &(port, side) in &to.ports {
                udp.route(port, side);
            }
        }
        if is_late(frame) {
            self.report.late_frames += 1;
            return Ok(());
        }
        for p in &frame.packets {
            if let Some(udp) = &mut self.udp {
                udp.send(p, frame.pacing).map_err(JobError::Sink)?;
            }
            if let Some(pcap) = pcap.as_deref_mut() {
                pcap.write(p).map_err(JobError::Pcap)?;
            }
        }
        let ms = frame.submitted.elapsed().as_secs_f64() * 1e3;
        self.report.latency_ms.push(ms);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn frame_due_at(start: Instant, first_s: f64, ready: Instant) -> FramePackets {
        FramePackets {
            packets: vec![Packet {
                time_s: first_s,
                port: 2368,
                payload: Vec::new(),
            }],
            submitted: start,
            ready,
            pacing: Pacing::RealTime { start },
            redirect: None,
        }
    }

    /// Lateness is the frame's readiness against its first packet's send time, not
    /// when the writer gets to it: a preloaded frame due at once, picked up after a
    /// writer's slow wake-up, is sent (late per packet), not dropped.
    #[test]
    fn a_frame_is_late_when_it_was_ready_after_its_send_time() {
        let start = Instant::now() - Duration::from_millis(100);
        // Ready at the start, due at the start, looked at 100 ms later: not late.
        assert!(!is_late(&frame_due_at(start, 0.0, start)));
        // Due 10 ms in, ready 50 ms in: late.
        let ready = start + Duration::from_millis(50);
        assert!(is_late(&frame_due_at(start, 0.010, ready)));
        // Due 50 ms in, ready 52 ms in: within LATE_FRAME_S.
        let ready = start + Duration::from_millis(52);
        assert!(!is_late(&frame_due_at(start, 0.050, ready)));
        // As fast as possible: never late.
        let mut f = frame_due_at(start, 0.0, ready);
        f.pacing = Pacing::AsFastAsPossible;
        assert!(!is_late(&f));
    }
}
