//! Loading problems: jsonl, json arrays and parquet files with configurable field names, the
//! named presets, their local copies and their Hugging Face hub copies. The contract of every
//! preset (repository, revision, files, rows, fields) is docs/data.md.
//!
//! # Data directory (docs/data.md)
//! A data directory holds local copies of presets, each at its [`Preset::file`].
//! [`resolve_data_dir`] takes, in order: an explicit path (a `--data-dir` flag), then the
//! `RLVR_DATA_DIR` environment variable; with neither there is no data directory and every
//! preset comes from its hub copy ([`Preset::hub`]). An explicit path or variable that does not
//! exist is an error (no silent fallback).
//!
//! # Hub copies
//! Every preset in [`PRESETS`] has a pinned [`HubSource`]: a dataset repository, a revision,
//! the files of that revision, and a reader for that copy's own layout ([`HubLayout`]). The
//! caller downloads the files (rlvr-train, through `rlvr_hub::fetch_file`) and hands
//! them to [`load_hub_files`]. A preset's post-processing ([`Preset::dedup`]) applies to the
//! local and the hub copy alike.
//!
//! # Field paths
//! A [`FieldMap`] names fields by dotted paths into each record: `prompt`,
//! `reward_model.ground_truth`, `prompt.0.content` (a number indexes a list). A prompt field
//! holding a list of `{role, content}` objects becomes [`Prompt::Chat`]; a string becomes
//! [`Prompt::Text`]. An answer that is a number is written as JSON writes it (`70`, `27.0`);
//! a list of answers is joined with `", "` (several answers, e.g. OlympiadBench). A preset's
//! answer column has one type ([`AnswerSource::Typed`], [`AnswerType`]): a value of another
//! type (a number replaced by a list) rejects the file rather than being read differently. A
//! record whose answer is null or empty cannot be verified: it is skipped and listed in
//! [`Dataset::skipped`](crate::Dataset::skipped); any other bad record rejects the file.
//!
//! # Formats
//! By extension: `.jsonl`/`.ndjson` (one object per line, blank lines skipped), `.json` (an
//! array of objects), `.parquet` (read with parquet's record API, so nested verl columns
//! `prompt: list<struct<content, role>>`, `reward_model: struct<ground_truth, style>` map to
//! JSON-like values; uncompressed, snappy, zstd, gzip or lz4 files; brotli is not built in).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{ChatMessage, Dataset, Problem, Prompt};

/// The environment variable naming the data directory.
pub const DATA_DIR_ENV: &str = "RLVR_DATA_DIR";

/// Errors of dataset loading; each names the file and the line, row or field at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A record that could not be parsed or lacks a required field; `at` is `line N`
    /// (jsonl, 1-based), `element N` (json array, 0-based) or `row N` (parquet, 0-based).
    #[error("{}: {at}: {reason}", .path.display())]
    BadRecord {
        path: PathBuf,
        at: String,
        reason: String,
    },
    #[error("{}: {reason}", .path.display())]
    BadFile { path: PathBuf, reason: String },
    #[error("no local data directory: {reason}")]
    NoDataDir { reason: String },
    #[error("unknown preset {name:?}; known presets: {known}")]
    UnknownPreset { name: String, known: String },
    /// A preset whose file is not in the data directory (offline: nothing is downloaded).
    #[error("preset {preset}: {} not found. Put {file} there (inside the data directory {}); source: {source_hint}", .expected.display(), .data_dir.display())]
    PresetMissing {
        preset: String,
        expected: PathBuf,
        data_dir: PathBuf,
        file: String,
        source_hint: String,
    },
    /// An error in the files of a preset's hub copy.
    #[error("preset {preset} (hub dataset {repo}): {source}")]
    InPreset {
        preset: String,
        repo: String,
        source: Box<DataError>,
    },
    /// An error in the file of a preset's local copy.
    #[error("preset {preset} (local copy): {source}")]
    InLocalCopy {
        preset: String,
        source: Box<DataError>,
    },
    /// [`load_hub_files`] of a preset that has only a local copy.
    #[error("preset {preset} has no hub copy (docs/data.md)")]
    NoHubSource { preset: String },
    /// A preset in neither a data directory nor the hub (or the hub cache when offline).
    #[error("{0}")]
    HubUnavailable(Box<HubMiss>),
}

/// A preset in neither a data directory nor the hub (or the hub cache when offline): one
/// message with both places and how to fill either.
#[derive(Debug, thiserror::Error)]
#[error(
    "preset {preset}: {local}; and its hub copy (dataset {repo}, revision {revision}) \
         could not be read: {reason}. Fetch it with `hf download {repo} {files} --repo-type \
         dataset --revision {revision}` (into the Hugging Face cache), or put a local copy at \
         {file} in a data directory given by --data-dir or RLVR_DATA_DIR (docs/data.md)"
)]
pub struct HubMiss {
    pub preset: String,
    /// Why the local copy was not read (no data directory, or the file is missing).
    pub local: String,
    pub repo: String,
    pub revision: String,
    /// The hub files, space-separated.
    pub files: String,
    /// The local copy's path inside a data directory.
    pub file: String,
    pub reason: String,
}

/// Where the gold answer of a record comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerSource {
    /// The field's value (strings as they are, numbers as JSON writes them, lists joined).
    Field(String),
    /// The field's value, which must be of this type (the presets' answer columns,
    /// docs/data.md): a column whose type changed is an error naming the field and both
    /// types, never read as something else.
    Typed(String, AnswerType),
    /// The last `\boxed{...}` of the field's text (Minerva-MATH); a text without one rejects
    /// the file.
    LastBoxedIn(String),
    /// Like [`AnswerSource::LastBoxedIn`], but a text without a box has no answer: the record
    /// is skipped and listed (MATH train, whose solutions are not all boxed).
    LastBoxedOrSkip(String),
    /// The text after the last `####` of the field (GSM8K).
    AfterHashes(String),
    /// The field's value serialized as JSON (code tests).
    Json(String),
}

impl AnswerSource {
    fn path(&self) -> &str {
        match self {
            AnswerSource::Field(p)
            | AnswerSource::Typed(p, _)
            | AnswerSource::LastBoxedIn(p)
            | AnswerSource::LastBoxedOrSkip(p)
            | AnswerSource::AfterHashes(p)
            | AnswerSource::Json(p) => p,
        }
    }
}

/// The type a preset's answer column holds ([`AnswerSource::Typed`]), and how it becomes the
/// answer text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerType {
    /// A string, as it is.
    Text,
    /// A number (a float column; an integer is a number too), as JSON writes it (`27.0`).
    Number,
    /// An integer, in decimal (`70`).
    Integer,
    /// A list of strings, joined with `", "`.
    TextList,
}

impl AnswerType {
    /// `a string`, `a number`, ..., as errors name the type.
    pub fn describe(self) -> &'static str {
        match self {
            AnswerType::Text => "a string",
            AnswerType::Number => "a number",
            AnswerType::Integer => "an integer",
            AnswerType::TextList => "a list of strings",
        }
    }

    /// The answer text of `v`, or what `v` is instead (`a list`, `a float`, ...).
    fn read(self, v: &Value) -> Result<String, &'static str> {
        let found = || match v {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(n) if n.is_f64() => "a float",
            Value::Number(_) => "an integer",
            Value::String(_) => "a string",
            Value::Array(_) => "a list",
            Value::Object(_) => "an object",
        };
        match (self, v) {
            (AnswerType::Text, Value::String(s)) => Ok(s.clone()),
            (AnswerType::Number, Value::Number(n)) => Ok(n.to_string()),
            (AnswerType::Integer, Value::Number(n)) if !n.is_f64() => Ok(n.to_string()),
            (AnswerType::TextList, Value::Array(items)) => {
                let parts: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
                parts
                    .map(|p| p.join(", "))
                    .ok_or("a list with an element that is no string")
            }
            _ => Err(found()),
        }
    }
}

/// Which fields of a record hold what (dotted paths, see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldMap {
    /// Required: a string or a list of chat messages.
    pub prompt: String,
    /// Required.
    pub answer: AnswerSource,
    /// Optional: a worked solution (a list of strings is joined with blank lines).
    pub solution: Option<String>,
    /// Optional: an id; records without one get `<file stem>-<index>`.
    pub id: Option<String>,
    /// Optional: the record's data source; defaults to the dataset name.
    pub data_source: Option<String>,
    /// Optional: text put before the prompt text when present and not null (OlympiadBench).
    pub context: Option<String>,
}

impl FieldMap {
    /// verl's layout: `prompt` (chat), `reward_model.ground_truth`, `data_source`,
    /// `extra_info.index` as the id.
    pub fn verl() -> Self {
        FieldMap {
            prompt: "prompt".into(),
            answer: AnswerSource::Field("reward_model.ground_truth".into()),
            solution: None,
            id: Some("extra_info.index".into()),
            data_source: Some("data_source".into()),
            context: None,
        }
    }

    /// The MATH/Qwen-eval layout: `problem`, `answer`, `solution`, `id`.
    pub fn problem_answer() -> Self {
        FieldMap {
            prompt: "problem".into(),
            answer: AnswerSource::Field("answer".into()),
            solution: Some("solution".into()),
            id: Some("id".into()),
            data_source: None,
            context: None,
        }
    }
}

/// File formats [`load_file`] reads, chosen by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    Jsonl,
    JsonArray,
    Parquet,
}

impl FileFormat {
    pub fn from_path(path: &Path) -> Result<Self, DataError> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("jsonl") | Some("ndjson") => Ok(FileFormat::Jsonl),
            Some("json") => Ok(FileFormat::JsonArray),
            Some("parquet") => Ok(FileFormat::Parquet),
            _ => Err(DataError::BadFile {
                path: path.to_path_buf(),
                reason: "unknown format: expected a .jsonl, .json or .parquet file".into(),
            }),
        }
    }
}

// ---------------------------------------------------------------------------------------
// data directory
// ---------------------------------------------------------------------------------------

/// Finds the data directory (order in the module docs): `flag`, else `RLVR_DATA_DIR`. With
/// neither, [`DataError::NoDataDir`]: callers then read presets from their hub copies.
pub fn resolve_data_dir(flag: Option<&Path>) -> Result<PathBuf, DataError> {
    let env = std::env::var_os(DATA_DIR_ENV).map(PathBuf::from);
    resolve_data_dir_from(flag, env.as_deref())
}

fn resolve_data_dir_from(flag: Option<&Path>, env: Option<&Path>) -> Result<PathBuf, DataError> {
    if let Some(dir) = flag {
        return existing_dir(dir, "--data-dir");
    }
    if let Some(dir) = env.filter(|d| !d.as_os_str().is_empty()) {
        return existing_dir(dir, DATA_DIR_ENV);
    }
    Err(DataError::NoDataDir {
        reason: format!("no --data-dir given and {DATA_DIR_ENV} is not set"),
    })
}

fn existing_dir(dir: &Path, from: &str) -> Result<PathBuf, DataError> {
    if dir.is_dir() {
        Ok(dir.to_path_buf())
    } else {
        Err(DataError::NoDataDir {
            reason: format!("{} (from {from}) is not a directory", dir.display()),
        })
    }
}

// ---------------------------------------------------------------------------------------
// presets
// ---------------------------------------------------------------------------------------

/// A named dataset: its local copy in a data directory and its hub copy.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    pub name: &'static str,
    /// Path of the local copy relative to the data directory.
    pub file: &'static str,
    /// Records the local file holds in the copy SOURCES.md describes (None: not in that copy).
    pub records: Option<usize>,
    /// Whether records carry a worked solution whose final answer the verifier can check.
    pub has_worked_solution: bool,
    /// Where the local copy's file comes from.
    pub source: &'static str,
    /// The pinned hub copy, read when the data directory lacks [`Preset::file`] (None: only a
    /// local copy exists; docs/data.md says why).
    pub hub: Option<HubSource>,
    /// Keep only the first row of each (prompt text, answer) pair, from either copy.
    pub dedup: bool,
    /// The local copy's fields (LiveCodeBench presets: unused, their local copy is read in the
    /// hub layout).
    fields: fn() -> FieldMap,
}

impl Preset {
    pub fn fields(&self) -> FieldMap {
        (self.fields)()
    }
}

/// A pinned copy of a preset on the Hugging Face hub (a dataset repository).
#[derive(Debug, Clone, Copy)]
pub struct HubSource {
    /// `owner/name` of the dataset repository.
    pub repo: &'static str,
    /// The revision the files are fetched at (a commit sha, or a branch name where docs/data.md
    /// says no sha is known).
    pub revision: &'static str,
    /// Paths inside the repository, read in this order and concatenated.
    pub files: &'static [&'static str],
    /// Problems the preset yields from this copy (after [`Preset::dedup`] and skipped rows),
    /// as docs/data.md lists them.
    pub rows: usize,
    /// How the files' rows become problems.
    pub layout: HubLayout,
}

/// How the rows of a hub copy become problems.
#[derive(Debug, Clone, Copy)]
pub enum HubLayout {
    /// Records with these fields (format by extension, as [`load_file`] reads them).
    Fields(fn() -> FieldMap),
    /// verl's parquet layout whose single user message is DAPO's prompt wrapper
    /// ([`DAPO_PREFIX`] + problem + [`DAPO_SUFFIX`]); the wrapper is removed, so the problem is
    /// bare as in the local copy and `prompt_template = "dapo"` puts the same wrapper back.
    /// A row without the exact wrapper is an error naming the row.
    DapoWrapped,
    /// LiveCodeBench's code-generation rows ([`crate::livecodebench`]).
    LiveCodeBench,
}

/// The text before the problem in DAPO-Math-17k's hub prompts (the start of
/// [`PromptTemplate::Dapo`](crate::PromptTemplate::Dapo)).
pub const DAPO_PREFIX: &str = "Solve the following math problem step by step. The last line of \
     your response should be of the form Answer: $Answer (without quotes) where $Answer is the \
     answer to the problem.\n\n";
/// The text after the problem in DAPO-Math-17k's hub prompts.
pub const DAPO_SUFFIX: &str = "\n\nRemember to put your answer on its own line after \"Answer:\".";

fn fm(prompt: &str, answer: AnswerSource, solution: Option<&str>, id: Option<&str>) -> FieldMap {
    FieldMap {
        prompt: prompt.into(),
        answer,
        solution: solution.map(Into::into),
        id: id.map(Into::into),
        data_source: None,
        context: None,
    }
}

/// [`FieldMap::problem_answer`] with `answer` a string (AIME 2024, `"033"`).
fn problem_answer_text() -> FieldMap {
    FieldMap {
        answer: typed("answer", AnswerType::Text),
        ..FieldMap::problem_answer()
    }
}

/// The answer column `p` of a preset, of type `t` (docs/data.md lists each).
fn typed(p: &str, t: AnswerType) -> AnswerSource {
    AnswerSource::Typed(p.into(), t)
}

/// The presets [`load_preset`] knows. `matharena_aime25` is read from MathArena's layout
/// (`answers.csv` + `problems/<id>.tex` for AIME 2025 I and II).
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "math500",
        file: "math500/test.jsonl",
        records: Some(500),
        has_worked_solution: true,
        source: "github hkust-nlp/simpleRL-reason examples/simplelr_math_eval/data/math500/test.jsonl (the PRM800K MATH-500 split)",
        hub: Some(HubSource {
            repo: "HuggingFaceH4/MATH-500",
            revision: "ff5b20257d8185524591543f8ff5993951537bb8",
            files: &["test.jsonl"],
            rows: 500,
            layout: HubLayout::Fields(|| fm("problem", typed("answer", AnswerType::Text), Some("solution"), Some("unique_id"))),
        }),
        dedup: false,
        fields: || fm("problem", typed("answer", AnswerType::Text), Some("solution"), Some("unique_id")),
    },
    Preset {
        name: "aime24",
        file: "aime24/test.jsonl",
        records: Some(30),
        has_worked_solution: true,
        source: "github QwenLM/Qwen2.5-Math evaluation/data/aime24/test.jsonl",
        hub: Some(HubSource {
            repo: "HuggingFaceH4/aime_2024",
            revision: "2fe88a2f1091d5048c0f36abc874fb997b3dd99a",
            files: &["data/train-00000-of-00001.parquet"],
            rows: 30,
            layout: HubLayout::Fields(problem_answer_text),
        }),
        dedup: false,
        fields: problem_answer_text,
    },
    Preset {
        name: "aime24_polaris",
        file: "aime24/aime24.parquet",
        records: Some(30),
        has_worked_solution: false,
        source: "github ChenxinAn-fdu/POLARIS evaluation/benchmarks/aime24.parquet",
        hub: None,
        dedup: false,
        fields: FieldMap::verl,
    },
    Preset {
        name: "aime24_dapo",
        file: "aime24/aime-2024.parquet",
        records: Some(960),
        has_worked_solution: false,
        source: "github BytedTsinghua-SIA/DAPO eval/aime-2024.parquet",
        hub: None,
        dedup: false,
        fields: FieldMap::verl,
    },
    Preset {
        name: "aime25",
        file: "aime25/train.jsonl",
        records: Some(30),
        has_worked_solution: false,
        source: "github Geraldxm/math-vault source/aime_2025/train.jsonl (MathArena/aime_2025)",
        hub: Some(HubSource {
            repo: "MathArena/aime_2025",
            revision: "c94da77eb22bbd6439e62a323bec18493a421302",
            files: &["data/train-00000-of-00001.parquet"],
            rows: 30,
            layout: HubLayout::Fields(|| fm("problem", typed("answer", AnswerType::Integer), None, Some("problem_idx"))),
        }),
        dedup: false,
        fields: || fm("problem", typed("answer", AnswerType::Integer), None, Some("problem_idx")),
    },
    Preset {
        name: "aime25_polaris",
        file: "aime25/aime25.parquet",
        records: Some(30),
        has_worked_solution: false,
        source: "github ChenxinAn-fdu/POLARIS evaluation/benchmarks/aime25.parquet",
        hub: None,
        dedup: false,
        fields: FieldMap::verl,
    },
    Preset {
        name: "matharena_aime25",
        file: "aime25/matharena",
        records: Some(30),
        has_worked_solution: false,
        source: "github eth-sri/matharena data/aime/aime_2025_{I,II}/ (answers.csv, problems/*.tex)",
        hub: None,
        dedup: false,
        fields: || fm("problem", AnswerSource::Field("answer".into()), None, Some("id")),
    },
    Preset {
        name: "amc23",
        file: "amc23/test.jsonl",
        records: Some(40),
        has_worked_solution: false,
        source: "github QwenLM/Qwen2.5-Math evaluation/data/amc23/test.jsonl",
        hub: Some(HubSource {
            repo: "math-ai/amc23",
            revision: "80815d37005feb82cd7f8fbc6901d5d3eff43057",
            files: &["test-00000-of-00001.parquet"],
            rows: 40,
            layout: HubLayout::Fields(|| fm("question", typed("answer", AnswerType::Number), None, Some("id"))),
        }),
        dedup: false,
        fields: || fm("problem", typed("answer", AnswerType::Number), None, Some("id")),
    },
    Preset {
        name: "minerva_math",
        file: "minerva_math/test.jsonl",
        records: Some(272),
        has_worked_solution: true,
        source: "github QwenLM/Qwen2.5-Math evaluation/data/minerva_math/test.jsonl",
        hub: Some(HubSource {
            repo: "knoveleng/Minerva-Math",
            revision: "93d86e1f779d84c7393587c2cdbf6c7511591f95",
            files: &["data/train-00000-of-00001.parquet"],
            rows: 272,
            layout: HubLayout::Fields(|| {
                fm(
                    "problem",
                    AnswerSource::LastBoxedIn("solution".into()),
                    Some("solution"),
                    Some("idx"),
                )
            }),
        }),
        dedup: false,
        fields: || {
            fm(
                "problem",
                AnswerSource::LastBoxedIn("solution".into()),
                Some("solution"),
                Some("idx"),
            )
        },
    },
    Preset {
        name: "olympiadbench",
        file: "olympiadbench/test.jsonl",
        records: Some(675),
        has_worked_solution: false,
        source: "github QwenLM/Qwen2.5-Math evaluation/data/olympiadbench/test.jsonl",
        hub: Some(HubSource {
            repo: "Hothan/OlympiadBench",
            revision: "91184b52131e7fc9455fef848035173aea8cc01a",
            files: &["OlympiadBench/OE_TO_maths_en_COMP/OE_TO_maths_en_COMP.parquet"],
            rows: 674,
            layout: HubLayout::Fields(|| FieldMap {
                context: Some("context".into()),
                ..fm("question", typed("final_answer", AnswerType::TextList), Some("solution"), Some("id"))
            }),
        }),
        dedup: false,
        fields: || FieldMap {
            context: Some("context".into()),
            ..fm("question", typed("final_answer", AnswerType::TextList), Some("solution"), Some("id"))
        },
    },
    Preset {
        name: "gsm8k",
        file: "gsm8k/test.jsonl",
        records: Some(1319),
        has_worked_solution: true,
        source: "github openai/grade-school-math grade_school_math/data/test.jsonl",
        hub: Some(HubSource {
            repo: "openai/gsm8k",
            revision: "740312add88f781978c0658806c59bc2815b9866",
            files: &["main/test-00000-of-00001.parquet"],
            rows: 1319,
            layout: HubLayout::Fields(|| {
                fm(
                    "question",
                    AnswerSource::AfterHashes("answer".into()),
                    Some("answer"),
                    None,
                )
            }),
        }),
        dedup: false,
        fields: || {
            fm(
                "question",
                AnswerSource::AfterHashes("answer".into()),
                Some("answer"),
                None,
            )
        },
    },
    Preset {
        name: "gsm8k_train",
        file: "gsm8k/train.jsonl",
        records: Some(7473),
        has_worked_solution: true,
        source: "github openai/grade-school-math grade_school_math/data/train.jsonl",
        hub: Some(HubSource {
            repo: "openai/gsm8k",
            revision: "740312add88f781978c0658806c59bc2815b9866",
            files: &["main/train-00000-of-00001.parquet"],
            rows: 7473,
            layout: HubLayout::Fields(|| {
                fm(
                    "question",
                    AnswerSource::AfterHashes("answer".into()),
                    Some("answer"),
                    None,
                )
            }),
        }),
        dedup: false,
        fields: || {
            fm(
                "question",
                AnswerSource::AfterHashes("answer".into()),
                Some("answer"),
                None,
            )
        },
    },
    Preset {
        name: "math_train",
        file: "math_train/math.json",
        records: Some(7474),
        has_worked_solution: false,
        source: "github agentica-project/rllm rllm/data/train/math/math.json",
        hub: Some(HubSource {
            repo: "EleutherAI/hendrycks_math",
            revision: "21a5633873b6a120296cce3e2df9d5550074f4a3",
            files: &["algebra/train-00000-of-00001.parquet", "counting_and_probability/train-00000-of-00001.parquet", "geometry/train-00000-of-00001.parquet", "intermediate_algebra/train-00000-of-00001.parquet", "number_theory/train-00000-of-00001.parquet", "prealgebra/train-00000-of-00001.parquet", "precalculus/train-00000-of-00001.parquet"],
            rows: 7500,
            layout: HubLayout::Fields(|| {
                fm(
                    "problem",
                    AnswerSource::LastBoxedOrSkip("solution".into()),
                    Some("solution"),
                    None,
                )
            }),
        }),
        dedup: false,
        fields: || fm("problem", typed("answer", AnswerType::Text), None, None),
    },
    Preset {
        name: "dapo_math_17k",
        file: "dapo_math_17k/dapo_math_17k.parquet",
        records: Some(17917),
        has_worked_solution: false,
        source: "github MasterVito/SvS data/dapo_math_17k.parquet (one copy of DAPO-Math-17k)",
        hub: Some(HubSource {
            repo: "BytedTsinghua-SIA/DAPO-Math-17k",
            revision: "65877096c24ffa7abc4e4fa5edb95cf3413a5674",
            files: &["data/dapo-math-17k.parquet"],
            rows: 17200,
            layout: HubLayout::DapoWrapped,
        }),
        dedup: true,
        fields: FieldMap::verl,
    },
    Preset {
        name: "deepscaler_aime",
        file: "deepscaler_components/aime.json",
        records: Some(975),
        has_worked_solution: true,
        source: "github agentica-project/rllm rllm/data/train/math/aime.json",
        hub: None,
        dedup: false,
        fields: || fm("problem", typed("answer", AnswerType::Text), Some("solution"), None),
    },
    Preset {
        name: "polaris",
        file: "polaris/polaris-data-53K.parquet",
        records: None,
        has_worked_solution: false,
        source: "github ChenxinAn-fdu/POLARIS parquet/stage1/polaris-data-53K.parquet (verl layout)",
        hub: Some(HubSource {
            repo: "POLARIS-Project/Polaris-Dataset-53K",
            revision: "main",
            files: &["polaris-data-53K.jsonl"],
            rows: 53291,
            layout: HubLayout::Fields(|| fm("problem", typed("answer", AnswerType::Text), None, None)),
        }),
        dedup: false,
        fields: FieldMap::verl,
    },
    Preset {
        name: "deepscaler",
        file: "deepscaler/deepscaler.json",
        records: None,
        has_worked_solution: false,
        source: "hub agentica-org/DeepScaleR-Preview-Dataset deepscaler.json (the same layout)",
        hub: Some(HubSource {
            repo: "agentica-org/DeepScaleR-Preview-Dataset",
            revision: "b6ae8c60f5c1f2b594e2140b91c49c9ad0949e29",
            files: &["deepscaler.json"],
            rows: 40315,
            layout: HubLayout::Fields(|| fm("problem", typed("answer", AnswerType::Text), Some("solution"), None)),
        }),
        dedup: false,
        fields: || fm("problem", typed("answer", AnswerType::Text), Some("solution"), None),
    },
    Preset {
        name: "livecodebench",
        file: "livecodebench",
        records: None,
        has_worked_solution: false,
        source: "hub livecodebench/code_generation_lite: a folder holding its test.jsonl ... test6.jsonl",
        hub: Some(HubSource {
            repo: "livecodebench/code_generation_lite",
            revision: "0fe84c3912ea0c4d4a78037083943e8f0c4dd505",
            files: &[
                "test.jsonl",
                "test2.jsonl",
                "test3.jsonl",
                "test4.jsonl",
                "test5.jsonl",
                "test6.jsonl",
            ],
            rows: 1055,
            layout: HubLayout::LiveCodeBench,
        }),
        dedup: false,
        // unused: the local copy is a folder of the hub's files, read in the hub layout
        fields: || fm("question_content", AnswerSource::Json("private_test_cases".into()), None, None),
    },
    Preset {
        name: "livecodebench_v6",
        file: "livecodebench",
        records: None,
        has_worked_solution: false,
        source: "hub livecodebench/code_generation_lite: a folder holding its test6.jsonl",
        hub: Some(HubSource {
            repo: "livecodebench/code_generation_lite",
            revision: "0fe84c3912ea0c4d4a78037083943e8f0c4dd505",
            files: &["test6.jsonl"],
            rows: 175,
            layout: HubLayout::LiveCodeBench,
        }),
        dedup: false,
        // unused: the local copy is a folder of the hub's files, read in the hub layout
        fields: || fm("question_content", AnswerSource::Json("private_test_cases".into()), None, None),
    },
    Preset {
        name: "codeforces",
        file: "code/codeforces.json",
        records: Some(408),
        has_worked_solution: false,
        source: "github agentica-project/rllm rllm/data/test/code/codeforces.json",
        hub: None,
        dedup: false,
        fields: || fm("problem", AnswerSource::Json("tests".into()), None, None),
    },
    Preset {
        name: "leetcode",
        file: "code/leetcode.json",
        records: Some(200),
        has_worked_solution: false,
        source: "github agentica-project/rllm rllm/data/test/code/leetcode.json",
        hub: None,
        dedup: false,
        fields: || {
            fm(
                "problem",
                AnswerSource::Json("tests".into()),
                Some("solutions"),
                None,
            )
        },
    },
];

/// Finds a preset by name.
pub fn preset(name: &str) -> Result<&'static Preset, DataError> {
    PRESETS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| DataError::UnknownPreset {
            name: name.to_string(),
            known: PRESETS
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The pinned hub copy of preset `name` (None: an unknown name, or a preset with a local
/// copy only).
pub fn hub_source(name: &str) -> Option<&'static HubSource> {
    PRESETS
        .iter()
        .find(|p| p.name == name)
        .and_then(|p| p.hub.as_ref())
}

/// Loads a named preset from its local copy in `data_dir`. A missing file is a
/// [`DataError::PresetMissing`] that says which file to put where (this function does not
/// download; see [`hub_source`] and [`load_hub_files`]).
pub fn load_preset(name: &str, data_dir: &Path) -> Result<Dataset, DataError> {
    let p = preset(name)?;
    let path = data_dir.join(p.file);
    if !path.exists() {
        let source_hint = match &p.hub {
            Some(h) => format!(
                "{}; or leave it out and the hub copy is read (hub dataset {} revision {})",
                p.source, h.repo, h.revision
            ),
            None => p.source.to_string(),
        };
        return Err(DataError::PresetMissing {
            preset: p.name.to_string(),
            expected: path,
            data_dir: data_dir.to_path_buf(),
            file: p.file.to_string(),
            source_hint,
        });
    }
    load_preset_file(name, &path)
}

/// Loads preset `name`'s records from `path`, a file in the local copy's layout, with the
/// preset's fields, name and [`Preset::dedup`].
pub fn load_preset_file(name: &str, path: &Path) -> Result<Dataset, DataError> {
    let p = preset(name)?;
    if let Some(
        hub @ HubSource {
            layout: HubLayout::LiveCodeBench,
            ..
        },
    ) = &p.hub
    {
        // the local copy is a folder holding the hub's files
        let files: Vec<PathBuf> = hub.files.iter().map(|f| path.join(f)).collect();
        return load_hub_files(name, &files);
    }
    let ds = if p.name == "matharena_aime25" {
        load_matharena(path)
    } else {
        load_file(path, &p.fields())
    }
    .map_err(|e| DataError::InLocalCopy {
        preset: p.name.to_string(),
        source: Box::new(e),
    })?;
    Ok(finish(p, ds, &[path]))
}

/// Loads preset `name` from the files of its hub copy, downloaded: `files[i]` is the local
/// path of `hub.files[i]`. Rows are read in the layout of [`HubSource::layout`]; an error
/// names the preset, the repository, the file and the row and field at fault.
pub fn load_hub_files(name: &str, files: &[PathBuf]) -> Result<Dataset, DataError> {
    let p = preset(name)?;
    let hub = p.hub.as_ref().ok_or_else(|| DataError::NoHubSource {
        preset: p.name.to_string(),
    })?;
    if files.len() != hub.files.len() {
        return Err(DataError::InPreset {
            preset: p.name.to_string(),
            repo: hub.repo.to_string(),
            source: Box::new(DataError::BadFile {
                path: PathBuf::from(hub.files.join(", ")),
                reason: format!("expected {} files, got {}", hub.files.len(), files.len()),
            }),
        });
    }
    let in_preset = |e: DataError| DataError::InPreset {
        preset: p.name.to_string(),
        repo: hub.repo.to_string(),
        source: Box::new(e),
    };
    let mut all = Dataset {
        name: p.name.to_string(),
        problems: Vec::new(),
        skipped: Vec::new(),
        duplicates: 0,
    };
    for path in files {
        let ds = match hub.layout {
            HubLayout::Fields(fields) => load_file(path, &fields()),
            HubLayout::DapoWrapped => load_dapo_wrapped(path),
            HubLayout::LiveCodeBench => load_livecodebench(path),
        }
        .map_err(in_preset)?;
        let file = path
            .file_name()
            .map_or_else(String::new, |f| f.to_string_lossy().to_string());
        all.problems.extend(ds.problems);
        all.duplicates += ds.duplicates;
        all.skipped
            .extend(ds.skipped.into_iter().map(|s| format!("{file}: {s}")));
    }
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    Ok(finish(p, all, &paths))
}

/// The preset's name, data source and de-duplication, for either copy.
fn finish(p: &Preset, mut ds: Dataset, paths: &[&Path]) -> Dataset {
    ds.name = p.name.to_string();
    let stems: Vec<String> = paths.iter().map(|path| file_stem(path)).collect();
    for prob in &mut ds.problems {
        if prob.data_source.is_empty() || stems.contains(&prob.data_source) {
            prob.data_source = p.name.to_string();
        }
    }
    if p.dedup {
        let mut seen = std::collections::HashSet::new();
        let before = ds.problems.len();
        ds.problems.retain(|q| seen.insert(dedup_key(q)));
        ds.duplicates += before - ds.problems.len();
    }
    ds
}

/// The key of [`Preset::dedup`]: the prompt text with runs of whitespace made one space and
/// the ends trimmed, and the trimmed answer (DAPO-Math-17k's local copy differs from the hub
/// copy only in whitespace around some problems).
pub fn dedup_key(p: &Problem) -> (String, String) {
    let text = p
        .prompt
        .text()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (text, p.answer.trim().to_string())
}

/// verl parquet rows whose user message is DAPO's wrapper around the problem: the wrapper is
/// removed (see [`HubLayout::DapoWrapped`]). Rows are de-duplicated as they are read
/// ([`dedup_key`]), so the 100 repeats of the hub file never sit in memory.
fn load_dapo_wrapped(path: &Path) -> Result<Dataset, DataError> {
    let fields = FieldMap::verl();
    let stem = file_stem(path);
    let mut problems = Vec::new();
    let mut skipped = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut duplicates = 0;
    for_each_record(path, |at, index, value| {
        let bad = |reason: String| DataError::BadRecord {
            path: path.to_path_buf(),
            at: at.clone(),
            reason,
        };
        let mut prob = match to_problem(&value, &fields, &stem, index) {
            Ok(p) => p,
            Err(RecordError::NoAnswer(reason)) => {
                skipped.push(format!("{at}: {reason}"));
                return Ok(());
            }
            Err(RecordError::Bad(reason)) => return Err(bad(reason)),
        };
        let Prompt::Chat(msgs) = &mut prob.prompt else {
            return Err(bad(
                "field `prompt`: expected a list of chat messages".into()
            ));
        };
        let Some((i, user)) = msgs
            .iter_mut()
            .enumerate()
            .rev()
            .find(|(_, m)| m.role == "user")
        else {
            return Err(bad("field `prompt`: no message with role `user`".into()));
        };
        let bare = user
            .content
            .strip_prefix(DAPO_PREFIX)
            .and_then(|t| t.strip_suffix(DAPO_SUFFIX))
            .ok_or_else(|| {
                bad(format!(
                    "field `prompt.{i}.content`: not DAPO's prompt wrapper (expected the text to \
                     start with {DAPO_PREFIX:?} and end with {DAPO_SUFFIX:?})"
                ))
            })?;
        user.content = bare.to_string();
        if seen.insert(dedup_key(&prob)) {
            problems.push(prob);
        } else {
            duplicates += 1;
        }
        Ok(())
    })?;
    Ok(Dataset {
        name: stem,
        problems,
        skipped,
        duplicates,
    })
}

/// The longest line of a LiveCodeBench jsonl file (256 MiB: its rows carry every private
/// test, compressed, in one string); a longer line is an error naming the file and line.
pub const MAX_LIVECODEBENCH_LINE_BYTES: usize = 256 << 20;

/// LiveCodeBench's jsonl, read line by line ([`crate::livecodebench`]) under the bounds of
/// [`for_each_record`] (a regular file, [`MAX_LIVECODEBENCH_LINE_BYTES`] per line, values
/// per line by [`check_json_values`]).
fn load_livecodebench(path: &Path) -> Result<Dataset, DataError> {
    use crate::livecodebench::{row_to_problem, RowOutcome};
    let io = |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = BufReader::new(open_regular_file(path)?);
    let mut problems = Vec::new();
    let mut skipped = Vec::new();
    let mut buf = Vec::new();
    for i in 1.. {
        let bad = |reason: String| DataError::BadRecord {
            path: path.to_path_buf(),
            at: format!("line {i}"),
            reason,
        };
        match read_line_bounded(&mut reader, &mut buf, MAX_LIVECODEBENCH_LINE_BYTES).map_err(io)? {
            BoundedLine::End => break,
            BoundedLine::Line => {}
            BoundedLine::TooLong => {
                return Err(bad(format!(
                    "the line is longer than {MAX_LIVECODEBENCH_LINE_BYTES} bytes"
                )))
            }
        }
        let line = std::str::from_utf8(&buf).map_err(|e| {
            bad(format!(
                "not UTF-8 (invalid byte at column {})",
                e.valid_up_to() + 1
            ))
        })?;
        if line.trim().is_empty() {
            continue;
        }
        check_json_values(line.as_bytes()).map_err(&bad)?;
        let v: Value = serde_json::from_str(line).map_err(|e| bad(format!("invalid JSON: {e}")))?;
        match row_to_problem(&v).map_err(&bad)? {
            RowOutcome::Problem(p) => problems.push(*p),
            RowOutcome::Skipped(why) => skipped.push(format!("line {i}: {why}")),
        }
    }
    Ok(Dataset {
        name: file_stem(path),
        problems,
        skipped,
        duplicates: 0,
    })
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("data")
        .to_string()
}

// ---------------------------------------------------------------------------------------
// files
// ---------------------------------------------------------------------------------------

/// Loads a jsonl, json-array or parquet file (format by extension) with the given fields.
pub fn load_file(path: &Path, fields: &FieldMap) -> Result<Dataset, DataError> {
    let stem = file_stem(path);
    let mut problems = Vec::new();
    let mut skipped = Vec::new();
    for_each_record(path, |at, index, value| {
        match to_problem(&value, fields, &stem, index) {
            Ok(p) => problems.push(p),
            Err(RecordError::NoAnswer(reason)) => skipped.push(format!("{at}: {reason}")),
            Err(RecordError::Bad(reason)) => {
                return Err(DataError::BadRecord {
                    path: path.to_path_buf(),
                    at,
                    reason,
                })
            }
        }
        Ok(())
    })?;
    Ok(Dataset {
        name: stem,
        problems,
        skipped,
        duplicates: 0,
    })
}

/// The longest line of a jsonl file [`read_records`] reads (64 MiB, the newline not counted):
/// a longer line is an error naming the file and line, read no further than one byte past
/// the limit, so a file without newlines cannot exhaust memory before parsing.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// The longest prompt a record may hold (4 MiB of text: 32 bytes per token of a 131,072-token
/// context, beyond any model rlvr loads). A record with a longer prompt is an error naming the
/// file and line (row, element), so that no prompt reaches a tokenizer or a chat template at
/// a size that exhausts memory; trainers drop shorter but still over-long prompts by their own
/// token limit.
pub const MAX_PROMPT_BYTES: usize = 4 << 20;

/// The largest `.json` file read whole (a json array of records; `rlvr diagnose`'s wandb
/// tables): 256 MiB. A larger file is an error naming it, before anything is read.
pub const MAX_JSON_FILE_BYTES: u64 = 256 << 20;

/// Bytes of JSON text per value (or object key) a text may hold on average, beyond
/// [`JSON_BASE_VALUES`]: a text of `L` bytes may hold at most `L / 8 + 131,072` values and
/// keys, counted in one scan before it is parsed ([`check_json_values`]). Each parsed value
/// takes at most about 128 bytes of memory, so parsing a jsonl line or a `.json` file of `L`
/// bytes takes at most about `17 L + 16 MiB` (its strings, about `L`, plus 16 bytes per byte
/// of text for the values): shapes that are cheap to write and costly to hold (`[[],[],...]`,
/// `{"a":0,"b":0,...}`, 3 to 8 bytes each) are refused with the file and line.
pub const JSON_BYTES_PER_VALUE: usize = 8;

/// Values and keys any JSON text may hold whatever its size (see [`JSON_BYTES_PER_VALUE`]).
pub const JSON_BASE_VALUES: usize = 1 << 17;

/// How many times its size a parquet file's data may grow when decoded: the uncompressed
/// sizes its metadata announces (checked before any page is read) and the records decoded
/// from it (counted row by row, as strings plus 32 bytes per value) may each reach at most
/// `PARQUET_MAX_EXPANSION x` the file's size plus [`PARQUET_BASE_BYTES`]. Real datasets
/// stay far below (text compresses 2 to 10 times, a dictionary of repeated prompts about 30
/// times); a file of a few kilobytes that decodes to gigabytes is refused with the file (and
/// the row at which the limit was passed).
pub const PARQUET_MAX_EXPANSION: u64 = 128;

/// The decoded bytes any parquet file may hold whatever its size (see
/// [`PARQUET_MAX_EXPANSION`]): 64 MiB.
pub const PARQUET_BASE_BYTES: u64 = 64 << 20;

/// The uncompressed size no parquet file's metadata may announce, whatever the file's size:
/// 16 GiB.
pub const PARQUET_MAX_BYTES: u64 = 16 << 30;

/// Opens `path` for reading, refusing anything but a regular file (a FIFO, a device such as
/// `/dev/zero`, a socket) with an error naming it. The open does not block: a FIFO is opened
/// non-blocking, seen to be one and refused, instead of waiting for a writer forever.
pub fn open_regular_file(path: &Path) -> Result<File, DataError> {
    let io = |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "a FIFO, device or socket"
        };
        return Err(DataError::BadFile {
            path: path.to_path_buf(),
            reason: format!("not a regular file ({kind}): data is read only from regular files"),
        });
    }
    #[cfg(unix)]
    {
        // back to blocking reads (no effect on a regular file, but stated, not assumed)
        use std::os::unix::io::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor this function owns, with integer arguments only
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
        }
    }
    Ok(file)
}

/// Reads a whole regular file ([`open_regular_file`]) of at most `max` bytes; a larger one is
/// an error naming it and the limit, read no further than one byte past it.
pub fn read_regular_file(path: &Path, max: u64) -> Result<Vec<u8>, DataError> {
    let file = open_regular_file(path)?;
    let io = |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    };
    let too_big = || DataError::BadFile {
        path: path.to_path_buf(),
        reason: format!("larger than {max} bytes, the most rlvr reads of such a file"),
    };
    let len = file.metadata().map_err(io)?.len();
    if len > max {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(too_big());
    }
    Ok(bytes)
}

/// What [`read_line_bounded`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundedLine {
    /// The end of the input: nothing was read.
    End,
    /// A line, in the buffer without its `\n` (or `\r\n`).
    Line,
    /// A line longer than the limit; the buffer holds its first `max + 1` bytes.
    TooLong,
}

/// Reads one line of at most `max` bytes (the newline not counted) into `buf` (cleared
/// first), reading no further than one byte past the limit, so an endless line
/// (`/dev/zero`) costs `max` bytes of memory, not all of it.
pub fn read_line_bounded(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<BoundedLine> {
    buf.clear();
    let n = reader.take(max as u64 + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(BoundedLine::End);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        return Ok(BoundedLine::Line);
    }
    if buf.len() > max {
        return Ok(BoundedLine::TooLong);
    }
    Ok(BoundedLine::Line)
}

/// The most JSON values and object keys a text of `len` bytes may hold (see
/// [`JSON_BYTES_PER_VALUE`]).
pub fn max_json_values(len: usize) -> usize {
    (len / JSON_BYTES_PER_VALUE).saturating_add(JSON_BASE_VALUES)
}

/// Counts, in one scan and without parsing, the JSON values and object keys `text` would
/// parse into (at most: every `[`, `{`, `,` and `:` outside strings, plus one), and refuses a
/// text holding more than [`max_json_values`] of its length, so that parsing it into a
/// `serde_json::Value` takes memory proportional to its size (the factor in
/// [`JSON_BYTES_PER_VALUE`]).
pub fn check_json_values(text: &[u8]) -> Result<(), String> {
    let limit = max_json_values(text.len());
    let mut count = 1usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' | b',' | b':' => {
                count += 1;
                if count > limit {
                    return Err(format!(
                        "more than {limit} JSON values and keys in {} bytes (at most one per \
                         {JSON_BYTES_PER_VALUE} bytes plus {JSON_BASE_VALUES}): a shape that \
                         would take far more memory than its size",
                        text.len()
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Reads every record of a file as a JSON value, with its location (`line N`/`row N`/...)
/// and its 0-based index. Jsonl lines must be UTF-8 and at most [`MAX_LINE_BYTES`] long;
/// either error names the file and the line (a json file that is not UTF-8: the line and
/// column of the first invalid byte). Only regular files are read ([`open_regular_file`]);
/// a jsonl line or json file holding more values than its size allows
/// ([`check_json_values`]), a json file over [`MAX_JSON_FILE_BYTES`] and a parquet file that
/// decodes to more than its size allows ([`PARQUET_MAX_EXPANSION`]) are errors naming the
/// file (and line or row).
pub fn read_records(path: &Path) -> Result<Vec<(String, usize, Value)>, DataError> {
    let mut out = Vec::new();
    for_each_record(path, |at, index, v| {
        out.push((at, index, v));
        Ok(())
    })?;
    Ok(out)
}

/// Calls `f` on every record of a file in order (see [`read_records`]) without holding them
/// all: a large file (DAPO-Math-17k's 1.79M-row hub parquet) is read in constant memory.
pub fn for_each_record(
    path: &Path,
    mut f: impl FnMut(String, usize, Value) -> Result<(), DataError>,
) -> Result<(), DataError> {
    let io = |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    };
    match FileFormat::from_path(path)? {
        FileFormat::Jsonl => {
            let mut reader = BufReader::new(open_regular_file(path)?);
            let mut index = 0;
            let mut buf = Vec::new();
            for i in 1.. {
                let at = format!("line {i}");
                let bad = |reason: String| DataError::BadRecord {
                    path: path.to_path_buf(),
                    at: at.clone(),
                    reason,
                };
                // at most one byte past the limit is read, so an endless line costs 64 MiB
                match read_line_bounded(&mut reader, &mut buf, MAX_LINE_BYTES).map_err(io)? {
                    BoundedLine::End => break,
                    BoundedLine::Line => {}
                    BoundedLine::TooLong => {
                        return Err(bad(format!(
                            "the line is longer than {MAX_LINE_BYTES} bytes, the most a jsonl \
                             record may hold"
                        )))
                    }
                }
                let line = std::str::from_utf8(&buf).map_err(|e| {
                    bad(format!(
                        "not UTF-8 (invalid byte at column {})",
                        e.valid_up_to() + 1
                    ))
                })?;
                if line.trim().is_empty() {
                    continue;
                }
                check_json_values(line.as_bytes()).map_err(&bad)?;
                let v: Value =
                    serde_json::from_str(line).map_err(|e| bad(format!("invalid JSON: {e}")))?;
                f(at, index, v)?;
                index += 1;
            }
            Ok(())
        }
        FileFormat::JsonArray => {
            let bytes = read_regular_file(path, MAX_JSON_FILE_BYTES)?;
            let text = String::from_utf8(bytes).map_err(|e| {
                let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
                let column =
                    valid.len() - valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
                DataError::BadFile {
                    path: path.to_path_buf(),
                    reason: format!("not UTF-8 (invalid byte at line {line} column {column})"),
                }
            })?;
            check_json_values(text.as_bytes()).map_err(|reason| DataError::BadFile {
                path: path.to_path_buf(),
                reason,
            })?;
            let v: Value = serde_json::from_str(&text).map_err(|e| DataError::BadFile {
                path: path.to_path_buf(),
                reason: format!(
                    "invalid JSON at line {} column {}: {e}",
                    e.line(),
                    e.column()
                ),
            })?;
            let Value::Array(items) = v else {
                return Err(DataError::BadFile {
                    path: path.to_path_buf(),
                    reason: "expected a JSON array of records".into(),
                });
            };
            for (i, v) in items.into_iter().enumerate() {
                f(format!("element {i}"), i, v)?;
            }
            Ok(())
        }
        FileFormat::Parquet => for_each_parquet_row(path, f),
    }
}

/// The decoded size of a record, as [`PARQUET_MAX_EXPANSION`] counts it: the bytes of its
/// strings and keys plus 32 per value.
fn decoded_bytes(v: &Value) -> u64 {
    32 + match v {
        Value::String(s) => s.len() as u64,
        Value::Array(a) => a.iter().map(decoded_bytes).sum(),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| k.len() as u64 + decoded_bytes(v))
            .sum(),
        _ => 0,
    }
}

fn for_each_parquet_row(
    path: &Path,
    mut f: impl FnMut(String, usize, Value) -> Result<(), DataError>,
) -> Result<(), DataError> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let bad = |reason: String| DataError::BadFile {
        path: path.to_path_buf(),
        reason,
    };
    let file = open_regular_file(path)?;
    let file_len = file
        .metadata()
        .map_err(|source| DataError::Io {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    let budget = file_len
        .saturating_mul(PARQUET_MAX_EXPANSION)
        .saturating_add(PARQUET_BASE_BYTES)
        .min(PARQUET_MAX_BYTES);
    let reader =
        SerializedFileReader::new(file).map_err(|e| bad(format!("not a parquet file: {e}")))?;
    // what the metadata announces, before any page is read or decompressed
    let mut announced: u64 = 0;
    for rg in reader.metadata().row_groups() {
        for col in rg.columns() {
            let size = u64::try_from(col.uncompressed_size()).map_err(|_| {
                bad(format!(
                    "column {} announces a negative uncompressed size",
                    col.column_path()
                ))
            })?;
            announced = announced.saturating_add(size);
        }
    }
    if announced > budget {
        return Err(bad(format!(
            "its metadata announces {announced} bytes uncompressed, more than the {budget} a \
             file of {file_len} bytes may hold ({PARQUET_MAX_EXPANSION} x its size + \
             {PARQUET_BASE_BYTES}, at most {PARQUET_MAX_BYTES})"
        )));
    }
    let rows = reader
        .get_row_iter(None)
        .map_err(|e| bad(format!("cannot read rows: {e}")))?;
    let mut decoded: u64 = 0;
    for (i, row) in rows.enumerate() {
        let row = row.map_err(|e| DataError::BadRecord {
            path: path.to_path_buf(),
            at: format!("row {i}"),
            reason: format!("cannot decode: {e}"),
        })?;
        let v = row_to_json(&row);
        decoded = decoded.saturating_add(decoded_bytes(&v));
        if decoded > budget {
            return Err(DataError::BadRecord {
                path: path.to_path_buf(),
                at: format!("row {i}"),
                reason: format!(
                    "the rows so far decode to {decoded} bytes, more than the {budget} a file \
                     of {file_len} bytes may hold ({PARQUET_MAX_EXPANSION} x its size + \
                     {PARQUET_BASE_BYTES})"
                ),
            });
        }
        f(format!("row {i}"), i, v)?;
    }
    Ok(())
}

fn row_to_json(row: &parquet::record::Row) -> Value {
    let mut map = serde_json::Map::new();
    for (name, f) in row.get_column_iter() {
        map.insert(name.clone(), field_to_json(f));
    }
    Value::Object(map)
}

fn field_to_json(f: &parquet::record::Field) -> Value {
    use parquet::record::Field;
    match f {
        Field::Null => Value::Null,
        Field::Bool(b) => Value::Bool(*b),
        Field::Byte(x) => (*x).into(),
        Field::Short(x) => (*x).into(),
        Field::Int(x) => (*x).into(),
        Field::Long(x) => (*x).into(),
        Field::UByte(x) => (*x).into(),
        Field::UShort(x) => (*x).into(),
        Field::UInt(x) => (*x).into(),
        Field::ULong(x) => (*x).into(),
        Field::Float(x) => {
            serde_json::Number::from_f64(f64::from(*x)).map_or(Value::Null, Value::Number)
        }
        Field::Double(x) => serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number),
        Field::Str(s) => Value::String(s.clone()),
        Field::Group(r) => row_to_json(r),
        Field::ListInternal(l) => Value::Array(l.elements().iter().map(field_to_json).collect()),
        Field::MapInternal(m) => Value::Object(
            m.entries()
                .iter()
                .map(|(k, v)| {
                    (
                        k.to_string().trim_matches('"').to_string(),
                        field_to_json(v),
                    )
                })
                .collect(),
        ),
        other => Value::String(other.to_string()),
    }
}

/// Follows a dotted path (`a.b.0.c`) into a JSON value.
pub fn get_path<'v>(v: &'v Value, path: &str) -> Option<&'v Value> {
    let mut cur = v;
    for seg in path.split('.') {
        cur = match cur {
            Value::Object(m) => m.get(seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Why a record did not become a problem.
enum RecordError {
    /// The answer field is null or empty: the record is skipped and listed.
    NoAnswer(String),
    /// Anything else: the file is rejected.
    Bad(String),
}

impl From<String> for RecordError {
    fn from(s: String) -> Self {
        RecordError::Bad(s)
    }
}

fn to_problem(v: &Value, f: &FieldMap, stem: &str, index: usize) -> Result<Problem, RecordError> {
    if !v.is_object() {
        return Err(RecordError::Bad("expected a JSON object".into()));
    }
    let required = |path: &str| -> Result<&Value, String> {
        match get_path(v, path) {
            None => Err(format!("missing field `{path}`")),
            Some(Value::Null) => Err(format!("field `{path}` is null")),
            Some(x) => Ok(x),
        }
    };
    let optional_text = |path: &Option<String>| -> Option<String> {
        let x = get_path(v, path.as_deref()?)?;
        match x {
            Value::Array(items) => Some(
                items
                    .iter()
                    .filter_map(scalar_text)
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            ),
            Value::String(s) if s == "None" => None,
            other => scalar_text(other),
        }
    };

    let pv = required(&f.prompt)?;
    let mut prompt = match pv {
        Value::String(s) => Prompt::Text(s.clone()),
        Value::Array(msgs) => {
            let mut out = Vec::with_capacity(msgs.len());
            for (i, m) in msgs.iter().enumerate() {
                let role = get_path(m, "role").and_then(Value::as_str);
                let content = get_path(m, "content").and_then(Value::as_str);
                match (role, content) {
                    (Some(r), Some(c)) => out.push(ChatMessage {
                        role: r.to_string(),
                        content: c.to_string(),
                    }),
                    _ => {
                        return Err(RecordError::Bad(format!(
                            "field `{}.{i}`: expected {{\"role\": string, \"content\": string}}",
                            f.prompt
                        )))
                    }
                }
            }
            Prompt::Chat(out)
        }
        _ => {
            return Err(RecordError::Bad(format!(
                "field `{}`: expected a string or a list of chat messages",
                f.prompt
            )))
        }
    };
    if let (Some(ctx), Prompt::Text(t)) = (optional_text(&f.context), &mut prompt) {
        if !ctx.trim().is_empty() {
            *t = format!("{ctx}\n\n{t}");
        }
    }
    let prompt_bytes = match &prompt {
        Prompt::Text(t) => t.len(),
        Prompt::Chat(msgs) => msgs.iter().map(|m| m.role.len() + m.content.len()).sum(),
    };
    if prompt_bytes > MAX_PROMPT_BYTES {
        return Err(RecordError::Bad(format!(
            "field `{}`: the prompt is {prompt_bytes} bytes, more than the {MAX_PROMPT_BYTES} \
             bytes a prompt may hold",
            f.prompt
        )));
    }

    let apath = f.answer.path();
    if matches!(get_path(v, apath), Some(Value::Null)) {
        return Err(RecordError::NoAnswer(format!("field `{apath}` is null")));
    }
    let av = required(apath)?;
    let answer = match &f.answer {
        AnswerSource::Json(_) => match av {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        },
        AnswerSource::Field(_) => match av {
            Value::Array(items) => {
                let parts: Option<Vec<String>> = items.iter().map(scalar_text).collect();
                parts
                    .ok_or_else(|| {
                        format!("field `{apath}`: expected a list of strings or numbers")
                    })?
                    .join(", ")
            }
            other => scalar_text(other)
                .ok_or_else(|| format!("field `{apath}`: expected a string or a number"))?,
        },
        AnswerSource::Typed(_, want) => want.read(av).map_err(|found| {
            format!(
                "field `{apath}`: expected {}, found {found} (the answer column's type is \
                 fixed, docs/data.md)",
                want.describe()
            )
        })?,
        AnswerSource::LastBoxedIn(_) => {
            let text = scalar_text(av).ok_or_else(|| format!("field `{apath}`: expected text"))?;
            crate::math::last_boxed(&text)
                .ok_or_else(|| format!("field `{apath}`: no \\boxed{{...}} in the text"))?
        }
        AnswerSource::LastBoxedOrSkip(_) => {
            let text = scalar_text(av).ok_or_else(|| format!("field `{apath}`: expected text"))?;
            crate::math::last_boxed(&text).ok_or_else(|| {
                RecordError::NoAnswer(format!("field `{apath}`: no \\boxed{{...}} in the text"))
            })?
        }
        AnswerSource::AfterHashes(_) => {
            let text = scalar_text(av).ok_or_else(|| format!("field `{apath}`: expected text"))?;
            let pos = text
                .rfind("####")
                .ok_or_else(|| format!("field `{apath}`: no `####` in the text"))?;
            text[pos + 4..].trim().replace(',', "")
        }
    };
    if answer.trim().is_empty() {
        return Err(RecordError::NoAnswer(format!("field `{apath}` is empty")));
    }
    let id = optional_text(&f.id).unwrap_or_else(|| format!("{stem}-{index}"));
    let data_source = optional_text(&f.data_source).unwrap_or_else(|| stem.to_string());
    Ok(Problem {
        id,
        prompt,
        answer,
        solution: optional_text(&f.solution),
        data_source,
    })
}

/// MathArena's layout: `<dir>/<competition>/answers.csv` (`id,answer`) and
/// `<dir>/<competition>/problems/<id>.tex`, for every competition folder in name order.
pub fn load_matharena(dir: &Path) -> Result<Dataset, DataError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DataError::Io { path, source }
    };
    let mut comps: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("answers.csv").is_file())
        .collect();
    comps.sort();
    let mut problems = Vec::new();
    for comp in comps {
        let csv = comp.join("answers.csv");
        let text = std::fs::read_to_string(&csv).map_err(io(&csv))?;
        let comp_name = file_stem(&comp);
        for (i, line) in text.lines().enumerate().skip(1) {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |reason: String| DataError::BadRecord {
                path: csv.clone(),
                at: format!("line {}", i + 1),
                reason,
            };
            let (id, answer) = line
                .split_once(',')
                .ok_or_else(|| bad("expected `id,answer`".into()))?;
            let tex = comp.join("problems").join(format!("{}.tex", id.trim()));
            let problem = std::fs::read_to_string(&tex).map_err(io(&tex))?;
            problems.push(Problem {
                id: format!("{comp_name}-{}", id.trim()),
                prompt: Prompt::Text(problem.trim().to_string()),
                answer: answer.trim().to_string(),
                solution: None,
                data_source: "matharena_aime25".into(),
            });
        }
    }
    Ok(Dataset {
        name: "matharena_aime25".into(),
        problems,
        skipped: Vec::new(),
        duplicates: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Writes `rows` of (problem, answer) as a parquet file with `codec`.
    fn write_parquet(path: &Path, rows: &[(&str, &str)], codec: parquet::basic::Compression) {
        use parquet::data_type::{ByteArray, ByteArrayType};
        use parquet::file::properties::WriterProperties;
        use parquet::file::writer::SerializedFileWriter;
        use parquet::schema::parser::parse_message_type;
        use std::sync::Arc;
        let schema = Arc::new(
            parse_message_type(
                "message m { required binary problem (UTF8); required binary answer (UTF8); }",
            )
            .unwrap(),
        );
        let props = Arc::new(WriterProperties::builder().set_compression(codec).build());
        let mut w = SerializedFileWriter::new(File::create(path).unwrap(), schema, props).unwrap();
        let mut group = w.next_row_group().unwrap();
        let mut column = 0;
        while let Some(mut col) = group.next_column().unwrap() {
            let values: Vec<ByteArray> = rows
                .iter()
                .map(|r| ByteArray::from(if column == 0 { r.0 } else { r.1 }))
                .collect();
            col.typed::<ByteArrayType>()
                .write_batch(&values, None, None)
                .unwrap();
            col.close().unwrap();
            column += 1;
        }
        group.close().unwrap();
        w.close().unwrap();
    }

    /// Parquet files as pandas/pyarrow (snappy), polars (zstd) and others (gzip, lz4) write
    /// them load to the same problems as an uncompressed one.
    #[test]
    fn parquet_codecs_round_trip() {
        use parquet::basic::{Compression, GzipLevel, ZstdLevel};
        let dir = tempfile::tempdir().unwrap();
        let rows = [
            ("What is $1+1$?", "2"),
            ("Compute $\\frac{1}{2}+\\frac{1}{3}$.", "\\frac{5}{6}"),
            ("An empty-ish one: 0", "0"),
        ];
        let codecs = [
            ("none", Compression::UNCOMPRESSED),
            ("snappy", Compression::SNAPPY),
            ("zstd", Compression::ZSTD(ZstdLevel::default())),
            ("gzip", Compression::GZIP(GzipLevel::default())),
            ("lz4", Compression::LZ4_RAW),
        ];
        for (name, codec) in codecs {
            let p = dir.path().join(format!("{name}.parquet"));
            write_parquet(&p, &rows, codec);
            let ds = load_file(&p, &FieldMap::problem_answer()).unwrap();
            let got: Vec<(String, String)> = ds
                .problems
                .iter()
                .map(|q| match &q.prompt {
                    Prompt::Text(t) => (t.clone(), q.answer.clone()),
                    other => panic!("{name}: {other:?}"),
                })
                .collect();
            let want: Vec<(String, String)> = rows
                .iter()
                .map(|(q, a)| (q.to_string(), a.to_string()))
                .collect();
            assert_eq!(got, want, "{name}");
            assert_eq!(ds.problems[2].id, format!("{name}-2"), "{name}");
        }
    }

    #[test]
    fn jsonl_with_configurable_fields_and_errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "a.jsonl",
            "{\"q\": \"1+1?\", \"meta\": {\"gold\": 2}}\n\n{\"q\": \"2+2?\", \"meta\": {\"gold\": \"4\"}}\n",
        );
        let fields = FieldMap {
            prompt: "q".into(),
            answer: AnswerSource::Field("meta.gold".into()),
            solution: None,
            id: None,
            data_source: None,
            context: None,
        };
        let ds = load_file(&p, &fields).unwrap();
        assert_eq!(ds.len(), 2);
        assert_eq!(ds.problems[0].answer, "2");
        assert_eq!(ds.problems[1].id, "a-1");
        assert_eq!(ds.problems[1].prompt, Prompt::Text("2+2?".into()));

        let bad = write(
            dir.path(),
            "b.jsonl",
            "{\"q\": \"x\", \"meta\": {\"gold\": 1}}\n{\"q\": \"y\"}\n",
        );
        let err = load_file(&bad, &fields).unwrap_err().to_string();
        assert!(
            err.contains("b.jsonl: line 2: missing field `meta.gold`"),
            "{err}"
        );
        let bad = write(
            dir.path(),
            "c.jsonl",
            "{\"q\": \"x\", \"meta\": {\"gold\": 1}}\n{oops\n",
        );
        let err = load_file(&bad, &fields).unwrap_err().to_string();
        assert!(err.contains("c.jsonl: line 2: invalid JSON"), "{err}");
    }

    #[test]
    fn json_array_chat_prompts_and_answer_lists() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "a.json",
            r#"[{"prompt": [{"role": "user", "content": "hi"}], "reward_model": {"ground_truth": ["1", "2"]}, "data_source": "x"}]"#,
        );
        let ds = load_file(&p, &FieldMap::verl()).unwrap();
        assert_eq!(ds.problems[0].prompt.text(), "hi");
        assert_eq!(ds.problems[0].answer, "1, 2");
        assert_eq!(ds.problems[0].data_source, "x");
        let p = write(
            dir.path(),
            "b.json",
            r#"[{"prompt": 3, "reward_model": {"ground_truth": "1"}}]"#,
        );
        let err = load_file(&p, &FieldMap::verl()).unwrap_err().to_string();
        assert!(err.contains("b.json: element 0: field `prompt`"), "{err}");
        let p = write(dir.path(), "c.txt", "");
        assert!(load_file(&p, &FieldMap::verl())
            .unwrap_err()
            .to_string()
            .contains("unknown format"));
    }

    #[test]
    fn answer_sources() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "g.jsonl",
            "{\"question\": \"q\", \"answer\": \"3 + 4 = <<3+4=7>>7\\n#### 1,007\", \"solution\": \"so \\\\boxed{\\\\frac{1}{2}} ok\"}\n",
        );
        let mut f = fm(
            "question",
            AnswerSource::AfterHashes("answer".into()),
            None,
            None,
        );
        assert_eq!(load_file(&p, &f).unwrap().problems[0].answer, "1007");
        f.answer = AnswerSource::LastBoxedIn("solution".into());
        assert_eq!(
            load_file(&p, &f).unwrap().problems[0].answer,
            "\\frac{1}{2}"
        );
        f.answer = AnswerSource::LastBoxedIn("question".into());
        let err = load_file(&p, &f).unwrap_err().to_string();
        assert!(
            err.contains("line 1: field `question`: no \\boxed"),
            "{err}"
        );
    }

    #[test]
    fn data_dir_resolution_order() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(resolve_data_dir_from(Some(d), None).unwrap(), d);
        assert_eq!(resolve_data_dir_from(None, Some(d)).unwrap(), d);
        let missing = d.join("nope");
        let err = resolve_data_dir_from(Some(&missing), Some(d))
            .unwrap_err()
            .to_string();
        assert!(err.contains("nope") && err.contains("--data-dir"), "{err}");
        let err = resolve_data_dir_from(None, Some(&missing))
            .unwrap_err()
            .to_string();
        assert!(err.contains(DATA_DIR_ENV), "{err}");
    }

    #[test]
    fn no_data_dir_without_flag_or_variable() {
        let err = resolve_data_dir_from(None, None).unwrap_err().to_string();
        assert!(
            err.contains("--data-dir") && err.contains(DATA_DIR_ENV),
            "{err}"
        );
        let err = resolve_data_dir_from(None, Some(Path::new("")))
            .unwrap_err()
            .to_string();
        assert!(err.contains(DATA_DIR_ENV), "{err}");
    }

    /// The wrapper stripped from DAPO-Math-17k's hub prompts is exactly what the `dapo`
    /// template puts around a problem.
    #[test]
    fn dapo_wrapper_is_the_dapo_template() {
        let problem = "Find $x$ if $2x = 4$.";
        assert_eq!(
            crate::PromptTemplate::Dapo.render(problem),
            format!("{DAPO_PREFIX}{problem}{DAPO_SUFFIX}")
        );
    }

    #[test]
    fn dapo_hub_rows_are_unwrapped_and_deduplicated() {
        let dir = tempfile::tempdir().unwrap();
        let wrap = |q: &str| format!("{DAPO_PREFIX}{q}{DAPO_SUFFIX}");
        let rows: Vec<Value> = [
            (wrap("What is $1+1$?"), "2"),
            (wrap("What is $2+2$?"), "4"),
            (wrap(" What  is $1+1$?\n"), "2"), // whitespace variant: a duplicate
            (wrap("What is $1+1$?"), "3"),     // same text, other answer: kept
            (wrap("What is $1+1$?"), "2"),
        ]
        .iter()
        .map(|(p, a)| {
            serde_json::json!({"prompt": [{"role": "user", "content": p}],
                               "reward_model": {"ground_truth": a}, "data_source": "math_dapo"})
        })
        .collect();
        let p = write(dir.path(), "d.json", &Value::Array(rows).to_string());
        let ds = load_hub_files("dapo_math_17k", &[p]).unwrap();
        let got: Vec<(&str, &str)> = ds
            .problems
            .iter()
            .map(|q| (q.prompt.text(), q.answer.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("What is $1+1$?", "2"),
                ("What is $2+2$?", "4"),
                ("What is $1+1$?", "3")
            ]
        );
        assert_eq!(ds.duplicates, 2);
        assert_eq!(ds.name, "dapo_math_17k");
        // a row without the wrapper names the row and the field
        let p = write(
            dir.path(),
            "e.json",
            r#"[{"prompt": [{"role": "user", "content": "bare"}], "reward_model": {"ground_truth": "1"}}]"#,
        );
        let err = load_hub_files("dapo_math_17k", &[p])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("preset dapo_math_17k (hub dataset BytedTsinghua-SIA/DAPO-Math-17k):")
                && err.contains("e.json: element 0: field `prompt.0.content`: not DAPO's"),
            "{err}"
        );
    }

    #[test]
    fn every_hub_source_is_pinned_and_has_files() {
        for p in PRESETS {
            let Some(h) = &p.hub else { continue };
            assert!(h.repo.split('/').count() == 2, "{}", p.name);
            assert!(!h.files.is_empty() && h.rows > 0, "{}", p.name);
            let sha = h.revision.len() == 40 && h.revision.chars().all(|c| c.is_ascii_hexdigit());
            // only Polaris-53K has no known commit (docs/data.md)
            assert!(
                sha || (p.name == "polaris" && h.revision == "main"),
                "{}",
                p.name
            );
        }
        assert!(load_hub_files("aime24_polaris", &[]).is_err());
    }

    #[test]
    fn missing_preset_says_what_to_put_where() {
        let dir = tempfile::tempdir().unwrap();
        let err = load_preset("polaris", dir.path()).unwrap_err().to_string();
        assert!(err.contains("polaris/polaris-data-53K.parquet"), "{err}");
        assert!(err.contains("POLARIS"), "{err}");
        let err = load_preset("nope", dir.path()).unwrap_err().to_string();
        assert!(err.contains("math500"), "{err}");
    }
}
