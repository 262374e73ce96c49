//! Latest attempt wins: of the attempts of one cell (one repeat of arm × model × task), the one
//! with the highest attempt number is the cell's result; earlier ones are superseded. Of two
//! rows with the same attempt number (the runner never writes one twice: a file appended to by
//! hand, or two files put together), the later is the newer record and wins. The one home of
//! the rule for the runner's resume and summary, the simulator's calibration and the analysis.

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
    /// The same attempt number again: the row offered, the newer record, replaced the one
    /// kept before; the caller decides whether that is an error (the analysis: a duplicate row
    /// would bias a mean) or not (the resume, the summary, the calibration).
    Duplicate {
        /// The row offered before with this number, now replaced.
        earlier: R,
        /// The row offered now, kept.
        later: &'a R,
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
                    let earlier = std::mem::replace(&mut o.1, row);
                    Offered::Duplicate {
                        earlier,
                        later: &o.1,
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

/// The latest attempt row of each cell of a `cells.csv` (of two rows with the same attempt
/// number, the later in the file).
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
        // the same number again: the newer record (offered later) wins
        match l.offer("c", 2, "again") {
            Offered::Duplicate { earlier, later } => assert_eq!((earlier, *later), ("a2", "again")),
            o => panic!("{o:?}"),
        }
        assert!(matches!(l.offer("c", 1, "a1"), Offered::Superseded));
        assert!(matches!(l.offer("d", 0, "d0"), Offered::First));
        assert_eq!(l.get(&"c"), Some(&"again"));
        assert_eq!(l.len(), 2);
        assert_eq!(
            l.into_map().into_iter().collect::<Vec<_>>(),
            [("c", "again"), ("d", "d0")]
        );
    }

    #[test]
    fn of_two_rows_of_one_attempt_the_later_in_the_file_wins() {
        // rows as a cells.csv appended to twice for one attempt holds them
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cells.csv");
        let mut text = crate::LEGACY_HEADER.join(",");
        for (repeat, attempt, score) in [
            (0, 0, 0.1),
            (0, 1, 0.2),
            (0, 1, 0.3),
            (1, 0, 0.4),
            (0, 0, 0.5),
        ] {
            text.push_str(&format!(
                "\nr,a,m,T1,1,{repeat},{attempt},{score},,,1.0,0,completed,b,true,,,,,cells/x"
            ));
        }
        std::fs::write(&p, text + "\n").unwrap();
        let rows = crate::read_cell_rows(&p).unwrap();
        assert_eq!(rows.len(), 5);
        let l = latest_cell_rows(&rows);
        let scores: Vec<f64> = l.iter().map(|(_, r)| r.score).collect();
        assert_eq!(
            scores,
            [0.3, 0.4],
            "repeat 0: attempt 1's later row; repeat 1 apart"
        );
    }
}
