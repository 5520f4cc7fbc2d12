//! `beamtrace sensors` and `beamtrace info`: tables of what the library knows.

use anyhow::{bail, Result};
use beamtrace::gpu::list_devices;
use beamtrace::sensor::presets;

pub(super) fn print_sensors() {
    println!(
        "{:<14} {:>8} {:>8} {:>8}  {:<17} {:<17} description",
        "preset", "channels", "columns", "beams", "azimuth (deg)", "elevation (deg)"
    );
    for p in presets() {
        println!(
            "{:<14} {:>8} {:>8} {:>8}  {:>7.2} .. {:<7.2} {:>7.2} .. {:<7.2} {}",
            p.name,
            p.channels,
            p.default_columns,
            p.channels * p.default_columns,
            p.h_fov_deg.0,
            p.h_fov_deg.1,
            p.v_fov_deg.0,
            p.v_fov_deg.1,
            p.description
        );
    }
}

pub(super) fn info() -> Result<()> {
    let devices = list_devices()?;
    if devices.is_empty() {
        bail!("no Vulkan devices: run scripts/setup.sh (installs Mesa's lavapipe)");
    }
    for d in devices {
        println!("[{}] {} ({})", d.index, d.name, d.kind);
        println!("    driver: {}", d.driver.trim());
        println!("    Vulkan {}", d.api_version);
        if d.missing.is_empty() {
            println!("    ray tracing: yes");
            println!("    max recursion depth: {}", d.max_ray_recursion_depth);
            println!(
                "    shader group handle size: {} bytes",
                d.shader_group_handle_size
            );
            println!("    max instances per TLAS: {}", d.max_instance_count);
            println!("    max triangles per BLAS: {}", d.max_primitive_count);
        } else {
            println!("    ray tracing: no — missing {}", d.missing.join(", "));
        }
        println!("    timestamp period: {} ns", d.timestamp_period_ns);
    }
    Ok(())
}
