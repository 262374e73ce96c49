//! The attack corpus of `lrab-safety` (`safety/attacks/`) run through the real `lrab-harness`
//! binary by the simulated adversarial model, and judged: `lrab safety --attacks DIR`.
//!
//! Its own crate beside `lrab-safety` because it drives the simulator: `lrab-safety` is the
//! harness's own kernel, and the harness must not build the simulator. From the bottom up:
//! `report` (what an attack's outcome and the run's table are), `world` (one attack's fresh
//! root, canaries, listeners, its judge and the controls that prove each channel is watched),
//! `driver` (the harness launches, restarts and pauses an attack's script asks for).

#![deny(missing_docs)]

mod driver;
mod report;
mod world;

pub use driver::AttackRunner;
pub use report::{AttackReport, Outcome};
