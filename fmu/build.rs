//! Links shaderc's native dependencies into the FMU's shared library, as the main
//! crate's build script does for its binaries (link arguments do not pass to
//! dependents).

#[allow(dead_code)]
#[path = "../build.rs"]
mod beamtrace_build;

fn main() {
    println!("cargo:rerun-if-changed=../build.rs");
    beamtrace_build::link_shaderc_dependencies();
}
