//! `beamtrace stream`: a simulated sensor on the network.

use super::run::{packet_format, progress_bar, rates, sim_options, SimArgs};
use anyhow::{Context as _, Result};
use beamtrace::job::{run_job, FrameDone, JobReport, PacketOutput, PACKET_FORMATS};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[derive(clap::Args)]
pub(super) struct StreamArgs {
    #[command(flatten)]
    sim: SimArgs,
    /// The packets' wire format (see the list below). Default: the sensor's own.
    #[arg(long)]
    packets: Option<String>,
    /// Where the packets go: "host:port" (a broadcast address such as
    /// 255.255.255.255:2368 works, as a real sensor sends).
    #[arg(long, value_parser = destination)]
    to: SocketAddr,
    /// Send as fast as frames are made instead of at the sensor's real rate.
    #[arg(long)]
    fast: bool,
    /// Simulate all frames first, then send them at the sensor's rate: a real-time
    /// stream of a bounded scenario on a machine too slow to simulate it live.
    #[arg(long, conflicts_with = "fast")]
    preload: bool,
    /// Also write every packet sent into this pcap file (it appears when the stream
    /// ends, whole).
    #[arg(long)]
    pcap: Option<PathBuf>,
}

fn destination(s: &str) -> Result<SocketAddr, String> {
    s.to_socket_addrs()
        .map_err(|e| format!("`{s}` is not a host:port to send to: {e}"))?
        .next()
        .ok_or_else(|| format!("`{s}` resolves to no address"))
}

/// The packet formats, for `stream --help`.
pub(super) fn after_help() -> String {
    let mut h = String::from("Packet formats (--packets):\n");
    for (name, what) in PACKET_FORMATS {
        h.push_str(&format!("  {name:8} {what}\n"));
    }
    h.push_str(
        "\nIn real time each packet leaves at the sensor's own send time; frames the \
         machine cannot simulate in time are skipped and counted as dropped (a real \
         sensor does not wait). Nobody listening at --to is not an error.\n\n\
         Example: beamtrace stream --sensor vlp-16 --scenario \
         configs/scenarios/drive.yaml --to 127.0.0.1:2368 --thin",
    );
    h
}

pub(super) fn stream(args: StreamArgs) -> Result<()> {
    let mut opts = sim_options(&args.sim)?;
    let format = packet_format(args.packets.as_deref(), &opts.sensor)?;
    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    opts.packets = Some(PacketOutput {
        format,
        udp: Some(args.to),
        pcap: args.pcap.clone(),
        real_time: !args.fast,
        start,
        preload: args.preload,
    });
    eprintln!(
        "streaming {} frames of {} as {} packets to {}{}",
        opts.frames,
        opts.sensor.name,
        format.name(),
        args.to,
        if args.fast {
            ", as fast as possible"
        } else {
            " in real time"
        }
    );
    let bar = progress_bar(opts.frames);
    let begun = Instant::now();
    let mut points = 0u64;
    let report = run_job(&opts, &mut |done: &FrameDone| {
        points += done.points as u64;
        bar.set_message(rates(done.frame + 1, points, begun.elapsed()));
        bar.set_position(done.frame + 1);
    });
    bar.finish_and_clear();
    let report = report.context("streaming failed")?;
    print_summary(&report, begun.elapsed());
    Ok(())
}

fn print_summary(report: &JobReport, elapsed: Duration) {
    let frames = report.points_per_frame.len();
    println!(
        "{frames} frame(s) in {:.2} s ({:.2} frames/s), {} dropped to keep real time",
        elapsed.as_secs_f64(),
        frames as f64 / elapsed.as_secs_f64().max(1e-9),
        report.dropped_frames
    );
    let Some(sent) = &report.packets else {
        return;
    };
    if let Some(udp) = &sent.udp {
        println!(
            "  {} packets ({} bytes) sent, {} late (latest by {:.1} ms), {} refused by the \
             receiver's host",
            udp.packets,
            udp.bytes,
            udp.late,
            udp.max_late_s * 1e3,
            udp.refused
        );
    }
    let mut latency = sent.latency_ms.clone();
    latency.sort_by(f64::total_cmp);
    if let (Some(median), Some(max)) = (latency.get(latency.len() / 2), latency.last()) {
        println!("  frame latency (GPU submit → last packet sent): median {median:.1} ms, max {max:.1} ms");
    }
    if sent.pcap_packets > 0 {
        println!("  {} packets written to the pcap file", sent.pcap_packets);
    }
}
