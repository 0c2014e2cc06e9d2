//! Seeding: every random choice of step `s` is seeded by `mix(seed, s, ...)` ([`mix_seed`]),
//! and the data order of epoch `e` by `mix(seed, e)` ([`DataOrder`]), so that a run's
//! randomness is a function of `trainer.seed` and where the run stands (step, data cursor),
//! never generator state: a resumed run continues exactly (docs/determinism.md).

use serde::{Deserialize, Serialize};

/// Position in the epoch-wise shuffled order of the training set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataOrderState {
    pub epoch: u64,
    pub cursor: usize,
}

/// The epoch-wise shuffled order of `n` training problems.
#[derive(Debug, Clone)]
pub struct DataOrder {
    seed: u64,
    shuffle: bool,
    state: DataOrderState,
    perm: Vec<usize>,
}

impl DataOrder {
    pub fn new(n: usize, seed: u64, shuffle: bool, state: DataOrderState) -> Self {
        let mut order = Self {
            seed,
            shuffle,
            state,
            perm: Vec::new(),
        };
        order.perm = order.permutation(n, state.epoch);
        order
    }

    fn permutation(&self, n: usize, epoch: u64) -> Vec<usize> {
        let mut perm: Vec<usize> = (0..n).collect();
        if self.shuffle {
            let mut rng = SplitMix64(mix_seed(self.seed, &[0xDA7A, epoch]));
            for i in (1..n).rev() {
                let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                perm.swap(i, j);
            }
        }
        perm
    }

    /// The next problem index.
    pub fn next_index(&mut self) -> usize {
        if self.state.cursor >= self.perm.len() {
            self.state.epoch += 1;
            self.state.cursor = 0;
            self.perm = self.permutation(self.perm.len(), self.state.epoch);
        }
        let i = self.perm[self.state.cursor];
        self.state.cursor += 1;
        i
    }

    pub fn state(&self) -> DataOrderState {
        self.state
    }
}

/// SplitMix64: a tiny, stable generator for data order and seed mixing.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// A seed derived from the run seed and a path of integers (step, round, purpose).
pub fn mix_seed(seed: u64, parts: &[u64]) -> u64 {
    let mut rng = SplitMix64(seed);
    let mut h = rng.next_u64();
    for &p in parts {
        rng.0 ^= p.wrapping_mul(0xA24B_AED4_963E_E407) ^ h;
        h = rng.next_u64();
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_order_resumes_exactly() {
        let start = DataOrderState {
            epoch: 0,
            cursor: 0,
        };
        let mut a = DataOrder::new(7, 3, true, start);
        let first: Vec<usize> = (0..10).map(|_| a.next_index()).collect();
        let mut sorted = first[..7].to_vec();
        sorted.sort();
        assert_eq!(
            sorted,
            (0..7).collect::<Vec<_>>(),
            "an epoch is a permutation"
        );
        let saved = a.state();
        let rest: Vec<usize> = (0..9).map(|_| a.next_index()).collect();
        let mut b = DataOrder::new(7, 3, true, saved);
        let again: Vec<usize> = (0..9).map(|_| b.next_index()).collect();
        assert_eq!(rest, again);
        let mut c = DataOrder::new(4, 3, false, start);
        assert_eq!(
            (0..5).map(|_| c.next_index()).collect::<Vec<_>>(),
            [0, 1, 2, 3, 0]
        );
    }

    #[test]
    fn seeds_differ_by_part() {
        assert_ne!(mix_seed(0, &[1, 2]), mix_seed(0, &[2, 1]));
        assert_ne!(mix_seed(0, &[1]), mix_seed(1, &[1]));
        assert_eq!(mix_seed(5, &[1, 2]), mix_seed(5, &[1, 2]));
    }
}
