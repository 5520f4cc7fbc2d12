//! The CPU version of the GPU trace pass (shaders/trace.rgen and the hit shaders): the
//! same sub-ray directions, the same any-hit rules for glass and alpha masks, the same
//! shadow rays, the same path trees through mirrors and panes, the same tables —
//! written as the same return records in the same slots.

use super::path::{Pane, PathRay, PathStack};
use super::{BeamBins, Bvh, Hit, ReferenceError};
use crate::contract::{MAX_BOUNCES, MAX_TRANSPARENT, SAME_CROSSING};
use crate::material::{MaterialClass, MaterialDb};
use crate::model::{Echo, FrameSettings, RecordLayout, SceneTables, SubRayRecord};
use crate::scene::Scene;
use crate::sensor::{rng, Beam, SubRaySample};
use glam::{Vec2, Vec3};
use rayon::prelude::*;

/// Transparent surfaces noted per sub-ray, as an index bound.
const NOTES: usize = MAX_TRANSPARENT as usize;

/// A scene prepared for CPU tracing with the tables of the GPU.
pub struct CpuSimulator {
    bvh: Bvh,
    tables: SceneTables,
    instance_ids: Vec<u32>,
    classes: Vec<u32>,
    instance_mesh: Vec<u32>,
    /// Per mesh, per primitive: (indices, uvs).
    primitives: Vec<Vec<(Vec<u32>, Vec<Vec2>)>>,
    /// Surfaces a path may meet (`set_max_bounces`).
    max_bounces: u32,
}

/// The sub-ray direction exactly as `trace.rgen` computes it.
pub fn subray_direction(d: Vec3, dh: f32, dv: f32) -> Vec3 {
    if dh == 0.0 && dv == 0.0 {
        return d;
    }
    let h = Vec3::new(-d.y, d.x, 0.0);
    let hl = h.length();
    let h = if hl > 1e-6 { h / hl } else { Vec3::Y };
    let v = d.cross(h);
    (d + dh.tan() * h + dv.tan() * v).normalize()
}

/// What a surface's closest-hit shader makes of a ray that meets it.
#[derive(Clone, Copy, PartialEq)]
enum SurfaceKind {
    /// General and retroreflective surfaces: a return with its sunlight (HIT_SURFACE).
    Returns,
    /// A weak return, and the ray may go on in the mirror direction.
    Mirror,
    /// A pane the ray splits at (only rays that may still bounce meet one as a hit).
    Glass,
    /// No return at all.
    Absorbed,
}

/// The surface a ray met, as its hit shader describes it.
#[derive(Clone, Copy)]
struct Surface {
    kind: SurfaceKind,
    /// Facing the ray: shading normal (general, mirror) or the facet's (retroreflective,
    /// glass).
    normal: Vec3,
    reflectance: f32,
    material: u32,
}

#[derive(Clone, Copy)]
struct Note {
    t: f32,
    reflectance: f32,
    /// One-way share the crossing passes at its incidence.
    transmission: f32,
    instance: u32,
    material: u32,
}

impl CpuSimulator {
    pub fn new(
        scene: &Scene,
        db: &MaterialDb,
        material_map: &[u32],
    ) -> Result<Self, ReferenceError> {
        let tables = SceneTables::new(scene, db, material_map)?;
        Ok(CpuSimulator {
            bvh: Bvh::new(scene)?,
            tables,
            instance_ids: scene.instances.iter().map(|i| i.instance_id).collect(),
            classes: scene.instances.iter().map(|i| i.class as u32).collect(),
            instance_mesh: scene.instances.iter().map(|i| i.mesh).collect(),
            primitives: scene
                .meshes
                .iter()
                .map(|m| {
                    m.primitives
                        .iter()
                        .map(|p| (p.indices.clone(), p.uvs.clone()))
                        .collect()
                })
                .collect(),
            max_bounces: 1,
        })
    }

    /// How many surfaces one path of a sub-ray may meet (1..=[`MAX_BOUNCES`], see
    /// `Sensor::max_bounces`), as `Simulator::set_max_bounces` sets it on the GPU; the
    /// caller's `slots` should be [`SceneTables::record_slots`] of the same count.
    pub fn set_max_bounces(&mut self, max_bounces: u32) -> Result<(), ReferenceError> {
        if !(1..=MAX_BOUNCES).contains(&max_bounces) {
            return Err(ReferenceError::Bounces { max_bounces });
        }
        self.max_bounces = max_bounces;
        Ok(())
    }

    pub fn bvh(&self) -> &Bvh {
        &self.bvh
    }

    pub fn tables(&self) -> &SceneTables {
        &self.tables
    }

    /// Answers from `db` from now on: the same materials in the same classes with other
    /// values (a calibration's reflectances), without building the BVH again.
    pub fn set_materials(&mut self, db: &MaterialDb) -> Result<(), ReferenceError> {
        Ok(self.tables.set_materials(db)?)
    }

    /// A whole frame like `Simulator::frame`: the trace, then the waveform stage with the
    /// frame's parameters; `beams × max_returns` echo slots and the count per beam. The
    /// records are returned too, except for a binned layout (more records per beam than
    /// the record waveform sorts), whose beams are traced and binned one at a time
    /// ([`super::binned`]) and whose records are not kept (empty).
    pub fn frame(
        &self,
        beams: &[Beam],
        subrays: &[SubRaySample],
        frame: &FrameSettings,
        slots: u32,
    ) -> (Vec<SubRayRecord>, Vec<Echo>, Vec<u32>) {
        let layout = RecordLayout {
            beams: beams.len() as u32,
            subrays: subrays.len() as u32,
            slots,
            max_bounces: self.max_bounces,
        };
        if layout.binned() {
            let (echoes, counts) = self.binned_echoes(beams, subrays, frame, slots);
            return (Vec::new(), echoes, counts);
        }
        let records = self.trace(beams, subrays, frame, slots);
        let (echoes, counts) = super::frame_echoes(&records, layout, frame);
        (records, echoes, counts)
    }

    /// The echo slots and counts of a binned frame: each beam's sub-rays traced into one
    /// beam's records, deposited into its bins and scanned, beams spread over the cores.
    fn binned_echoes(
        &self,
        beams: &[Beam],
        subrays: &[SubRaySample],
        frame: &FrameSettings,
        slots: u32,
    ) -> (Vec<Echo>, Vec<u32>) {
        let per_ray = slots as usize;
        let mut found = vec![Vec::new(); beams.len()];
        // A beam's records and bins are made once per task, not per beam.
        let scratch = || {
            let records = vec![SubRayRecord::default(); subrays.len() * per_ray];
            (records, BeamBins::new(frame))
        };
        found
            .par_iter_mut()
            .enumerate()
            .for_each_init(scratch, |(records, bins), (b, out)| {
                for (sub, slot) in records.chunks_mut(per_ray).enumerate() {
                    let ray = (b as u32, sub as u32, subrays.len() as u32);
                    self.trace_one(&beams[b], ray, &subrays[sub], frame, slot);
                }
                bins.clear();
                bins.deposit(records);
                *out = bins.echoes(frame, b as u32);
            });
        let width = super::echo_slots(&frame.waveform) as usize;
        let mut echoes = vec![Echo::default(); beams.len() * width];
        let counts = found.iter().map(|e| e.len() as u32).collect();
        for (b, e) in found.iter().enumerate() {
            echoes[b * width..b * width + e.len()].copy_from_slice(e);
        }
        (echoes, counts)
    }

    fn geometry(&self, h: &Hit) -> usize {
        let mesh = self.instance_mesh[h.instance as usize] as usize;
        (self.tables.mesh_first_geometry[mesh] + h.primitive) as usize
    }

    fn uv(&self, h: &Hit) -> Option<Vec2> {
        let mesh = self.instance_mesh[h.instance as usize] as usize;
        let (indices, uvs) = &self.primitives[mesh][h.primitive as usize];
        if uvs.is_empty() {
            return None;
        }
        let base = 3 * h.triangle as usize;
        let (a, b, c) = (indices[base], indices[base + 1], indices[base + 2]);
        let (u, v) = (h.barycentrics.x, h.barycentrics.y);
        Some(uvs[a as usize] * (1.0 - u - v) + uvs[b as usize] * u + uvs[c as usize] * v)
    }

    fn alpha_keeps(&self, h: &Hit) -> bool {
        let g = &self.tables.geometries[self.geometry(h)];
        self.tables.alpha_keeps(g, self.uv(h))
    }

    /// `beams × subrays × slots` records, like the GPU's trace pass.
    pub fn trace(
        &self,
        beams: &[Beam],
        subrays: &[SubRaySample],
        frame: &FrameSettings,
        slots: u32,
    ) -> Vec<SubRayRecord> {
        let n = subrays.len().max(1);
        let per_ray = slots as usize;
        let mut out = vec![SubRayRecord::default(); beams.len() * n * per_ray];
        // Whole beams over the host's cores.
        out.par_chunks_mut((n * per_ray).max(1))
            .enumerate()
            .for_each(|(b, beam_out)| {
                for (sub, slot) in beam_out.chunks_mut(per_ray).enumerate() {
                    let ray = (b as u32, sub as u32, n as u32);
                    self.trace_one(&beams[b], ray, &subrays[sub], frame, slot);
                }
            });
        out
    }

    /// Sub-ray `sub_index` of `subrays` of beam `beam_index` into its slots `out`: the
    /// surfaces' slots first, then the medium's (`super::medium`).
    fn trace_one(
        &self,
        beam: &Beam,
        (beam_index, sub_index, subrays): (u32, u32, u32),
        sub: &SubRaySample,
        f: &FrameSettings,
        out: &mut [SubRayRecord],
    ) {
        let (dh, dv) = jittered_offset(sub, beam_index, sub_index, f);
        let d = subray_direction(beam.direction(), dh, dv);
        // The sensor's pose at the beam's firing time (rolling shutter), as the trace
        // shader interpolates it. Moving instances' time slices are the GPU's alone:
        // the reference traces the scene as uploaded.
        let pose = f.pose_at(beam.time);
        let origin = pose.transform_point3(beam.origin);
        let dir = pose.transform_vector3(d).normalize();
        out.fill(SubRayRecord::default());
        let surface = out.len().saturating_sub(f.medium_slots.total() as usize);
        let mut stack = PathStack::new(PathRay::first(origin, dir));
        let (mut written, mut first_opaque) = (0, f.max_range);
        while written < surface {
            let Some(p) = stack.pop() else { break };
            if p.path < f.max_range {
                let surfaces = &mut out[..surface];
                let (w, t_opaque) =
                    self.trace_segment(&p, sub.weight, f, &mut stack, surfaces, written);
                if p.bounces == 0 {
                    first_opaque = t_opaque;
                }
                written = w;
            }
        }
        if let Some(m) = &f.medium {
            let ray = super::medium::Ray {
                beam: beam_index,
                sub: sub_index,
                subrays,
                weight: sub.weight,
                first_opaque,
            };
            super::medium::add(m, f, &ray, out, surface);
        }
    }

    /// Traces ray `p` and writes its returns from slot `written` on; returns the next
    /// free slot and the distance to its opaque hit (`max_range` when none). A ray with no bounce left is traced as in single bounce: its surface's
    /// slot comes first, empty or not, then the panes noted in front of it. A ray that
    /// may still bounce meets panes as surfaces and sends its children to `stack`.
    fn trace_segment(
        &self,
        p: &PathRay,
        weight: f32,
        f: &FrameSettings,
        stack: &mut PathStack,
        out: &mut [SubRayRecord],
        mut written: usize,
    ) -> (usize, f32) {
        let last = p.bounces + 1 >= self.max_bounces;
        let (closest, notes) = self.trace_path_ray(p, !last, f);
        let t_opaque = closest.as_ref().map_or(f.max_range, |h| h.t);
        let met = closest.as_ref().map(|h| (h, self.surface(h, p.dir)));
        if let Some((h, s)) = met {
            if !last {
                self.push_children(stack, p, h, &s);
            }
            if s.kind != SurfaceKind::Absorbed {
                out[written] = self.surface_return(p, h, &s, weight, f, &notes);
            }
        }
        let returns = met.is_some_and(|(_, s)| s.kind != SurfaceKind::Absorbed);
        if returns || last {
            written += 1;
        }
        let next = self.write_transparent_records(&notes, p, t_opaque, weight, out, written);
        (next, t_opaque)
    }

    /// The surface `h` as its hit shader describes it to a ray along `dir`.
    fn surface(&self, h: &Hit, dir: Vec3) -> Surface {
        let g = &self.tables.geometries[self.geometry(h)];
        // Retroreflectors answer by the facet's orientation, not the interpolated one.
        let (kind, normal) = match g.class {
            MaterialClass::General => (SurfaceKind::Returns, h.shading_normal),
            MaterialClass::Retroreflective => (SurfaceKind::Returns, h.geometric_normal),
            MaterialClass::Mirror => (SurfaceKind::Mirror, h.shading_normal),
            MaterialClass::Transparent => (SurfaceKind::Glass, h.geometric_normal),
            MaterialClass::Absorbent => (SurfaceKind::Absorbed, Vec3::ZERO),
        };
        let reflectance = if kind == SurfaceKind::Absorbed {
            0.0
        } else {
            self.tables.reflectance(g.material, (-dir).dot(normal))
        };
        Surface {
            kind,
            normal,
            reflectance,
            material: g.material,
        }
    }

    /// The rays a mirror or a pane sends on from ray `p`'s hit `h`.
    fn push_children(&self, stack: &mut PathStack, p: &PathRay, h: &Hit, s: &Surface) {
        let m = &self.tables.materials[s.material as usize];
        match s.kind {
            SurfaceKind::Mirror => stack.push_mirror(p, h.t, s.normal, m.mirror_reflectance),
            SurfaceKind::Glass => {
                let cos = (-p.dir).dot(s.normal).clamp(0.0, 1.0);
                let pane = Pane {
                    material: m,
                    reflection: self.tables.pane_reflection(s.material, cos),
                    transmission: self.tables.pane_transmission(s.material, cos),
                };
                stack.push_glass(p, h.t, s.normal, h.front_face, pane);
            }
            SurfaceKind::Returns | SurfaceKind::Absorbed => {}
        }
    }

    /// Ray `p` as the GPU traces it: the closest surface, and, unless the ray splits at
    /// panes, the transparent surfaces passed on the way (any-hit rules of
    /// `transparent.rahit` and `alpha_mask.rahit`). The first ray starts at the sensor,
    /// not at `min_range`: a surface in the blind zone blocks (glass: dims) the beam; the
    /// waveform stage drops its echo.
    fn trace_path_ray(
        &self,
        p: &PathRay,
        split: bool,
        f: &FrameSettings,
    ) -> (Option<Hit>, Vec<Note>) {
        let mut notes: Vec<Note> = Vec::with_capacity(NOTES);
        let t_max = p.t_max(f.max_range);
        let closest = self.bvh.trace_filtered(p.origin, p.dir, 0.0, t_max, |h| {
            let g = &self.tables.geometries[self.geometry(h)];
            let kept = self.alpha_keeps(h);
            if g.class != MaterialClass::Transparent || !kept || split {
                return kept;
            }
            let cos = (-p.dir).dot(h.geometric_normal);
            let note = Note {
                t: h.t,
                reflectance: self.tables.reflectance(g.material, cos),
                transmission: self.tables.pane_transmission(g.material, cos.abs()),
                instance: h.instance,
                material: g.material,
            };
            keep_nearest_note(&mut notes, note);
            false
        });
        (closest, notes)
    }

    /// Two-way transmission of the noted transparent surfaces nearer than `t`.
    fn transmission_before(&self, notes: &[Note], t: f32) -> f32 {
        notes
            .iter()
            .filter(|n| n.t < t)
            .fold(1.0f32, |acc, n| acc * n.transmission * n.transmission)
    }

    /// The return of a surface at distance `t` along ray `p` (opaque or transparent
    /// alike), dimmed by the transparent surfaces noted in front of it and by the path
    /// before it, out and back.
    fn surface_record(
        &self,
        notes: &[Note],
        p: &PathRay,
        t: f32,
        reflectance: f32,
        weight: f32,
        (instance, material): (u32, u32),
    ) -> SubRayRecord {
        let range = p.range_at(t);
        // Extended target: footprint grows as r², received power falls as 1/r².
        let signal =
            weight * p.throughput * p.throughput * self.transmission_before(notes, t) * reflectance
                / (range * range);
        SubRayRecord {
            range,
            signal,
            ambient: 0.0,
            instance_id: self.instance_ids[instance as usize],
            class_id: self.classes[instance as usize],
            material,
            bounces: p.bounces,
        }
    }

    /// The return of the surface `s` ray `p` met at `h`, with its sunlight where it
    /// returns as a surface (the sunlight comes back by the path's way once).
    fn surface_return(
        &self,
        p: &PathRay,
        h: &Hit,
        s: &Surface,
        weight: f32,
        f: &FrameSettings,
        notes: &[Note],
    ) -> SubRayRecord {
        let ids = (h.instance, s.material);
        let record = self.surface_record(notes, p, h.t, s.reflectance, weight, ids);
        if s.kind != SurfaceKind::Returns {
            return record;
        }
        // The shadow ray starts just off the surface so that it does not hit it again.
        let n = s.normal;
        let q = p.origin + p.dir * h.t + n * (1e-3 + 1e-5 * h.t);
        SubRayRecord {
            ambient: p.throughput * self.sun_ambient(s.material, q, n, weight, f),
            ..record
        }
    }

    /// Sunlight a surface with normal `n` sends to the sensor: the diffuse part of its
    /// reflectance at the sun's incidence if a shadow ray from `p` reaches the sun, else
    /// 0 (a retroreflector's peak and a glint return sunlight towards the sun).
    fn sun_ambient(&self, material: u32, p: Vec3, n: Vec3, weight: f32, f: &FrameSettings) -> f32 {
        let Some(sun) = f.sun.filter(|s| s.irradiance > 0.0) else {
            return 0.0;
        };
        let sd = sun.direction.normalize();
        let cos_sun = n.dot(sd);
        if cos_sun > 0.0 && self.reaches_sun(p, sd) {
            weight * sun.irradiance * self.tables.diffuse_reflectance(material, cos_sun)
        } else {
            0.0
        }
    }

    /// Whether a shadow ray from `p` towards the sun `sd` escapes the scene; glass lets
    /// sunlight through, alpha-mask holes too.
    fn reaches_sun(&self, p: Vec3, sd: Vec3) -> bool {
        self.bvh
            .trace_filtered(p, sd, 0.0, 1e5, |s| {
                let sg = &self.tables.geometries[self.geometry(s)];
                sg.class != MaterialClass::Transparent && self.alpha_keeps(s)
            })
            .is_none()
    }

    /// The transparent notes in front of the opaque hit, nearest first, into the slots
    /// from `written` on; returns the next free slot.
    fn write_transparent_records(
        &self,
        notes: &[Note],
        p: &PathRay,
        t_opaque: f32,
        weight: f32,
        out: &mut [SubRayRecord],
        mut written: usize,
    ) -> usize {
        let mut last = 0.0f32;
        while written < out.len() {
            let next = notes
                .iter()
                .filter(|n| n.t > last && n.t < t_opaque)
                .min_by(|a, b| a.t.total_cmp(&b.t));
            let Some(note) = next.copied() else { break };
            last = note.t;
            let ids = (note.instance, note.material);
            out[written] = self.surface_record(notes, p, note.t, note.reflectance, weight, ids);
            written += 1;
        }
        written
    }
}

/// The sub-ray's offset from the beam centre, moved within its stratification cell by
/// this frame's draw when the sampling jitters (as `trace.rgen` does).
fn jittered_offset(
    sub: &SubRaySample,
    beam_index: u32,
    sub_index: u32,
    f: &FrameSettings,
) -> (f32, f32) {
    let (mut dh, mut dv) = (sub.dh, sub.dv);
    if sub.jitter_h > 0.0 || sub.jitter_v > 0.0 {
        let s = rng::stream::jitter(sub_index);
        dh += (rng::uniform(rng::hash(f.seed, f.frame, beam_index, s)) - 0.5) * sub.jitter_h;
        dv += (rng::uniform(rng::hash(f.seed, f.frame, beam_index, s + 1)) - 0.5) * sub.jitter_v;
    }
    (dh, dv)
}

/// Notes a transparent surface; when the notes are full, it replaces the farthest if it
/// is nearer (as `transparent.rahit` does). A second hit of a noted instance at the same
/// range is the same crossing (a ray through an edge shared by two of its triangles) and
/// is not noted again, so the pane dims the beam once.
fn keep_nearest_note(notes: &mut Vec<Note>, note: Note) {
    let same_crossing = |n: &Note| {
        n.instance == note.instance && (n.t - note.t).abs() <= SAME_CROSSING * note.t.max(1.0)
    };
    if notes.iter().any(same_crossing) {
        return;
    }
    if notes.len() < NOTES {
        notes.push(note);
        return;
    }
    let mut far = 0;
    for k in 1..NOTES {
        if notes[k].t > notes[far].t {
            far = k;
        }
    }
    if notes[far].t > note.t {
        notes[far] = note;
    }
}
