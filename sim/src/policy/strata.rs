//! Stratified draws: the cells of one row (one model at one seed, every task of the pack)
//! share out their luck instead of each drawing it alone.
//!
//! A decision at the model's turn `t` of task `i` draws `(π(i) + u) / n`, where `u` is the
//! cell's own uniform and `π` a permutation of the pack's `n` tasks drawn from (seed, request
//! seed, model, decision, `t`) — the same for every task and every arm. Each cell's draw is
//! still uniform, so every cell's odds are unchanged; but at each turn the row's tasks fall in
//! different strata, so a row cannot have all its unlucky draws at once. That halves the
//! seed-to-seed spread of a row's mean (docs/sim.md, "Stratified draws").

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{fnv, Env, FNV0};
use crate::task::TaskPlan;

/// Where a cell's task sits among the strata of its row.
#[derive(Debug, Clone, Copy)]
pub struct Strata {
    base: u64,
    slot: usize,
    n: usize,
}

impl Strata {
    /// No stratification: every draw is the cell's own (a conversation outside the pack).
    pub fn none() -> Strata {
        Strata {
            base: FNV0,
            slot: 0,
            n: 1,
        }
    }

    /// The strata of `plan`'s row: its place among the pack's tasks, under the run's seeds.
    pub fn of(env: &Env, request_seed: Option<i64>, plan: &TaskPlan) -> Strata {
        let Some(slot) = env.tasks.plans.iter().position(|p| p.id == plan.id) else {
            return Strata::none();
        };
        let mut base = fnv(FNV0, &env.seed.to_le_bytes());
        base = fnv(base, &request_seed.unwrap_or(0).to_le_bytes());
        base = fnv(base, env.model.name.as_bytes());
        Strata {
            base,
            slot,
            n: env.tasks.plans.len(),
        }
    }

    /// The stratified uniform of decision `label` at position `pos` (a turn or a step), from
    /// the cell's own uniform `u` in [0, 1).
    pub fn draw(&self, label: &str, pos: u64, u: f64) -> f64 {
        if self.n <= 1 {
            return u;
        }
        let key = fnv(fnv(self.base, label.as_bytes()), &pos.to_le_bytes());
        let mut perm: Vec<usize> = (0..self.n).collect();
        perm.shuffle(&mut ChaCha8Rng::seed_from_u64(key));
        ((perm[self.slot] as f64 + u) / self.n as f64).min(1.0 - f64::EPSILON)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strata(slot: usize, n: usize) -> Strata {
        Strata { base: 7, slot, n }
    }

    #[test]
    fn a_row_covers_every_stratum_once_per_turn() {
        for pos in 0..20 {
            let mut seen: Vec<usize> = (0..18)
                .map(|i| (strata(i, 18).draw("form", pos, 0.5) * 18.0) as usize)
                .collect();
            seen.sort();
            assert_eq!(seen, (0..18).collect::<Vec<_>>(), "turn {pos}");
        }
    }

    #[test]
    fn each_cell_stays_uniform_and_turns_differ() {
        // over many turns one task's stratum is spread evenly, not stuck
        let mut counts = [0u32; 6];
        for pos in 0..6000 {
            counts[(strata(2, 6).draw("form", pos, 0.0) * 6.0) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (900..1100).contains(&c)),
            "{counts:?}"
        );
        // labels draw their own permutations
        let a: Vec<f64> = (0..6).map(|i| strata(i, 6).draw("form", 3, 0.1)).collect();
        let b: Vec<f64> = (0..6)
            .map(|i| strata(i, 6).draw("content", 3, 0.1))
            .collect();
        assert_ne!(a, b);
    }

    #[test]
    fn none_and_single_task_rows_keep_the_cells_own_draw() {
        assert_eq!(Strata::none().draw("form", 4, 0.37), 0.37);
        assert_eq!(strata(0, 1).draw("form", 4, 0.37), 0.37);
    }
}
