//! Loading one run directory: its labels and its metrics.

use std::path::{Path, PathBuf};

use rlvr_core::metrics::{MetricsLine, TrainLine};
use rlvr_core::run_dir::{RunDir, SavedConfig};
use serde_json::Value;

use crate::{io_err, ReportError};

/// One training run, as the report sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The run directory.
    pub dir: PathBuf,
    /// Aggregation rule (`algorithm.loss_agg_mode`).
    pub rule: String,
    /// Seed (`trainer.seed`).
    pub seed: u64,
    /// Dataset label (`data.train_files`), else the testbed regime (`testbed.regime`; in runs
    /// written before `[testbed]` existed, `data.testbed_regime`).
    pub regime: String,
    /// Learning rate (`optim.lr`), when the config gives one.
    pub lr: Option<f64>,
    /// Supervised warm-start steps (`testbed.warm_start_steps`, before `[testbed]`
    /// `trainer.warm_start_steps`), when the config gives them.
    pub warm_start_steps: Option<u64>,
    /// The model the run started from (`model.path`), when the config gives one.
    pub model: Option<String>,
    /// Every key of the saved config (`section.key`, nested tables joined by `.`) with its
    /// value as the config writes it (strings bare): what tells conditions apart beyond the
    /// named fields. Empty when the run has no config.
    pub settings: std::collections::BTreeMap<String, String>,
    /// `"kind":"train"` lines, in step order.
    pub train: Vec<TrainLine>,
    /// Evaluation points, in step order: (step, dataset, mean@k).
    pub eval: Vec<EvalPoint>,
    /// The machine of each process that trained the run, in order (`machine` of each line of
    /// `host.jsonl`: one per start or resume); empty when the run did not record it.
    pub machines: Vec<String>,
    /// The GRPO steps the run was set to take (`trainer.total_training_steps`), when the
    /// config gives them.
    pub planned_steps: Option<u64>,
}

/// One evaluation of one dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalPoint {
    /// Training step the evaluation was taken at.
    pub step: usize,
    /// Dataset name.
    pub dataset: String,
    /// mean@k (the sampled accuracy).
    pub mean_at_k: f64,
    /// pass@k.
    pub pass_at_k: f64,
}

impl Run {
    /// The last training step logged (0 before the first).
    pub fn last_step(&self) -> usize {
        self.train.last().map_or(0, |t| t.step)
    }

    /// Whether the run has logged fewer steps than it was set to take: still training (a
    /// sweep that spans sittings), or stopped. Its "last-step" figures are those of the step
    /// it has reached.
    pub fn in_progress(&self) -> bool {
        self.planned_steps
            .is_some_and(|n| (self.last_step() as u64) < n)
    }

    /// A train-line metric (a name [`TrainLine::value`] takes: `pg_loss`,
    /// `positive_share.balanced`) as a series `(step, value)`; missing or null values are
    /// skipped, and so are skipped steps.
    pub fn series(&self, key: &str) -> Vec<(usize, f64)> {
        self.train
            .iter()
            .filter(|t| !t.skipped)
            .filter_map(|t| Some((t.step, t.value(key).filter(|x| x.is_finite())?)))
            .collect()
    }

    /// mean@k of the first evaluated dataset, as a series.
    pub fn accuracy(&self) -> Vec<(usize, f64)> {
        let Some(first) = self.eval.first() else {
            return Vec::new();
        };
        self.eval
            .iter()
            .filter(|e| e.dataset == first.dataset)
            .map(|e| (e.step, e.mean_at_k))
            .collect()
    }
}

/// Loads `dir/metrics.jsonl` and the labels from `dir/config.toml` ([`RunDir`]'s files).
pub fn load_run(dir: &Path) -> Result<Run, ReportError> {
    let run = RunDir::new(dir);
    let metrics = run.metrics();
    let mut train = Vec::new();
    let mut eval = Vec::new();
    for_each_json_line(&metrics, |i, v| {
        let line = serde_json::from_value(v).map_err(|e| ReportError::BadLine {
            path: metrics.clone(),
            line: i,
            reason: e.to_string(),
        })?;
        match line {
            MetricsLine::Train(t) => train.push(t),
            MetricsLine::Eval(e) => eval.push(EvalPoint {
                step: e.step,
                dataset: e.dataset,
                mean_at_k: e.mean_at_k,
                pass_at_k: e.pass_at_k,
            }),
            MetricsLine::Other => {} // kinds a later version writes are not part of the comparison
        }
        Ok(())
    })?;
    train.sort_by_key(|t| t.step);
    eval.sort_by_key(|e| e.step);
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Labels {
        rule,
        seed,
        regime,
        lr,
        warm_start_steps,
        model,
        settings,
        planned_steps,
    } = labels(&run.config(), &name)?;
    Ok(Run {
        dir: dir.to_path_buf(),
        rule,
        seed,
        regime,
        lr,
        warm_start_steps,
        model,
        settings,
        train,
        eval,
        machines: machines(&run.host())?,
        planned_steps,
    })
}

/// The `machine` of every line of `host.jsonl` (none when the file is absent: runs written
/// before rlvr recorded it).
fn machines(path: &Path) -> Result<Vec<String>, ReportError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for_each_json_line(path, |i, v| {
        let machine =
            v["machine"]
                .as_str()
                .map(String::from)
                .ok_or_else(|| ReportError::BadLine {
                    path: path.to_path_buf(),
                    line: i,
                    reason: "missing string \"machine\"".into(),
                })?;
        out.push(machine);
        Ok(())
    })?;
    Ok(out)
}

/// The most a run's file may hold: 256 MiB, about 250,000 steps of `metrics.jsonl` (a step's
/// line is about 1 KiB). Past it the file is not one rlvr wrote.
pub const MAX_RUN_FILE_BYTES: u64 = 256 << 20;

/// The text of a file a run wrote: a regular file (a FIFO, a device or a directory is an
/// error, found without blocking: the file is opened non-blocking and checked before it is
/// read), at most [`MAX_RUN_FILE_BYTES`], read up to the length it had when opened (a run
/// still writing it cannot make the read go on).
pub(crate) fn read_run_file(path: &Path) -> Result<String, ReportError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io_err(path))?;
    let meta = file.metadata().map_err(io_err(path))?;
    let whole = |reason: String| ReportError::BadLine {
        path: path.to_path_buf(),
        line: 0,
        reason,
    };
    if !meta.is_file() {
        return Err(whole(
            "not a regular file (a FIFO, a device or a directory): a run's files are regular files"
                .into(),
        ));
    }
    if meta.len() > MAX_RUN_FILE_BYTES {
        return Err(whole(format!(
            "{} bytes, over the {MAX_RUN_FILE_BYTES}-byte limit for a run's file",
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(meta.len())
        .read_to_end(&mut bytes)
        .map_err(io_err(path))?;
    String::from_utf8(bytes).map_err(|e| whole(format!("not UTF-8: {e}")))
}

/// Calls `f` with the JSON value of every non-blank line of a JSON-lines file
/// ([`read_run_file`]) and its 1-based line number, one line at a time.
fn for_each_json_line(
    path: &Path,
    mut f: impl FnMut(usize, Value) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let text = read_run_file(path)?;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v = serde_json::from_str(line).map_err(|e| ReportError::BadLine {
            path: path.to_path_buf(),
            line: i + 1,
            reason: format!("not valid JSON: {e}"),
        })?;
        f(i + 1, v)?;
    }
    Ok(())
}

/// What a run's config says about its place in a comparison.
struct Labels {
    rule: String,
    seed: u64,
    regime: String,
    lr: Option<f64>,
    warm_start_steps: Option<u64>,
    model: Option<String>,
    settings: std::collections::BTreeMap<String, String>,
    planned_steps: Option<u64>,
}

fn labels(config: &Path, name: &str) -> Result<Labels, ReportError> {
    if !config.exists() {
        return Ok(Labels {
            rule: name.to_string(),
            seed: 0,
            regime: "default".into(),
            lr: None,
            warm_start_steps: None,
            model: None,
            settings: Default::default(),
            planned_steps: None,
        });
    }
    let text = read_run_file(config)?;
    let bad = |e: toml::de::Error| ReportError::BadLine {
        path: config.to_path_buf(),
        line: 0,
        reason: e.to_string(),
    };
    // parsed once: the named fields through the schema, every key for the settings
    let table: toml::Table = toml::from_str(&text).map_err(bad)?;
    let saved: SavedConfig = toml::Value::Table(table.clone()).try_into().map_err(bad)?;
    let mut settings = std::collections::BTreeMap::new();
    flatten("", &table, &mut settings);
    Ok(Labels {
        settings,
        rule: saved
            .algorithm
            .loss_agg_mode
            .clone()
            .unwrap_or_else(|| name.into()),
        seed: saved.trainer.seed.unwrap_or(0),
        regime: saved.condition(),
        lr: saved.optim.lr,
        warm_start_steps: saved.warm_start_steps(),
        model: saved.model.path.filter(|p| !p.is_empty()),
        planned_steps: saved.trainer.total_training_steps,
    })
}

/// `table`'s keys as `prefix.key` (nested tables joined by `.`), each value as TOML writes it,
/// a string without its quotes.
fn flatten(
    prefix: &str,
    table: &toml::Table,
    out: &mut std::collections::BTreeMap<String, String>,
) {
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) => flatten(&key, t, out),
            toml::Value::String(s) => {
                out.insert(key, s.clone());
            }
            v => {
                out.insert(key, v.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIFO as `metrics.jsonl` (no writer: a blocking open would hang) is refused at once, a
    /// file past the size limit from its size, both naming the file.
    #[test]
    fn a_fifo_or_an_oversized_file_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let metrics = run.join("metrics.jsonl");
        let c = std::ffi::CString::new(metrics.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let t = std::time::Instant::now();
        let err = load_run(&run).err().unwrap().to_string();
        assert!(t.elapsed().as_secs() < 5);
        assert!(
            err.contains("metrics.jsonl") && err.contains("not a regular file"),
            "{err}"
        );
        std::fs::remove_file(&metrics).unwrap();
        let f = std::fs::File::create(&metrics).unwrap();
        f.set_len(MAX_RUN_FILE_BYTES + 1).unwrap(); // sparse: no disk used
        let err = load_run(&run).err().unwrap().to_string();
        assert!(
            err.contains("metrics.jsonl") && err.contains("limit"),
            "{err}"
        );
    }

    /// A run that has logged fewer steps than `trainer.total_training_steps` is in progress
    /// (a sweep spanning sittings), one that reached them is not, and one whose config does
    /// not say cannot tell (not in progress); the report names the first kind with its step.
    #[test]
    fn a_run_short_of_its_planned_steps_is_in_progress() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("token-mean-s1");
        std::fs::create_dir(&run).unwrap();
        std::fs::write(
            run.join("config.toml"),
            "[algorithm]\nloss_agg_mode = \"token-mean\"\n[trainer]\nseed = 1\ntotal_training_steps = 3\n",
        )
        .unwrap();
        let lines = |n: usize| {
            (1..=n)
                .map(|k| format!("{{\"kind\": \"train\", \"step\": {k}}}\n"))
                .collect::<String>()
        };
        std::fs::write(run.join("metrics.jsonl"), lines(2)).unwrap();
        let r = load_run(&run).unwrap();
        assert_eq!(
            (r.planned_steps, r.last_step(), r.in_progress()),
            (Some(3), 2, true)
        );
        let line = crate::render::in_progress_line(std::slice::from_ref(&r)).unwrap();
        assert!(
            line.contains("`token-mean` seed 1 at step 2 of 3"),
            "{line}"
        );
        std::fs::write(run.join("metrics.jsonl"), lines(3)).unwrap();
        let r = load_run(&run).unwrap();
        assert!(!r.in_progress());
        assert_eq!(crate::render::in_progress_line(&[r]), None);
        std::fs::write(run.join("config.toml"), "[trainer]\nseed = 1\n").unwrap();
        std::fs::write(run.join("metrics.jsonl"), lines(2)).unwrap();
        assert!(!load_run(&run).unwrap().in_progress());
    }

    /// A run's condition: its training data, else its testbed regime, in the layout `rlvr
    /// train` writes now and in the one before `[testbed]` existed.
    #[test]
    fn condition_is_the_data_else_the_testbed_regime_in_either_layout() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("[testbed]\nregime = \"control\"\n", "control"),
            (
                "[data]\ntrain_files = \"testbed\"\ntestbed_regime = \"wrong-long\"\n",
                "wrong-long",
            ),
            (
                "[data]\ntrain_files = \"math500\"\ntestbed_regime = \"pos-neg-gap\"\n",
                "math500",
            ),
            ("[data]\ntrain_files = \"dapo-math-17k\"\n", "dapo-math-17k"),
            ("[optim]\nlr = 1e-5\n", "default"),
        ];
        for (text, want) in cases {
            let path = dir.path().join("config.toml");
            std::fs::write(&path, text).unwrap();
            assert_eq!(labels(&path, "run").unwrap().regime, want, "{text}");
        }
        std::fs::write(
            dir.path().join("config.toml"),
            "[testbed]\nwarm_start_steps = 1200\n",
        )
        .unwrap();
        let l = labels(&dir.path().join("config.toml"), "run").unwrap();
        assert_eq!(l.warm_start_steps, Some(1200));
    }
}
