//! Random sources for the resampling statistics.
//!
//! Two sources exist because two needs exist: `ChaCha` (rand_chacha, the house default, portable
//! and well studied) and `Cpython`, a bit-exact port of CPython's `random.Random` (Mersenne Twister
//! MT19937) so that upstream's published bootstrap and permutation numbers, which were drawn with
//! Python's `random` module, can be reproduced to the last digit.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// What the resampling code needs from a random source: uniform integers below `n` and uniform
/// floats in `[0, 1)`. The CPython port defines these exactly as CPython does.
pub trait RandomSource {
    /// Uniform integer in `0..n` (`n >= 1`), CPython `_randbelow` semantics for the MT source.
    fn below(&mut self, n: usize) -> usize;
    /// Uniform float in `[0, 1)` with 53 bits of precision.
    fn random(&mut self) -> f64;
}

/// Which generator the CLI uses for bootstrap and permutation draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RngKind {
    /// ChaCha20 seeded from the 64-bit seed (the default).
    Chacha,
    /// Bit-exact CPython `random.Random(seed)` (Mersenne Twister), for upstream's numbers.
    Cpython,
}

impl RngKind {
    /// A boxed source of this kind seeded with `seed`.
    pub fn source(self, seed: u64) -> Box<dyn RandomSource> {
        match self {
            RngKind::Chacha => Box::new(ChaChaSource::new(seed)),
            RngKind::Cpython => Box::new(CpythonRandom::new(seed)),
        }
    }

    /// Name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            RngKind::Chacha => "chacha",
            RngKind::Cpython => "cpython",
        }
    }
}

/// The house default: ChaCha20 with a 64-bit seed.
pub struct ChaChaSource(ChaCha20Rng);

impl ChaChaSource {
    /// Seeded from `seed` via `SeedableRng::seed_from_u64`.
    pub fn new(seed: u64) -> Self {
        Self(ChaCha20Rng::seed_from_u64(seed))
    }
}

impl RandomSource for ChaChaSource {
    fn below(&mut self, n: usize) -> usize {
        self.0.gen_range(0..n)
    }
    fn random(&mut self) -> f64 {
        // 53 random bits scaled into [0, 1), the same construction CPython uses.
        (self.0.gen::<u64>() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }
}

const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// Port of CPython's `random.Random` core (`_randommodule.c`): MT19937 seeded by `init_by_array`
/// with the seed integer's 32-bit words, `random()` from two draws, `getrandbits`, `_randbelow`.
#[derive(Clone)]
pub struct CpythonRandom {
    mt: [u32; N],
    index: usize,
}

impl CpythonRandom {
    /// Equivalent of `random.Random(seed)` for a non-negative integer seed (CPython takes the
    /// absolute value of an int seed, so negative seeds are not needed).
    pub fn new(seed: u64) -> Self {
        let mut key: Vec<u32> = Vec::new();
        let mut s = seed;
        while s > 0 {
            key.push(s as u32);
            s >>= 32;
        }
        if key.is_empty() {
            key.push(0);
        }
        let mut r = Self {
            mt: [0; N],
            index: N + 1,
        };
        r.init_by_array(&key);
        r
    }

    fn init_genrand(&mut self, s: u32) {
        self.mt[0] = s;
        for i in 1..N {
            let prev = self.mt[i - 1];
            self.mt[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        self.index = N;
    }

    fn init_by_array(&mut self, key: &[u32]) {
        self.init_genrand(19_650_218);
        let mut i = 1usize;
        let mut j = 0usize;
        let klen = key.len();
        let mut k = N.max(klen);
        while k > 0 {
            let prev = self.mt[i - 1];
            self.mt[i] = (self.mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                self.mt[0] = self.mt[N - 1];
                i = 1;
            }
            if j >= klen {
                j = 0;
            }
            k -= 1;
        }
        k = N - 1;
        while k > 0 {
            let prev = self.mt[i - 1];
            self.mt[i] = (self.mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                self.mt[0] = self.mt[N - 1];
                i = 1;
            }
            k -= 1;
        }
        self.mt[0] = 0x8000_0000;
        self.index = N;
    }

    fn twist(&mut self) {
        for kk in 0..N {
            let y = (self.mt[kk] & UPPER_MASK) | (self.mt[(kk + 1) % N] & LOWER_MASK);
            let mag = if y & 1 == 1 { MATRIX_A } else { 0 };
            self.mt[kk] = self.mt[(kk + M) % N] ^ (y >> 1) ^ mag;
        }
        self.index = 0;
    }

    /// One 32-bit output (`genrand_uint32`).
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let mut y = self.mt[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// `getrandbits(k)` for `1 <= k <= 64`: 32-bit words filled least significant first, the
    /// last word truncated from the top, exactly as CPython does.
    pub fn getrandbits(&mut self, k: u32) -> u64 {
        assert!((1..=64).contains(&k), "getrandbits supports 1..=64 bits");
        if k <= 32 {
            return u64::from(self.next_u32() >> (32 - k));
        }
        let lo = u64::from(self.next_u32());
        let hi = u64::from(self.next_u32() >> (64 - k));
        lo | (hi << 32)
    }

    /// `_randbelow(n)`: rejection sampling on `n.bit_length()` bits.
    pub fn randbelow(&mut self, n: u64) -> u64 {
        assert!(n >= 1, "randbelow needs n >= 1");
        let k = 64 - n.leading_zeros();
        let mut r = self.getrandbits(k);
        while r >= n {
            r = self.getrandbits(k);
        }
        r
    }

    /// `randrange(start, stop)` with step 1.
    pub fn randrange(&mut self, start: i64, stop: i64) -> i64 {
        assert!(stop > start, "empty range for randrange");
        start + self.randbelow((stop - start) as u64) as i64
    }

    /// `choice(seq)`.
    pub fn choice<'a, T>(&mut self, seq: &'a [T]) -> &'a T {
        &seq[self.randbelow(seq.len() as u64) as usize]
    }

    /// `random()`: 27 + 26 bits from two draws.
    pub fn random_f64(&mut self) -> f64 {
        let a = self.next_u32() >> 5;
        let b = self.next_u32() >> 6;
        (f64::from(a) * 67_108_864.0 + f64::from(b)) * (1.0 / 9_007_199_254_740_992.0)
    }
}

impl RandomSource for CpythonRandom {
    fn below(&mut self, n: usize) -> usize {
        self.randbelow(n as u64) as usize
    }
    fn random(&mut self) -> f64 {
        self.random_f64()
    }
}
