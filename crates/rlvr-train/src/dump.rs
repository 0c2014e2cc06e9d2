//! Rollout dumps: `trainer.rollout_data_dir/<step>.jsonl`, one line per training response, in
//! verl's `_dump_generations` layout so tools written for verl dumps read them:
//!
//! | field | meaning |
//! |---|---|
//! | `input` | the prompt, decoded without special tokens (as verl) |
//! | `output` | the response, decoded without special tokens |
//! | `score` | the reward (verifier + overlong penalty), verl's sequence score |
//! | `step` | the GRPO step (1-based) |
//! | `uid` | one id per group (all responses to one prompt in this step share it) |
//! | `advantage` | the response's advantage |
//! | `length` | response tokens |
//! | `acc` | whether the verifier called it correct (verl's `acc` reward extra) |
//!
//! Only the groups that go into the update are written (after dynamic sampling), as verl dumps
//! its training batch. `rlvr diagnose` reads these files directly.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use crate::TrainError;

/// One line of a dump.
#[derive(Debug, Clone, Serialize)]
pub struct DumpRow {
    pub input: String,
    pub output: String,
    pub score: f64,
    pub step: usize,
    pub uid: String,
    pub advantage: f64,
    pub length: usize,
    pub acc: bool,
}

/// Writes `rows` to `<dir>/<step>.jsonl` (the directory is created; a file of the same step
/// from an earlier, resumed attempt is replaced).
pub fn write_step(dir: &Path, step: usize, rows: &[DumpRow]) -> Result<(), TrainError> {
    std::fs::create_dir_all(dir).map_err(|e| TrainError::io(dir, e))?;
    let path = dir.join(format!("{step}.jsonl"));
    let mut text = Vec::new();
    for r in rows {
        serde_json::to_writer(&mut text, r).map_err(|e| TrainError::Msg(e.to_string()))?;
        text.push(b'\n');
    }
    let tmp = dir.join(format!(".{step}.jsonl.tmp"));
    let mut f = std::fs::File::create(&tmp).map_err(|e| TrainError::io(&tmp, e))?;
    f.write_all(&text).map_err(|e| TrainError::io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| TrainError::io(&path, e))
}
