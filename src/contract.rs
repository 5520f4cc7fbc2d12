//! The contract between the host and the shaders: every number both sides must agree on,
//! written once.
//!
//! `build.rs` compiles this same file into the build script and writes [`glsl_header`]
//! to `$OUT_DIR/contract.glsl`, which the shaders `#include`; the crate reads the
//! constants directly. A value changed here therefore changes on both sides in the same
//! build, and the shaders hold no copy of it.
//!
//! * **Limits** that size arrays or bound loops on both sides (the most returns per
//!   beam, the records a beam's waveform reads, the glass surfaces a sub-ray notes, …)
//!   and the constants of the waveform algorithm that the CPU reference must share with
//!   the GPU to agree with it bit for bit.
//! * **Codes**: how the shaders number the plain model's enums (material class, return
//!   mode, range estimator, range-limit curve). The typed enums live in the plain model
//!   (`material::MaterialClass`, `sensor::ReturnMode`, …) and `sim` maps them onto these
//!   codes with exhaustive matches; only the numbers are here.
//! * **Bindings** of each pipeline's descriptor set 0, typed per pipeline, and the
//!   **hit-group order** of the trace pipeline's shader binding table.
//!
//! The file needs nothing but `std`, because the build script compiles it on its own;
//! that also puts it below every other module, so the plain model may read its limits
//! without reaching into `sim` or `gpu`.
//!
//! How it is held to: the shaders' tests (`sim::shaders`) fail when a GLSL file defines
//! one of these names itself, numbers a binding with a literal or compares a code field
//! with a literal; and `FrameShaders::compile` refuses shaders whose SPIR-V declares
//! other bindings than the ones listed here, at start-up, before anything is bound.

/// Declares constants and lists them by their names in the GLSL header (`prefix` + name).
macro_rules! shared_constants {
    ($list:ident: $ty:ty, $prefix:literal; $($(#[$doc:meta])* $name:ident = $value:expr;)+) => {
        $($(#[$doc])* pub const $name: $ty = $value;)+
        /// These constants by their names in the GLSL header.
        pub const $list: &[(&str, $ty)] = &[$((concat!($prefix, stringify!($name)), $name)),+];
    };
}

/// Declares the descriptor bindings of one pipeline (all in set 0).
macro_rules! bindings {
    ($(#[$doc:meta])* $name:ident, $prefix:literal;
     $($(#[$vdoc:meta])* $var:ident = $number:literal, $glsl:literal;)+) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $var,)+
        }

        impl $name {
            /// Every binding of the pipeline.
            pub const ALL: &'static [$name] = &[$($name::$var),+];

            /// The binding number in descriptor set 0.
            pub const fn number(self) -> u32 {
                match self {
                    $($name::$var => $number,)+
                }
            }

            /// The name of the binding number in the GLSL header.
            pub const fn glsl_name(self) -> &'static str {
                match self {
                    $($name::$var => concat!($prefix, $glsl),)+
                }
            }
        }
    };
}

shared_constants! {
    LIMITS: u32, "";
    /// The most echoes one beam may return: its echo slots in the frame output.
    MAX_RETURNS = 8;
    /// The most return records of one beam (sub-rays × slots) the waveform pass reads:
    /// they are sorted in a workgroup's shared memory.
    MAX_RECORDS_PER_BEAM = 1024;
    /// Beams of at most this many records (sub-rays × slots) go through the waveform
    /// pass one invocation per beam, their records in private arrays: the workgroup
    /// build spends its time in barriers and a serial scan (at 192 records it took 10×
    /// as long on lavapipe, 2.4× on an H100).
    PER_THREAD_RECORDS = 256;
    /// Beams of at most this many records (16 sub-rays behind panes, say) take a
    /// per-thread build with arrays this small: see PER_THREAD_RECORDS_THIN (measured:
    /// a quarter of the 16-sub-ray waveform's time on lavapipe).
    PER_THREAD_RECORDS_FEW = 64;
    /// Beams of at most this many records (a thin ray's single-bounce slots) take a
    /// per-thread build whose arrays are this small, on every device: a CPU device pays
    /// for an invocation's private arrays in proportion to their size (measured: a tenth
    /// of the thin waveform's time on lavapipe).
    PER_THREAD_RECORDS_THIN = SINGLE_BOUNCE_SLOTS;
    /// Beams (invocations) per workgroup of that per-thread waveform pass (and of the
    /// binned one's deposit and scan).
    WAVEFORM_BEAMS_PER_GROUP = 64;
    /// Invocations per beam (one workgroup) of the order pass, which puts a beam's
    /// records in step 1's order for the ordered per-thread waveform build (GPUs).
    ORDER_GROUP = 32;
    /// Beams of more records than MAX_RECORDS_PER_BEAM take the binned waveform: their
    /// sub-rays are traced this many per beam at a time, and each such chunk's records
    /// are deposited into the beam's range bins before the next chunk overwrites them.
    BINNED_CHUNK_SUBRAYS = 64;
    /// Beams the binned waveform holds bins for at once (a frame runs in batches).
    BINNED_BATCH_BEAMS = 16384;
    /// A bin of the binned waveform keeps its dominant record's material below this bit
    /// and its bounces (at most MAX_BOUNCES) from it on.
    BIN_BOUNCE_SHIFT = 28;
    /// Invocations per workgroup of the compaction, and beams per invocation.
    COMPACT_GROUP = 256;
    COMPACT_CHUNK = 8;
    /// The compaction's dispatches (`CompactParams::pass`); the third only where the
    /// points are written to device memory and copied to the host's afterwards.
    COMPACT_PASS_SUMS = 0;
    COMPACT_PASS_WRITE = 1;
    COMPACT_PASS_COPY = 2;
    /// Transparent surfaces a sub-ray notes in front of its opaque hit.
    MAX_TRANSPARENT = 3;
    /// Cells of the fog's backscatter integral along a beam at most (`model::Medium`):
    /// each is one return record, handed out to the beam's sub-rays in turn.
    MAX_FOG_NODES = 64;
    /// Raindrops or snowflakes one sub-ray returns at most (`model::Medium`): room for a
    /// thin beam's 24 expected particles but for a tail of 10⁻⁴.
    MAX_DROPS_PER_SUBRAY = 48;
    /// Range cells of the particles' size cut along the beam (`model::DropField`).
    MAX_DROP_CELLS = 32;
    /// The most surfaces a path may meet, the one that returns it included
    /// (`max_bounces`: 1 = single bounce; mirrors and refractive glass redirect a ray).
    MAX_BOUNCES = 5;
    /// Rays a sub-ray's path tree keeps pending at once: a split pushes two, and depth
    /// first with the stronger child on top the stack never holds more than one per
    /// level plus the one being traced.
    PATH_STACK = MAX_BOUNCES + 1;
    /// Record slots a single-bounce sub-ray fills at most: the opaque hit and the
    /// transparent surfaces noted in front of it.
    SINGLE_BOUNCE_SLOTS = 1 + MAX_TRANSPARENT;
    /// Record slots per sub-ray at most: with bounces, every surface of the path tree
    /// may return (single bounce needs 1 + the transparent surfaces noted).
    MAX_RECORD_SLOTS = 16;
    /// Samples of each material's R(θ) table beyond the first: θ = 0°…90° in 0.25° steps.
    REFLECTANCE_STEPS = 360;
    /// A geometry without an alpha texture.
    NO_TEXTURE = u32::MAX;
    /// Waveform bins evaluated at once (the GPU's shared-memory histogram).
    WINDOW_BINS = 1024;
    /// Echoes (false alarms included) a beam keeps for the return selection.
    MAX_CANDIDATES = 64;
    /// The most false alarms drawn per beam.
    MAX_FALSE_ALARMS = 8;
    /// Sensor poses sampled evenly over a frame's sweep, first and last included; a beam
    /// leaves from the pose interpolated at its firing time (rolling shutter).
    SWEEP_POSES = 9;
    /// The most time slices of moving instances per frame: one bit each of the 8-bit
    /// instance mask a ray is traced with.
    MAX_TIME_SLICES = 8;
}

shared_constants! {
    PACKETS: u32, "";
    /// Invocations per workgroup of the packet pass (shaders/packets.comp); its CRC
    /// dispatch splits an Ouster packet into this many stretches, one per invocation.
    PACKET_GROUP = 256;
    /// The packet pass's dispatches (`PacketParams::pass`): the pixels and headers,
    /// then each packet's CRC.
    PACKET_PASS_PIXELS = 0;
    PACKET_PASS_CRC = 1;
    /// The Velodyne dispatch: each beam's two channels of its return mode.
    PACKET_PASS_VELODYNE = 2;
    /// Velodyne return modes (`output::packets::VelodyneReturnMode`).
    VELODYNE_STRONGEST = 0;
    VELODYNE_LAST = 1;
    VELODYNE_DUAL = 2;
    /// Columns per Ouster lidar packet (the firmware's `columns_per_packet`).
    OUSTER_COLUMNS_PER_PACKET = 16;
    /// Encoder ticks per turn in the LEGACY column header.
    OUSTER_ENCODER_TICKS = 90_112;
}

shared_constants! {
    PACKET_FLOATS: f32, "";
    /// Counts per unit of apparent peak signal R_app/r² (m⁻²) in `ouster.signal`: a 10 %
    /// Lambertian target at 100 m reads 10, a white one at 10 m 10 000.
    SIGNAL_COUNTS = 1.0e6;
    /// Counts per unit of the beam's ambient level A_b in `ouster.near_ir`: a white
    /// Lambertian surface facing the default sun reads about 1000.
    NEAR_IR_COUNTS = 1000.0;
}

shared_constants! {
    WAVEFORM_FLOATS: f32, "";
    /// Clusters split where neighbouring records are farther apart than this many σ_r.
    CLUSTER_GAP_SIGMAS = 8.0;
    /// Bins extend this many σ_r beyond a cluster's records; the pulse is cut there too.
    PAD_SIGMAS = 5.0;
    /// Bounds that keep the bin arithmetic in range for absurd parameters.
    MAX_TAPS = 1_048_576.0;
    MAX_CLUSTER_BINS = 16_777_216.0;
}

shared_constants! {
    TRACE_FLOATS: f32, "";
    /// Two hits of one glass instance whose ranges differ by at most this × max(r, 1 m)
    /// are one crossing of the pane, noted once: a ray through an edge shared by two of
    /// its triangles hits both at the same range (panes are millimetres apart at least).
    SAME_CROSSING = 1e-5;
    /// The share of a Gaussian beam's power within its 1/e² radius, 1 − e⁻²: a rain or
    /// snow particle in the beam's cone intercepts its cross-section's share of it
    /// (`model::Medium`).
    PARTICLE_POWER_SHARE = 0.864_664_7;
}

/// Material classes as the material table stores them (`material::MaterialClass`).
pub mod material_class {
    shared_constants! {
        GLSL: u32, "MATERIAL_";
        GENERAL = 0;
        RETROREFLECTIVE = 1;
        TRANSPARENT = 2;
        ABSORBENT = 3;
        MIRROR = 4;
    }
}

/// Return modes (`sensor::ReturnMode`).
pub mod return_mode {
    shared_constants! {
        GLSL: u32, "RETURN_";
        STRONGEST = 0;
        FIRST = 1;
        LAST = 2;
        /// Strongest and last; second strongest and last when the strongest is last.
        DUAL_STRONGEST_LAST = 3;
        ALL = 4;
        /// Strongest and second strongest.
        DUAL_STRONGEST_SECOND = 5;
    }
}

/// Range estimators (`sensor::RangeEstimator`).
pub mod estimator {
    shared_constants! {
        GLSL: u32, "ESTIMATOR_";
        PEAK = 0;
        LEADING_EDGE = 1;
        CENTROID = 2;
    }
}

/// Range-limit curves (`sensor::RangeLimit`): the waveform's threshold at range r is
/// R_L(r)/r², so that R_app > R_L(r) is detected.
pub mod curve_model {
    shared_constants! {
        GLSL: u32, "CURVE_";
        /// The constant datasheet threshold T (R_L = T·r²).
        THRESHOLD = 0;
        /// R_L(r) = a + b·r.
        LINEAR = 1;
        /// R_L(r) = a + b·r².
        QUADRATIC = 2;
        /// R_L(r) = b·rⁿ, n = 2, 3, 4.
        ROOT2 = 3;
        ROOT3 = 4;
        ROOT4 = 5;
        /// R_L(r) = exp((r − a)/b).
        LOGARITHMIC = 6;
    }
}

/// How the view colours points (`view::ColourMode`): the field its points shader reads.
pub mod colour_mode {
    shared_constants! {
        GLSL: u32, "COLOUR_";
        INTENSITY = 0;
        RANGE = 1;
        EPW = 2;
        RETURN_INDEX = 3;
        RING = 4;
        INSTANCE = 5;
        CLASS = 6;
        MATERIAL = 7;
        AMBIENT = 8;
        SENSOR = 9;
    }
}

shared_constants! {
    PALETTE: u32, "PALETTE_";
    /// Entries of the view's continuous colour ramp, at the start of its palette.
    RAMP = 256;
    /// Entries of the categorical colours that follow the ramp (ids wrap around).
    CATEGORIES = 16;
}

bindings! {
    /// Bindings of the trace pipeline (ray generation and hit shaders).
    TraceBinding, "BINDING_TRACE_";
    /// The TLAS.
    Scene = 0, "SCENE";
    Beams = 1, "BEAMS";
    SubRays = 2, "SUBRAYS";
    Geometries = 3, "GEOMETRIES";
    Materials = 5, "MATERIALS";
    Instances = 6, "INSTANCES";
    /// The materials' R(θ) tables.
    Reflectance = 8, "REFLECTANCE";
    Textures = 9, "TEXTURES";
    Texels = 10, "TEXELS";
}

bindings! {
    /// Bindings of the waveform pass (its records arrive by device address).
    WaveformBinding, "BINDING_WAVEFORM_";
    Echoes = 1, "ECHOES";
    Counts = 2, "COUNTS";
}

bindings! {
    /// Bindings of the compaction pass (its output goes out by device address).
    CompactBinding, "BINDING_COMPACT_";
    Echoes = 0, "ECHOES";
    Counts = 1, "COUNTS";
    Beams = 2, "BEAMS";
    /// Each workgroup's point count, between the two dispatches.
    GroupSums = 3, "GROUP_SUMS";
}

/// The trace pipeline's hit groups. [`HitGroupKind::ALL`] is the order of the shader
/// binding table: each geometry's SBT record names its group by
/// [`sbt_index`](HitGroupKind::sbt_index). The shaders never name a group (ray
/// generation reaches them through the instances' SBT offsets), so only the host reads
/// this order, in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HitGroupKind {
    General,
    GeneralMasked,
    Retroreflective,
    RetroreflectiveMasked,
    Absorbent,
    AbsorbentMasked,
    /// Glass: an any-hit shader (alpha masks included) that notes the pane and passes
    /// on, and a closest-hit shader for the panes a bouncing ray splits at.
    Transparent,
    Mirror,
    MirrorMasked,
}

impl HitGroupKind {
    /// Every group, in SBT order.
    pub const ALL: [HitGroupKind; 9] = [
        HitGroupKind::General,
        HitGroupKind::GeneralMasked,
        HitGroupKind::Retroreflective,
        HitGroupKind::RetroreflectiveMasked,
        HitGroupKind::Absorbent,
        HitGroupKind::AbsorbentMasked,
        HitGroupKind::Transparent,
        HitGroupKind::Mirror,
        HitGroupKind::MirrorMasked,
    ];

    /// The group's index among the SBT's hit groups: its place in [`ALL`](Self::ALL).
    pub const fn sbt_index(self) -> u32 {
        match self {
            HitGroupKind::General => 0,
            HitGroupKind::GeneralMasked => 1,
            HitGroupKind::Retroreflective => 2,
            HitGroupKind::RetroreflectiveMasked => 3,
            HitGroupKind::Absorbent => 4,
            HitGroupKind::AbsorbentMasked => 5,
            HitGroupKind::Transparent => 6,
            HitGroupKind::Mirror => 7,
            HitGroupKind::MirrorMasked => 8,
        }
    }
}

/// The GLSL header with every constant, code and binding number above, in the form the
/// shaders use: `const uint`/`const float` for values, `#define` for binding numbers
/// (layout qualifiers take them in every GLSL version glslang accepts).
pub fn glsl_header() -> String {
    let mut s = String::from(
        "// Generated by build.rs from src/contract.rs: the values the host and the shaders\n\
         // share. Edit src/contract.rs, not this file.\n\
         #ifndef BEAMTRACE_CONTRACT_GLSL\n\
         #define BEAMTRACE_CONTRACT_GLSL\n\n",
    );
    let codes = [
        LIMITS,
        material_class::GLSL,
        return_mode::GLSL,
        estimator::GLSL,
        curve_model::GLSL,
        colour_mode::GLSL,
        PALETTE,
        PACKETS,
    ];
    for list in codes {
        for (name, value) in list {
            s.push_str(&format!("const uint {name} = {value}u;\n"));
        }
        s.push('\n');
    }
    for (name, value) in WAVEFORM_FLOATS
        .iter()
        .chain(TRACE_FLOATS)
        .chain(PACKET_FLOATS)
    {
        // `{:?}` always writes a decimal point or an exponent: a GLSL float literal.
        s.push_str(&format!("const float {name} = {value:?};\n"));
    }
    s.push('\n');
    let bindings = TraceBinding::ALL
        .iter()
        .map(|b| (b.glsl_name(), b.number()))
        .chain(
            WaveformBinding::ALL
                .iter()
                .map(|b| (b.glsl_name(), b.number())),
        )
        .chain(
            CompactBinding::ALL
                .iter()
                .map(|b| (b.glsl_name(), b.number())),
        );
    for (name, number) in bindings {
        s.push_str(&format!("#define {name} {number}\n"));
    }
    s.push_str("\n#endif\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_binding_numbers_are_unique() {
        let header = glsl_header();
        let mut names: Vec<&str> = header
            .lines()
            .filter_map(|l| {
                let rest = l
                    .strip_prefix("const uint ")
                    .or_else(|| l.strip_prefix("const float "))
                    .or_else(|| l.strip_prefix("#define "))?;
                rest.split_whitespace().next()
            })
            .collect();
        let n = names.len();
        assert!(
            names.contains(&"MAX_RETURNS"),
            "the header defines nothing: {header}"
        );
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "a GLSL name is defined twice");
        let numbers: [Vec<u32>; 3] = [
            TraceBinding::ALL.iter().map(|b| b.number()).collect(),
            WaveformBinding::ALL.iter().map(|b| b.number()).collect(),
            CompactBinding::ALL.iter().map(|b| b.number()).collect(),
        ];
        for mut pipeline in numbers {
            let n = pipeline.len();
            pipeline.sort_unstable();
            pipeline.dedup();
            assert_eq!(pipeline.len(), n, "two bindings share a number");
        }
    }
}
