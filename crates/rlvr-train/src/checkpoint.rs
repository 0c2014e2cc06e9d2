//! Checkpoints: `runs/<name>/checkpoint/` holds the newest, in Hugging Face layout
//! (config.json, model.safetensors, tokenizer.json) in the dtype the user asked for
//! (`model.dtype`), `optimizer.safetensors` (AdamW moments and, for a bf16/f16 model, the f32
//! master weights, all exact f32), `state.json` (step, optimizer step count, data order,
//! seeds) and `manifest.json` (size and sha256 of every other file, written last). A resumed
//! bf16 run continues from the master weights, not from the rounded model files, so it stays
//! bit-identical to an uninterrupted one.
//!
//! The last `trainer.keep_checkpoints` are kept: when a new one is saved, the previous
//! `checkpoint/` becomes `checkpoint-step<N>/` (N its step, six digits) and the oldest beyond
//! the limit are removed.
//!
//! Written atomically: everything goes to `checkpoint.tmp/`, the manifest last, and the
//! directory is renamed into place only then. A process killed at any moment leaves every
//! earlier checkpoint complete.
//!
//! Resuming ([`find_intact`]) verifies the manifest of the newest checkpoint (every file
//! present, of the recorded size and sha256) and falls back to the next newest when it does
//! not hold, saying which were passed over and why; a damaged checkpoint is renamed to
//! `<name>.damaged` so that later saves do not count it. A checkpoint without a manifest
//! (written by an earlier rlvr) is used unverified, with a note. A run left with damaged
//! checkpoints only stays refused ([`find_intact`] fails again) until the user restarts it
//! explicitly (`rlvr train --resume <run> --restart`, [`discard_all`]).
//!
//! Randomness is not stored as generator state (`seed.rs`): the step counter and the data
//! cursor are all a resumed run needs to continue exactly.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::seed::DataOrderState;
use crate::TrainError;

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

impl PhaseTimes {
    /// Seconds over all phases.
    pub fn total(&self) -> f64 {
        self.setup_s
            + self.warm_start_s
            + self.rollout_s
            + self.reward_s
            + self.train_s
            + self.eval_s
            + self.checkpoint_s
    }
}

/// Names inside a checkpoint directory.
pub const STATE_FILE: &str = "state.json";
pub const OPTIMIZER_FILE: &str = "optimizer.safetensors";
pub const MANIFEST_FILE: &str = "manifest.json";

/// The newest checkpoint of a run: `<run>/checkpoint`.
pub const LATEST_DIR: &str = rlvr_core::run_dir::LATEST_CHECKPOINT;
const TMP_DIR: &str = "checkpoint.tmp";
/// Left by rlvr versions that kept one checkpoint, between the two renames of a save.
const LEGACY_OLD_DIR: &str = "checkpoint.old";
const OLDER_PREFIX: &str = "checkpoint-step";

/// The directory name an older checkpoint of step `step` is kept under.
pub fn older_dir_name(step: usize) -> String {
    format!("{OLDER_PREFIX}{step:06}")
}

/// What a checkpoint holds: every file but the manifest, with its size and sha256.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The step of the checkpoint (as in `state.json`).
    pub step: usize,
    /// Relative path -> size and digest.
    pub files: BTreeMap<String, FileDigest>,
}

/// Size and sha256 (lowercase hex) of one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileDigest {
    pub bytes: u64,
    pub sha256: String,
}

/// The size and sha256 of a file, read in blocks.
fn digest(path: &Path) -> std::io::Result<FileDigest> {
    let mut f = fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        bytes += n as u64;
    }
    let sha256 = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(FileDigest { bytes, sha256 })
}

/// Every regular file under `dir` (recursively) except the manifest, as relative paths with
/// `/` separators, sorted.
fn files_of(dir: &Path) -> std::io::Result<Vec<String>> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                walk(root, &path, out)?;
            } else if kind.is_file() {
                let rel = path.strip_prefix(root).expect("under root");
                let rel = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                if rel != MANIFEST_FILE {
                    out.push(rel);
                }
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out)?;
    out.sort();
    Ok(out)
}

/// Writes `dir/manifest.json` for the files now in `dir`.
pub fn write_manifest(dir: &Path, step: usize) -> std::io::Result<()> {
    let mut files = BTreeMap::new();
    for rel in files_of(dir)? {
        files.insert(rel.clone(), digest(&dir.join(&rel))?);
    }
    let text =
        serde_json::to_string_pretty(&Manifest { step, files }).map_err(std::io::Error::other)?;
    let path = dir.join(MANIFEST_FILE);
    let mut f = fs::File::create(&path)?;
    std::io::Write::write_all(&mut f, text.as_bytes())?;
    f.sync_all()
}

/// Checks a checkpoint directory against its manifest and reads its state. `Ok((state,
/// None))`: verified; `Ok((state, Some(note)))`: no manifest (an earlier rlvr's checkpoint),
/// used unverified; `Err(reason)`: damaged, the reason names the file.
pub fn verify(dir: &Path) -> Result<(TrainState, Option<String>), String> {
    let state = read_state(dir).map_err(|e| e.to_string())?;
    let manifest_path = dir.join(MANIFEST_FILE);
    let text = match fs::read_to_string(&manifest_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((
                state,
                Some(format!(
                    "{} has no {MANIFEST_FILE} (written by an earlier rlvr): used unverified",
                    dir.display()
                )),
            ))
        }
        Err(e) => return Err(format!("{MANIFEST_FILE}: {e}")),
    };
    let manifest: Manifest =
        serde_json::from_str(&text).map_err(|e| format!("{MANIFEST_FILE}: {e}"))?;
    if manifest.step != state.step {
        return Err(format!(
            "{MANIFEST_FILE} is of step {}, {STATE_FILE} of step {}",
            manifest.step, state.step
        ));
    }
    for (rel, want) in &manifest.files {
        let path = dir.join(rel);
        let got = digest(&path).map_err(|e| format!("{rel}: {e}"))?;
        if got.bytes != want.bytes {
            return Err(format!(
                "{rel}: {} bytes, the manifest says {} (truncated or overwritten)",
                got.bytes, want.bytes
            ));
        }
        if got.sha256 != want.sha256 {
            return Err(format!(
                "{rel}: sha256 {} differs from the manifest's {} (the file changed after it was \
                 written)",
                got.sha256, want.sha256
            ));
        }
    }
    for rel in files_of(dir).map_err(|e| e.to_string())? {
        if !manifest.files.contains_key(&rel) && rel != STATE_FILE {
            return Err(format!("{rel}: not in the manifest"));
        }
    }
    if !manifest.files.contains_key(STATE_FILE) {
        return Err(format!("{STATE_FILE}: not in the manifest"));
    }
    Ok((state, None))
}

/// The checkpoint directories of a run, newest first: `checkpoint/`, then
/// `checkpoint-step<N>/` by descending N, then a legacy `checkpoint.old/`.
pub fn candidates(run_dir: &Path) -> Vec<PathBuf> {
    let mut older: Vec<(usize, PathBuf)> = fs::read_dir(run_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let step = name.strip_prefix(OLDER_PREFIX)?.parse::<usize>().ok()?;
            e.path().is_dir().then(|| (step, e.path()))
        })
        .collect();
    older.sort_by_key(|o| std::cmp::Reverse(o.0));
    let mut out = vec![run_dir.join(LATEST_DIR)];
    out.extend(older.into_iter().map(|(_, p)| p));
    out.push(run_dir.join(LEGACY_OLD_DIR));
    out.into_iter().filter(|d| d.is_dir()).collect()
}

/// The newest checkpoint directory of a run that has a `state.json`, unverified (for
/// watching a run's progress). None when the run has no checkpoint.
pub fn find(run_dir: &Path) -> Option<PathBuf> {
    candidates(run_dir)
        .into_iter()
        .find(|d| d.join(STATE_FILE).is_file())
}

/// The checkpoint a resume starts from: the newest that verifies ([`verify`]).
#[derive(Debug)]
pub struct Resumable {
    pub dir: PathBuf,
    pub state: TrainState,
    /// What to tell the user: checkpoints passed over (and renamed to `.damaged`) with the
    /// reason, or that the one used has no manifest.
    pub notes: Vec<String>,
}

/// The checkpoints of a run set aside as damaged (`<name>.damaged/`), sorted by name.
pub fn damaged(run_dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(run_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with(LATEST_DIR) && name.ends_with(".damaged") && e.path().is_dir()
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// Removes every checkpoint of a run, intact, damaged or half-written (`checkpoint/`,
/// `checkpoint-step<N>/`, `checkpoint.old/`, `checkpoint.tmp/`, `*.damaged/`): the explicit
/// restart of a run from step 0. Errors name the path.
pub fn discard_all(run_dir: &Path) -> Result<(), TrainError> {
    let mut dirs = candidates(run_dir);
    dirs.extend(damaged(run_dir));
    dirs.push(run_dir.join(TMP_DIR));
    for d in dirs {
        if d.is_dir() {
            fs::remove_dir_all(&d).map_err(at(&d))?;
        }
    }
    Ok(())
}

/// The newest intact checkpoint of a run. `Ok(None)`: the run has no checkpoint at all, and
/// none was set aside as damaged. `Err`: it has some and none verifies (each one's reason is
/// listed), or it has only checkpoints set aside as damaged by an earlier resume: such a run
/// stays refused, it is never silently started over. A damaged checkpoint passed over is
/// renamed to `<name>.damaged`, so later saves neither keep nor count it.
pub fn find_intact(run_dir: &Path) -> Result<Option<Resumable>, String> {
    let found = candidates(run_dir);
    if found.is_empty() {
        let aside = damaged(run_dir);
        if aside.is_empty() {
            return Ok(None);
        }
        return Err(format!(
            "every checkpoint of this run was refused as damaged ({})",
            aside
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut notes = Vec::new();
    for dir in found {
        match verify(&dir) {
            Ok((state, note)) => {
                let passed_over = !notes.is_empty();
                notes.extend(note);
                if passed_over {
                    notes.push(format!(
                        "falling back to {}, the newest intact checkpoint (step {})",
                        dir.display(),
                        state.step
                    ));
                }
                return Ok(Some(Resumable { dir, state, notes }));
            }
            Err(why) => {
                let aside = PathBuf::from(format!("{}.damaged", dir.display()));
                let moved = if aside.exists() {
                    fs::remove_dir_all(&aside).and_then(|_| fs::rename(&dir, &aside))
                } else {
                    fs::rename(&dir, &aside)
                };
                let note = match moved {
                    Ok(()) => format!(
                        "{} is damaged ({why}); kept as {}",
                        dir.display(),
                        aside.display()
                    ),
                    Err(e) => format!(
                        "{} is damaged ({why}) and could not be renamed ({e})",
                        dir.display()
                    ),
                };
                notes.push(note);
            }
        }
    }
    Err(notes.join("; "))
}

/// Writes a checkpoint atomically and keeps the newest `keep` (at least 1): `write` fills a
/// fresh temporary directory (model and optimizer files), then `state.json` and the manifest
/// are added, the previous `checkpoint/` is renamed to `checkpoint-step<N>/`, the new one
/// renamed into place, a same-step `checkpoint-step<N>/` (a second save of one step) and the
/// oldest beyond `keep` removed. A file system error is a [`TrainError::Io`] naming the path
/// it happened on.
pub fn save_atomic<E>(
    run_dir: &Path,
    state: &TrainState,
    keep: usize,
    write: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<PathBuf, E>
where
    E: From<TrainError>,
{
    let tmp = run_dir.join(TMP_DIR);
    if tmp.exists() {
        fs::remove_dir_all(&tmp).map_err(at(&tmp))?;
    }
    fs::create_dir_all(&tmp).map_err(at(&tmp))?;
    write(&tmp)?;
    Ok(finish_save(run_dir, &tmp, state, keep)?)
}

/// `e` as a [`TrainError::Io`] on `path`.
fn at(path: &Path) -> impl Fn(std::io::Error) -> TrainError {
    let path = path.to_path_buf();
    move |e| TrainError::io(&path, e)
}

/// [`save_atomic`] after the caller's files are in `tmp`.
fn finish_save(
    run_dir: &Path,
    tmp: &Path,
    state: &TrainState,
    keep: usize,
) -> Result<PathBuf, TrainError> {
    let dst = run_dir.join(LATEST_DIR);
    let state_path = tmp.join(STATE_FILE);
    let text = serde_json::to_string_pretty(state)
        .map_err(std::io::Error::other)
        .map_err(at(&state_path))?;
    fs::write(&state_path, text).map_err(at(&state_path))?;
    sync_dir(tmp)?;
    write_manifest(tmp, state.step).map_err(at(&tmp.join(MANIFEST_FILE)))?;
    sync_dir(tmp)?;
    if dst.exists() {
        match read_state(&dst) {
            Ok(prev) => {
                let older = run_dir.join(older_dir_name(prev.step));
                if older.exists() {
                    fs::remove_dir_all(&older).map_err(at(&older))?;
                }
                fs::rename(&dst, &older).map_err(at(&older))?;
            }
            // unreadable: not worth keeping beside a fresh one
            Err(_) => fs::remove_dir_all(&dst).map_err(at(&dst))?,
        }
    }
    fs::rename(tmp, &dst).map_err(at(&dst))?;
    sync_dir(run_dir)?;
    // a second save of the same step (the end of a run) replaces the first
    let same = run_dir.join(older_dir_name(state.step));
    if same.exists() {
        fs::remove_dir_all(&same).map_err(at(&same))?;
    }
    let legacy = run_dir.join(LEGACY_OLD_DIR);
    if legacy.exists() {
        fs::remove_dir_all(&legacy).map_err(at(&legacy))?;
    }
    let older: Vec<PathBuf> = candidates(run_dir)
        .into_iter()
        .filter(|d| d != &dst)
        .collect();
    for stale in older.iter().skip(keep.max(1) - 1) {
        fs::remove_dir_all(stale).map_err(at(stale))?;
    }
    Ok(dst)
}

/// Flushes the files of a directory and the directory itself to disk; errors name the path.
fn sync_dir(dir: &Path) -> Result<(), TrainError> {
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
    let text = fs::read_to_string(&path).map_err(at(&path))?;
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
            save_atomic::<TrainError>(dir.path(), &s, 1, |d| {
                fs::write(d.join("model.bin"), format!("{step}")).map_err(at(d))
            })
            .unwrap();
        }
        let ck = find(dir.path()).unwrap();
        assert_eq!(read_state(&ck).unwrap().step, 4);
        assert_eq!(fs::read_to_string(ck.join("model.bin")).unwrap(), "4");
        assert!(!dir.path().join("checkpoint.tmp").exists());
        assert!(!dir.path().join("checkpoint.old").exists());
        // A failing writer leaves the previous checkpoint in place.
        let err = save_atomic(dir.path(), &state, 1, |d| {
            Err(TrainError::io(d, std::io::Error::other("disk full")))
        });
        assert!(err.is_err());
        assert_eq!(read_state(&find(dir.path()).unwrap()).unwrap().step, 4);
    }

    fn state_at(step: usize) -> TrainState {
        TrainState {
            step,
            optimizer_steps: step as u64,
            data: DataOrderState {
                epoch: 0,
                cursor: step,
            },
            seed: 1,
            time: PhaseTimes::default(),
        }
    }

    fn save_steps(run: &Path, steps: &[usize], keep: usize) {
        for &step in steps {
            save_atomic::<TrainError>(run, &state_at(step), keep, |d| {
                fs::write(
                    d.join("model.safetensors"),
                    format!("weights of step {step}"),
                )
                .and_then(|_| fs::create_dir_all(d.join("sub")))
                .and_then(|_| fs::write(d.join("sub/extra.json"), "{}"))
                .map_err(at(d))
            })
            .unwrap();
        }
    }

    fn names(run: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(run)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn the_last_n_checkpoints_are_kept_each_with_a_verifying_manifest() {
        let dir = tempfile::tempdir().unwrap();
        save_steps(dir.path(), &[2, 4, 6, 8], 3);
        assert_eq!(
            names(dir.path()),
            [
                "checkpoint",
                "checkpoint-step000004",
                "checkpoint-step000006"
            ]
        );
        let dirs = candidates(dir.path());
        let steps: Vec<usize> = dirs.iter().map(|d| verify(d).unwrap().0.step).collect();
        assert_eq!(steps, [8, 6, 4]);
        for d in &dirs {
            assert_eq!(verify(d).unwrap().1, None, "verified, no note");
        }
        let m: Manifest =
            serde_json::from_str(&fs::read_to_string(dirs[0].join(MANIFEST_FILE)).unwrap())
                .unwrap();
        let listed: Vec<&str> = m.files.keys().map(String::as_str).collect();
        assert_eq!(
            listed,
            ["model.safetensors", "state.json", "sub/extra.json"]
        );
        // sha256 of "weights of step 8", computed independently (coreutils sha256sum)
        assert_eq!(m.files["model.safetensors"].bytes, 17);
        assert_eq!(
            m.files["model.safetensors"].sha256,
            "3b1eda250b36b710ef54af1fe9f119357771a2f48a631f606eb0940750c8bab8"
        );
        // keep = 1: only the newest
        save_steps(dir.path(), &[10], 1);
        assert_eq!(names(dir.path()), ["checkpoint"]);
    }

    #[test]
    fn a_truncated_or_altered_newest_checkpoint_falls_back_to_the_previous() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path();
        save_steps(run, &[2, 4], 2);
        // truncated weights
        let w = run.join("checkpoint/model.safetensors");
        fs::write(&w, "weights of").unwrap();
        let why = verify(&run.join("checkpoint")).unwrap_err();
        assert!(
            why.contains("model.safetensors: 10 bytes, the manifest says 17"),
            "{why}"
        );
        let r = find_intact(run).unwrap().unwrap();
        assert_eq!(r.state.step, 2);
        assert_eq!(r.dir, run.join("checkpoint-step000002"));
        assert!(
            r.notes[0].contains("is damaged (model.safetensors: 10 bytes"),
            "{:?}",
            r.notes
        );
        assert!(r.notes[1].contains("falling back to"), "{:?}", r.notes);
        // the damaged one is set aside, not counted by later saves
        assert!(run.join("checkpoint.damaged").is_dir());
        assert!(!run.join("checkpoint").exists());
        save_steps(run, &[3], 2);
        assert_eq!(
            names(run),
            ["checkpoint", "checkpoint-step000002", "checkpoint.damaged"]
        );
        // one flipped byte, same size
        let w = run.join("checkpoint/model.safetensors");
        let mut bytes = fs::read(&w).unwrap();
        bytes[3] ^= 0x01;
        fs::write(&w, bytes).unwrap();
        let why = verify(&run.join("checkpoint")).unwrap_err();
        assert!(why.contains("model.safetensors: sha256"), "{why}");
        assert_eq!(find_intact(run).unwrap().unwrap().state.step, 2);
        // a file added after the manifest, or a manifest of another step
        let older = run.join("checkpoint-step000002");
        fs::write(older.join("planted.py"), "x").unwrap();
        assert!(verify(&older)
            .unwrap_err()
            .contains("planted.py: not in the manifest"));
        fs::remove_file(older.join("planted.py")).unwrap();
        fs::write(
            older.join(STATE_FILE),
            serde_json::to_string(&state_at(9)).unwrap(),
        )
        .unwrap();
        assert!(verify(&older).unwrap_err().contains("step"));
        // nothing intact: an error listing each
        let err = find_intact(run).unwrap_err();
        assert!(err.contains("checkpoint-step000002 is damaged"), "{err}");
    }

    #[test]
    fn a_run_without_checkpoints_has_none_and_a_legacy_one_is_used_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        assert!(find_intact(dir.path()).unwrap().is_none());
        let legacy = dir.path().join("checkpoint");
        fs::create_dir_all(&legacy).unwrap();
        fs::write(
            legacy.join(STATE_FILE),
            serde_json::to_string(&state_at(5)).unwrap(),
        )
        .unwrap();
        let r = find_intact(dir.path()).unwrap().unwrap();
        assert_eq!(r.state.step, 5);
        assert!(r.notes[0].contains("used unverified"), "{:?}", r.notes);
    }
}
