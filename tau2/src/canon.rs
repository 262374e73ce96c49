//! Canonical DB hashing (upstream `get_db_hash`): SHA-256 of the sorted Python JSON dump.
//!
//! Records are held as `Arc<T>` so a task's environment is a cheap copy of the loaded base
//! DB; a record that a tool changes is copied on write (`Arc::make_mut`), which also tells
//! the hasher which records it must serialise again. Untouched records reuse the canonical
//! bytes computed once at load time. This is what makes 164 gold replays fast.

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

/// Canonical bytes of the records of a freshly loaded table, keyed by id and pointer.
pub struct TableCache<T> {
    rows: HashMap<String, (Arc<T>, Box<[u8]>)>,
}

impl<T: Serialize> TableCache<T> {
    pub fn build(t: &Table<T>) -> Self {
        let mut rows = HashMap::with_capacity(t.len());
        for (k, v) in t {
            let mut out = Vec::new();
            canon_row(v.as_ref(), &mut out);
            rows.insert(k.clone(), (v.clone(), out.into_boxed_slice()));
        }
        TableCache { rows }
    }
}

/// A table as the hasher sees it: the current rows plus the optional base cache.
pub trait TableView {
    /// True when the table holds exactly the base records (same ids, same pointers).
    fn unchanged(&self) -> bool;
    /// Feed `{"id": record, ...}` (ids sorted) into the hasher.
    fn feed(&self, h: &mut Sha256, scratch: &mut Vec<u8>);
}

pub struct View<'a, T> {
    pub table: &'a Table<T>,
    pub cache: Option<&'a TableCache<T>>,
}

impl<T: Serialize> TableView for View<'_, T> {
    fn unchanged(&self) -> bool {
        match self.cache {
            None => false,
            Some(c) => {
                c.rows.len() == self.table.len()
                    && self
                        .table
                        .iter()
                        .all(|(k, v)| c.rows.get(k).is_some_and(|(base, _)| Arc::ptr_eq(base, v)))
            }
        }
    }

    fn feed(&self, h: &mut Sha256, scratch: &mut Vec<u8>) {
        let mut keys: Vec<&String> = self.table.keys().collect();
        keys.sort_by(|a, b| pyjson::cmp_py_str(a, b));
        h.update(b"{");
        for (i, k) in keys.into_iter().enumerate() {
            if i > 0 {
                h.update(b", ");
            }
            scratch.clear();
            pyjson::write_str(scratch, k);
            scratch.extend_from_slice(b": ");
            h.update(&scratch[..]);
            let v = &self.table[k];
            match self.cache.and_then(|c| c.rows.get(k.as_str())) {
                Some((base, bytes)) if Arc::ptr_eq(base, v) => h.update(bytes),
                _ => {
                    scratch.clear();
                    canon_row(v.as_ref(), scratch);
                    h.update(&scratch[..]);
                }
            }
        }
        h.update(b"}");
    }
}

/// Hash a DB made of named tables. `base_hash` is returned untouched when every table is
/// unchanged from the base it was cached from.
pub fn hash_tables(tables: &mut [(&str, &dyn TableView)], base_hash: Option<&str>) -> String {
    if let Some(b) = base_hash {
        if tables.iter().all(|(_, t)| t.unchanged()) {
            return b.to_string();
        }
    }
    tables.sort_by(|a, b| pyjson::cmp_py_str(a.0, b.0));
    let mut h = Sha256::new();
    let mut scratch = Vec::new();
    h.update(b"{");
    for (i, (name, t)) in tables.iter().enumerate() {
        if i > 0 {
            h.update(b", ");
        }
        scratch.clear();
        pyjson::write_str(&mut scratch, name);
        scratch.extend_from_slice(b": ");
        h.update(&scratch[..]);
        t.feed(&mut h, &mut scratch);
    }
    h.update(b"}");
    hex::encode(h.finalize())
}

/// Canonical text of a whole DB value (used for small DBs and tests).
pub fn canonical_text<T: Serialize>(db: &T) -> String {
    let v = serde_json::to_value(db).expect("db serialises");
    pyjson::dumps_sorted(&v)
}

/// SHA-256 hex of a byte string.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}
