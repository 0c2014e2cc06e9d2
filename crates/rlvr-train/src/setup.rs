//! Set-up shared by every task source (`source.rs`): device, dtype, datasets, reward functions,
//! the [`Setup`] itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use candle_core::{DType, Device};
use rlvr_model::DeviceSpec;
use rlvr_tasks::{Dataset, Problem, Verifier};

use crate::config::{RunTask, TrainConfig};
use crate::policy::Policy;
use crate::task::Task;
use crate::ui::Ui;
use crate::TrainError;

/// Opens the device of `model.device`; an error (a build without CUDA, a device that does not
/// open) names the key.
pub fn device(spec: DeviceSpec) -> Result<Device, TrainError> {
    spec.open().map_err(|message| {
        crate::ConfigError::Invalid {
            key: "model.device".into(),
            message,
        }
        .into()
    })
}

/// Loads a dataset given as a preset name, an arithmetic task (`arith:...`,
/// [`rlvr_tasks::arith`]) or a file path. A file (parquet, json, jsonl) is
/// read in the layout its first record shows ([`rlvr_tasks::data::file_fields`]: verl's, what
/// `rlvr export data` writes; the code presets'; MATH's `problem`/`answer` or
/// `problem`/`solution`; GSM8K's `question`/`answer`; `prompt`/`answer`).
///
/// A preset is read from its local copy when a data directory (`data_dir`, else
/// `RLVR_DATA_DIR`) holds it, else from its pinned Hugging Face hub copy, downloaded into the
/// hub cache at the pinned revision (`rlvr_tasks::data::hub_source`; `HF_ENDPOINT`,
/// `HF_TOKEN`, `HF_HUB_OFFLINE` honoured) and read in that copy's own layout. When neither
/// can be read, one error per preset names the local path, the repository, the revision, why
/// the hub copy failed, and the `hf download` command that fetches it (docs/data.md).
pub fn load_dataset(name: &str, data_dir: Option<&Path>) -> Result<Dataset, TrainError> {
    load_dataset_with(name, data_dir, &rlvr_hub::HubOptions::from_env())
}

/// [`load_dataset`] with explicit hub options.
pub fn load_dataset_with(
    name: &str,
    data_dir: Option<&Path>,
    hub: &rlvr_hub::HubOptions,
) -> Result<Dataset, TrainError> {
    // the arithmetic task family: generated from the settings in its name
    if let Some(spec) = rlvr_tasks::arith::ArithSpec::parse(name) {
        let spec = spec.map_err(|reason| {
            TrainError::Data(rlvr_tasks::DataError::BadFile {
                path: PathBuf::from(name),
                reason,
            })
        })?;
        return Ok(spec.dataset(name));
    }
    let path = Path::new(name);
    let looks_like_file = path.extension().is_some() || name.contains('/');
    if looks_like_file && path.exists() {
        let fields = rlvr_tasks::data::file_fields(path);
        let ds = rlvr_tasks::load_file(path, &fields)?;
        rlvr_tasks::data::check_layout(path, &fields, &ds.problems)?;
        return Ok(ds);
    }
    if looks_like_file && rlvr_tasks::data::preset(name).is_err() {
        return Err(TrainError::Data(rlvr_tasks::DataError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
        }));
    }
    let preset = rlvr_tasks::data::preset(name)?;
    let local =
        rlvr_tasks::resolve_data_dir(data_dir).and_then(|dir| rlvr_tasks::load_preset(name, &dir));
    let (missing, src) = match (local, &preset.hub) {
        (Err(rlvr_tasks::DataError::PresetMissing { expected, .. }), Some(src)) => (
            format!("no local copy ({} does not exist)", expected.display()),
            src,
        ),
        (Err(rlvr_tasks::DataError::NoDataDir { reason }), Some(src)) => {
            (format!("no local copy ({reason})"), src)
        }
        (local, _) => return Ok(local?),
    };
    let kind = rlvr_hub::RepoType::Dataset;
    let mut files = Vec::with_capacity(src.files.len());
    for file in src.files {
        let path = rlvr_hub::fetch_file(hub, kind, src.repo, src.revision, file).map_err(|e| {
            rlvr_tasks::DataError::HubUnavailable(Box::new(rlvr_tasks::data::HubMiss {
                preset: name.to_string(),
                local: missing.clone(),
                repo: src.repo.to_string(),
                revision: src.revision.to_string(),
                files: src.files.join(" "),
                file: preset.file.to_string(),
                // offline, a cache miss is the only failure: say so without the hub client's advice
                reason: if hub.offline {
                    format!(
                        "HF_HUB_OFFLINE is set and the Hugging Face cache ({}) does not hold \
                         {file} at that revision",
                        hub.cache.display()
                    )
                } else {
                    e.to_string()
                },
            }))
        })?;
        files.push(path);
    }
    Ok(rlvr_tasks::load_hub_files(name, &files)?)
}

/// The file behind `data.train_files`: the preset's file in the data directory, else the
/// value itself.
pub(crate) fn data_file(name: &str, data_dir: Option<&Path>) -> PathBuf {
    match (
        rlvr_tasks::data::preset(name),
        rlvr_tasks::resolve_data_dir(data_dir),
    ) {
        (Ok(p), Ok(dir)) => dir.join(p.file),
        _ => PathBuf::from(name),
    }
}

/// The set-up error of a training set with no prompt left: a user-input error naming the
/// file, with what was read, what was left out and why, and what to change. `positions` is
/// the model's `max_position_embeddings`, which caps the prompt length below a larger (or
/// unlimited, 0) `data.max_prompt_length`.
pub fn no_usable_prompts(
    file: &Path,
    read: usize,
    skipped: &[String],
    too_long: usize,
    cfg: &TrainConfig,
    positions: usize,
) -> TrainError {
    let hint = if read == 0 && skipped.is_empty() {
        "the file has no records; check data.train_files".to_string()
    } else if read == 0 {
        // why they were left out, as the reader said it (a null answer, no \boxed{} in a
        // solution, a code row without tests)
        format!(
            "all {} records were left out, none has an answer the task can score (first: {}); \
             check the file's answer field and layout (docs/data.md)",
            skipped.len(),
            skipped[0]
        )
    } else if too_long > 0 {
        let limit = cfg.data.max_prompt_length;
        let fits = positions.saturating_sub(1).max(1);
        if limit == 0 || limit > fits {
            format!(
                "{too_long} of {read} prompts are longer than {fits} tokens after the template: \
                 the model's max_position_embeddings = {positions} leaves no room to generate \
                 (data.max_prompt_length = {limit}); use a model with more positions or \
                 shorter prompts"
            )
        } else {
            format!(
                "{too_long} of {read} prompts are longer than data.max_prompt_length = {limit} \
                 tokens after the template; raise data.max_prompt_length (0 = no limit)"
            )
        }
    } else {
        format!("all {read} prompts tokenize to nothing; check data.prompt_template")
    };
    TrainError::Data(rlvr_tasks::DataError::BadFile {
        path: file.to_path_buf(),
        reason: format!("no usable prompts for training: {hint}"),
    })
}

/// The reward function of `problems` under `[reward]` (`rlvr_tasks::reward`), checked
/// against them: a problem its scorer cannot score, or code problems without a working
/// sandbox, are errors here, before any step or evaluation.
pub fn reward_fn(
    cfg: &rlvr_tasks::RewardConfig,
    problems: &[Problem],
) -> Result<Arc<dyn Verifier>, TrainError> {
    let f = rlvr_tasks::RewardFn::new(cfg)?;
    let routes = f.check(problems)?;
    if let Some(line) = unsandboxed_notice(cfg, routes.code) {
        // once per process: every dataset of a run shares the setting
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| crate::ui::log_line(&line));
    }
    if routes.code > 0 && rlvr_tasks::code::isolation_available() {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| crate::ui::log_line(&sandbox_memory_notice(cfg)));
    }
    Ok(Arc::new(f))
}

/// The run-log line that says how the sandbox bounds a code reward's memory here: a cgroup
/// per run (`rlvr_tasks::code::memory_cgroup`), or per-process limits and why.
pub fn sandbox_memory_notice(cfg: &rlvr_tasks::RewardConfig) -> String {
    let limits = cfg.sandbox().limits;
    match rlvr_tasks::code::memory_cgroup() {
        Ok(dir) => format!(
            "sandbox memory: each program run in a memory cgroup of its own under {} \
             ({} MiB for all its processes and pages)",
            dir.display(),
            limits.run_memory_bytes(0) >> 20
        ),
        Err(why) => format!(
            "sandbox memory: no memory cgroup here ({why}): {} MiB of address space per \
             process, bounded file systems (docs/sandbox.md)",
            limits.memory_bytes >> 20
        ),
    }
}

/// The run-log line for `reward.allow_unsandboxed = true` when code rewards use it
/// (`code_problems` > 0): a warning when the sandbox cannot isolate here, so programs run
/// without isolation; a note that the setting is unused otherwise. None when it is not set.
pub fn unsandboxed_notice(cfg: &rlvr_tasks::RewardConfig, code_problems: usize) -> Option<String> {
    if !cfg.allow_unsandboxed || code_problems == 0 {
        return None;
    }
    Some(if rlvr_tasks::code::isolation_available() {
        "reward.allow_unsandboxed = true: unused, the sandbox isolates code rewards here".into()
    } else {
        "WARNING: reward.allow_unsandboxed = true and this process cannot create the \
         sandbox's namespaces: code rewards run model-written programs WITHOUT isolation \
         (they can read the data set, expected outputs included, write your files and reach \
         the network)"
            .into()
    })
}

/// Checks the run's token budget against the context of the model a run of another task
/// than the testbed trains (the testbed's is checked with the config): `initial` (the
/// checkpoint of a resume) or `model.path`, read from its local `config.json`, else the known
/// shape of a hub id (`memory_plan::known_shape`). A model not available locally is not
/// checked here: the set-up checks the one it loaded ([`TrainConfig::check_context`]).
pub(crate) fn check_model_context(
    cfg: &TrainConfig,
    initial: Option<&Path>,
) -> Result<(), TrainError> {
    let RunTask::Datasets { model, .. } = cfg.task() else {
        return Ok(());
    };
    let model = initial.map_or(model.to_string(), |p| p.to_string_lossy().into_owned());
    match rlvr_hub::resolve_model_dir_local(&model) {
        Ok(dir) => {
            let path = dir.join("config.json");
            let qc = rlvr_model::DecoderConfig::from_file(&path)?;
            cfg.check_context(qc.max_position_embeddings, &path.display().to_string())?;
        }
        Err(_) => {
            if let Some(qc) = crate::memory_plan::known_shape(&model) {
                cfg.check_context(
                    qc.max_position_embeddings,
                    &format!("the config.json of {model}"),
                )?;
            }
        }
    }
    Ok(())
}

/// Everything a run trains and evaluates with.
pub struct Setup {
    pub policy: Policy,
    pub train: Task,
    pub evals: Vec<Task>,
    pub warm_start: Option<String>,
    pub setup_s: f64,
    pub warm_start_s: f64,
}

/// What a task source's set-up is given: the config, the data directory, a checkpoint to load
/// instead of the config's model (`initial`: resume), the device and dtype, the progress output.
pub(crate) struct SetupInputs<'a> {
    pub cfg: &'a TrainConfig,
    pub data_dir: Option<&'a Path>,
    pub initial: Option<&'a Path>,
    pub dev: &'a Device,
    pub dt: DType,
    pub ui: &'a Ui,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file by path is read in the layout its first record shows, whatever its format:
    /// what `rlvr export data` writes (verl's layout) reads back from parquet and from jsonl
    /// with its options at `extra_info.choices`; a jsonl in the MATH layout and one of code
    /// problems keep their layouts; a file whose first record shows none names the field it
    /// looked for.
    #[test]
    fn a_file_is_read_in_the_layout_its_first_record_shows() {
        use rlvr_tasks::verl_format::{write, VerlRow};
        let dir = tempfile::tempdir().unwrap();
        let row = |q: &str, gold: &str, choices: Option<Vec<String>>| VerlRow {
            prompt: vec![rlvr_tasks::ChatMessage {
                role: "user".into(),
                content: q.into(),
            }],
            data_source: "mc".into(),
            ability: "math".into(),
            ground_truth: gold.into(),
            id: q.into(),
            split: "test".into(),
            choices,
        };
        let options: Vec<String> = ["12 km", "15 km"].map(String::from).to_vec();
        let rows = [
            row("How far?", "B", Some(options.clone())),
            row("1+1?", "2", None),
        ];
        for name in ["mc.parquet", "mc.jsonl"] {
            let path = dir.path().join(name);
            write(&path, &rows).unwrap();
            let ds = load_dataset(path.to_str().unwrap(), None).unwrap();
            let got: Vec<_> = ds
                .problems
                .iter()
                .map(|p| (p.answer.as_str(), p.choices.clone(), p.data_source.as_str()))
                .collect();
            assert_eq!(
                got,
                [("B", Some(options.clone()), "mc"), ("2", None, "mc")],
                "{name}"
            );
        }
        let math = dir.path().join("math.jsonl");
        std::fs::write(
            &math,
            "{\"problem\": \"1+1?\", \"answer\": \"2\", \"options\": [\"1\", \"2\"]}\n",
        )
        .unwrap();
        let ds = load_dataset(math.to_str().unwrap(), None).unwrap();
        assert_eq!(ds.problems[0].choices, Some(vec!["1".into(), "2".into()]));
        let code = dir.path().join("code.jsonl");
        let record =
            r#"{"problem": "echo", "tests": {"inputs": ["1"], "outputs": ["1"]}, "id": "c"}"#;
        std::fs::write(&code, format!("{record}\n")).unwrap();
        let ds = load_dataset(code.to_str().unwrap(), None).unwrap();
        assert!(
            ds.problems[0].answer.contains("inputs"),
            "{:?}",
            ds.problems[0]
        );
        let neither = dir.path().join("neither.jsonl");
        std::fs::write(&neither, "{\"text\": \"1+1?\", \"label\": \"2\"}\n").unwrap();
        let err = load_dataset(neither.to_str().unwrap(), None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("neither.jsonl") && err.contains("line 1") && err.contains("problem"),
            "{err}"
        );
    }

    #[test]
    fn device_errors_name_the_key() {
        assert!(matches!(device(DeviceSpec::Cpu), Ok(Device::Cpu)));
        #[cfg(not(feature = "cuda"))]
        for spec in [DeviceSpec::Cuda(0), DeviceSpec::Cuda(1)] {
            let err = device(spec).unwrap_err();
            assert!(err.is_user_input());
            let msg = err.to_string();
            assert!(
                msg.contains("model.device")
                    && msg.contains("--features cuda")
                    && msg.contains(&spec.to_string()),
                "{msg}"
            );
        }
    }
}
