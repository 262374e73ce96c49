//! The published safety benchmark (54 cases: 44 adversarial, 10 benign controls) on any arm:
//! the cases typed ([`cases`]), their fixtures and the places they name ([`fixtures`]), the
//! end-to-end effect checks made outside the arm after its run ([`effects`]), upstream's
//! judging of the transcript made arm-neutral ([`judge`]), the row, dispositions and per-ring
//! table ([`report`]), and the published results read back ([`published`]). The runner
//! launches the arm (`lrab safety --arms`); docs/safety.md has the rules.

pub mod cases;
pub mod effects;
pub mod fixtures;
pub mod judge;
#[allow(clippy::module_inception)]
pub mod published;
pub mod report;
