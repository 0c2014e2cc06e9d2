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
//! holding a list of `{role, content}` objects becomes [`Prompt::Chat`](crate::Prompt::Chat); a
//! string becomes [`Prompt::Text`](crate::Prompt::Text). An answer that is a number is written as
//! JSON writes it (`70`, `27.0`); a list of answers is joined with `", "` (several answers, e.g.
//! OlympiadBench). A preset's answer column has one type ([`AnswerSource::Typed`], [`AnswerType`]):
//! a value of another type (a number replaced by a list) rejects the file rather than being read
//! differently. A record whose answer is null or empty cannot be verified: it is skipped and listed
//! in [`Dataset::skipped`](crate::Dataset::skipped); any other bad record rejects the file.
//!
//! # Multiple choice
//! A record whose [`FieldMap::choices`] field is present and not null is a multiple-choice
//! problem ([`Problem::choices`](crate::Problem::choices), read by [`read_choices`]): a list of
//! strings (MMLU's `choices`, MMLU-Pro's and AQuA's `options`), or ARC's object
//! `{"text": [...], "label": [...]}`, whose list order gives the letters and whose label
//! standing as the gold (`"1"`) becomes that option's letter. Labels the options carry
//! themselves (AQuA's `A)21`) are removed. [`FieldMap::verl`] and [`FieldMap::problem_answer`]
//! read `choices`, then `options` ([`CHOICE_FIELDS`]); [`FieldMap::verl`] then
//! `extra_info.choices` too (where rlvr's verl export puts them); no preset is multiple choice.
//!
//! # Formats
//! By extension: `.jsonl`/`.ndjson` (one object per line, blank lines skipped), `.json` (an
//! array of objects), `.parquet` (read with parquet's record API, so nested verl columns
//! `prompt: list<struct<content, role>>`, `reward_model: struct<ground_truth, style>` map to
//! JSON-like values; uncompressed, snappy, zstd, gzip or lz4 files; brotli is not built in).

#[cfg(test)]
use std::path::{Path, PathBuf};

mod dir;
mod error;
mod layout;
mod loaders;
mod presets;
mod readers;
mod records;

pub(crate) use records::kind as json_kind;

pub use dir::{resolve_data_dir, DATA_DIR_ENV};
pub use error::{DataError, HubMiss};
pub use layout::{check_layout, fields_for, file_fields};
pub use loaders::{
    dedup_key, load_hub_files, load_matharena, load_preset, load_preset_file,
    MAX_LIVECODEBENCH_LINE_BYTES,
};
pub use presets::{
    hub_source, preset, HubLayout, HubSource, Preset, DAPO_PREFIX, DAPO_SUFFIX, PRESETS,
};
pub use readers::{
    check_json_values, first_record, for_each_record, max_json_values, open_regular_file,
    read_line_bounded, read_records, read_regular_file, BoundedLine, FileFormat, JSON_BASE_VALUES,
    JSON_BYTES_PER_VALUE, JSON_OBJECT_WEIGHT, MAX_JSON_FILE_BYTES, MAX_LINE_BYTES,
    PARQUET_BASE_BYTES, PARQUET_MAX_BYTES, PARQUET_MAX_EXPANSION,
};
pub use records::{
    get_path, load_file, read_choices, AnswerSource, AnswerType, Choices, FieldMap, CHOICE_FIELDS,
    MAX_PROMPT_BYTES,
};

/// Writes `text` to `dir/name` (the submodules' tests).
#[cfg(test)]
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}
