//! The sensor file shown in README.md is a working sensor file.

use std::path::Path;

#[test]
fn readme_sensor_example_loads() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let start = readme.find("```yaml\n").expect("a yaml block in README.md") + 8;
    let end = start + readme[start..].find("```").expect("closed yaml block");
    let sensor = beamtrace::sensor::parse_sensor(&readme[start..end], Path::new("README.md"))
        .unwrap_or_else(|e| panic!("README's sensor example: {e}"));
    assert_eq!(sensor.beams.len(), 128 * 1024);
    assert_eq!(sensor.subrays, 16);
    assert_eq!(sensor.detector.max_returns, 2);
    assert!(sensor
        .kernel
        .sample(sensor.subrays, sensor.sampling)
        .is_ok());
}
