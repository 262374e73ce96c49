//! `lh01`: the multi-batch alloy aging dataset of LH-01 (`alloy_multibatch.csv`).
//!
//! Recipe (upstream's, in fixed point): 8 batches B01..B08 of 625 rows. Each batch draws a base
//! temperature from {400, 425, .., 525} °C, a slope U(0.8, 1.6) MPa/°C and a cap U(1350, 1550)
//! MPa. Row i has temperature base + (i mod 10)·25, time 2 + (i mod 8) h and
//! UTS = min(cap, 900 + slope·(T − base) + N(0, 18)). Batch B06 gets a −90 MPa dip at
//! base + 150 °C. UTS and elongation are held in tenths so the CSV bytes are exact.
//!
//! Planted properties are enforced by re-drawing (continuing the same stream) until they hold:
//! peaks differ pairwise by ≥ 1.0 MPa (so `.1f` and integer forms never collide between
//! batches and the ranking is strict), no peak ends in `.5` (Python's round-half-even and
//! ours agree) and the B06 dip is the only clear local minimum of the per-temperature means.

use std::collections::BTreeMap;

use crate::rng::SeededRng;
use crate::text::{tenths, tenths_rounded};
use crate::{GenError, Generated};

/// Default seed of LH-01.
pub const DEFAULT_SEED: u64 = 4101;
/// The generated file.
pub const FILE: &str = "alloy_multibatch.csv";
/// Number of batches.
pub const BATCHES: usize = 8;
/// Rows per batch.
pub const ROWS_PER_BATCH: usize = 625;
/// Index of the batch with the planted dip (B06).
pub const DIP_BATCH: usize = 5;
/// Temperature offset of the dip above the batch's base temperature.
pub const DIP_OFFSET_C: i64 = 150;
/// Size of the dip in tenths of a MPa.
const DIP_TENTHS: i64 = 900;
/// Temperature levels per batch (base + k·25, k = 0..9).
const LEVELS: usize = 10;
const STEP_C: i64 = 25;
const MAX_ATTEMPTS: u32 = 1000;

/// One CSV row, fixed point.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    temp_c: i64,
    time_h: i64,
    uts_tenths: i64,
    elong_tenths: i64,
    hardness_hv: i64,
}

/// One drawn batch.
#[derive(Debug, Clone)]
struct Batch {
    base_c: i64,
    rows: Vec<Row>,
}

impl Batch {
    fn peak_tenths(&self) -> i64 {
        self.rows.iter().map(|r| r.uts_tenths).max().unwrap_or(0)
    }

    /// Mean UTS (tenths, as f64 for comparison only) at each of the 10 temperature levels.
    fn level_means(&self) -> [f64; LEVELS] {
        let mut sum = [0i64; LEVELS];
        let mut n = [0i64; LEVELS];
        for r in &self.rows {
            let k = ((r.temp_c - self.base_c) / STEP_C) as usize;
            sum[k] += r.uts_tenths;
            n[k] += 1;
        }
        let mut out = [0.0; LEVELS];
        for k in 0..LEVELS {
            out[k] = sum[k] as f64 / n[k] as f64;
        }
        out
    }
}

fn batch_id(i: usize) -> String {
    format!("B{:02}", i + 1)
}

fn draw_batch(rng: &mut SeededRng, index: usize) -> Batch {
    let base_c = 400 + STEP_C * rng.int_in(0, 5);
    let slope_milli = rng.int_in(800, 1600); // MPa/°C × 1000
    let cap_tenths = rng.int_in(13_500, 15_500);
    let rows = (0..ROWS_PER_BATCH as i64)
        .map(|i| {
            let dt = (i % LEVELS as i64) * STEP_C;
            let temp_c = base_c + dt;
            let time_h = 2 + i % 8;
            // slope·ΔT in tenths: milli-MPa·°C / 100, rounded.
            let trend = (slope_milli * dt + 50) / 100;
            let mut uts = (9_000 + trend + rng.normal_int(180)).min(cap_tenths);
            if index == DIP_BATCH && dt == DIP_OFFSET_C {
                uts -= DIP_TENTHS;
            }
            // Ductility falls as strength rises; hardness tracks UTS (HV ≈ UTS/3).
            let elong = (220 - (uts - 9_000) / 25 + rng.normal_int(6)).max(10);
            let hardness = (uts + 15) / 30 + rng.normal_int(4);
            Row {
                temp_c,
                time_h,
                uts_tenths: uts,
                elong_tenths: elong,
                hardness_hv: hardness,
            }
        })
        .collect();
    Batch { base_c, rows }
}

/// The planted properties; `true` when the draw is usable.
fn valid(batches: &[Batch]) -> bool {
    let peaks: Vec<i64> = batches.iter().map(Batch::peak_tenths).collect();
    if peaks.iter().any(|p| p % 10 == 5) {
        return false;
    }
    for i in 0..peaks.len() {
        for j in i + 1..peaks.len() {
            if (peaks[i] - peaks[j]).abs() < 10 {
                return false;
            }
        }
    }
    // Dip: the residual of a level mean against the average of its two neighbours is the
    // anomaly signal; B06's dip level must stand out (≤ −60 MPa) and nothing else may come
    // close (> −30 MPa), so a data-driven detector finds exactly (B06, base + 150).
    let dip_level = (DIP_OFFSET_C / STEP_C) as usize;
    for (b, batch) in batches.iter().enumerate() {
        let m = batch.level_means();
        for k in 1..LEVELS - 1 {
            let residual = m[k] - (m[k - 1] + m[k + 1]) / 2.0;
            let is_dip = b == DIP_BATCH && k == dip_level;
            if is_dip && residual > -600.0 {
                return false;
            }
            if !is_dip && residual < -300.0 {
                return false;
            }
        }
    }
    true
}

fn render_csv(batches: &[Batch]) -> Vec<u8> {
    let mut out = String::with_capacity(BATCHES * ROWS_PER_BATCH * 40);
    out.push_str("batch_id,temperature_C,time_h,UTS_MPa,elongation_pct,hardness_HV\n");
    for (b, batch) in batches.iter().enumerate() {
        let id = batch_id(b);
        for r in &batch.rows {
            out.push_str(&format!(
                "{id},{},{},{},{},{}\n",
                r.temp_c,
                r.time_h,
                tenths(r.uts_tenths),
                tenths(r.elong_tenths),
                r.hardness_hv
            ));
        }
    }
    out.into_bytes()
}

fn truths(batches: &[Batch]) -> BTreeMap<String, Vec<String>> {
    let mut truth = BTreeMap::new();
    let mut ranked: Vec<(i64, String)> = Vec::new();
    for (b, batch) in batches.iter().enumerate() {
        let peak = batch.peak_tenths();
        let one = tenths(peak);
        let int = tenths_rounded(peak).to_string();
        // Variants: `.1f`, `.0f` and `int(round())`; the last two agree (no .5 peaks).
        truth.insert(format!("peak_{}", batch_id(b)), vec![one, int]);
        ranked.push((peak, batch_id(b)));
    }
    ranked.sort_by_key(|r| std::cmp::Reverse(r.0));
    let order: Vec<String> = ranked.iter().map(|(_, id)| id.clone()).collect();
    for (k, id) in order.iter().enumerate() {
        truth.insert(format!("rank_{}", k + 1), vec![id.clone()]);
    }
    truth.insert(
        "ranking".into(),
        vec![order.join(" > "), order.join(", "), order.join(",")],
    );
    truth.insert("dip_batch".into(), vec![batch_id(DIP_BATCH)]);
    let dip_c = batches[DIP_BATCH].base_c + DIP_OFFSET_C;
    truth.insert("dip_temperature".into(), vec![dip_c.to_string()]);
    for (b, batch) in batches.iter().enumerate() {
        truth.insert(
            format!("base_temperature_{}", batch_id(b)),
            vec![batch.base_c.to_string()],
        );
    }
    truth.insert(
        "row_count".into(),
        vec![(BATCHES * ROWS_PER_BATCH).to_string()],
    );
    truth
}

/// Generates LH-01's input for `seed`.
pub fn generate(seed: u64) -> Result<Generated, GenError> {
    let mut rng = SeededRng::new(seed);
    for _ in 0..MAX_ATTEMPTS {
        let batches: Vec<Batch> = (0..BATCHES).map(|b| draw_batch(&mut rng, b)).collect();
        if valid(&batches) {
            let mut files = BTreeMap::new();
            files.insert(FILE.to_string(), render_csv(&batches));
            return Ok(Generated {
                files,
                truth: truths(&batches),
            });
        }
    }
    Err(GenError::Exhausted {
        name: "lh01",
        seed,
        attempts: MAX_ATTEMPTS,
    })
}
