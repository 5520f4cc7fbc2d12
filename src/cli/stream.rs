//! `beamtrace stream`: a simulated sensor on the network.

use super::run::{progress_bar, rates, run_packet_format, sim_options, SimArgs, Unscripted};
use anyhow::{bail, Result};
use beamtrace::job::{
    run_job, FrameDone, HttpReport, JobError, JobOptions, JobReport, MemoryUse, PacketFormat,
    PacketOutput, PACKET_FORMATS,
};
use beamtrace::output::packets::EXCHANGE_LOG;
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
    /// Also answer the Ouster sensor HTTP API on "host:port" for as long as the stream
    /// runs (Ouster packet formats only): the metadata the packets are encoded with,
    /// its udp_dest and udp_port_lidar those of --to, and the configuration. A client
    /// that sets udp_dest (e.g. "@auto") gets the packets there from the next frame
    /// on. A real sensor answers on port 80, where ouster-sdk's and ouster-ros's
    /// sensor clients look; binding a port below 1024 needs root or the
    /// CAP_NET_BIND_SERVICE capability; else listen on e.g. 127.0.0.1:8080, which
    /// ouster-sdk's SensorHttp reaches as HOST:PORT, and redirect port 80 to it.
    #[arg(long, value_name = "ADDR", value_parser = destination)]
    http: Option<SocketAddr>,
}

/// `stream --help`'s text for `--scenario`, which `run` shares but defaults otherwise.
pub(super) const SCENARIO_HELP: &str = "Scenario (YAML): the vehicle's trajectory and the \
    scene objects' keyframes over time. Default: configs/scenarios/drive.yaml, the bundled \
    8 s drive along the bundled street (looked up in the working directory; a built-in copy \
    when it is not there). With --scene and no --scenario, the scene's own glTF animations \
    play and the vehicle stands at --position/--yaw";

/// A "host:port" to send to or to listen on.
fn destination(s: &str) -> Result<SocketAddr, String> {
    s.to_socket_addrs()
        .map_err(|e| format!("`{s}` is not a host:port: {e}"))?
        .next()
        .ok_or_else(|| format!("`{s}` resolves to no address"))
}

/// The packet formats, for `stream --help`.
pub(super) fn after_help() -> String {
    let mut h = String::from("Packet formats (--packets):\n");
    let width = PACKET_FORMATS
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(0);
    for (name, what) in PACKET_FORMATS {
        h.push_str(&format!("  {name:width$}  {what}\n"));
    }
    h.push_str(
        "\nIn real time each packet leaves at the sensor's own send time; frames the \
         machine cannot simulate in time are skipped and counted as dropped (a real \
         sensor does not wait). Nobody listening at --to is not an error.\n\n\
         Example: beamtrace stream --sensor vlp-16 --to 127.0.0.1:2368 --thin (a VLP-16 \
         on the bundled drive)",
    );
    h
}

pub(super) fn stream(args: StreamArgs) -> Result<()> {
    let mut opts = sim_options(&args.sim, Unscripted::BundledDrive)?;
    let format = run_packet_format(args.packets.as_deref(), &opts)?;
    if args.http.is_some() && opts.rig.is_some() {
        bail!(
            "--http answers one Ouster sensor's HTTP API; a rig's sensors are configured by \
             the rig file, so leave out --http"
        );
    }
    if args.http.is_some() && !format.has_http_api() {
        // The job refuses it too; here it goes before the stream is announced.
        return Err(JobError::HttpNeedsOuster(format.name()).into());
    }
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
        http: args.http,
    });
    eprintln!(
        "streaming {} frames of {} to {}{}, {}",
        opts.frames,
        what_streams(&opts, format),
        args.to,
        if args.fast {
            ", as fast as possible"
        } else {
            " in real time"
        },
        match &opts.scenario {
            Some(s) => format!("playing {}", s.path().display()),
            None => format!("in {}", opts.scene_name),
        }
    );
    if let Some(http) = args.http {
        eprintln!("answering the Ouster sensor HTTP API on http://{http}/api/v1/");
    }
    let bar = progress_bar(opts.frames);
    let begun = Instant::now();
    let mut points = 0u64;
    let report = run_job(&opts, &mut |done: &FrameDone| {
        points += done.points as u64;
        bar.set_message(rates(done.frame + 1, points, begun.elapsed()));
        bar.set_position(done.frame + 1);
    });
    bar.finish_and_clear();
    let report = report.map_err(|e| super::job_failed(e, "streaming failed"))?;
    print_summary(&report, opts.frames, begun.elapsed());
    Ok(())
}

/// "os1-128 as ouster-rng19-dual packets", or a rig's sensors with their formats and
/// ports (each sensor sends to the --to host at its own port).
fn what_streams(opts: &JobOptions, format: PacketFormat) -> String {
    let Some(rig) = &opts.rig else {
        return format!("{} as {} packets", opts.sensor.name, format.name());
    };
    let members: Vec<String> = (rig.sensors.iter())
        .map(|m| {
            let f = m
                .packets
                .clone()
                .or_else(|| PacketFormat::for_sensor(&m.sensor).map(|f| f.name().to_string()));
            let port = m
                .port
                .map_or("its format's port".into(), |p| format!("port {p}"));
            format!(
                "{} ({}, {}, {port})",
                m.name,
                m.sensor.name,
                f.unwrap_or_default()
            )
        })
        .collect();
    format!("rig {}: {}", rig.name, members.join(", "))
}

fn print_summary(report: &JobReport, asked: u64, elapsed: Duration) {
    println!("{}", frames_line(report, asked, elapsed));
    if let (Some((first, a)), Some((last, b))) = (report.poses.first(), report.poses.last()) {
        println!(
            "  sensor at {} m in frame {first}, at {} m in frame {last} (world frame)",
            position(a),
            position(b)
        );
    }
    if let (Some(first), Some(end)) = (&report.memory_first_frame, &report.memory_end) {
        print_memory(first, end);
    }
    if report.sensors.is_empty() {
        print_packets(report, "");
    }
    for (name, r) in &report.sensors {
        print_packets(r, &format!("{name}: "));
    }
}

/// What the packet writer of a sensor (named by `who`) sent and wrote.
fn print_packets(report: &JobReport, who: &str) {
    let Some(sent) = &report.packets else {
        return;
    };
    if let Some(udp) = &sent.udp {
        println!(
            "  {who}{} packets ({} bytes) sent, {} late (latest by {:.1} ms), {} refused by the \
             receiver's host",
            udp.packets,
            udp.bytes,
            udp.late,
            udp.max_late_s * 1e3,
            udp.refused
        );
        if udp.side_packets > 0 {
            println!(
                "  {} packets to other ports of that host (Velodyne position packets: 8308)",
                udp.side_packets
            );
        }
    }
    let mut latency = sent.latency_ms.clone();
    latency.sort_by(f64::total_cmp);
    if let (Some(median), Some(max)) = (latency.get(latency.len() / 2), latency.last()) {
        println!("  {who}frame latency (GPU submit → last packet sent): median {median:.1} ms, max {max:.1} ms");
    }
    if sent.pcap_packets > 0 {
        println!(
            "  {who}{} packets written to the pcap file",
            sent.pcap_packets
        );
    }
    if let Some(http) = &report.http {
        print_http(http);
    }
}

/// The summary's first line: frames sent (the ones a receiver saw), and simulated
/// where that differs (frames ready too late were simulated but not sent).
fn frames_line(report: &JobReport, asked: u64, elapsed: Duration) -> String {
    let simulated = report.points_per_frame.len() as u64;
    let late = report.packets.as_ref().map_or(0, |p| p.late_frames);
    let sent = simulated.saturating_sub(late);
    let s = elapsed.as_secs_f64();
    let mut line = format!(
        "{sent} of {asked} frames sent in {s:.2} s ({:.2} frames/s)",
        sent as f64 / s.max(1e-9)
    );
    if simulated != sent {
        line.push_str(&format!(
            ", {simulated} simulated ({late} ready too late to send)"
        ));
    }
    line.push_str(&format!(
        ", {} dropped to keep real time",
        report.dropped_frames
    ));
    line
}

/// Host and device memory after the first frame and at the end: flat in a stream that
/// does not grow with its frames. Device memory in bytes, as it should not move by one.
fn print_memory(first: &MemoryUse, end: &MemoryUse) {
    let mib = |m: &MemoryUse| match m.host_rss_bytes {
        Some(b) => format!("{:.1}", b as f64 / f64::from(1 << 20)),
        None => "?".to_string(),
    };
    println!(
        "  memory after the first frame → at the end: host RSS {} → {} MiB, device {} → {} \
         bytes in {} → {} allocations",
        mib(first),
        mib(end),
        first.device_bytes,
        end.device_bytes,
        first.device_allocations,
        end.device_allocations
    );
}

/// The Ouster HTTP API's part of the summary.
fn print_http(http: &HttpReport) {
    let log = &http.exchanges;
    let answered = log.iter().filter(|e| e.status == 200).count();
    let latest = match log.len() {
        EXCHANGE_LOG => format!(" (of the latest {EXCHANGE_LOG})"),
        _ => String::new(),
    };
    println!(
        "  Ouster HTTP API on {}: {answered} request(s) answered, {} refused{latest}",
        http.addr,
        log.len() - answered
    );
    for to in &http.redirects {
        println!("  a client redirected the packets to {to}");
    }
    for dest in &http.unresolved {
        println!("  a client set udp_dest `{dest}`, which names no address: ignored");
    }
}

/// The translation of a pose, "(x, y, z)" in mm steps.
fn position(pose: &glam::Affine3A) -> String {
    let t = pose.translation;
    format!("({:.3}, {:.3}, {:.3})", t.x, t.y, t.z)
}
