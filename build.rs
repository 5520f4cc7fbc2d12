//! Writes the shaders' contract header and links shaderc's native dependencies.
//!
//! `$OUT_DIR/contract.glsl` is generated from `src/contract.rs`, which is compiled into
//! this script as a module, so the shaders and the crate read one set of constants.
//!
//! shaderc's native dependencies come from the system (Debian: libshaderc-dev,
//! glslang-dev, spirv-tools). `shaderc` is built with `prefer-static-linking` and finds
//! `libshaderc_combined.a` through `SHADERC_LIB_DIR` (.cargo/config.toml); Debian's
//! combined archive holds shaderc alone, so glslang and SPIRV-Tools are linked here, in
//! dependency order, followed by the C++ runtime.

// The script uses only the header writer; the crate uses the rest.
#[allow(dead_code)]
#[path = "src/contract.rs"]
mod contract;

fn main() {
    write_contract_header();
    embed_commit();
    link_shaderc_dependencies();
}

/// Links what Debian's shaderc archive leaves out. Link arguments reach only the
/// package whose build script prints them, so the Python binding's build script
/// (python/build.rs) includes this file and calls this too.
pub fn link_shaderc_dependencies() {
    let lib_dir = std::env::var("SHADERC_LIB_DIR").unwrap_or_else(|_| {
        let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
        format!("/usr/lib/{arch}-linux-gnu")
    });
    println!("cargo:rerun-if-env-changed=SHADERC_LIB_DIR");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-arg=-L{lib_dir}");
    for lib in [
        "glslang",
        "MachineIndependent",
        "GenericCodeGen",
        "OSDependent",
        "OGLCompiler",
        "SPIRV",
        "HLSL",
        "SPIRV-Tools-opt",
        "SPIRV-Tools",
    ] {
        // Passed as link arguments, not `rustc-link-lib`: those would be bundled into
        // this crate's rlib and land before shaderc-sys's archive on the final link
        // line, leaving shaderc's references to glslang unresolved.
        println!("cargo:rustc-link-arg=-l:lib{lib}.a");
    }
    println!("cargo:rustc-link-arg=-lstdc++");
}

/// `BEAMTRACE_COMMIT`: the git commit built from, for the benchmark reports (empty
/// outside a git checkout, e.g. a crate tarball).
fn embed_commit() {
    for watched in [".git/HEAD", ".git/refs/heads"] {
        if std::path::Path::new(watched).exists() {
            println!("cargo:rerun-if-changed={watched}");
        }
    }
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=BEAMTRACE_COMMIT={commit}");
}

fn write_contract_header() {
    println!("cargo:rerun-if-changed=src/contract.rs");
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let path = std::path::Path::new(&out).join("contract.glsl");
    if let Err(e) = std::fs::write(&path, contract::glsl_header()) {
        panic!("cannot write {}: {e}", path.display());
    }
}
