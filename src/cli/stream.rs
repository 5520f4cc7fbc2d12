//! `beamtrace stream`: a simulated sensor on the network.

use super::run::{progress_bar, rates, run_packet_format, sim_options, SimArgs, Unscripted};
use anyhow::{bail, Result};
use beamtrace::job::{
    run_job_live, FrameDone, HttpReport, JobError, JobOptions, JobReport, MemoryUse, PacketFormat,
    PacketOutput, PACKET_FORMATS,
};
use beamtrace::live::{
    GateCounts, LiveOptions, LiveReport, Ros2Options, FOXGLOVE_BACKLOG, FOXGLOVE_MAX_CLIENTS,
    FOXGLOVE_PORT, FOXGLOVE_STALL,
};
use beamtrace::output::packets::{LivoxDeviceReport, EXCHANGE_LOG};
use beamtrace::output::{FieldSet, OutputError, RosNames};
use beamtrace::sensor::ros_name;
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
    /// 255.255.255.255:2368 works, as a real sensor sends). Needed unless the frames
    /// go out as live topics (--ros2, --foxglove).
    #[arg(long, value_parser = destination, required_unless_present_any = ["ros2", "foxglove"])]
    to: Option<SocketAddr>,
    /// Send as fast as frames are made instead of at the sensor's real rate.
    #[arg(long)]
    fast: bool,
    /// Simulate all frames first, then send them at the sensor's rate: a real-time
    /// stream of a bounded scenario on a machine too slow to simulate it live
    /// (packets only).
    #[arg(long, conflicts_with_all = ["fast", "ros2", "foxglove"])]
    preload: bool,
    /// Publish live ROS 2 topics over DDS (no ROS installation needed): each sensor's
    /// sensor_msgs/PointCloud2 on /<sensor>/points (best effort, keep last 5; frame id
    /// <sensor>: the rig's names, else the sensor's, `-` as `_`: /vlp_16/points), a
    /// rig IMU's sensor_msgs/Imu on /<imu>/imu, the vehicle on /tf (world → base_link)
    /// and the mounts on /tf_static (base_link → <sensor>, transient local). The domain
    /// is ROS_DOMAIN_ID's (default 0); ROS_LOCALHOST_ONLY=1 keeps discovery on this host.
    #[arg(long)]
    ros2: bool,
    /// Put the sensors' topics under this namespace: /NS/<sensor>/points (/tf,
    /// /tf_static and /clock stay global).
    #[arg(long, value_name = "NS")]
    ros2_namespace: Option<String>,
    /// Serve the same topics to Foxglove over its live WebSocket protocol on
    /// "host:port" (a port alone listens on 127.0.0.1; default 127.0.0.1:8765): in
    /// Foxglove, "Open connection" → "Foxglove WebSocket" → ws://127.0.0.1:8765.
    /// At most 16 clients at once; a client that takes nothing for 3 s is dropped, as
    /// is one that sends no handshake within 3 s of connecting.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "8765", value_parser = foxglove_addr)]
    foxglove: Option<SocketAddr>,
    /// Stamp the live topics with the scenario's time (from 0 at the first frame) and
    /// publish it on /clock (rosgraph_msgs/Clock), for nodes run with use_sim_time;
    /// without it they carry the wall clock, as a driver's do.
    #[arg(long)]
    sim_time: bool,
    /// The live clouds' fields: a convention — beamtrace, velodyne, ouster,
    /// ouster-native, ros — or a list of field keys (see `beamtrace run --help`).
    /// [default: beamtrace]
    #[arg(long, value_name = "SET")]
    fields: Option<FieldSet>,
    /// Organized live clouds: HEIGHT × WIDTH cells of the sensor's rings × columns, as
    /// `run --organized` (the default of --fields velodyne, ouster and ouster-native).
    #[arg(long, conflicts_with = "unorganized")]
    organized: bool,
    /// One row of returned points only, also for the conventions that organize.
    #[arg(long)]
    unorganized: bool,
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
    /// Also be the Livox Mid-360 at this IPv4 address of this host, as Livox SDK2 and
    /// livox_ros_driver2 find and configure one (--packets mid360 only): answer their
    /// discovery broadcast on port 56000, parameter queries and configuration on
    /// 56100, push the state from 56200 once a second, and send the point data from
    /// IP:56300 and the IMU data from IP:56400. --to is the host's point data address
    /// (HOST:56301) until the host's SDK configures another; it may idle the lidar (work
    /// mode) and switch IMU data off. The SDK drops data from its own address, so on
    /// one machine give the lidar another loopback address: --livox-device 127.0.0.2
    /// --to 127.0.0.1:56301, and the SDK's config host_ip 127.0.0.1. The frames start
    /// once a host has configured the lidar (within 2–3 s of the SDK's start), or
    /// after 30 s without one.
    #[arg(long, value_name = "IP", requires = "to")]
    livox_device: Option<std::net::Ipv4Addr>,
    /// Encode the packets on the host from each frame's points, as the reference
    /// encoders do, instead of from what the GPU makes beside the frame — Ouster's
    /// packets whole, Velodyne's channels (same bytes; several times the host's CPU
    /// time per frame)
    #[arg(long)]
    host_packets: bool,
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

/// `--foxglove`'s address: "host:port", or a port alone on the loopback interface.
fn foxglove_addr(s: &str) -> Result<SocketAddr, String> {
    let s = s.trim();
    let port = s.strip_prefix(':').unwrap_or(s);
    if let Ok(port) = port.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if !s.contains(':') {
        return Err(format!(
            "`{s}` is neither a port nor a host:port (e.g. 8765 or 127.0.0.1:{FOXGLOVE_PORT})"
        ));
    }
    destination(s)
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
         on the bundled drive)\n\n\
         Live topics: beamtrace stream --sensor vlp-16 --thin --ros2, then \
         `ros2 topic echo /vlp_16/points --no-arr` (any ROS 2 distribution, same \
         ROS_DOMAIN_ID); --foxglove serves Foxglove. Each cloud is published when its \
         sweep ends; frames that cannot be ready by then are skipped and counted, and \
         nobody subscribed is not an error.",
    );
    h
}

pub(super) fn stream(args: StreamArgs) -> Result<()> {
    let mut opts = sim_options(&args.sim, Unscripted::BundledDrive)?;
    let live = live_options(&args, &mut opts)?;
    if let Some(to) = args.to {
        packet_options(&args, to, &mut opts)?;
    }
    announce(&args, &opts, live.as_ref());
    let bar = progress_bar(opts.frames);
    let begun = Instant::now();
    let mut points = 0u64;
    let report = run_job_live(&opts, live.as_ref(), &mut |done: &FrameDone| {
        points += done.points as u64;
        bar.set_message(rates(done.frame + 1, points, begun.elapsed()));
        bar.set_position(done.frame + 1);
    });
    bar.finish_and_clear();
    let report = report.map_err(|e| super::job_failed(e, "streaming failed"))?;
    print_summary(&report, opts.frames, begun.elapsed());
    Ok(())
}

/// The live topics' options (`--ros2`, `--foxglove`), and the clouds' fields and
/// layout, which only they carry.
fn live_options(args: &StreamArgs, opts: &mut JobOptions) -> Result<Option<LiveOptions>> {
    let layout_given = args.organized || args.unorganized || args.fields.is_some();
    if !args.ros2 && args.foxglove.is_none() {
        if layout_given || args.sim_time || args.ros2_namespace.is_some() {
            bail!(
                "--fields, --organized, --unorganized, --sim-time and --ros2-namespace are for \
                 the live topics: add --ros2 and/or --foxglove (packets have their format's \
                 own layout)"
            );
        }
        return Ok(None);
    }
    opts.fields = args.fields.clone().unwrap_or_default();
    opts.organized = match (args.organized, args.unorganized) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    };
    let ros2 = match args.ros2 {
        true => Some(Ros2Options::from_env()?),
        false => None,
    };
    Ok(Some(LiveOptions {
        ros2,
        foxglove: args.foxglove,
        real_time: !args.fast,
        sim_time: args.sim_time,
        namespace: namespace(args.ros2_namespace.as_deref())?,
    }))
}

/// `--ros2-namespace`: "" without, else `/`-prefixed, checked as ROS 2 checks names.
fn namespace(given: Option<&str>) -> Result<String> {
    let Some(ns) = given else {
        return Ok(String::new());
    };
    let ns = format!("/{}", ns.trim_matches('/'));
    if ns == "/" {
        return Ok(String::new());
    }
    match RosNames::new(&format!("{ns}/points"), "sensor") {
        Ok(_) => Ok(ns),
        Err(OutputError::RosName { why, .. }) => bail!("--ros2-namespace `{ns}`: {why}"),
        Err(e) => Err(e.into()),
    }
}

/// The packets' options (`--to` and what goes with it).
fn packet_options(args: &StreamArgs, to: SocketAddr, opts: &mut JobOptions) -> Result<()> {
    let format = run_packet_format(args.packets.as_deref(), opts)?;
    if args.http.is_some() && opts.rig.is_some() {
        bail!(
            "--http answers one Ouster sensor's HTTP API; a rig's sensors are configured by \
             the rig file, so leave out --http"
        );
    }
    if args.livox_device.is_some() && (format != PacketFormat::Livox || opts.rig.is_some()) {
        bail!(
            "--livox-device answers Livox SDK2 as one Mid-360: use it with --sensor \
             livox-mid-360 (--packets mid360) and no rig"
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
        udp: Some(to),
        pcap: args.pcap.clone(),
        real_time: !args.fast,
        start,
        preload: args.preload,
        http: args.http,
        livox_device: args.livox_device,
        on_host: args.host_packets,
    });
    Ok(())
}

/// What the stream sends where, before it starts.
fn announce(args: &StreamArgs, opts: &JobOptions, live: Option<&LiveOptions>) {
    let pace = match args.fast {
        true => ", as fast as possible",
        false => " in real time",
    };
    let playing = match &opts.scenario {
        Some(s) => format!("playing {}", s.path().display()),
        None => format!("in {}", opts.scene_name),
    };
    if let (Some(p), Some(to)) = (&opts.packets, args.to) {
        let what = what_streams(opts, p.format);
        eprintln!(
            "streaming {} frames of {what} to {to}{pace}, {playing}",
            opts.frames
        );
    }
    if let Some(http) = args.http {
        eprintln!("answering the Ouster sensor HTTP API on http://{http}/api/v1/");
    }
    if let Some(ip) = args.livox_device {
        eprintln!(
            "answering Livox SDK2 as the Mid-360 at {ip} (discovery on 56000, commands on \
             56100); the frames start once a host configured it (at most 30 s from now)"
        );
    }
    let Some(live) = live else { return };
    let topics = live_topics(opts, &live.namespace).join(", ");
    eprintln!(
        "publishing {} frames on {topics}{pace}, {playing}",
        opts.frames
    );
    if let Some(r) = &live.ros2 {
        let range = if r.localhost_only {
            ", this host only"
        } else {
            ""
        };
        eprintln!("  over DDS, ROS domain {}{range}", r.domain_id);
    }
    if let Some(addr) = live.foxglove {
        eprintln!("  to Foxglove: open a Foxglove WebSocket connection to ws://{addr}");
        eprintln!(
            "  (at most {FOXGLOVE_MAX_CLIENTS} clients at once, each queued up to \
             {FOXGLOVE_BACKLOG} messages; one that takes nothing, or sends no handshake, \
             for {} s is dropped)",
            FOXGLOVE_STALL.as_secs()
        );
    }
}

/// The live topics of the run's sensors (and IMU), then the transforms and clock.
fn live_topics(opts: &JobOptions, ns: &str) -> Vec<String> {
    let mut topics: Vec<String> = match &opts.rig {
        Some(rig) => (rig.sensors.iter())
            .map(|m| format!("{ns}/{}/points", m.name))
            .chain(rig.imu.iter().map(|i| format!("{ns}/{}/imu", i.name)))
            .collect(),
        None => vec![format!("{ns}/{}/points", ros_name(&opts.sensor.name))],
    };
    topics.extend(["/tf".to_string(), "/tf_static".to_string()]);
    topics
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
    if let Some(h) = report.host_cpu {
        println!(
            "  host CPU: {:.2} ms per frame (beamtrace's threads, not the Vulkan driver's; \
             {} frames after the first)",
            h.ms_per_frame, h.frames
        );
    }
    if let Some(live) = &report.live {
        print_live(live);
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
                "  {} packets to other ports of that host (a Velodyne's position packets, an \
                 Ouster's or a Livox's IMU packets)",
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
    if let Some(livox) = &report.livox {
        print_livox(livox);
    }
}

/// What the live topics published, and what they dropped.
fn print_live(live: &LiveReport) {
    println!(
        "  live: {} clouds and {} IMU messages published, {} frames late (not published), \
         {} messages refused by lagging reliable readers",
        live.clouds, live.imu, live.late_frames, live.refused
    );
    if let Some(n) = live.dds_matched {
        println!("  DDS: {n} subscription(s) matched at the end");
    }
    if let (Some(addr), Some(n)) = (live.foxglove_addr, live.foxglove_clients) {
        println!("  Foxglove on ws://{addr}: {n} client(s) connected at the end");
        if let Some(t) = live
            .foxglove_turned_away
            .filter(|t| *t != GateCounts::default())
        {
            println!(
                "  Foxglove clients turned away: {} refused (at most {FOXGLOVE_MAX_CLIENTS} \
                 at once), {} dropped for stalling {} s (taking nothing, or no handshake)",
                t.refused,
                t.stalled,
                FOXGLOVE_STALL.as_secs()
            );
        }
    }
    let mut latency = live.latency_ms.clone();
    latency.sort_by(f64::total_cmp);
    let p99 = latency.len().saturating_sub(1) * 99 / 100;
    if let (Some(median), Some(p99)) = (latency.get(latency.len() / 2), latency.get(p99)) {
        println!(
            "  publication latency (sweep end → published): median {median:.1} ms, p99 {p99:.1} ms"
        );
    }
}

/// The summary's first line: frames sent (the ones a receiver saw), and simulated
/// where that differs (frames ready too late were simulated but not sent).
fn frames_line(report: &JobReport, asked: u64, elapsed: Duration) -> String {
    let simulated = report.points_per_frame.len() as u64;
    let late = report.packets.as_ref().map_or(0, |p| p.late_frames)
        + report.live.as_ref().map_or(0, |l| l.late_frames);
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

/// What the Livox device answered: how many requests of each command, from whom.
fn print_livox(livox: &LivoxDeviceReport) {
    let name = |id: u16| match id {
        0x0000 => "discovery",
        0x0100 => "configuration",
        0x0101 => "query",
        _ => "other",
    };
    let list: Vec<String> = livox
        .answered
        .iter()
        .map(|(&id, n)| format!("{n} {} ({id:#06x})", name(id)))
        .collect();
    let ip = livox.lidar_ip.map(|ip| ip.to_string()).unwrap_or_default();
    if list.is_empty() {
        println!("  Livox device {ip}: no host asked anything");
        return;
    }
    let hosts: Vec<String> = livox.hosts.iter().map(|h| h.to_string()).collect();
    println!(
        "  Livox device {ip} answered {} from {}",
        list.join(", "),
        hosts.join(", ")
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
