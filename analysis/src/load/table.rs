//! A CSV file read as strings (polars does the parsing), with typed accessors whose errors name
//! the file, the line and the column.

use crate::error::{input, Error, Result};
use polars::prelude::*;
use std::collections::HashMap;
use std::io::Cursor;
use std::path::Path;

/// A CSV read as strings: header and columns.
pub(crate) struct Table {
    pub(crate) path: String,
    /// Folder of the file (attempt dirs are relative to it).
    pub(crate) dir: std::path::PathBuf,
    pub(crate) columns: HashMap<String, Vec<Option<String>>>,
    pub(crate) header: Vec<String>,
    pub(crate) rows: usize,
}

impl Table {
    pub(crate) fn read(path: &Path) -> Result<Table> {
        let shown = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| Error::io(&shown, "cannot read file", e))?;
        if bytes.iter().all(|b| b.is_ascii_whitespace()) {
            return Err(input!("{shown}: file is empty (no header line)"));
        }
        // Every column as a string (schema inference off): we parse and check values ourselves
        // so errors can name the line and the column.
        let df = CsvReadOptions::default()
            .with_has_header(true)
            .with_infer_schema_length(Some(0))
            .into_reader_with_file_handle(Cursor::new(bytes))
            .finish()
            .map_err(|e| input!("{shown}: not a readable CSV file: {e}"))?;
        let header: Vec<String> = df
            .get_column_names()
            .iter()
            .map(|s| s.trim().to_string())
            .collect();
        let mut columns = HashMap::new();
        for name in df.get_column_names() {
            let col = df.column(name).map_err(|e| input!("{shown}: {e}"))?;
            let s = col
                .str()
                .map_err(|e| input!("{shown}: column {name}: {e}"))?;
            let v: Vec<Option<String>> = s
                .iter()
                .map(|x| x.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()))
                .collect();
            columns.insert(name.trim().to_string(), v);
        }
        let dir = path.parent().map(|p| p.to_path_buf()).unwrap_or_default();
        Ok(Table {
            path: shown,
            dir,
            rows: df.height(),
            columns,
            header,
        })
    }

    /// Whether every one of `cols` is a column.
    pub(crate) fn has(&self, cols: &[&str]) -> bool {
        cols.iter().all(|c| self.columns.contains_key(*c))
    }

    /// Which of `cols` are not columns.
    pub(crate) fn missing(&self, cols: &[&str]) -> Vec<String> {
        cols.iter()
            .filter(|c| !self.columns.contains_key(**c))
            .map(|c| c.to_string())
            .collect()
    }

    /// Value at data row `i` (0-based), `None` when empty or when the column is absent.
    pub(crate) fn get(&self, col: &str, i: usize) -> Option<&str> {
        self.columns.get(col).and_then(|v| v[i].as_deref())
    }

    /// Line number of data row `i` (header is line 1).
    pub(crate) fn line(i: usize) -> usize {
        i + 2
    }

    /// `file:line` of data row `i`.
    pub(crate) fn origin(&self, i: usize) -> String {
        format!("{}:{}", self.path, Self::line(i))
    }

    pub(crate) fn req(&self, col: &str, i: usize) -> Result<&str> {
        self.get(col, i)
            .ok_or_else(|| input!("{}: column `{col}` is empty", self.origin(i)))
    }

    pub(crate) fn num(&self, col: &str, i: usize) -> Result<Option<f64>> {
        match self.get(col, i) {
            None => Ok(None),
            Some(s) => {
                let v: f64 = s.parse().map_err(|_| {
                    input!("{}: column `{col}`: `{s}` is not a number", self.origin(i))
                })?;
                if !v.is_finite() {
                    return Err(input!(
                        "{}: column `{col}`: `{s}` is not finite",
                        self.origin(i)
                    ));
                }
                Ok(Some(v))
            }
        }
    }

    pub(crate) fn score(&self, col: &str, i: usize) -> Result<Option<f64>> {
        let v = self.num(col, i)?;
        if let Some(x) = v {
            if !(0.0..=1.0).contains(&x) {
                return Err(input!(
                    "{}: column `{col}`: score {x} is outside [0, 1]",
                    self.origin(i)
                ));
            }
        }
        Ok(v)
    }

    /// A true/false column (`true`/`false`, `1`/`0`, `yes`/`no`, any case); empty or absent is
    /// false.
    pub(crate) fn flag(&self, col: &str, i: usize) -> Result<bool> {
        match self.get(col, i) {
            None => Ok(false),
            Some(s) => match s.to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" => Ok(true),
                "false" | "0" | "no" => Ok(false),
                _ => Err(input!(
                    "{}: column `{col}`: `{s}` is not true/false",
                    self.origin(i)
                )),
            },
        }
    }

    pub(crate) fn int(&self, col: &str, i: usize) -> Result<u64> {
        let s = self.req(col, i)?;
        s.parse().map_err(|_| {
            input!(
                "{}: column `{col}`: `{s}` is not a non-negative integer",
                self.origin(i)
            )
        })
    }

    /// Whether every non-empty value of `col` is a finite number.
    pub(crate) fn numeric(&self, col: &str) -> bool {
        self.columns.get(col).is_some_and(|v| {
            v.iter()
                .flatten()
                .all(|s| s.parse::<f64>().is_ok_and(f64::is_finite))
        })
    }
}
