//! Latest attempt wins: of the attempts of one cell (one repeat of arm × model × task), the one
//! with the highest attempt number is the cell's result; earlier ones are superseded. The one
//! home of the rule for the runner's resume, the simulator's calibration and the analysis.

use std::collections::BTreeMap;

use crate::CellRow;

/// What [`Latest::offer`] did with an attempt.
#[derive(Debug)]
pub enum Offered<'a, R> {
    /// The first attempt of its cell.
    First,
    /// A later attempt: it replaced the one kept before.
    Replaced,
    /// An earlier attempt: the one kept stays.
    Superseded,
    /// The same attempt number again: the one kept stays; the caller decides whether that is
    /// an error (the analysis: a duplicate row would bias a mean) or not (the resume).
    Duplicate {
        /// The attempt kept.
        kept: &'a R,
        /// The attempt offered.
        offered: R,
    },
}

/// The latest attempt of each cell, by key.
#[derive(Debug, Clone)]
pub struct Latest<K, R> {
    rows: BTreeMap<K, (u64, R)>,
}

impl<K, R> Default for Latest<K, R> {
    fn default() -> Self {
        Latest {
            rows: BTreeMap::new(),
        }
    }
}

impl<K: Ord, R> Latest<K, R> {
    /// Offers attempt number `attempt` of the cell `key`.
    pub fn offer(&mut self, key: K, attempt: u64, row: R) -> Offered<'_, R> {
        use std::collections::btree_map::Entry;
        match self.rows.entry(key) {
            Entry::Vacant(v) => {
                v.insert((attempt, row));
                Offered::First
            }
            Entry::Occupied(o) => {
                let o = o.into_mut();
                if o.0 == attempt {
                    Offered::Duplicate {
                        kept: &o.1,
                        offered: row,
                    }
                } else if o.0 > attempt {
                    Offered::Superseded
                } else {
                    *o = (attempt, row);
                    Offered::Replaced
                }
            }
        }
    }

    /// The latest attempt of `key`.
    pub fn get(&self, key: &K) -> Option<&R> {
        self.rows.get(key).map(|(_, r)| r)
    }

    /// Cells and their latest attempts, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &R)> {
        self.rows.iter().map(|(k, (_, r))| (k, r))
    }

    /// The cells kept.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// No cell kept.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Cells and their latest attempts, in key order.
    pub fn into_map(self) -> BTreeMap<K, R> {
        self.rows.into_iter().map(|(k, (_, r))| (k, r)).collect()
    }
}

/// The key of a `cells.csv` row's cell: (arm, model, task, repeat).
pub type CellKey = (String, String, String, u32);

/// The latest attempt row of each cell of a `cells.csv` (a duplicate row: the first stays).
pub fn latest_cell_rows<'a>(
    rows: impl IntoIterator<Item = &'a CellRow>,
) -> Latest<CellKey, &'a CellRow> {
    let mut l = Latest::default();
    for r in rows {
        let k = (r.arm.clone(), r.model.clone(), r.task.clone(), r.repeat);
        l.offer(k, u64::from(r.attempt), r);
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_attempt_wins_in_any_order() {
        let mut l = Latest::default();
        assert!(matches!(l.offer("c", 1, "a1"), Offered::First));
        assert!(matches!(l.offer("c", 0, "a0"), Offered::Superseded));
        assert!(matches!(l.offer("c", 2, "a2"), Offered::Replaced));
        match l.offer("c", 2, "again") {
            Offered::Duplicate { kept, offered } => assert_eq!((*kept, offered), ("a2", "again")),
            o => panic!("{o:?}"),
        }
        assert!(matches!(l.offer("d", 0, "d0"), Offered::First));
        assert_eq!(l.get(&"c"), Some(&"a2"));
        assert_eq!(l.len(), 2);
        assert_eq!(
            l.into_map().into_iter().collect::<Vec<_>>(),
            [("c", "a2"), ("d", "d0")]
        );
    }
}
