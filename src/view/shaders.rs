//! The view's shaders: embedded at build time, or read from a folder at run time (live
//! reload), compiled by shaderc and checked against the host's structs by reflection.

use super::gpu_types::view_layouts;
use super::ViewError;
use crate::gpu::{self, check_layout, HostLayout, ShaderSources, Spirv};
use crate::sim::gpu_types::{echo_layouts, trace_layouts};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The view's own shader files, by the names their `#include`s use.
pub(crate) const FILES: &[(&str, &str)] = &[
    (
        "view_common.glsl",
        include_str!("../../shaders/view_common.glsl"),
    ),
    ("points.vert", include_str!("../../shaders/points.vert")),
    ("points.frag", include_str!("../../shaders/points.frag")),
    ("mesh.vert", include_str!("../../shaders/mesh.vert")),
    ("mesh.frag", include_str!("../../shaders/mesh.frag")),
    ("overlay.vert", include_str!("../../shaders/overlay.vert")),
    ("overlay.frag", include_str!("../../shaders/overlay.frag")),
];

/// The compiled shaders of the view's three pipelines.
pub struct ViewShaders {
    pub points_vert: Spirv,
    pub points_frag: Spirv,
    pub mesh_vert: Spirv,
    pub mesh_frag: Spirv,
    pub overlay_vert: Spirv,
    pub overlay_frag: Spirv,
}

/// Where the view's shader sources come from.
#[derive(Debug, Clone, Default)]
pub enum ShaderSource {
    /// The files built into the binary.
    #[default]
    Embedded,
    /// A folder holding the view's files (`points.vert`, …); the simulator's shared
    /// headers (`common.glsl`) come from there too when present.
    Folder(PathBuf),
}

impl ShaderSource {
    /// The sources, the simulator's shared headers and the contract header included.
    fn sources(&self) -> Result<ShaderSources, ViewError> {
        let mut src = crate::sim::shader_sources();
        for (name, text) in FILES {
            src = src.add(name, text);
        }
        if let ShaderSource::Folder(dir) = self {
            for name in FILES.iter().map(|f| f.0).chain(["common.glsl"]) {
                let path = dir.join(name);
                match std::fs::read_to_string(&path) {
                    Ok(text) => src = src.add(name, &text),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(source) => return Err(ViewError::Read { path, source }),
                }
            }
        }
        Ok(src)
    }

    /// The newest modification time of the files a reload reads (`None` when
    /// embedded): a change means the shaders should be compiled again.
    pub fn stamp(&self) -> Option<SystemTime> {
        let ShaderSource::Folder(dir) = self else {
            return None;
        };
        FILES
            .iter()
            .filter_map(|(name, _)| modified(&dir.join(name)))
            .max()
    }
}

/// A file's modification time, `None` when it cannot be read.
pub(crate) fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The host structs the view's shaders read: its own, the simulator's `Point` and `Beam`,
/// which the points shader pulls, and its `Geometry`, which the mesh shader reads.
fn shared_layouts() -> Vec<HostLayout> {
    let mut layouts = view_layouts();
    layouts.extend(
        echo_layouts()
            .into_iter()
            .chain(trace_layouts())
            .filter(|l| ["Point", "Beam", "Geometry"].contains(&l.name)),
    );
    layouts
}

impl ViewShaders {
    /// Compiles the view's shaders and checks every shared struct, so a drifted layout
    /// is an error when the pipelines are made, not garbage on the screen.
    pub fn compile(source: &ShaderSource) -> Result<ViewShaders, ViewError> {
        let src = source.sources()?;
        let c = |name: &str| gpu::compile(&src, name, &[]);
        let s = ViewShaders {
            points_vert: c("points.vert")?,
            points_frag: c("points.frag")?,
            mesh_vert: c("mesh.vert")?,
            mesh_frag: c("mesh.frag")?,
            overlay_vert: c("overlay.vert")?,
            overlay_frag: c("overlay.frag")?,
        };
        let all = [&s.points_vert, &s.mesh_vert, &s.overlay_vert];
        for host in shared_layouts() {
            if check_layout(&all, &host)? == 0 {
                return Err(ViewError::Shader(format!(
                    "struct {} is not found in the view's shaders: the reflection check \
                     cannot run",
                    host.name
                )));
            }
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{colour_mode, PALETTE};

    #[test]
    fn the_view_shaders_compile_and_match_the_host_structs() {
        // Compiling needs no device; `compile` checks every shared struct's layout.
        if let Err(e) = ViewShaders::compile(&ShaderSource::Embedded) {
            panic!("{e}");
        }
    }

    #[test]
    fn the_view_shaders_hold_no_copy_of_the_contract() {
        let names: Vec<&str> = colour_mode::GLSL
            .iter()
            .chain(PALETTE)
            .map(|(n, _)| *n)
            .collect();
        assert!(names.contains(&"COLOUR_RING") && names.contains(&"PALETTE_RAMP"));
        for (file, text) in FILES {
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("").trim();
                let at = format!("shaders/{file}:{}: {code}", n + 1);
                let defined = code
                    .strip_prefix("#define ")
                    .or_else(|| code.strip_prefix("const uint "))
                    .and_then(|rest| rest.split_whitespace().next());
                assert!(
                    !defined.is_some_and(|d| names.contains(&d)),
                    "{at}: defines a contract name (src/contract.rs)"
                );
                let literal_case = code
                    .strip_prefix("case ")
                    .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()));
                assert!(
                    !literal_case,
                    "{at}: colour modes are named by contract.glsl"
                );
            }
        }
    }

    #[test]
    fn a_folder_with_a_drifted_struct_is_refused_with_its_name() {
        // What live reload meets when an edit breaks the host's layout: an error that
        // names the struct, not a picture of garbage.
        let dir = tempfile::TempDir::new().expect("temp dir");
        // `low` and `high` trade places: it compiles, but their offsets differ.
        let low = "    float low; ";
        let high = "    float high; ";
        let common = FILES[0]
            .1
            .replace(low, "@")
            .replace(high, low)
            .replace('@', high);
        assert_ne!(common, FILES[0].1, "the edit must change the file");
        std::fs::write(dir.path().join("view_common.glsl"), common).expect("write");
        let source = ShaderSource::Folder(dir.path().to_path_buf());
        assert!(source.stamp().is_some());
        let err = ViewShaders::compile(&source).err().expect("refused");
        assert!(err.to_string().contains("PointParams"), "{err}");
        // A syntax error names the file.
        std::fs::write(
            dir.path().join("points.frag"),
            "#version 460\nvoid main() { oops; }\n",
        )
        .expect("write");
        let err = ViewShaders::compile(&source).err().expect("refused");
        assert!(err.to_string().contains("points.frag"), "{err}");
    }
}
