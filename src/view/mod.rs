//! The view: the point cloud drawn as it comes off the GPU, in a window
//! ([`window`], behind the `window` feature) or offscreen into a picture
//! ([`render_picture`]); or recorded frames (`output::Recording`) played in the same
//! window without simulating ([`RecordedPlayer`]). Simulation and drawing share one device: the points shader
//! pulls the simulator's point buffer by device address, ordered after the frame's
//! compaction by a barrier, with no host round trip. Knows LiDAR (colour by intensity,
//! range, EPW, …) and draws through `crate::gpu`'s owners only.

mod camera;
mod colour;
mod gpu_types;
pub mod keys;
mod meshes;
mod offscreen;
mod overlay;
mod recorded;
mod renderer;
mod session;
mod shaders;
#[cfg(feature = "window")]
pub mod window;

pub use camera::OrbitCamera;
pub use colour::{palette, ramp_colour, ColourMode, Scale};
pub use meshes::{SceneMeshes, MESH_RGBA};
pub use offscreen::{render_picture, write_png, RenderOptions, RenderedPicture};
pub use overlay::Overlay;
pub use recorded::{device_points, RecordedPlayer, ShownFrame};
pub use renderer::{read_rgba, DrawnPoints, Frame, PointStyle, Renderer};
pub use session::{RigFrame, ScenePose, SimSession, ViewInputs};
pub use shaders::{ShaderSource, ViewShaders};

use crate::gpu::GpuError;
use crate::sim::SimError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("view shaders: {0}")]
    Shader(String),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: crate::output::OutputError,
    },
    #[error(
        "no display to open a window on ({0}); set DISPLAY or WAYLAND_DISPLAY, or draw \
         the same view offscreen with `beamtrace render`"
    )]
    NoDisplay(String),
    #[error("window: {0}")]
    Window(String),
    #[error(
        "{} was not written: the last frame was not drawn (the window was minimised or \
         closed first); `beamtrace render` draws a picture without a window",
        .0.display()
    )]
    ScreenshotMissed(PathBuf),
    #[error("{0}")]
    Other(String),
    #[error("{} Vulkan validation message(s):\n{}", .0.len(), .0.iter().take(5).cloned().collect::<Vec<_>>().join("\n"))]
    Validation(Vec<String>),
}

impl ViewError {
    /// An error of another layer, by its message (sensor files, presets).
    #[cfg_attr(not(feature = "window"), allow(dead_code))]
    pub(crate) fn from_display(e: impl std::fmt::Display) -> ViewError {
        ViewError::Other(e.to_string())
    }
}
