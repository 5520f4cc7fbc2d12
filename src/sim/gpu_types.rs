//! Host mirrors of the structs in `shaders/common.glsl` and `shaders/waveform_types.glsl`:
//! the plain model's types as the shaders lay them out (padding, device addresses, codes
//! in place of enums). This is the one place where the host side of the shader structs
//! lives; `trace_layouts` and `echo_layouts` feed the reflection check that runs whenever
//! the pipelines are made. `super::convert` fills them from the plain model.

use crate::contract::{MAX_DROP_CELLS, MAX_FOG_NODES, SWEEP_POSES};
use crate::gpu::HostLayout;
use crate::model::{Echo, SubRayRecord};
use bytemuck::{Pod, Zeroable};
use std::mem::{offset_of, size_of};

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct GpuBeam {
    pub direction: [f32; 3],
    pub time: f32,
    pub origin: [f32; 3],
    pub ring: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct GpuSubRay {
    pub dh: f32,
    pub dv: f32,
    pub weight: f32,
    pub jitter_h: f32,
    pub jitter_v: f32,
    pub pad0: f32,
    pub pad1: f32,
    pub pad2: f32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct GpuGeometry {
    pub index_address: u64,
    pub position_address: u64,
    pub normal_address: u64,
    /// 0 when the primitive has no texture coordinates.
    pub uv_address: u64,
    pub material: u32,
    /// Index into the alpha texture table, or [`NO_TEXTURE`](crate::contract::NO_TEXTURE).
    pub alpha_texture: u32,
    /// glTF alphaCutoff for MASK materials; 0 for opaque ones (every hit kept).
    pub alpha_cutoff: f32,
    /// baseColorFactor alpha.
    pub alpha_factor: f32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct GpuAlphaTexture {
    pub offset: u32,
    pub width: u32,
    pub height: u32,
    pub wrap_s: u32,
    pub wrap_t: u32,
    pub pad0: u32,
    pub pad1: u32,
    pub pad2: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct GpuInstanceInfo {
    pub instance_id: u32,
    pub class_id: u32,
    pub pad0: u32,
    pub pad1: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct GpuMaterial {
    /// A [`material_class`](crate::contract::material_class) code.
    pub class_id: u32,
    pub transmission: f32,
    pub table_offset: u32,
    pub diffuse_offset: u32,
    pub mirror_reflectance: f32,
    /// 0: no refraction (the pane is passed straight).
    pub ior: f32,
    /// F0 of a pane (transparent class).
    pub reflectance_normal: f32,
    /// First sample of the pane's transmission table, followed by its reflection table.
    pub pane_offset: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct FrameParams {
    /// Device address of the slot's [`GpuSweep`].
    pub sweep_address: u64,
    pub sweep_duration: f32,
    pub time_slices: u32,
    pub sun_direction: [f32; 3],
    pub sun_irradiance: f32,
    pub beam_count: u32,
    pub subray_count: u32,
    pub slots: u32,
    /// Not read by the trace, whose rays start at the origin (the blind zone blocks);
    /// the waveform pass drops the echoes nearer than this.
    pub min_range: f32,
    /// The primary ray's tmax.
    pub max_range: f32,
    pub seed_lo: u32,
    pub seed_hi: u32,
    pub frame: u32,
    /// Surfaces a path may meet, 1..=MAX_BOUNCES (1: single bounce).
    pub max_bounces: u32,
    /// This launch traces `launch_subrays` sub-rays from `subray_offset` on of the beams
    /// from `beam_offset` on (one launch of the whole frame, or a chunk of the binned
    /// waveform).
    pub subray_offset: u32,
    pub launch_subrays: u32,
    pub beam_offset: u32,
    /// The launch takes its beams in tiles of `tile_columns` columns, `tile_beams` beams
    /// in all ([`LaunchTile`](crate::sim::LaunchTile)); `tile_columns` ≤ 1: in order.
    pub tile_columns: u32,
    pub tile_beams: u32,
    /// Device address of the records (a buffer reference: they outgrow descriptor
    /// ranges); launch index i writes records i·slots onwards.
    pub records_address: u64,
    /// Device address of the slot's [`GpuMedium`], 0 in clear air.
    pub medium_address: u64,
    /// The surfaces' record slots of each sub-ray; the medium's follow.
    pub surface_slots: u32,
    pub medium_pad: u32,
}

/// The frame's medium (`model::Medium`): extinction, fog cells, rain or snow.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct GpuMedium {
    pub alpha: f32,
    pub fog_count: u32,
    pub fog_slots: u32,
    pub drop_slots: u32,
    pub has_drops: u32,
    pub per_beam: f32,
    pub r0: f32,
    pub r1: f32,
    pub radius0: f32,
    pub slope: f32,
    pub cell_count: u32,
    pub d_max: f32,
    pub lambda: f32,
    pub scale: f32,
    pub reflectance: f32,
    pub drop_material: u32,
    pub weather_class: u32,
    pub fog_material: u32,
    pub crossover_lo: f32,
    pub crossover_hi: f32,
    /// (range, signal) of each fog cell.
    pub fog: [[f32; 2]; MAX_FOG_NODES as usize],
    /// (range, cum, d_min) of each particle cell (`model::DropCell`).
    pub drop_cells: [[f32; 3]; MAX_DROP_CELLS as usize],
}

/// The sensor's poses over a frame (`model::Sweep::samples`): translations (w unused) and
/// rotation quaternions (x, y, z, w).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct GpuSweep {
    pub translation: [[f32; 4]; SWEEP_POSES as usize],
    pub rotation: [[f32; 4]; SWEEP_POSES as usize],
}

/// One point as the compaction pass writes it (sensor frame).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Default)]
pub struct GpuPoint {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub intensity: f32,
    pub range: f32,
    pub epw: f32,
    pub ambient: f32,
    pub beam: u32,
    pub instance_id: u32,
    pub class_id: u32,
    pub material: u32,
    pub return_index: u32,
    pub return_count: u32,
    pub bounces: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq)]
pub struct CompactParams {
    pub beam_count: u32,
    pub max_returns: u32,
    /// COMPACT_PASS_SUMS, COMPACT_PASS_WRITE or COMPACT_PASS_COPY.
    pub pass: u32,
    /// 4-byte words of a [`GpuPoint`] (what the copy pass moves per point).
    pub point_words: u32,
    /// Device address of the buffer the compaction writes the points into.
    pub points_address: u64,
    /// Device address of this frame's point count.
    pub total_address: u64,
    /// Device address of the host-visible buffer the copy pass copies the points into
    /// (unused by the other passes).
    pub host_address: u64,
    /// When it converts the cloud: each beam's azimuth and elevation (`[f32; 2]`), and
    /// the reflectivity steps (`sensor::reflectivity_steps`).
    pub angles_address: u64,
    pub steps_address: u64,
    /// 1: the points are written as the host's `model::Point`s (`CloudPoint`).
    pub cloud: u32,
    pub unused: u32,
}

/// The packet pass's push constants (shaders/packets.comp).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Default)]
pub struct PacketParams {
    pub echoes_address: u64,
    pub counts_address: u64,
    /// The frame's packets back to back.
    pub packets_address: u64,
    /// The frame's error word and column timestamps.
    pub frame_address: u64,
    /// The sensor's reflectivity steps and CRC tables.
    pub tables_address: u64,
    /// PACKET_PASS_PIXELS or PACKET_PASS_CRC.
    pub pass: u32,
    pub channels: u32,
    pub columns: u32,
    pub max_returns: u32,
    /// 4-byte words of one packet, of its header, of one column and its header, of
    /// one pixel.
    pub packet_words: u32,
    pub header_words: u32,
    pub column_words: u32,
    pub column_header_words: u32,
    pub pixel_words: u32,
    pub frame_id: u32,
    /// The initialization id and serial number's word (low, high half).
    pub id_low: u32,
    pub id_high: u32,
    pub origin_offset: f32,
    pub max_range_mm: u32,
    /// Velodyne: VELODYNE_STRONGEST, VELODYNE_LAST or VELODYNE_DUAL.
    pub return_mode: u32,
    /// Velodyne: distance units per metre (500 or 250).
    pub units_per_m: u32,
}

/// [`SubRayRecord`] as the trace writes it and the waveform reads it.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Default)]
pub struct GpuRecord {
    pub range: f32,
    pub signal: f32,
    pub ambient: f32,
    pub instance_id: u32,
    pub class_id: u32,
    pub material: u32,
    pub bounces: u32,
}

impl From<GpuRecord> for SubRayRecord {
    fn from(r: GpuRecord) -> Self {
        SubRayRecord {
            range: r.range,
            signal: r.signal,
            ambient: r.ambient,
            instance_id: r.instance_id,
            class_id: r.class_id,
            material: r.material,
            bounces: r.bounces,
        }
    }
}

impl From<&SubRayRecord> for GpuRecord {
    fn from(r: &SubRayRecord) -> Self {
        GpuRecord {
            range: r.range,
            signal: r.signal,
            ambient: r.ambient,
            instance_id: r.instance_id,
            class_id: r.class_id,
            material: r.material,
            bounces: r.bounces,
        }
    }
}

/// [`Echo`] as the waveform pass writes it.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Default)]
pub struct GpuEcho {
    pub range: f32,
    pub amplitude: f32,
    pub epw: f32,
    pub reflectance: f32,
    pub ambient: f32,
    pub instance_id: u32,
    pub class_id: u32,
    pub material: u32,
    pub return_index: u32,
    pub return_count: u32,
    pub bounces: u32,
}

impl From<GpuEcho> for Echo {
    fn from(e: GpuEcho) -> Self {
        Echo {
            range: e.range,
            amplitude: e.amplitude,
            epw: e.epw,
            reflectance: e.reflectance,
            ambient: e.ambient,
            instance_id: e.instance_id,
            class_id: e.class_id,
            material: e.material,
            return_index: e.return_index,
            return_count: e.return_count,
            bounces: e.bounces,
        }
    }
}

/// Parameters of the waveform stage (push constants of shaders/waveform_*.comp), from the
/// plain `FrameSettings` by `super::convert`. See the field docs in
/// shaders/waveform_types.glsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Default)]
pub struct WaveformParams {
    pub sigma_r: f32,
    pub bin_width: f32,
    pub threshold: f32,
    pub ambient_k: f32,
    /// An [`estimator`](crate::contract::estimator) code.
    pub estimator: u32,
    /// A [`return_mode`](crate::contract::return_mode) code.
    pub return_mode: u32,
    pub max_returns: u32,
    pub min_separation: f32,
    /// A [`curve_model`](crate::contract::curve_model) code.
    pub curve_model: u32,
    pub curve_a: f32,
    pub curve_b: f32,
    pub range_sigma: f32,
    pub range_sigma_snr: f32,
    pub amplitude_noise: f32,
    pub pd_width: f32,
    pub false_alarm_rate: f32,
    pub min_range: f32,
    pub max_range: f32,
    pub seed_lo: u32,
    pub seed_hi: u32,
    pub frame: u32,
    /// Records per beam (sub-rays × slots per sub-ray).
    pub records_per_beam: u32,
    pub beam_count: u32,
    /// Largest waveform amplitude (0 = none).
    pub saturation: f32,
    /// Device address of the records (filled in by the simulator).
    pub records_address: u64,
    /// The build's own buffer, one field for two so that the struct stays within the
    /// 128 bytes of push constants every device takes: the binned waveform's bins
    /// ([`GpuBin`], `bin_count` per beam of the batch), or the ordered build's record
    /// order ([`super::slot::order_words`] per beam); 0 for the other builds.
    pub build_address: u64,
    /// The binned waveform's ambient sums (one f32 per beam of the batch).
    pub ambient_address: u64,
    pub bin_count: u32,
    /// The first beam of the batch; the binned scan handles beams
    /// `beam_offset..beam_count`.
    pub beam_offset: u32,
}

/// One range bin of the binned waveform: the sum of the shares deposited into it and
/// the largest single share with the record that deposited it.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Default)]
pub struct GpuBin {
    pub sum: f32,
    pub share: f32,
    pub instance_id: u32,
    pub class_id: u32,
    /// The record's material, and its bounces from bit
    /// [`BIN_BOUNCE_SHIFT`](crate::contract::BIN_BOUNCE_SHIFT) on.
    pub material_bounces: u32,
}

/// Push constants of the binned waveform's deposit pass (deposit.comp).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Default)]
pub struct DepositParams {
    pub records_address: u64,
    pub bins_address: u64,
    pub ambient_address: u64,
    /// Beams of the batch, each with `launch_subrays × slots` records of this chunk.
    pub beams: u32,
    pub launch_subrays: u32,
    pub slots: u32,
    pub bin_count: u32,
    pub bin_width: f32,
    pub pad0: u32,
}

macro_rules! layout {
    ($t:ty, $name:literal, [$($field:ident),* $(,)?]) => {
        HostLayout {
            name: $name,
            members: vec![$((stringify!($field), offset_of!($t, $field) as u32)),*],
            size: size_of::<$t>() as u32,
        }
    };
}

/// The trace writes and the waveform reads the records: one layout for both lists.
fn subray_record_layout() -> HostLayout {
    layout!(
        GpuRecord,
        "SubRayRecord",
        [
            range,
            signal,
            ambient,
            instance_id,
            class_id,
            material,
            bounces
        ]
    )
}

/// Every struct the trace shaders share with the host, with its host layout.
pub fn trace_layouts() -> Vec<HostLayout> {
    vec![
        layout!(GpuBeam, "Beam", [direction, time, origin, ring]),
        layout!(
            GpuSubRay,
            "SubRay",
            [dh, dv, weight, jitter_h, jitter_v, pad0, pad1, pad2]
        ),
        layout!(
            GpuGeometry,
            "Geometry",
            [
                index_address,
                position_address,
                normal_address,
                uv_address,
                material,
                alpha_texture,
                alpha_cutoff,
                alpha_factor
            ]
        ),
        layout!(
            GpuAlphaTexture,
            "AlphaTexture",
            [offset, width, height, wrap_s, wrap_t, pad0, pad1, pad2]
        ),
        layout!(
            GpuInstanceInfo,
            "InstanceInfo",
            [instance_id, class_id, pad0, pad1]
        ),
        layout!(
            GpuMaterial,
            "Material",
            [
                class_id,
                transmission,
                table_offset,
                diffuse_offset,
                mirror_reflectance,
                ior,
                reflectance_normal,
                pane_offset
            ]
        ),
        subray_record_layout(),
        layout!(GpuSweep, "Sweep", [translation, rotation]),
        frame_params_layout(),
        medium_layout(),
    ]
}

/// The trace pass's push constants.
fn frame_params_layout() -> HostLayout {
    layout!(
        FrameParams,
        "FrameParams",
        [
            sweep_address,
            sweep_duration,
            time_slices,
            sun_direction,
            sun_irradiance,
            beam_count,
            subray_count,
            slots,
            min_range,
            max_range,
            seed_lo,
            seed_hi,
            frame,
            max_bounces,
            subray_offset,
            launch_subrays,
            beam_offset,
            tile_columns,
            tile_beams,
            records_address,
            medium_address,
            surface_slots,
            medium_pad
        ]
    )
}

/// The frame's medium, read by the trace through a buffer reference.
fn medium_layout() -> HostLayout {
    layout!(
        GpuMedium,
        "Medium",
        [
            alpha,
            fog_count,
            fog_slots,
            drop_slots,
            has_drops,
            per_beam,
            r0,
            r1,
            radius0,
            slope,
            cell_count,
            d_max,
            lambda,
            scale,
            reflectance,
            drop_material,
            weather_class,
            fog_material,
            crossover_lo,
            crossover_hi,
            fog,
            drop_cells
        ]
    )
}

/// The structs of the waveform and compaction passes.
pub fn echo_layouts() -> Vec<HostLayout> {
    vec![
        subray_record_layout(),
        echo_layout(),
        waveform_params_layout(),
        point_layout(),
        compact_params_layout(),
        cloud_point_layout(),
    ]
}

/// One detected echo, written by the waveform pass and read by compaction.
fn echo_layout() -> HostLayout {
    layout!(
        GpuEcho,
        "Echo",
        [
            range,
            amplitude,
            epw,
            reflectance,
            ambient,
            instance_id,
            class_id,
            material,
            return_index,
            return_count,
            bounces
        ]
    )
}

/// The waveform pass's push constants.
fn waveform_params_layout() -> HostLayout {
    layout!(
        WaveformParams,
        "WaveformParams",
        [
            sigma_r,
            bin_width,
            threshold,
            ambient_k,
            estimator,
            return_mode,
            max_returns,
            min_separation,
            curve_model,
            curve_a,
            curve_b,
            range_sigma,
            range_sigma_snr,
            amplitude_noise,
            pd_width,
            false_alarm_rate,
            min_range,
            max_range,
            seed_lo,
            seed_hi,
            frame,
            records_per_beam,
            beam_count,
            saturation,
            records_address,
            build_address,
            ambient_address,
            bin_count,
            beam_offset
        ]
    )
}

/// The binned waveform's bins and its deposit pass's push constants.
pub fn bin_layouts() -> Vec<HostLayout> {
    vec![
        layout!(
            GpuBin,
            "Bin",
            [sum, share, instance_id, class_id, material_bounces]
        ),
        layout!(
            DepositParams,
            "DepositParams",
            [
                records_address,
                bins_address,
                ambient_address,
                beams,
                launch_subrays,
                slots,
                bin_count,
                bin_width,
                pad0
            ]
        ),
    ]
}

/// One output point, written by compaction.
fn point_layout() -> HostLayout {
    layout!(
        GpuPoint,
        "Point",
        [
            x,
            y,
            z,
            intensity,
            range,
            epw,
            ambient,
            beam,
            instance_id,
            class_id,
            material,
            return_index,
            return_count,
            bounces
        ]
    )
}

/// The compaction pass's push constants.
fn compact_params_layout() -> HostLayout {
    layout!(
        CompactParams,
        "CompactParams",
        [
            beam_count,
            max_returns,
            pass,
            point_words,
            points_address,
            total_address,
            host_address,
            angles_address,
            steps_address,
            cloud,
            unused
        ]
    )
}

/// The host's point as the compaction writes it when it converts the cloud: its 16-
/// and 8-bit fields share words (`CloudPoint` in shaders/common.glsl).
fn cloud_point_layout() -> HostLayout {
    use crate::model::Point;
    let at = |offset: usize| offset as u32;
    HostLayout {
        name: "CloudPoint",
        members: vec![
            ("x", at(offset_of!(Point, x))),
            ("y", at(offset_of!(Point, y))),
            ("z", at(offset_of!(Point, z))),
            ("intensity", at(offset_of!(Point, intensity))),
            ("range", at(offset_of!(Point, range))),
            ("azimuth", at(offset_of!(Point, azimuth))),
            ("elevation", at(offset_of!(Point, elevation))),
            ("beam", at(offset_of!(Point, beam))),
            ("instance", at(offset_of!(Point, instance))),
            ("epw", at(offset_of!(Point, epw))),
            ("ambient", at(offset_of!(Point, ambient))),
            ("time", at(offset_of!(Point, time))),
            ("ring_class", at(offset_of!(Point, ring))),
            ("index_count", at(offset_of!(Point, return_index))),
            (
                "material_reflectivity_bounce",
                at(offset_of!(Point, material)),
            ),
        ],
        size: size_of::<Point>() as u32,
    }
}

/// The packet pass's push constants.
pub fn packet_params_layout() -> HostLayout {
    layout!(
        PacketParams,
        "PacketParams",
        [
            echoes_address,
            counts_address,
            packets_address,
            frame_address,
            tables_address,
            pass,
            channels,
            columns,
            max_returns,
            packet_words,
            header_words,
            column_words,
            column_header_words,
            pixel_words,
            frame_id,
            id_low,
            id_high,
            origin_offset,
            max_range_mm,
            return_mode,
            units_per_m
        ]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_constants_fit_what_every_device_takes() {
        // Vulkan guarantees maxPushConstantsSize ≥ 128 bytes, and some drivers give no
        // more (AMD's own); each pass's parameters are its push constants.
        let sizes = [
            ("FrameParams", size_of::<FrameParams>()),
            ("WaveformParams", size_of::<WaveformParams>()),
            ("CompactParams", size_of::<CompactParams>()),
            ("DepositParams", size_of::<DepositParams>()),
            ("PacketParams", size_of::<PacketParams>()),
        ];
        for (name, size) in sizes {
            assert!(size <= 128, "{name}: {size} bytes of push constants");
        }
    }

    #[test]
    fn the_cloud_points_shared_words_hold_the_hosts_small_fields_low_half_first() {
        // CloudPoint's ring_class, index_count and material_reflectivity_bounce words
        // are model::Point's u16 and u8 fields side by side, little-endian.
        use crate::model::Point;
        let p = Point {
            ring: 0x0102,
            class: 0x0304,
            return_index: 0x0506,
            return_count: 0x0708,
            material: 0x090a,
            reflectivity: 0x0b,
            bounce: 0x0c,
            ..Point::default()
        };
        let bytes = bytemuck::bytes_of(&p);
        let word = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        assert_eq!(size_of::<Point>(), 60);
        assert_eq!(word(offset_of!(Point, ring)), 0x0304_0102);
        assert_eq!(word(offset_of!(Point, return_index)), 0x0708_0506);
        assert_eq!(word(offset_of!(Point, material)), 0x0c0b_090a);
    }
}
