//! Links shaderc's native dependencies from the system (Debian: libshaderc-dev,
//! glslang-dev, spirv-tools). `shaderc` is built with `prefer-static-linking` and finds
//! `libshaderc_combined.a` through `SHADERC_LIB_DIR` (.cargo/config.toml); Debian's
//! combined archive holds shaderc alone, so glslang and SPIRV-Tools are linked here, in
//! dependency order, followed by the C++ runtime.

fn main() {
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
