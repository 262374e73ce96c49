//! Statistics, tables, figures and reports from LRAB cell CSVs.
