//! The simulator's shaders, embedded at build time so the binary is self-contained, and
//! the reflection check of every shared struct.

use super::gpu_types::{echo_layouts, trace_layouts};
use crate::gpu::{self, check_layout, GpuError, HostLayout, ShaderSources, Spirv};

fn sources() -> ShaderSources {
    ShaderSources::new()
        .add("common.glsl", include_str!("../../shaders/common.glsl"))
        .add(
            "hit_common.glsl",
            include_str!("../../shaders/hit_common.glsl"),
        )
        .add("rng.glsl", include_str!("../../shaders/rng.glsl"))
        .add(
            "reflectance.glsl",
            include_str!("../../shaders/reflectance.glsl"),
        )
        .add(
            "waveform_types.glsl",
            include_str!("../../shaders/waveform_types.glsl"),
        )
        .add("trace.rgen", include_str!("../../shaders/trace.rgen"))
        .add("miss.rmiss", include_str!("../../shaders/miss.rmiss"))
        .add("general.rchit", include_str!("../../shaders/general.rchit"))
        .add(
            "retroreflective.rchit",
            include_str!("../../shaders/retroreflective.rchit"),
        )
        .add(
            "absorbent.rchit",
            include_str!("../../shaders/absorbent.rchit"),
        )
        .add(
            "alpha_mask.rahit",
            include_str!("../../shaders/alpha_mask.rahit"),
        )
        .add(
            "transparent.rahit",
            include_str!("../../shaders/transparent.rahit"),
        )
        .add("waveform.comp", include_str!("../../shaders/waveform.comp"))
        .add("compact.comp", include_str!("../../shaders/compact.comp"))
}

/// The compiled shaders of the frame pipeline.
pub struct FrameShaders {
    pub raygen: Spirv,
    pub miss: Spirv,
    pub general: Spirv,
    pub retroreflective: Spirv,
    pub absorbent: Spirv,
    pub alpha_mask: Spirv,
    pub transparent: Spirv,
    pub waveform: Spirv,
    pub compact: Spirv,
}

/// Checks that every shader using a host struct lays it out as the host does, and that
/// each struct is used somewhere (else the check would silently not run).
fn check_all(shaders: &[&Spirv], layouts: &[HostLayout]) -> Result<(), GpuError> {
    for host in layouts {
        if check_layout(shaders, host)? == 0 {
            return Err(GpuError::Layout(format!(
                "struct {} is not found in any shader: the reflection check cannot run",
                host.name
            )));
        }
    }
    Ok(())
}

impl FrameShaders {
    /// Compiles the shaders and checks the shared struct layouts, so a drifted layout
    /// fails here and not as garbage in the output.
    pub fn compile(cpu_device: bool) -> Result<FrameShaders, GpuError> {
        let src = sources();
        let c = |name: &str| gpu::compile(&src, name, &[]);
        let group = if cpu_device { "16" } else { "64" };
        let s = FrameShaders {
            raygen: c("trace.rgen")?,
            miss: c("miss.rmiss")?,
            general: c("general.rchit")?,
            retroreflective: c("retroreflective.rchit")?,
            absorbent: c("absorbent.rchit")?,
            alpha_mask: c("alpha_mask.rahit")?,
            transparent: c("transparent.rahit")?,
            waveform: gpu::compile(&src, "waveform.comp", &[("WAVEFORM_GROUP", group)])?,
            compact: c("compact.comp")?,
        };
        check_all(
            &[
                &s.raygen,
                &s.miss,
                &s.general,
                &s.retroreflective,
                &s.absorbent,
                &s.alpha_mask,
                &s.transparent,
            ],
            &trace_layouts(),
        )?;
        check_all(&[&s.waveform, &s.compact], &echo_layouts())?;
        Ok(s)
    }
}
