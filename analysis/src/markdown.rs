//! Markdown table pieces, below both the analysis (which renders some of its own sections,
//! e.g. the prompt-cache table) and the report, so neither imports the other.

use std::fmt::Write as _;

/// A Markdown table: header, separator, rows, then a blank line.
pub(crate) fn table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(
        out,
        "|{}",
        header.iter().map(|_| "---|").collect::<String>()
    );
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out.push('\n');
}

/// A header cell.
pub(crate) fn s(x: &str) -> String {
    x.to_string()
}
