//! Statistics, tables, figures and reports from LRAB cell CSVs.
//!
//! Flow: [`load::load`] reads any mix of our `cells.csv`, upstream's published CSVs and τ²
//! manifests/results into a [`model::Dataset`]; [`analysis::analyze`] computes every table and
//! test; [`report`] renders text, Markdown and HTML; [`figures`] draws SVG/PNG charts;
//! [`cli::run`] ties it together for `lrab analyze`.

pub mod analysis;
pub mod cli;
pub mod events;
pub mod figures;
pub mod load;
pub mod model;
pub mod report;
pub mod rng;
pub mod stats;
pub mod tau2_tables;
