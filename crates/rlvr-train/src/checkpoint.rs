//! Checkpoints: `runs/<name>/checkpoint/` holds the model in Hugging Face layout
//! (config.json, model.safetensors, tokenizer.json) in the dtype the user asked for
//! (`model.dtype`), `optimizer.safetensors` (AdamW moments and, for a bf16/f16 model, the f32
//! master weights, all exact f32) and `state.json` (step, optimizer step count, data order,
//! seeds). A resumed bf16 run continues from the master weights, not from the rounded model
//! files, so it stays bit-identical to an uninterrupted one.
//!
//! Written atomically: everything goes to `checkpoint.tmp/`, which is then renamed over the old
//! checkpoint (the old one is first moved to `checkpoint.old/` and removed afterwards; a reader
//! that finds no `checkpoint/` but a `checkpoint.old/` uses that). A process killed at any
//! moment leaves a complete checkpoint behind.
//!
//! Randomness is not stored as generator state: every random choice of step `s` is seeded by
//! `mix(seed, s, ...)` ([`mix_seed`]), and the data order of epoch `e` by `mix(seed, e)`, so the
//! step counter and the data cursor are all a resumed run needs to continue exactly.

use std::fs;
use std::path::{Path, PathBuf};

use crate::TrainError;

use serde::{Deserialize, Serialize};

/// Everything besides tensors that a resumed run needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainState {
    /// GRPO steps completed.
    pub step: usize,
    /// AdamW steps taken (skipped steps do not count).
    pub optimizer_steps: u64,
    /// Where the data order stands.
    pub data: DataOrderState,
    /// `trainer.seed` of the run (checked on resume).
    pub seed: u64,
    /// Seconds spent in earlier sessions of this run, per phase.
    pub time: PhaseTimes,
}

/// Seconds spent per phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseTimes {
    pub setup_s: f64,
    pub warm_start_s: f64,
    pub rollout_s: f64,
    pub reward_s: f64,
    pub train_s: f64,
    pub eval_s: f64,
    pub checkpoint_s: f64,
}

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

/// Names inside a checkpoint directory.
pub const STATE_FILE: &str = "state.json";
pub const OPTIMIZER_FILE: &str = "optimizer.safetensors";

/// The checkpoint directory of a run, `<run>/checkpoint`, or `<run>/checkpoint.old` when a
/// save was interrupted between its two renames. None when the run has no checkpoint.
pub fn find(run_dir: &Path) -> Option<PathBuf> {
    ["checkpoint", "checkpoint.old"]
        .iter()
        .map(|d| run_dir.join(d))
        .find(|d| d.join(STATE_FILE).is_file())
}

/// Writes a checkpoint atomically: `write` fills a fresh temporary directory (model and
/// optimizer files), then `state.json` is added and the directory renamed into place. A file
/// system error is a [`TrainError::Io`] naming the path it happened on.
pub fn save_atomic<E>(
    run_dir: &Path,
    state: &TrainState,
    write: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<PathBuf, E>
where
    E: From<TrainError>,
{
    let at = |path: &Path| {
        let path = path.to_path_buf();
        move |e: std::io::Error| E::from(TrainError::io(path, e))
    };
    let tmp = run_dir.join("checkpoint.tmp");
    let dst = run_dir.join("checkpoint");
    let old = run_dir.join("checkpoint.old");
    if tmp.exists() {
        fs::remove_dir_all(&tmp).map_err(at(&tmp))?;
    }
    fs::create_dir_all(&tmp).map_err(at(&tmp))?;
    write(&tmp)?;
    let state_path = tmp.join(STATE_FILE);
    let text = serde_json::to_string_pretty(state)
        .map_err(std::io::Error::other)
        .map_err(at(&state_path))?;
    fs::write(&state_path, text).map_err(at(&state_path))?;
    sync_dir(&tmp).map_err(E::from)?;
    if dst.exists() {
        if old.exists() {
            fs::remove_dir_all(&old).map_err(at(&old))?;
        }
        fs::rename(&dst, &old).map_err(at(&old))?;
    }
    fs::rename(&tmp, &dst).map_err(at(&dst))?;
    sync_dir(run_dir).map_err(E::from)?;
    if old.exists() {
        fs::remove_dir_all(&old).map_err(at(&old))?;
    }
    Ok(dst)
}

/// Flushes the files of a directory and the directory itself to disk; errors name the path.
fn sync_dir(dir: &Path) -> Result<(), TrainError> {
    let at = |path: &Path| {
        let path = path.to_path_buf();
        move |e| TrainError::io(path, e)
    };
    for entry in fs::read_dir(dir).map_err(at(dir))? {
        let path = entry.map_err(at(dir))?.path();
        if path.is_file() {
            fs::File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(at(&path))?;
        }
    }
    fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(at(dir))
}

/// Reads `state.json` of a checkpoint directory; errors name that file.
pub fn read_state(ckpt: &Path) -> Result<TrainState, TrainError> {
    let path = ckpt.join(STATE_FILE);
    let text = fs::read_to_string(&path).map_err(|e| TrainError::io(&path, e))?;
    serde_json::from_str(&text).map_err(|e| {
        TrainError::io(
            &path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
        )
    })
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

    #[test]
    fn save_is_atomic_and_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let state = TrainState {
            step: 2,
            optimizer_steps: 2,
            data: DataOrderState {
                epoch: 0,
                cursor: 5,
            },
            seed: 1,
            time: PhaseTimes::default(),
        };
        for step in [2, 4] {
            let s = TrainState {
                step,
                ..state.clone()
            };
            save_atomic::<TrainError>(dir.path(), &s, |d| {
                let p = d.join("model.bin");
                fs::write(&p, format!("{step}")).map_err(|e| TrainError::io(p, e))
            })
            .unwrap();
        }
        let ck = find(dir.path()).unwrap();
        assert_eq!(read_state(&ck).unwrap().step, 4);
        assert_eq!(fs::read_to_string(ck.join("model.bin")).unwrap(), "4");
        assert!(!dir.path().join("checkpoint.tmp").exists());
        assert!(!dir.path().join("checkpoint.old").exists());
        // A failing writer leaves the previous checkpoint in place.
        let err = save_atomic(dir.path(), &state, |_| {
            Err(TrainError::Msg("disk full".into()))
        });
        assert!(err.is_err());
        assert_eq!(read_state(&find(dir.path()).unwrap()).unwrap().step, 4);
    }
}
