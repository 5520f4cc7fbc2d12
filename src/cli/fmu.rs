//! `beamtrace fmu`: packages the OSMP sensor model FMU — the FMU crate's shared library
//! (`fmu/`, built by `cargo build -p beamtrace-fmu`), its `modelDescription.xml` and
//! the scene and sensor files in `resources/` — as one zip file.

use anyhow::{bail, Context as _, Result};
use beamtrace::osi::osmp::{model_description, MODEL_IDENTIFIER};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The shared library's file name as cargo builds it.
const LIBRARY: &str = "libbeamtrace_fmu.so";

#[derive(clap::Args)]
pub(super) struct FmuArgs {
    /// The FMU file to write (.fmu).
    #[arg(long)]
    out: PathBuf,
    /// The sensor: a preset name, or a YAML file (copied into the FMU's resources/ with
    /// the files it names beside it).
    #[arg(long, default_value = "os1-128")]
    sensor: String,
    /// The glTF scene (.glb, or .gltf with the buffers and images it names), copied into
    /// resources/. Default: scenes/street.glb, the bundled street.
    #[arg(long, default_value = "scenes/street.glb")]
    scene: PathBuf,
    /// The default of the FMU's `seed` parameter (0 to 2147483647: an FMI Integer).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// The FMU's shared library. Default: libbeamtrace_fmu.so beside this binary, where
    /// `cargo build -p beamtrace-fmu` puts it.
    #[arg(long, value_name = "FILE")]
    library: Option<PathBuf>,
}

pub(super) fn fmu(args: FmuArgs) -> Result<()> {
    let library = match &args.library {
        Some(p) => p.clone(),
        None => beside_binary()?,
    };
    let so = std::fs::read(&library).with_context(|| {
        format!(
            "cannot read the FMU's library {}: build it with `cargo build -p \
             beamtrace-fmu` (--release for a release build of beamtrace), or give --library",
            library.display()
        )
    })?;
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let scene = resource_files(&args.scene, &mut files)?;
    let sensor = match Path::new(&args.sensor).is_file() {
        true => resource_files(Path::new(&args.sensor), &mut files)?,
        false => {
            beamtrace::sensor::load_sensor_with(&args.sensor, Default::default())?;
            args.sensor.clone()
        }
    };
    let seed = args.seed.min(i32::MAX as u64);
    let start = serde_json::json!({ "sensor": sensor, "scene": scene, "seed": seed });
    files.push((
        "resources/parameters.json".into(),
        start.to_string().into_bytes(),
    ));
    let guid = guid(&so, &files, &sensor, args.seed);
    let xml = model_description(&guid, &sensor, &scene, args.seed);
    files.insert(0, ("modelDescription.xml".into(), xml.into_bytes()));
    files.push((format!("binaries/linux64/{MODEL_IDENTIFIER}.so"), so));
    let zip = stored_zip(&files);
    beamtrace::output::write_atomic(&args.out, |w| w.write_all(&zip))?;
    println!(
        "wrote {} ({} bytes): sensor {sensor}, scene {scene}, from {}",
        args.out.display(),
        zip.len(),
        library.display()
    );
    Ok(())
}

/// `libbeamtrace_fmu.so` in this binary's folder.
fn beside_binary() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find this binary's folder")?;
    let dir = exe.parent().context("this binary has no folder")?;
    Ok(dir.join(LIBRARY))
}

/// Adds `file` as `resources/<name>` and, for YAML and .gltf files, the files in its
/// folder it names (a sensor's CSVs, a glTF's buffers and images); returns `<name>`.
fn resource_files(file: &Path, files: &mut Vec<(String, Vec<u8>)>) -> Result<String> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let name = (file.file_name().and_then(|n| n.to_str()))
        .with_context(|| format!("{}: not a file name", file.display()))?
        .to_string();
    let folder = file.parent().unwrap_or(Path::new("."));
    let mut named = Vec::new();
    if name.ends_with(".gltf") || name.ends_with(".yaml") || name.ends_with(".yml") {
        let text = String::from_utf8_lossy(&bytes);
        let value: serde_json::Value = match name.ends_with(".gltf") {
            true => serde_json::from_str(&text)?,
            false => serde_norway::from_str(&text)?,
        };
        strings(&value, &mut named);
    }
    files.push((format!("resources/{name}"), bytes));
    for s in named {
        let p = folder.join(&s);
        let inside = !s.contains("..") && !Path::new(&s).is_absolute();
        if inside && p.is_file() && s != name {
            files.push((format!("resources/{s}"), std::fs::read(&p)?));
        }
    }
    Ok(name)
}

/// Every string in `v`.
fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) if !s.starts_with("data:") => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(o) => o.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// A GUID for this FMU: a digest of what it holds, in GUID form.
fn guid(so: &[u8], files: &[(String, Vec<u8>)], sensor: &str, seed: u64) -> String {
    let mut d = Sha256::new();
    d.update(so);
    for (name, bytes) in files {
        d.update(name.as_bytes());
        d.update(bytes);
    }
    d.update(sensor.as_bytes());
    d.update(seed.to_le_bytes());
    let h: String = d
        .finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// A zip archive of `files`, stored (not compressed): what FMI masters unpack.
fn stored_zip(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, bytes) in files {
        let offset = out.len() as u32;
        let crc = crc32(bytes);
        let header = |sig: u32, central: bool| {
            let mut h = Vec::new();
            h.extend(sig.to_le_bytes());
            if central {
                h.extend(20u16.to_le_bytes()); // made by: 2.0
            }
            // version needed 2.0, flags 0 (UTF-8 names are plain ASCII here), stored,
            // time and date 0 (1980-01-01: reproducible bytes).
            for v in [20u16, 0, 0, 0, 0x21] {
                h.extend(v.to_le_bytes());
            }
            h.extend(crc.to_le_bytes());
            h.extend((bytes.len() as u32).to_le_bytes());
            h.extend((bytes.len() as u32).to_le_bytes());
            h.extend((name.len() as u16).to_le_bytes());
            h.extend(0u16.to_le_bytes()); // extra
            if central {
                // comment, disk, internal and external attributes, offset.
                for v in [0u16, 0, 0] {
                    h.extend(v.to_le_bytes());
                }
                h.extend(0u32.to_le_bytes());
                h.extend(offset.to_le_bytes());
            }
            h.extend(name.as_bytes());
            h
        };
        out.extend(header(0x0403_4b50, false));
        out.extend(bytes);
        central.extend(header(0x0201_4b50, true));
    }
    let start = out.len() as u32;
    out.extend(&central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    for v in [0u16, 0, files.len() as u16, files.len() as u16] {
        out.extend(v.to_le_bytes());
    }
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(start.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

/// CRC-32 (IEEE 802.3, reflected), as zip asks.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// Refuses what no FMU of this build can be.
pub(super) fn check(args: &FmuArgs) -> Result<()> {
    if args.out.extension().is_none_or(|e| e != "fmu") {
        bail!(
            "--out {}: an FMU's file name ends in .fmu",
            args.out.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_standard_check_value() {
        // The CRC-32 check value of "123456789" (every CRC catalogue lists it).
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }
}
