//! Statistics, tables, figures and reports from LRAB cell CSVs (docs/statistics.md).
//!
//! Flow: [`load`] reads any mix of our `cells.csv`, the published CSVs and τ² manifests/results
//! into a [`Dataset`]; [`analyze`] computes every table and test into an [`Analysis`]; the
//! report is rendered as text, Markdown and HTML with SVG/PNG figures; [`run`] ties it
//! together for `lrab analyze` ([`AnalyzeArgs`]). The statistics themselves are pure functions
//! in [`stats`].

#![deny(missing_docs)]

mod analysis;
mod cli;
mod error;
mod events;
pub mod failure_forms;
mod figures;
pub mod frontier_probe;
mod load;
mod markdown;
pub mod markers;
mod model;
mod report;
pub mod resource_table;
mod rng;
pub mod stats;
pub mod tau2_tables;
mod tau_pairs;
pub mod trajectory_counts;

pub use analysis::{
    analyze, AblationRow, Analysis, ArmRow, BimodalTask, Comparison, Config, ExtraColumn,
    ExtraStat, Extras, MechanismRow, NoiseFloor, Pooled, PowerRow, RepeatDelta, ResourceRow,
    TauSummary, WallRow,
};
pub use cli::{run, AnalyzeArgs, Outcome};
pub use error::{Error, Result};
pub use figures::{prefill_curve_svg, CurveSeries};
pub use load::{load, load_with, LoadOptions, TimeoutPolicy};
pub use model::{normalize_task, tier_of, AblationFile, Cell, Dataset, ScorerError, TauData};
pub use rng::{ChaChaSource, CpythonRandom, RandomSource, RngKind};
