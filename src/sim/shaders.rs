//! The simulator's shaders, embedded at build time so the binary is self-contained, and
//! the reflection check of every shared struct.

use crate::gpu::{self, check_layout, GpuError, ShaderSources, Spirv};

fn sources() -> ShaderSources {
    ShaderSources::new()
        .add("common.glsl", include_str!("../../shaders/common.glsl"))
        .add("trace.rgen", include_str!("../../shaders/trace.rgen"))
        .add("miss.rmiss", include_str!("../../shaders/miss.rmiss"))
        .add("surface.rchit", include_str!("../../shaders/surface.rchit"))
}

/// The compiled shaders of the trace pipeline.
pub struct TraceShaders {
    pub raygen: Spirv,
    pub miss: Spirv,
    pub surface: Spirv,
}

impl TraceShaders {
    /// Compiles the shaders and checks that they lay out every shared struct exactly as
    /// the host does, so a drifted layout fails here and not as garbage in the output.
    pub fn compile() -> Result<TraceShaders, GpuError> {
        let src = sources();
        let shaders = TraceShaders {
            raygen: gpu::compile(&src, "trace.rgen", &[])?,
            miss: gpu::compile(&src, "miss.rmiss", &[])?,
            surface: gpu::compile(&src, "surface.rchit", &[])?,
        };
        let all = [&shaders.raygen, &shaders.miss, &shaders.surface];
        for host in super::gpu_types::host_layouts() {
            // Every shared struct sits in a buffer or the push constants, so it is in the
            // SPIR-V; not finding one means the check would silently not run.
            let uses = check_layout(&all, &host)?;
            if uses == 0 {
                return Err(GpuError::Layout(format!(
                    "struct {} is not found in any shader: the reflection check cannot run",
                    host.name
                )));
            }
        }
        Ok(shaders)
    }
}
