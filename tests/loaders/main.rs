//! The loaders users feed files to, through the public API and on the CPU only: the
//! sensor YAML (and its CSV files), glTF, scenario, rig and batch YAML fuzzed, and
//! scenarios resolved on scenes.

mod fuzz;
#[path = "../support/mutate.rs"]
mod mutate;
mod scenario;
