//! The loaders users feed files to, through the public API and on the CPU only: the
//! sensor YAML, glTF and scenario YAML fuzzed, and scenarios resolved on scenes.

mod fuzz;
#[path = "../support/mutate.rs"]
mod mutate;
mod scenario;
