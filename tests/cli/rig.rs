//! `--rig` through the binary: two VLP-16s at their mounts see one wall, their points
//! in the world fit one plane within the sensors' noise, each sensor's cloud is the
//! bytes of its own single-sensor run, and the rig's bag holds a topic per sensor with
//! the mounts on `/tf_static` (read by the mcap package, independent of beamtrace).

use std::fs;
use std::path::Path;
use std::process::Command;

/// The VLP-16 datasheet's typical accuracy, ±3 cm, read as 1σ (as the preset does).
const VLP16_SIGMA_M: f64 = 0.03;

fn beamtrace(dir: &Path, args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the beamtrace binary starts");
    assert!(
        o.status.success(),
        "{args:?} failed:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A wall 10 m ahead, and a rig of two VLP-16s 2 m apart at different heights, each
/// turned a little towards the other side.
fn setup(dir: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    fs::copy(root.join("scenes/wall_10m.glb"), dir.join("wall.glb")).unwrap();
    fs::write(
        dir.join("rig.yaml"),
        "name: pair\nsensors:\n\
         \x20 - { name: left, sensor: vlp-16, seed: 11, mount: { translation: [0.5, 1.0, 1.2], rotation_deg: [0, 0, -8] } }\n\
         \x20 - { name: right, sensor: vlp-16, seed: 12, mount: { translation: [0.5, -1.0, 1.8], rotation_deg: [0, 2, 8] } }\n",
    )
    .unwrap();
    fs::write(
        dir.join("right.yaml"),
        "pattern: { preset: vlp-16 }\n\
         mount: { translation: [0.5, -1.0, 1.8], rotation_deg: [0, 2, 8] }\n",
    )
    .unwrap();
}

/// x, y, z of a CSV cloud of those three fields.
fn points(path: &Path) -> Vec<[f64; 3]> {
    let text = fs::read_to_string(path).expect("the frame's CSV");
    (text.lines().skip(1))
        .map(|l| {
            let v: Vec<f64> = l.split(',').map(|x| x.parse().expect("a number")).collect();
            [v[0], v[1], v[2]]
        })
        .collect()
}

/// The least-squares plane x = a + b·y + c·z through `p` (its normal equations solved
/// by Cramer's rule), and the RMS of the residuals.
fn plane(p: &[[f64; 3]]) -> ([f64; 3], f64) {
    let (mut m, mut r) = ([[0.0f64; 3]; 3], [0.0f64; 3]);
    for q in p {
        let row = [1.0, q[1], q[2]];
        for (mi, ri) in m.iter_mut().zip(&row) {
            for (mij, rj) in mi.iter_mut().zip(&row) {
                *mij += ri * rj;
            }
        }
        for (ri, x) in r.iter_mut().zip(&row) {
            *ri += x * q[0];
        }
    }
    let det = |m: &[[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let d = det(&m);
    let c: [f64; 3] = std::array::from_fn(|k| {
        let mut mk = m;
        for (row, rv) in mk.iter_mut().zip(&r) {
            row[k] = *rv;
        }
        det(&mk) / d
    });
    let ss: f64 = (p.iter())
        .map(|q| (q[0] - c[0] - c[1] * q[1] - c[2] * q[2]).powi(2))
        .sum();
    (c, (ss / p.len() as f64).sqrt())
}

#[test]
fn two_sensors_see_one_wall_in_one_world_and_each_is_its_own_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    setup(d);
    let common = ["--scene", "wall.glb", "--no-picture", "--sun", "0,45"];
    let world = [
        &common[..],
        &["--format", "csv", "--fields", "x,y,z", "--world"],
    ]
    .concat();
    beamtrace(
        d,
        &[&["run", "--rig", "rig.yaml", "--out", "w"], &world[..]].concat(),
    );
    let wall = |name: &str| -> Vec<[f64; 3]> {
        let p = points(&d.join("w").join(name).join("frame_000000.csv"));
        p.into_iter().filter(|q| q[0] > 5.0).collect()
    };
    let (left, right) = (wall("left"), wall("right"));
    assert!(left.len() > 500 && right.len() > 500, "both see the wall");
    let both: Vec<[f64; 3]> = left.iter().chain(&right).copied().collect();
    let (c, rms) = plane(&both);
    assert!(
        rms < 1.5 * VLP16_SIGMA_M,
        "one plane within the noise: rms {rms} m (σ {VLP16_SIGMA_M} m), plane {c:?}"
    );
    let ((cl, _), (cr, _)) = (plane(&left), plane(&right));
    assert!(
        (cl[0] - cr[0]).abs() < 0.02,
        "each sensor's own plane is the other's: {cl:?} vs {cr:?}"
    );
    // The right sensor alone, at the same mount and seed, in its own frame.
    let sensor = [&common[..], &["--format", "pcd"]].concat();
    beamtrace(
        d,
        &[&["run", "--rig", "rig.yaml", "--out", "r"], &sensor[..]].concat(),
    );
    let one = [
        &[
            "run",
            "--sensor",
            "right.yaml",
            "--seed",
            "12",
            "--out",
            "s",
        ],
        &sensor[..],
    ];
    beamtrace(d, &one.concat());
    let frame = |p: &Path| fs::read(p.join("frame_000000.pcd")).expect("the frame");
    assert!(
        frame(&d.join("r/right")) == frame(&d.join("s")),
        "the rig's right sensor is its own single run, byte for byte"
    );
    assert!(frame(&d.join("r/right")) != frame(&d.join("r/left")));
}

#[test]
fn the_rig_bag_has_a_topic_per_sensor_and_the_mounts_on_tf_static() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    setup(d);
    let args = ["run", "--rig", "rig.yaml", "--scene", "wall.glb", "--thin"];
    beamtrace(
        d,
        &[
            &args[..],
            &[
                "--no-picture",
                "--format",
                "mcap",
                "--frames",
                "2",
                "--out",
                "m",
            ],
        ]
        .concat(),
    );
    let script = "import sys, json\n\
        from mcap.reader import make_reader\n\
        from mcap_ros2.decoder import DecoderFactory\n\
        topics, static = {}, []\n\
        with open(sys.argv[1], 'rb') as f:\n\
        \x20   for s, ch, m, d in make_reader(f, decoder_factories=[DecoderFactory()]).iter_decoded_messages():\n\
        \x20       topics[ch.topic] = topics.get(ch.topic, 0) + 1\n\
        \x20       if ch.topic == '/tf_static':\n\
        \x20           static = [[t.header.frame_id, t.child_frame_id, t.transform.translation.y, t.transform.translation.z] for t in d.transforms]\n\
        print(json.dumps({'topics': topics, 'static': static}))\n";
    let out = Command::new(crate::independent::python("mcap_ros2"))
        .args(["-c", script])
        .arg(d.join("m/run.mcap"))
        .output()
        .expect("python starts");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["topics"]["/left/points"], 2);
    assert_eq!(got["topics"]["/right/points"], 2);
    assert_eq!(got["topics"]["/tf_static"], 1);
    let static_tf = got["static"].as_array().unwrap();
    assert_eq!(static_tf.len(), 2);
    assert_eq!(static_tf[0][0], "base_link");
    assert_eq!(static_tf[1][1], "right");
    assert!((static_tf[1][2].as_f64().unwrap() + 1.0).abs() < 1e-6);
    assert!((static_tf[1][3].as_f64().unwrap() - 1.8).abs() < 1e-6);
    let poses = fs::read_to_string(d.join("m/poses.csv")).unwrap();
    assert!(poses.starts_with("sensor,frame,time,"), "{poses}");
    assert_eq!(poses.lines().filter(|l| l.starts_with("right,")).count(), 2);
}

#[test]
fn a_rig_is_drawn_with_a_colour_per_sensor() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    setup(d);
    let args = [
        "render", "--rig", "rig.yaml", "--scene", "wall.glb", "--thin",
    ];
    let more = [
        "--colour",
        "sensor",
        "--size",
        "320x240",
        "--no-legend",
        "--out",
        "p.png",
    ];
    let said = beamtrace(d, &[&args[..], &more[..]].concat());
    assert!(said.contains("points"), "{said}");
    let decoder = png::Decoder::new(std::io::BufReader::new(
        fs::File::open(d.join("p.png")).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut rgba = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut rgba).unwrap();
    // The first two colours of the Tableau 10 palette the categories use.
    let count = |rgb: [u8; 3]| rgba.chunks(4).filter(|p| p[..3] == rgb).count();
    let (left, right) = (count([31, 119, 180]), count([255, 127, 14]));
    assert!(
        left > 100 && right > 100,
        "both sensors' points drawn: {left} and {right} pixels"
    );
}

/// A batch manifest's `rigs:` take the place of sensors: every member writes its frames
/// (a 20 Hz member two per rig frame), and the shards merge.
#[test]
fn a_batch_runs_rigs_in_shards() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    setup(d);
    fs::write(
        d.join("approach.yaml"),
        "scene: wall.glb\nduration_s: 0.3\nvehicle:\n  keyframes:\n    \
         - { t: 0, position: [0, 0, 0], yaw_deg: 0 }\n    \
         - { t: 0.3, position: [1, 0, 0], yaw_deg: 0 }\n",
    )
    .unwrap();
    fs::write(
        d.join("fast.yaml"),
        "sensors:\n  - { name: slow, sensor: vlp-16 }\n  - { name: quick, sensor: vlp-16, frame_rate: 20 }\n",
    )
    .unwrap();
    fs::write(
        d.join("batch.yaml"),
        "scenarios: [approach.yaml]\nrigs: [rig.yaml, fast.yaml]\nthin: true\nsun: none\n",
    )
    .unwrap();
    for shard in ["0/2", "1/2"] {
        beamtrace(d, &["batch", "batch.yaml", "--shard", shard, "--out", "o"]);
    }
    beamtrace(d, &["merge", "o"]);
    let frames = |job: &str, member: &str| {
        let dir = d.join("o/approach").join(job).join("seed-0").join(member);
        (fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())))
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "pcd")
            })
            .count()
    };
    assert_eq!((frames("pair", "left"), frames("pair", "right")), (3, 3));
    assert_eq!((frames("fast", "slow"), frames("fast", "quick")), (3, 6));
}

/// `stream --rig`: each sensor's data packets reach its own port.
#[test]
fn a_rig_streams_each_sensor_to_its_own_port() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    setup(d);
    let listen = || std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let (a, b) = (listen(), listen());
    for s in [&a, &b] {
        s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
    }
    let port = |s: &std::net::UdpSocket| s.local_addr().unwrap().port();
    fs::write(
        d.join("ports.yaml"),
        format!(
            "sensors:\n  - {{ name: left, sensor: vlp-16, port: {} }}\n  \
             - {{ name: right, sensor: vlp-16, port: {}, mount: {{ translation: [0, -1, 1.2] }} }}\n",
            port(&a),
            port(&b)
        ),
    )
    .unwrap();
    let args = [
        "stream",
        "--rig",
        "ports.yaml",
        "--scene",
        "wall.glb",
        "--thin",
        "--fast",
    ];
    let said = beamtrace(
        d,
        &[&args[..], &["--frames", "1", "--to", "127.0.0.1:9"]].concat(),
    );
    assert!(said.contains("left:") && said.contains("right:"), "{said}");
    let mut buf = [0u8; 2048];
    for s in [&a, &b] {
        let (n, _) = s
            .recv_from(&mut buf)
            .expect("a packet on the sensor's port");
        assert_eq!(n, 1206, "a Velodyne data packet");
    }
}
