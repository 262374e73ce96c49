//! Canonical DB hashing (upstream `get_db_hash`): SHA-256 of the sorted Python JSON dump.
//!
//! Records are held as `Arc<T>` so a task's environment is a cheap copy of the loaded base
//! DB; a record that a tool changes is copied on write (`Arc::make_mut`), which also tells
//! the hasher which records it must serialise again. The base cache keeps each record's
//! canonical bytes and the SHA-256 state before every record, so hashing a changed DB
//! resumes at the first record that differs instead of starting from byte zero. This is
//! what makes 164 gold replays fast.

use crate::pyjson;
use indexmap::IndexMap;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Arc;

/// One table of a DB: id -> record, in file (insertion) order like a Python dict.
pub type Table<T> = IndexMap<String, Arc<T>>;

/// Canonical text of one record (`json.dumps(record, sort_keys=True)`).
pub fn canon_row<T: Serialize>(row: &T, out: &mut Vec<u8>) {
    let v = serde_json::to_value(row).expect("records serialise");
    pyjson::write_value(out, &v, true);
}

fn sorted_keys<T>(t: &Table<T>) -> Vec<&str> {
    let mut keys: Vec<&str> = t.keys().map(String::as_str).collect();
    keys.sort_by(|a, b| pyjson::cmp_py_str(a, b));
    keys
}

/// Canonical bytes of the records of a freshly loaded table, keyed by id and pointer.
pub struct TableCache<T> {
    rows: HashMap<String, (Arc<T>, Box<[u8]>)>,
    keys: Vec<String>,
}

impl<T: Serialize> TableCache<T> {
    pub fn build(t: &Table<T>) -> Self {
        let mut rows = HashMap::with_capacity(t.len());
        for (k, v) in t {
            let mut out = Vec::new();
            canon_row(v.as_ref(), &mut out);
            rows.insert(k.clone(), (v.clone(), out.into_boxed_slice()));
        }
        let keys = sorted_keys(t).into_iter().map(str::to_string).collect();
        TableCache { rows, keys }
    }
}

/// A table as the hasher sees it: the current rows plus the optional base cache.
pub trait TableView {
    /// Current ids in canonical (sorted) order.
    fn keys(&self) -> Vec<&str>;
    /// The base ids in canonical order, when there is a base.
    fn base_keys(&self) -> Option<&[String]>;
    /// Whether the current record under `key` is the base record (same pointer).
    fn is_base(&self, key: &str) -> bool;
    /// Feed `"key": <record>` into the hasher.
    fn feed_row(&self, key: &str, h: &mut Sha256, scratch: &mut Vec<u8>);
}

pub struct View<'a, T> {
    pub table: &'a Table<T>,
    pub cache: Option<&'a TableCache<T>>,
}

impl<T: Serialize> TableView for View<'_, T> {
    fn keys(&self) -> Vec<&str> {
        sorted_keys(self.table)
    }
    fn base_keys(&self) -> Option<&[String]> {
        self.cache.map(|c| c.keys.as_slice())
    }
    fn is_base(&self, key: &str) -> bool {
        match (
            self.cache.and_then(|c| c.rows.get(key)),
            self.table.get(key),
        ) {
            (Some((base, _)), Some(cur)) => Arc::ptr_eq(base, cur),
            _ => false,
        }
    }
    fn feed_row(&self, key: &str, h: &mut Sha256, scratch: &mut Vec<u8>) {
        scratch.clear();
        pyjson::write_str(scratch, key);
        scratch.extend_from_slice(b": ");
        h.update(&scratch[..]);
        let v = &self.table[key];
        match self.cache.and_then(|c| c.rows.get(key)) {
            Some((base, bytes)) if Arc::ptr_eq(base, v) => h.update(bytes),
            _ => {
                scratch.clear();
                canon_row(v.as_ref(), scratch);
                h.update(&scratch[..]);
            }
        }
    }
}

/// The hash of the base DB plus resume points: `states[t][r]` is the hasher state just
/// before row `r` of table `t` (tables in canonical order; `r == len` = after the last row).
pub struct HashCache {
    pub hash: String,
    states: Vec<Vec<Sha256>>,
}

/// Where the current tables first differ from the base: (table, row) in canonical order.
fn divergence(tables: &[(&str, &dyn TableView)], keys: &[Vec<&str>]) -> Option<(usize, usize)> {
    for (ti, (_, t)) in tables.iter().enumerate() {
        let base = t.base_keys()?;
        let cur = &keys[ti];
        let n = cur.len().min(base.len());
        for r in 0..n {
            if cur[r] != base[r] || !t.is_base(cur[r]) {
                return Some((ti, r));
            }
        }
        if cur.len() != base.len() {
            return Some((ti, n));
        }
    }
    None
}

/// Hash a DB made of named tables, resuming from `cache` when given. With `record`, also
/// return the resume points of this DB (used once, to build the base cache).
fn hash_impl(
    tables: &mut [(&str, &dyn TableView)],
    cache: Option<&HashCache>,
    record: bool,
) -> (String, Vec<Vec<Sha256>>) {
    tables.sort_by(|a, b| pyjson::cmp_py_str(a.0, b.0));
    let keys: Vec<Vec<&str>> = tables.iter().map(|(_, t)| t.keys()).collect();
    let mut start = None;
    if let Some(c) = cache {
        match divergence(tables, &keys) {
            None => return (c.hash.clone(), Vec::new()),
            Some((t, r)) => {
                start = c
                    .states
                    .get(t)
                    .and_then(|s| s.get(r))
                    .map(|st| (t, r, st.clone()))
            }
        }
    }
    let mut states: Vec<Vec<Sha256>> = Vec::new();
    let mut scratch = Vec::new();
    let (mut h, t0, r0) = match start {
        Some((t, r, st)) => (st, t, Some(r)),
        None => {
            let mut h = Sha256::new();
            h.update(b"{");
            (h, 0, None)
        }
    };
    for ti in t0..tables.len() {
        let (name, t) = &tables[ti];
        let first_row = match (ti == t0, r0) {
            (true, Some(r)) => r,
            _ => {
                if ti > 0 {
                    h.update(b", ");
                }
                scratch.clear();
                pyjson::write_str(&mut scratch, name);
                scratch.extend_from_slice(b": {");
                h.update(&scratch[..]);
                0
            }
        };
        let mut table_states = Vec::new();
        for (ri, key) in keys[ti].iter().enumerate().skip(first_row) {
            if record {
                table_states.push(h.clone());
            }
            if ri > 0 {
                h.update(b", ");
            }
            t.feed_row(key, &mut h, &mut scratch);
        }
        if record {
            table_states.push(h.clone());
            states.push(table_states);
        }
        h.update(b"}");
    }
    h.update(b"}");
    (hex::encode(h.finalize()), states)
}

/// Hash a DB made of named tables (optionally resuming from the base cache).
pub fn hash_tables(tables: &mut [(&str, &dyn TableView)], cache: Option<&HashCache>) -> String {
    hash_impl(tables, cache, false).0
}

/// Hash the base DB and keep its resume points.
pub fn build_hash_cache(tables: &mut [(&str, &dyn TableView)]) -> HashCache {
    let (hash, states) = hash_impl(tables, None, true);
    HashCache { hash, states }
}

/// Canonical text of a whole DB value (used for small DBs and tests).
pub fn canonical_text<T: Serialize>(db: &T) -> String {
    let v = serde_json::to_value(db).expect("db serialises");
    pyjson::dumps_sorted(&v)
}

/// SHA-256 hex of a byte string (the suite's one implementation).
pub use lrab_util::sha256_hex;
