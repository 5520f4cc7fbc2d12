//! The waveform pass's builds (shaders/waveform_*.comp) against the CPU reference
//! (`reference::frame_echoes`) on synthetic frames, and the GLSL counter RNG against
//! `sensor::rng`, with the validation layer on.
//!
//! Tolerances: echo counts and ids equal; range 1 mm; amplitude 1e-4 relative; EPW 1e-4
//! relative plus 1e-5 m (an EPW is the difference of two f32 ranges, whose spacing at
//! 100 m is 7.6e-6 m, so a barely detected echo's EPW cannot be relative-exact).

use beamtrace::contract::{
    WaveformBinding, MAX_RETURNS, PER_THREAD_RECORDS, PER_THREAD_RECORDS_FEW,
    PER_THREAD_RECORDS_THIN, WAVEFORM_BEAMS_PER_GROUP,
};
use beamtrace::gpu::{
    self, check_layout, run_once, Buffer, BufferUsageFlags, ComputePipeline, Context,
    ContextOptions, MemoryLocation, Pass, ShaderSources, Spirv,
};
use beamtrace::model::{Echo, FrameSettings, RecordLayout, SubRayRecord};
use beamtrace::reference::frame_echoes;
use beamtrace::sensor::{
    rng, DualPolicy, Noise, RangeEstimator, RangeLimit, ReturnMode, WaveformSettings,
};
use beamtrace::sim::{order_words, shader_sources, waveform_params, GpuEcho, GpuRecord};
use std::mem::size_of;
use std::sync::Arc;

/// The simulator's shader sources (with the generated contract header) and the RNG test.
fn sources() -> ShaderSources {
    shader_sources().add("rng_test.comp", RNG_TEST)
}

fn context() -> Arc<Context> {
    Context::new(&ContextOptions {
        device_index: None,
        validation: true,
        ..Default::default()
    })
    .expect("a Vulkan device (lavapipe in CI)")
}

/// A small deterministic generator for the synthetic frames (not the simulator's RNG).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 40) as f32) / (1u64 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next()
    }
    fn below(&mut self, n: u32) -> u32 {
        ((self.next() * n as f32) as u32).min(n - 1)
    }
}

const SUBRAYS: usize = 64;
const SLOTS: usize = 4;
const RPB: usize = SUBRAYS * SLOTS;

/// One beam's records: a mix of the situations the waveform stage meets.
fn beam_records(kind: u32, g: &mut Lcg) -> Vec<SubRayRecord> {
    let mut recs = vec![SubRayRecord::default(); RPB];
    let weights: Vec<f32> = {
        let w: Vec<f32> = (0..SUBRAYS).map(|_| g.range(0.2, 1.0)).collect();
        let sum: f32 = w.iter().sum();
        w.iter().map(|x| x / sum).collect()
    };
    let inst = 1 + g.below(50);
    let sun = if g.next() < 0.5 {
        g.range(0.0, 2e-4)
    } else {
        0.0
    };
    let put = |recs: &mut Vec<SubRayRecord>,
               sub: usize,
               k: usize,
               range: f32,
               refl: f32,
               id: u32,
               trans: f32| {
        let w = weights[sub];
        recs[sub * SLOTS + k] = SubRayRecord {
            range,
            signal: w * trans * refl / (range * range),
            ambient: w * sun * refl,
            instance_id: id,
            class_id: id % 7,
            material: id % 5,
            bounces: id % 3,
        };
    };
    match kind {
        0 => {}
        1 => {
            // Perpendicular target.
            let r = g.range(2.0, 150.0);
            let refl = g.range(0.02, 1.0);
            for s in 0..SUBRAYS {
                put(&mut recs, s, 0, r, refl, inst, 1.0);
            }
        }
        2 => {
            // Step edge: part of the footprint on a near object, the rest behind.
            let r1 = g.range(3.0, 80.0);
            let r2 = r1 + g.range(0.4, 6.0);
            let split = 1 + g.below(SUBRAYS as u32 - 1) as usize;
            let (ra, rb) = (g.range(0.05, 0.9), g.range(0.05, 0.9));
            for s in 0..SUBRAYS {
                if s < split {
                    put(&mut recs, s, 0, r1, ra, inst, 1.0);
                } else {
                    put(&mut recs, s, 0, r2, rb, inst + 100, 1.0);
                }
            }
        }
        3 => {
            // Tilted plane: ranges spread over the footprint.
            let r = g.range(5.0, 100.0);
            let d = g.range(0.05, 3.0);
            let refl = g.range(0.05, 0.8);
            for s in 0..SUBRAYS {
                let x = s as f32 / (SUBRAYS - 1) as f32 * 2.0 - 1.0;
                put(
                    &mut recs,
                    s,
                    0,
                    r + d * x,
                    refl * g.range(0.8, 1.0),
                    inst,
                    1.0,
                );
            }
        }
        4 => {
            // Glass pane in front of a wall: a weak return, then the wall through it.
            let rg = g.range(2.0, 40.0);
            let rw = rg + g.range(0.5, 20.0);
            let refl = g.range(0.1, 0.9);
            for s in 0..SUBRAYS {
                put(&mut recs, s, 0, rg, 0.04, inst, 1.0);
                put(&mut recs, s, 1, rw, refl, inst + 200, 0.92 * 0.92);
            }
        }
        5 => {
            // Partial hits, some sub-rays to the sky, several layers.
            let r = g.range(3.0, 120.0);
            for s in 0..SUBRAYS {
                if g.next() < 0.4 {
                    continue;
                }
                if g.next() < 0.2 {
                    // A sunlit absorbent hit: no signal, only ambient.
                    recs[s * SLOTS] = SubRayRecord {
                        range: r,
                        signal: 0.0,
                        ambient: 1e-4,
                        instance_id: inst + 9,
                        class_id: 1,
                        material: 2,
                        bounces: 0,
                    };
                    continue;
                }
                let layers = 1 + g.below(SLOTS as u32) as usize;
                for k in 0..layers {
                    put(
                        &mut recs,
                        s,
                        k,
                        r + k as f32 * g.range(0.1, 4.0),
                        g.range(0.02, 0.6),
                        inst + k as u32,
                        0.9,
                    );
                }
            }
        }
        6 => {
            // A wide cluster (grazing ground): several windows of bins.
            let r = g.range(5.0, 20.0);
            for s in 0..SUBRAYS {
                for k in 0..SLOTS {
                    let i = (s * SLOTS + k) as f32;
                    put(
                        &mut recs,
                        s,
                        k,
                        r + i * 0.55 + g.range(0.0, 0.1),
                        g.range(0.01, 0.5),
                        inst,
                        1.0,
                    );
                }
            }
        }
        7 => {
            // Weak filler every metre over 200 m (one cluster of ~4 000 bins) with strong
            // returns on it, some across window boundaries.
            let t = 0.1 / (120.0f32 * 120.0);
            let start = g.range(3.0, 10.0);
            let boundary = start - 5.0 * 0.3185 + 1024.0 * 0.075;
            for (i, rec) in recs.iter_mut().enumerate().take(201) {
                *rec = SubRayRecord {
                    range: start + i as f32,
                    signal: 0.3 * t,
                    ambient: 0.0,
                    instance_id: 99,
                    class_id: 9,
                    material: 9,
                    bounces: 1,
                };
            }
            for (j, r) in [
                boundary,
                boundary + g.range(5.0, 60.0),
                start + g.range(100.0, 199.0),
            ]
            .into_iter()
            .enumerate()
            {
                for k in 0..8 {
                    recs[210 + j * 8 + k] = SubRayRecord {
                        range: r,
                        signal: g.range(2.0, 5.0) * t,
                        ambient: 0.0,
                        instance_id: inst + j as u32,
                        class_id: 3,
                        material: 4,
                        bounces: j as u32 % 4,
                    };
                }
            }
        }
        _ => {
            // Retroreflector next to a diffuse surface: a huge, wide echo.
            let r = g.range(5.0, 60.0);
            for s in 0..SUBRAYS {
                if s % 8 == 0 {
                    put(&mut recs, s, 0, r, 1500.0, inst + 300, 1.0);
                } else {
                    put(&mut recs, s, 0, r + g.range(0.0, 0.3), 0.2, inst, 1.0);
                }
            }
        }
    }
    recs
}

fn params() -> FrameSettings {
    let sigma_r = 0.75 / (2.0 * (2.0f32 * 2.0f32.ln()).sqrt());
    FrameSettings {
        min_range: 0.3,
        max_range: 200.0,
        seed: 0x9abc_def0_1234_5678,
        frame: 3,
        waveform: WaveformSettings {
            sigma_r,
            bin_width: sigma_r / 4.0,
            threshold: 0.1 / (120.0 * 120.0),
            ambient_k: 1e-4,
            saturation: 0.0,
            estimator: RangeEstimator::Peak,
            return_mode: ReturnMode::All,
            max_returns: 4,
            min_separation: 0.5,
            limit: RangeLimit::Threshold,
            noise: Noise::default(),
        },
        ..FrameSettings::default()
    }
}

/// `frame` with its waveform settings changed by `change`.
fn with(frame: FrameSettings, change: impl FnOnce(&mut WaveformSettings)) -> FrameSettings {
    let mut f = frame;
    change(&mut f.waveform);
    f
}

/// `beams` beams of `rpb` records each.
fn layout(beams: u32, rpb: usize) -> RecordLayout {
    RecordLayout {
        beams,
        subrays: rpb as u32,
        slots: 1,
        max_bounces: 1,
    }
}

fn slots(frame: &FrameSettings) -> usize {
    frame.waveform.max_returns.clamp(1, MAX_RETURNS) as usize
}

fn compile(name: &str, defines: &[(&str, &str)]) -> Spirv {
    gpu::compile(&sources(), name, defines).unwrap_or_else(|e| panic!("{e}"))
}

/// A waveform build's pipeline, its beams per workgroup, and the order pass before it
/// (the ordered build).
type Build<'a> = (
    &'a Arc<ComputePipeline>,
    u32,
    Option<&'a Arc<ComputePipeline>>,
);

/// The echoes of a build for `records`.
fn gpu_echoes(
    ctx: &Arc<Context>,
    (pipeline, beams_per_group, order): Build<'_>,
    records: &[SubRayRecord],
    layout: RecordLayout,
    frame: &FrameSettings,
) -> (Vec<Echo>, Vec<u32>) {
    let slots = slots(frame);
    let beams = layout.beams as usize;
    let records: Vec<GpuRecord> = records.iter().map(GpuRecord::from).collect();
    let input = Buffer::from_slice(ctx, "records", &records, BufferUsageFlags::STORAGE_BUFFER)
        .map(Arc::new)
        .expect("records");
    let host = |name: &str, bytes: usize| {
        Buffer::new(
            ctx,
            name,
            bytes as u64,
            BufferUsageFlags::STORAGE_BUFFER,
            MemoryLocation::GpuToCpu,
        )
        .map(Arc::new)
        .expect("buffer")
    };
    let out = host("echoes", beams * slots * size_of::<GpuEcho>());
    let counts = host("counts", beams * 4);
    let mut sets = pipeline.descriptor_sets().expect("sets");
    sets.bind_buffer(0, WaveformBinding::Echoes.number(), &out)
        .expect("bind");
    sets.bind_buffer(0, WaveformBinding::Counts.number(), &counts)
        .expect("bind");
    let sets = Arc::new(sets);
    let order = order.map(|o| {
        let words = layout.beams as u64 * order_words(layout.records_per_beam());
        let usage = BufferUsageFlags::STORAGE_BUFFER;
        let buffer = Buffer::new(ctx, "order", words * 4, usage, MemoryLocation::GpuOnly);
        let sets = o.descriptor_sets().expect("order sets");
        (o, Arc::new(buffer.expect("order buffer")), Arc::new(sets))
    });
    run_once(ctx, |rec| {
        let mut p = waveform_params(frame, layout, rec.address_of(&input));
        if let Some((o, buffer, sets)) = &order {
            p.build_address = rec.address_of(buffer);
            rec.dispatch(o, sets, bytemuck::bytes_of(&p), [p.beam_count, 1, 1])?;
            rec.barrier(&[Pass::Compute], &[Pass::Compute]);
        }
        let groups = p.beam_count.div_ceil(beams_per_group);
        rec.dispatch(pipeline, &sets, bytemuck::bytes_of(&p), [groups, 1, 1])?;
        rec.barrier_to_host();
        Ok(())
    })
    .expect("dispatch");
    let echoes: Vec<GpuEcho> = out.read(beams * slots).expect("read echoes");
    (
        echoes.into_iter().map(Echo::from).collect(),
        counts.read(beams).expect("read counts"),
    )
}

fn rel_close(a: f32, b: f32, rel: f32, abs: f32) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()) + abs
}

/// Compares GPU and CPU echoes; returns the number of echoes compared.
fn compare(
    label: &str,
    frame: &FrameSettings,
    gpu: &(Vec<Echo>, Vec<u32>),
    cpu: &(Vec<Echo>, Vec<u32>),
) -> usize {
    let slots = slots(frame);
    assert_eq!(gpu.1.len(), cpu.1.len(), "{label}: beams");
    let mut n = 0;
    for b in 0..gpu.1.len() {
        assert_eq!(
            gpu.1[b], cpu.1[b],
            "{label}: beam {b} echo count (gpu vs cpu)"
        );
        for i in 0..slots {
            let (g, c) = (gpu.0[b * slots + i], cpu.0[b * slots + i]);
            let at = format!("{label}: beam {b} echo {i}: gpu {g:?} cpu {c:?}");
            assert!((g.range - c.range).abs() <= 1e-3, "{at}");
            assert!(rel_close(g.amplitude, c.amplitude, 1e-4, 0.0), "{at}");
            // The pulse width ends at threshold crossings interpolated inside a bin from
            // differences of bin values; f32 rounding that differs between devices (fused
            // multiply-adds, a GPU's approximate division) moves a crossing by a small
            // fraction of a bin (3e-5 m at most on an NVIDIA H100; none on lavapipe).
            let epw_abs = 2e-3 * frame.waveform.bin_width;
            assert!(rel_close(g.epw, c.epw, 1e-4, epw_abs), "{at}");
            let dr = (g.range - c.range).abs() / c.range.max(1e-3);
            assert!(
                rel_close(g.reflectance, c.reflectance, 1e-4 + 2.0 * dr, 0.0),
                "{at}"
            );
            assert!(rel_close(g.ambient, c.ambient, 1e-5, 0.0), "{at}");
            assert_eq!(
                (
                    g.instance_id,
                    g.class_id,
                    g.material,
                    g.return_index,
                    g.return_count
                ),
                (
                    c.instance_id,
                    c.class_id,
                    c.material,
                    c.return_index,
                    c.return_count
                ),
                "{at}"
            );
        }
        n += gpu.1[b] as usize;
    }
    n
}

/// `base` with every kind of measurement noise on.
fn noisy(base: FrameSettings) -> FrameSettings {
    with(base, |w| {
        w.noise = Noise {
            range_sigma_m: 0.01,
            range_sigma_snr_m: 0.02,
            amplitude_rel: 0.05,
            pd_width: 0.1,
            false_alarm_rate: 0.2,
        }
    })
}

/// The waveform settings both builds are compared under: every return mode, estimator
/// and threshold curve, noise, saturation.
fn configs() -> Vec<(&'static str, FrameSettings)> {
    let base = params();
    let noisy = noisy(base);
    vec![
        ("all, peak", base),
        ("noise, all", noisy),
        (
            "strongest, leading edge, curve",
            with(noisy, |w| {
                w.return_mode = ReturnMode::Strongest;
                w.estimator = RangeEstimator::LeadingEdge;
                w.limit = RangeLimit::Root2 {
                    b: 0.1 / (100.0 * 100.0),
                };
            }),
        ),
        (
            "dual, centroid, 8 returns",
            FrameSettings {
                frame: 4,
                ..with(noisy, |w| {
                    w.return_mode = ReturnMode::Dual(DualPolicy::StrongestLast);
                    w.estimator = RangeEstimator::Centroid;
                    w.max_returns = 8;
                    w.min_separation = 0.0;
                })
            },
        ),
        (
            "root-4 curve (threshold varies per bin), centroid",
            with(noisy, |w| {
                w.estimator = RangeEstimator::Centroid;
                w.limit = RangeLimit::Root4 {
                    b: 0.1 / 100f32.powi(4),
                };
            }),
        ),
        (
            "saturated at 10 T (plateaus), noise, all",
            with(noisy, |w| w.saturation = 10.0 * w.threshold),
        ),
        (
            "Ouster dual, 2 returns",
            with(noisy, |w| {
                w.return_mode = ReturnMode::Dual(DualPolicy::StrongestSecond);
                w.max_returns = 2;
            }),
        ),
        (
            "last, log curve, fine bins",
            with(base, |w| {
                w.return_mode = ReturnMode::Last;
                w.bin_width = 0.05;
                w.limit = RangeLimit::Logarithmic {
                    a: 100.0 - 20.0 * 0.1f32.ln(),
                    b: 20.0,
                };
            }),
        ),
    ]
}

#[test]
fn gpu_waveform_matches_the_cpu_reference() {
    let ctx = context();
    let spirv = compile("waveform_workgroup.comp", &[]);
    // The host's own layouts (the ones the simulator checks), those of this shader.
    let layouts = beamtrace::sim::gpu_types::echo_layouts();
    for host in layouts
        .iter()
        .filter(|l| ["SubRayRecord", "Echo", "WaveformParams"].contains(&l.name))
    {
        let uses = check_layout(&[&spirv], host).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            uses > 0,
            "{} not found in waveform_workgroup.comp",
            host.name
        );
    }
    let pipeline = Arc::new(ComputePipeline::new(&ctx, &spirv).expect("pipeline"));
    assert_eq!(pipeline.workgroup_size, (64, 1, 1));

    let beams = 2700u32;
    let mut g = Lcg(7);
    let mut records = Vec::with_capacity(beams as usize * RPB);
    for b in 0..beams {
        let mut beam = beam_records(b % 9, &mut g);
        // Slots in no particular order: the results must not depend on it.
        let turn = g.below(RPB as u32) as usize;
        beam.rotate_left(turn);
        records.extend(beam);
    }

    let noisy = noisy(params());
    let configs = configs();
    let mut total = 0;
    let frame_layout = layout(beams, RPB);
    for (label, p) in configs {
        let gpu = gpu_echoes(&ctx, (&pipeline, 1, None), &records, frame_layout, &p);
        let cpu = frame_echoes(&records, frame_layout, &p);
        let n = compare(label, &p, &gpu, &cpu);
        eprintln!("{label}: {n} echoes agree");
        assert!(
            n > beams as usize / 2,
            "{label}: only {n} echoes: the frame is too empty to test"
        );
        total += n;
    }
    assert!(total > 5000, "{total}");

    // Other kernel sizes: 150 slots (not a power of two) and the largest, 1024 (four
    // beams' records stacked: several clusters per beam).
    for rpb in [150usize, 1024] {
        let beams = 400u32;
        let mut recs = Vec::with_capacity(beams as usize * rpb);
        for b in 0..beams {
            let mut beam = Vec::new();
            while beam.len() < rpb {
                beam.extend(beam_records((b + beam.len() as u32) % 9, &mut g));
            }
            beam.truncate(rpb);
            recs.extend(beam);
        }
        let p = with(noisy, |w| w.max_returns = 8);
        let l = layout(beams, rpb);
        let label = format!("{rpb} records per beam");
        let n = compare(
            &label,
            &p,
            &gpu_echoes(&ctx, (&pipeline, 1, None), &recs, l, &p),
            &frame_echoes(&recs, l, &p),
        );
        eprintln!("{label}: {n} echoes agree");
        assert!(n > beams as usize, "{label}: only {n} echoes");
    }
    drop(pipeline);
    let m = ctx.validation_messages();
    assert!(m.is_empty(), "validation messages: {m:#?}");
}

/// The per-thread builds (one invocation per beam, for beams of few records) against
/// the CPU reference: the thin rays' build (PER_THREAD_RECORDS_THIN) at one record per
/// beam (thin rays without glass, lone records in closed form) and four (thin rays
/// behind panes); the next at four, 48 (not a power of two) and the most it takes,
/// PER_THREAD_RECORDS_FEW (clusters of several records); the largest at its most,
/// PER_THREAD_RECORDS.
#[test]
fn per_thread_waveform_matches_the_cpu_reference() {
    let builds = [
        (PER_THREAD_RECORDS_THIN, vec![1usize, SLOTS]),
        (
            PER_THREAD_RECORDS_FEW,
            vec![SLOTS, 48, PER_THREAD_RECORDS_FEW as usize],
        ),
        (PER_THREAD_RECORDS, vec![PER_THREAD_RECORDS as usize]),
    ];
    for (capacity, sizes) in builds {
        per_thread_build_matches(capacity, &sizes, false);
    }
}

/// The ordered build (GPUs: the order pass, a workgroup per beam, then the per-thread
/// build reading the records in its order) against the CPU reference over the sizes
/// GPUs give it: from one more than PER_THREAD_RECORDS_FEW to PER_THREAD_RECORDS.
#[test]
fn ordered_waveform_matches_the_cpu_reference() {
    let few = PER_THREAD_RECORDS_FEW as usize;
    let most = PER_THREAD_RECORDS as usize;
    per_thread_build_matches(PER_THREAD_RECORDS, &[few + 1, 150, most], true);
}

fn per_thread_build_matches(capacity: u32, sizes: &[usize], ordered: bool) {
    let ctx = context();
    let capacity = capacity.to_string();
    let file = if ordered {
        "waveform_ordered.comp"
    } else {
        "waveform_per_thread.comp"
    };
    let spirv = compile(file, &[("PER_THREAD_CAPACITY", &capacity)]);
    let pipeline = Arc::new(ComputePipeline::new(&ctx, &spirv).expect("pipeline"));
    let order = ordered.then(|| {
        let spirv = compile("order.comp", &[]);
        Arc::new(ComputePipeline::new(&ctx, &spirv).expect("order pipeline"))
    });
    let order = order.as_ref();
    let per_group = WAVEFORM_BEAMS_PER_GROUP;
    assert_eq!(pipeline.workgroup_size, (per_group, 1, 1));
    let mut g = Lcg(11);
    // Beams not a multiple of the group: the last group's spare invocations write nothing.
    let beams = 2701u32;
    for &rpb in sizes {
        let mut records = Vec::with_capacity(beams as usize * rpb);
        for b in 0..beams {
            let mut beam = beam_records(b % 9, &mut g);
            beam.truncate(rpb);
            let turn = g.below(rpb as u32) as usize;
            beam.rotate_left(turn);
            records.extend(beam);
        }
        let l = layout(beams, rpb);
        for (label, p) in configs() {
            let label = format!("{rpb} records per beam, {label}");
            let gpu = gpu_echoes(&ctx, (&pipeline, per_group, order), &records, l, &p);
            let n = compare(&label, &p, &gpu, &frame_echoes(&records, l, &p));
            eprintln!("{label}: {n} echoes agree");
            assert!(n > beams as usize / 4, "{label}: only {n} echoes");
        }
    }
    drop(pipeline);
    let m = ctx.validation_messages();
    assert!(m.is_empty(), "validation messages: {m:#?}");
}

/// One beam of `SUBRAYS` records: echoes at 10, 20, 30 m (instances 1, 2, 3) whose
/// amplitudes are `strength` (each target takes an equal share of the sub-rays).
fn echoes_of_strength(strength: &[f32]) -> Vec<SubRayRecord> {
    let per = SUBRAYS / strength.len();
    let mut recs = Vec::new();
    for (i, &a) in strength.iter().enumerate() {
        let r = 10.0 * (i + 1) as f32;
        recs.extend((0..per).map(|_| SubRayRecord {
            range: r,
            signal: a / per as f32,
            instance_id: i as u32 + 1,
            ..SubRayRecord::default()
        }));
    }
    recs.resize(SUBRAYS, SubRayRecord::default());
    recs
}

#[test]
fn gpu_dual_returns_follow_each_vendors_definition() {
    // Velodyne (VLP-16/HDL-32E/HDL-64E manuals, dual return mode): the strongest and the
    // last echo; when the strongest is the last, the second strongest and the last.
    // Ouster (firmware 2.x dual returns): the strongest and the second strongest. Two
    // points whenever there are two echoes, in range order; one point for one echo. The
    // pairs below are those rules applied by hand, one beam per case.
    let cases: [(&[f32], [u32; 2], [u32; 2]); 5] = [
        // (amplitudes at 10/20/30 m, Velodyne's pair, Ouster's pair)
        (&[1e-4, 4e-4], [1, 2], [1, 2]),
        (&[4e-4, 1e-4], [1, 2], [1, 2]),
        (&[9e-4, 4e-4, 1e-4], [1, 3], [1, 2]),
        (&[1e-4, 4e-4, 9e-4], [2, 3], [2, 3]),
        (&[4e-4, 9e-4, 1e-4], [2, 3], [1, 2]),
    ];
    let mut records: Vec<SubRayRecord> =
        cases.iter().flat_map(|c| echoes_of_strength(c.0)).collect();
    records.extend(echoes_of_strength(&[4e-4]));
    let beams = cases.len() + 1;
    let ctx = context();
    let pipeline = Arc::new(
        ComputePipeline::new(&ctx, &compile("waveform_workgroup.comp", &[])).expect("pipeline"),
    );
    let l = layout(beams as u32, SUBRAYS);
    for (policy, column) in [
        (DualPolicy::StrongestLast, 0),
        (DualPolicy::StrongestSecond, 1),
    ] {
        let p = with(params(), |w| {
            w.return_mode = ReturnMode::Dual(policy);
            w.max_returns = 2;
        });
        let (echoes, counts) = gpu_echoes(&ctx, (&pipeline, 1, None), &records, l, &p);
        for (b, case) in cases.iter().enumerate() {
            let want = if column == 0 { case.1 } else { case.2 };
            let got = &echoes[2 * b..2 * b + counts[b] as usize];
            let ids: Vec<u32> = got.iter().map(|e| e.instance_id).collect();
            assert_eq!(ids, want, "{policy:?}, amplitudes {:?}: {got:?}", case.0);
            let index: Vec<_> = got
                .iter()
                .map(|e| (e.return_index, e.return_count))
                .collect();
            assert_eq!(index, [(0, 2), (1, 2)], "{policy:?}, {:?}", case.0);
        }
        let last = beams - 1;
        assert_eq!(counts[last], 1, "{policy:?}: one echo, one point");
        assert_eq!(echoes[2 * last].instance_id, 1);
    }
    drop(pipeline);
    let m = ctx.validation_messages();
    assert!(m.is_empty(), "validation messages: {m:#?}");
}

const RNG_TEST: &str = r#"
#version 460
#extension GL_EXT_scalar_block_layout : require
#include "rng.glsl"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, scalar) readonly buffer In { uvec4 inputs[]; };
layout(set = 0, binding = 1, scalar) writeonly buffer Hashes { uint hashes[]; };
layout(set = 0, binding = 2, scalar) writeonly buffer Uniforms { float uniforms[]; };
layout(set = 0, binding = 3, scalar) writeonly buffer Gauss { float gaussians[]; };
layout(push_constant, scalar) uniform Push { uint count; uint seed_hi; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= count) return;
    uvec4 v = inputs[i];
    uint h = rng_hash(v.x, seed_hi, v.y, v.z, v.w);
    hashes[i] = h;
    uniforms[i] = rng_uniform(h);
    gaussians[i] = rng_gaussian(h, rng_hash(v.x, seed_hi, v.y, v.z, v.w + 1u));
}
"#;

#[test]
fn glsl_rng_is_bit_identical_to_rust() {
    let ctx = context();
    let spirv = compile("rng_test.comp", &[]);
    let pipeline = ComputePipeline::new(&ctx, &spirv).expect("pipeline");
    let n = 50_000usize;
    let mut g = Lcg(99);
    let seed_hi = 0xdead_beefu32;
    let inputs: Vec<[u32; 4]> = (0..n)
        .map(|i| {
            let r = |g: &mut Lcg| (g.next() * 16_777_216.0) as u32 ^ ((i as u32) << 20);
            [r(&mut g), r(&mut g), i as u32, r(&mut g) % 0x30000]
        })
        .collect();
    let input = Buffer::from_slice(&ctx, "inputs", &inputs, BufferUsageFlags::STORAGE_BUFFER)
        .map(Arc::new)
        .expect("inputs");
    let out = |name| {
        Buffer::new(
            &ctx,
            name,
            (n * 4) as u64,
            BufferUsageFlags::STORAGE_BUFFER,
            MemoryLocation::GpuToCpu,
        )
        .map(Arc::new)
        .expect("buffer")
    };
    let (hashes, uniforms, gauss) = (out("hashes"), out("uniforms"), out("gaussians"));
    let mut sets = pipeline.descriptor_sets().expect("sets");
    sets.bind_buffer(0, 0, &input).expect("bind");
    sets.bind_buffer(0, 1, &hashes).expect("bind");
    sets.bind_buffer(0, 2, &uniforms).expect("bind");
    sets.bind_buffer(0, 3, &gauss).expect("bind");
    let (pipeline, sets) = (Arc::new(pipeline), Arc::new(sets));
    let mut push = Vec::new();
    push.extend_from_slice(&(n as u32).to_le_bytes());
    push.extend_from_slice(&seed_hi.to_le_bytes());
    run_once(&ctx, |rec| {
        rec.dispatch(&pipeline, &sets, &push, [n.div_ceil(64) as u32, 1, 1])?;
        rec.barrier_to_host();
        Ok(())
    })
    .expect("dispatch");
    let gh: Vec<u32> = hashes.read(n).expect("read");
    let gu: Vec<f32> = uniforms.read(n).expect("read");
    let gg: Vec<f32> = gauss.read(n).expect("read");
    let mut worst = 0.0f32;
    for (i, v) in inputs.iter().enumerate() {
        let seed = v[0] as u64 | ((seed_hi as u64) << 32);
        let h = rng::hash(seed, v[1], v[2], v[3]);
        assert_eq!(gh[i], h, "hash of {v:?}");
        assert_eq!(
            gu[i].to_bits(),
            rng::uniform(h).to_bits(),
            "uniform of {v:?}"
        );
        let h2 = rng::hash(seed, v[1], v[2], v[3] + 1);
        let c = rng::gaussian(h, h2);
        // Box–Muller through the device's log/cos: close, not bit-exact.
        worst = worst.max((gg[i] - c).abs());
        assert!(
            (gg[i] - c).abs() <= 1e-5 * (1.0 + c.abs()),
            "gaussian {i}: gpu {} cpu {c}",
            gg[i]
        );
    }
    eprintln!("largest Gaussian difference {worst:e}");
    drop(pipeline);
    let m = ctx.validation_messages();
    assert!(m.is_empty(), "validation messages: {m:#?}");
}
