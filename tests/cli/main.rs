//! The `beamtrace` binary end to end: its commands and the files they write (read back
//! by independent readers where a format has one), the bad-input corpus, signals,
//! shards, the view and its offscreen render, the benchmark suite's JSON, and README's
//! examples.

#[path = "../support/independent.rs"]
mod independent;

mod bad_input;
mod bench_suite;
mod commands;
mod cw;
mod first_hour;
mod fit;
mod fmu;
mod interrupt;
mod objects;
mod osi;
mod picture;
mod readme;
mod rig;
mod run_las_mcap;
mod run_output;
mod shards;
mod view;
mod view_recorded;
mod weather;
