//! `rlvr diagnose ROLLOUTS`: which aggregation bias a batch of rollouts is exposed to.
//!
//! Reads, with the layout recognized per record from its fields:
//!
//! | layout | fields used | group | length (tokens) |
//! |---|---|---|---|
//! | rlvr's own | `group`, `reward`, `length`, optional `advantage` | equal `group` values | `length` |
//! | verl `trainer.rollout_data_dir` (`<step>.jsonl`; and rlvr's `trainer.rollout_data_dir`) | `input`, `output`, `score`, `step`, optional `uid`, `advantage`, `length`/`response_length` | equal `uid`; without one (verl 0.9 writes none), equal `step` and `input` anywhere in the file: verl's `trainer.balance_batch` (on by default) reorders the batch by length before dumping, so one prompt's responses are not consecutive (a prompt drawn twice in one step makes one group) | `length` (rlvr's dumps write it; `response_length` read as a synonym), else `output` re-tokenized with `--tokenizer` (verl writes no count) |
//! | TRL `log_completions` (TRL 1.16 writes `<output_dir>/completions/completions_<step:05>.parquet`; also the wandb `completions` table exported as JSON, or its rows as JSONL/JSON) | `prompt`, `completion`, `advantage`, `step`, `reward` (else the sum of the per-function reward columns, i.e. all weights 1) | a run of consecutive rows with the same `step` and `prompt` (TRL lays each prompt's `num_generations` completions out consecutively) | `completion` re-tokenized with `--tokenizer` (TRL writes no count; a `length` column, if one was added, is read as in verl's row) |
//!
//! Files: `.jsonl` (one object per line; blank lines skipped), `.json` (an array of objects,
//! or a wandb table `{"columns": [...], "data": [[...]]}`), `.parquet`, or a directory of such
//! files (verl's `<step>.jsonl`, read in step order). Only regular files are read (a FIFO or a
//! device is refused without blocking on it); a `.json` file may hold at most
//! `rlvr_tasks::data::MAX_JSON_FILE_BYTES`, a `.jsonl` line `rlvr_tasks::data::MAX_LINE_BYTES`,
//! and either as many JSON values as its size allows (`rlvr_tasks::data::check_json_values`).
//!
//! Token counts: a record's count field is used exactly and never re-counted; it must be a
//! non-negative integer of at most [`MAX_TOKEN_COUNT`] (null, a float, a string, a bool, or
//! `length` and `response_length` disagreeing is an error naming the key). Only a record without
//! one is re-tokenized, and the report says so (table and `lengths` in the JSON): how many
//! lengths were re-counted, by which tokenizer, that they may differ from the run's, and how
//! many exceed `--max-len` when it is given (counted, not clipped). Re-tokenized lengths count
//! the text's tokens: verl and TRL decode without special tokens, so the end-of-sequence token
//! a finished response was trained on is not counted (every length of a finished response is
//! one short), and re-encoding decoded text need not give the sampled tokens back.
//! A line without `advantage` gets the estimator's (`--adv`). A malformed record is an error
//! naming the file and line or row (exit code 2).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::Result;
use rlvr_core::diagnostics::{batch_diagnostics, verdict, BatchDiagnostics};
use rlvr_core::{advantage, aggregation, AdvEstimator, AdvantageConfig, AggRule, Sequence};
use serde_json::{json, Map, Value};

use crate::output::{out, outln};
use crate::BadInput;

/// Arguments of `rlvr diagnose`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Rollouts: a file (.jsonl, .json, .parquet) or a directory of them, in rlvr's, verl's or
    /// TRL's layout (see `rlvr diagnose --help` and the module docs).
    pub rollouts: PathBuf,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Advantage estimator for lines without "advantage" (group std is unbiased, ε = 1e-6).
    #[arg(long, default_value = "grpo", value_parser = parse_estimator)]
    pub adv: AdvEstimator,
    /// L of seq-mean-token-sum-norm (default: the largest length in the file).
    #[arg(long)]
    pub max_len: Option<usize>,
    /// Tokenizer (model directory or hub id) that counts response tokens of dumps holding only
    /// text (verl, TRL); the output names it and says the lengths were re-counted. Records
    /// with a `length` field keep theirs.
    #[arg(long)]
    pub tokenizer: Option<String>,
}

fn parse_estimator(s: &str) -> Result<AdvEstimator, String> {
    s.parse().map_err(|e: rlvr_core::CoreError| e.to_string())
}

/// One parsed line.
struct Rollout {
    group: Value,
    reward: f64,
    length: usize,
    from: LengthFrom,
    advantage: Option<f64>,
}

/// Where a response's token count came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LengthFrom {
    /// The record's own count field (`length` or `response_length`), used exactly.
    Field(&'static str),
    /// The response's text encoded by `--tokenizer` (verl's and TRL's dumps log text only).
    Text,
}

/// `--tokenizer`: its name as given, the directory it resolved to, the tokenizer.
struct Tokenizer {
    name: String,
    dir: PathBuf,
    tokenizer: rlvr_model::ChatTokenizer,
}

/// What the report says about its lengths: how many were read from a count field and how many
/// re-counted from text (by which tokenizer), and how many exceed `--max-len`.
#[derive(Debug, Default)]
struct LengthNote {
    /// Responses whose count was read from the record.
    counted: usize,
    /// The fields those counts came from.
    fields: Vec<&'static str>,
    /// Responses whose text was re-tokenized.
    recounted: usize,
    /// `--tokenizer` as given and the directory it resolved to (when any length was re-counted).
    tokenizer: Option<(String, PathBuf)>,
    /// `--max-len`, when given.
    max_len: Option<usize>,
    /// Lengths above `--max-len`, of them re-counted, and the longest of all.
    over: usize,
    over_recounted: usize,
    longest: usize,
}

impl LengthNote {
    fn new(rollouts: &[Rollout], tokenizer: Option<&Tokenizer>, max_len: Option<usize>) -> Self {
        let mut note = LengthNote {
            max_len,
            ..Self::default()
        };
        for r in rollouts {
            match r.from {
                LengthFrom::Field(key) => {
                    note.counted += 1;
                    if !note.fields.contains(&key) {
                        note.fields.push(key);
                    }
                }
                LengthFrom::Text => note.recounted += 1,
            }
            note.longest = note.longest.max(r.length);
            if max_len.is_some_and(|l| r.length > l) {
                note.over += 1;
                note.over_recounted += usize::from(r.from == LengthFrom::Text);
            }
        }
        if note.recounted > 0 {
            note.tokenizer = tokenizer.map(|t| (t.name.clone(), t.dir.clone()));
        }
        note
    }

    /// The sentences the table prints and the JSON holds under `lengths.note`.
    fn lines(&self) -> Vec<String> {
        let total = self.counted + self.recounted;
        let fields = self
            .fields
            .iter()
            .map(|f| format!("\"{f}\""))
            .collect::<Vec<_>>()
            .join("/");
        let mut out = Vec::new();
        if self.recounted == 0 {
            out.push(format!(
                "token counts: all {total} read from the records' {fields} field and used as \
                 they are (nothing re-tokenized)."
            ));
        } else {
            let (name, dir) = self
                .tokenizer
                .clone()
                .unwrap_or_else(|| ("?".into(), PathBuf::new()));
            let resolved = if Path::new(&name) == dir {
                String::new()
            } else {
                format!(" ({})", dir.display())
            };
            let mut line = format!(
                "token counts: {} of {total} re-counted from the response text by tokenizer \
                 {name}{resolved} (the records hold text, no token count)",
                self.recounted
            );
            if self.counted > 0 {
                line += &format!("; {} read from the records' {fields} field", self.counted);
            }
            out.push(line + ".");
            out.push(
                "  re-counted lengths may differ from the ones the run trained on: the text was \
                 decoded without special tokens (a finished response's end-of-sequence token is \
                 not counted), another tokenizer or chat template counts differently, re-encoding \
                 decoded text can merge or split tokens differently from how they were sampled, \
                 and a response cut at the run's length cap can re-count to more tokens than the \
                 cap."
                    .into(),
            );
        }
        match self.max_len {
            Some(l) if self.over > 0 => out.push(format!(
                "  {} of {total} lengths exceed --max-len {l} (longest {}; {} of them re-counted \
                 from text): counted as they are, not clipped to {l}.",
                self.over, self.longest, self.over_recounted
            )),
            Some(l) => out.push(format!(
                "  every length is within --max-len {l} (longest {}).",
                self.longest
            )),
            None if self.recounted > 0 => out.push(
                "  no length cap given: --max-len L (the run's maximum response length) checks \
                 the re-counted lengths against it."
                    .into(),
            ),
            None => {}
        }
        out
    }

    fn to_json(&self) -> Value {
        json!({
            "from_field": self.counted,
            "fields": self.fields,
            "re_counted": self.recounted,
            "tokenizer": self.tokenizer.as_ref().map(|(name, _)| name),
            "tokenizer_dir": self.tokenizer.as_ref().map(|(_, dir)| dir.display().to_string()),
            "max_len_given": self.max_len,
            "over_max_len": self.over,
            "over_max_len_re_counted": self.over_recounted,
            "longest": self.longest,
            "note": self.lines().iter().map(|l| l.trim()).collect::<Vec<_>>().join(" "),
        })
    }
}

pub fn run(args: Args) -> Result<()> {
    let tokenizer = match &args.tokenizer {
        Some(m) => {
            let dir =
                rlvr_hub::resolve_model_dir(m).map_err(|e| crate::score::model_error(e.into()))?;
            let tokenizer =
                rlvr_model::ChatTokenizer::from_dir(&dir).map_err(crate::score::model_error)?;
            Some(Tokenizer {
                name: m.clone(),
                dir,
                tokenizer,
            })
        }
        None => None,
    };
    let rollouts = read_rollouts(&args.rollouts, tokenizer.as_ref())?;
    let report = Report::new(&rollouts, args.adv, args.max_len)
        .map_err(|e| BadInput(format!("{}: {e}", args.rollouts.display())))?;
    let note = LengthNote::new(&rollouts, tokenizer.as_ref(), args.max_len);
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&report.to_json(&rollouts, &note))?
        )?;
    } else {
        out!("{}", report.table(&args.rollouts, args.adv, &note))?;
    }
    Ok(())
}

/// The records of one file with their location (`:N` for a line, ` row N` otherwise).
fn records(path: &Path) -> Result<Vec<(String, Value)>> {
    let bad = |reason: String| BadInput(format!("{}: {reason}", path.display()));
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext == "parquet" {
        let recs = rlvr_tasks::data::read_records(path).map_err(|e| BadInput(e.to_string()))?;
        return Ok(recs
            .into_iter()
            .map(|(at, _, v)| (format!(" {at}"), v))
            .collect());
    }
    if ext == "json" {
        let bytes =
            rlvr_tasks::data::read_regular_file(path, rlvr_tasks::data::MAX_JSON_FILE_BYTES)
                .map_err(|e| BadInput(e.to_string()))?;
        let text = String::from_utf8(bytes).map_err(|e| bad(format!("not UTF-8: {e}")))?;
        rlvr_tasks::data::check_json_values(text.as_bytes()).map_err(bad)?;
        let v: Value =
            serde_json::from_str(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
        let rows: Vec<Value> = match v {
            Value::Array(a) => a,
            // a wandb table: {"columns": [...], "data": [[...], ...]}
            Value::Object(o) if o.contains_key("columns") && o.contains_key("data") => {
                let cols: Vec<String> = o["columns"]
                    .as_array()
                    .ok_or_else(|| bad("\"columns\" is not an array".into()))?
                    .iter()
                    .map(|c| c.as_str().unwrap_or_default().to_string())
                    .collect();
                o["data"]
                    .as_array()
                    .ok_or_else(|| bad("\"data\" is not an array".into()))?
                    .iter()
                    .map(|row| {
                        let cells = row.as_array().cloned().unwrap_or_default();
                        Value::Object(cols.iter().cloned().zip(cells).collect::<Map<_, _>>())
                    })
                    .collect()
            }
            _ => {
                return Err(bad(
                    "expected an array of records or a wandb table {\"columns\", \"data\"}".into(),
                )
                .into())
            }
        };
        return Ok(rows
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!(" element {i}"), v))
            .collect());
    }
    use rlvr_tasks::data::{read_line_bounded, BoundedLine, MAX_LINE_BYTES};
    let file = rlvr_tasks::data::open_regular_file(path).map_err(|e| BadInput(e.to_string()))?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    for i in 1.. {
        let at = |reason: String| BadInput(format!("{}:{i}: {reason}", path.display()));
        match read_line_bounded(&mut reader, &mut buf, MAX_LINE_BYTES)
            .map_err(|e| bad(format!("cannot read: {e}")))?
        {
            BoundedLine::End => break,
            BoundedLine::Line => {}
            BoundedLine::TooLong => {
                return Err(at(format!("the line is longer than {MAX_LINE_BYTES} bytes")).into())
            }
        }
        let line = std::str::from_utf8(&buf).map_err(|e| at(format!("not UTF-8: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        rlvr_tasks::data::check_json_values(line.as_bytes()).map_err(at)?;
        let v: Value =
            serde_json::from_str(line).map_err(|e| at(format!("not valid JSON: {e}")))?;
        out.push((format!(":{i}"), v));
    }
    Ok(out)
}

/// The files of `path`: itself, or a directory's .jsonl/.json/.parquet files in step order
/// (numeric file stems first, by number).
fn files(path: &Path) -> Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| BadInput(format!("{}: {e}", path.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "jsonl" | "json" | "parquet"))
        })
        .collect();
    let key = |p: &PathBuf| {
        let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        (stem.parse::<u64>().unwrap_or(u64::MAX), stem.to_string())
    };
    files.sort_by_key(key);
    if files.is_empty() {
        return Err(BadInput(format!(
            "{}: no .jsonl, .json or .parquet files in the directory",
            path.display()
        ))
        .into());
    }
    Ok(files)
}

fn read_rollouts(path: &Path, tokenizer: Option<&Tokenizer>) -> Result<Vec<Rollout>> {
    let mut out = Vec::new();
    let mut runs = RunGrouper::default();
    for file in files(path)? {
        for (at, v) in records(&file)? {
            let bad = |reason: String| BadInput(format!("{}{at}: {reason}", file.display()));
            out.push(parse_record(&v, tokenizer, &mut runs).map_err(bad)?);
        }
    }
    if out.is_empty() {
        return Err(BadInput(format!(
            "{}: no rollouts (the file has no non-blank line)",
            path.display()
        ))
        .into());
    }
    Ok(out)
}

/// Groups of verl/TRL records, labelled `<step>/<n>` (the step's n-th group, from 0, in order
/// of first appearance).
#[derive(Default)]
struct RunGrouper {
    last: Option<(String, String)>,
    label: String,
    per_step: HashMap<String, usize>,
    keyed: HashMap<(String, String), String>,
}

impl RunGrouper {
    fn next_label(&mut self, step: &str) -> String {
        let n = self.per_step.entry(step.to_string()).or_insert(0);
        *n += 1;
        format!("{step}/{}", *n - 1)
    }

    /// TRL: a new group starts when (step, prompt) changes from the previous record.
    fn run(&mut self, step: String, prompt: String) -> Value {
        let key = (step.clone(), prompt);
        if self.last.as_ref() != Some(&key) {
            self.label = self.next_label(&step);
            self.last = Some(key);
        }
        Value::String(self.label.clone())
    }

    /// verl: one group per (step, prompt), wherever its records are.
    fn keyed(&mut self, step: String, prompt: String) -> Value {
        let key = (step.clone(), prompt);
        if let Some(label) = self.keyed.get(&key) {
            return Value::String(label.clone());
        }
        let label = self.next_label(&step);
        self.keyed.insert(key, label.clone());
        Value::String(label)
    }
}

fn number(obj: &Map<String, Value>, key: &str) -> Result<Option<f64>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            let x = n.as_f64().ok_or(format!("\"{key}\" is not a number"))?;
            if x.is_finite() {
                Ok(Some(x))
            } else {
                Err(format!("\"{key}\" is not finite"))
            }
        }
        Some(Value::Bool(b)) => Ok(Some(f64::from(u8::from(*b)))),
        Some(other) => Err(format!("\"{key}\" must be a number, got {other}")),
    }
}

/// The most tokens a count may claim: more than any model's context holds, so a larger value
/// is a corrupt or mislabelled field, not a length.
pub const MAX_TOKEN_COUNT: u64 = 1 << 24;

/// The fields a token count is read from, in order: rlvr's own layouts and dumps write `length`;
/// `response_length` is read as its synonym (neither verl nor TRL writes a token count).
const LENGTH_FIELDS: [&str; 2] = ["length", "response_length"];

/// A token count field: absent is `None`; present, it must be a non-negative integer of at most
/// [`MAX_TOKEN_COUNT`] (null, a float such as `3.0`, a string or a bool is an error naming the
/// key, never a silent re-count).
fn length_field(obj: &Map<String, Value>, key: &str) -> Result<Option<usize>, String> {
    let bad = |got: String| {
        Err(format!(
            "\"{key}\" must be a token count (a non-negative integer), got {got}"
        ))
    };
    match obj.get(key) {
        None => Ok(None),
        Some(Value::Null) => bad(
            "null (a missing or NaN count; a parquet NaN reads as null): drop the key to \
             re-count the response's text with --tokenizer"
                .into(),
        ),
        Some(Value::Number(n)) => {
            let too_large = || {
                Err(format!(
                    "\"{key}\" is {n} tokens, more than any response holds (at most \
                     {MAX_TOKEN_COUNT}): not a token count"
                ))
            };
            match (n.as_u64(), n.as_f64()) {
                (Some(x), _) if x > MAX_TOKEN_COUNT => too_large(),
                (Some(x), _) => Ok(Some(x as usize)),
                (None, _) if n.is_i64() => bad(format!("{n} (negative)")),
                (None, Some(x)) if x < 0.0 => bad(format!("{n} (negative)")),
                (None, Some(x)) if x.fract() != 0.0 => bad(format!("{n} (not an integer)")),
                (None, Some(x)) if x > MAX_TOKEN_COUNT as f64 => too_large(),
                (None, _) => bad(format!("{n} (a float; token counts are integers)")),
            }
        }
        Some(other @ Value::String(_)) => bad(format!("the string {other}")),
        Some(other @ Value::Bool(_)) => bad(format!("the bool {other}")),
        Some(other) => bad(other.to_string()),
    }
}

/// The token count a record carries, from the first of [`LENGTH_FIELDS`] it has; two that
/// disagree are an error.
fn counted_length(obj: &Map<String, Value>) -> Result<Option<(usize, &'static str)>, String> {
    let mut found: Option<(usize, &'static str)> = None;
    for key in LENGTH_FIELDS {
        if let Some(n) = length_field(obj, key)? {
            match found {
                Some((m, first)) if m != n => {
                    return Err(format!(
                        "\"{first}\" ({m}) and \"{key}\" ({n}) disagree: which token count \
                         is the response's?"
                    ))
                }
                Some(_) => {}
                None => found = Some((n, key)),
            }
        }
    }
    Ok(found)
}

/// A text field: a string, or chat messages whose contents are joined.
fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(msgs)) => msgs
            .iter()
            .map(|m| match m.get("content") {
                Some(Value::String(c)) => c.clone(),
                _ => m.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

fn step_of(obj: &Map<String, Value>) -> String {
    match obj.get("step") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "0".into(),
    }
}

/// A response's token count and where it came from: the record's count field when it has one
/// (used exactly, never re-counted), else its text encoded by `tokenizer`.
fn token_length(
    obj: &Map<String, Value>,
    field: &str,
    tokenizer: Option<&Tokenizer>,
    layout: &str,
) -> Result<(usize, LengthFrom), String> {
    if let Some((n, key)) = counted_length(obj)? {
        return Ok((n, LengthFrom::Field(key)));
    }
    let tok = tokenizer.ok_or(format!(
        "{layout} records hold the response as text, without a token count: pass --tokenizer \
         MODEL (the policy's model directory or hub id) to count its tokens"
    ))?;
    tok.tokenizer
        .encode(&text(obj.get(field)), false)
        .map(|ids| (ids.len(), LengthFrom::Text))
        .map_err(|e| e.to_string())
}

/// The prompt's uid in a key of verl's v1 trainer, which dumps one key per response,
/// `{uid}_{session}_{index}` (`verl/trainer/ppo/v1/agent_loop_tq.py`) with `uid` a UUID4:
/// `Some(uid)` for such a key, `None` for anything else (verl's legacy dump writes the prompt's
/// uid itself).
fn verl_v1_group(key: &str) -> Option<&str> {
    let mut parts = key.rsplitn(3, '_');
    let (index, session, uid) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let uuid = uid.len() == 36
        && uid.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        });
    (digits(index) && digits(session) && uuid).then_some(uid)
}

fn parse_record(
    v: &Value,
    tokenizer: Option<&Tokenizer>,
    runs: &mut RunGrouper,
) -> Result<Rollout, String> {
    let obj = v.as_object().ok_or("expected a JSON object")?;
    let has = |k: &str| obj.contains_key(k);
    if has("input") && has("output") && !has("group") {
        // verl's rollout dump (and rlvr's trainer.rollout_data_dir)
        let reward = number(obj, "score")?.ok_or("missing field \"score\" (verl dump)")?;
        let group = match obj.get("uid") {
            Some(Value::String(u)) => Value::String(verl_v1_group(u).unwrap_or(u).to_string()),
            Some(Value::Number(n)) => Value::String(n.to_string()),
            _ => runs.keyed(step_of(obj), text(obj.get("input"))),
        };
        let (length, from) = token_length(obj, "output", tokenizer, "verl")?;
        return Ok(Rollout {
            group,
            reward,
            length,
            from,
            advantage: number(obj, "advantage")?,
        });
    }
    if has("prompt") && has("completion") && !has("group") {
        // TRL's logged completions
        let reward = match number(obj, "reward")? {
            Some(r) => r,
            None => {
                let skip = ["step", "advantage", "length", "response_length"];
                let mut sum = 0.0;
                let mut any = false;
                for (k, val) in obj {
                    if skip.contains(&k.as_str()) || !val.is_number() {
                        continue;
                    }
                    sum += number(obj, k)?.unwrap_or(0.0);
                    any = true;
                }
                if !any {
                    return Err("no reward column (\"reward\" or a reward function's)".into());
                }
                sum
            }
        };
        let (length, from) = token_length(obj, "completion", tokenizer, "TRL")?;
        return Ok(Rollout {
            group: runs.run(step_of(obj), text(obj.get("prompt"))),
            reward,
            length,
            from,
            advantage: number(obj, "advantage")?,
        });
    }
    let group = match obj.get("group") {
        Some(g @ Value::String(_)) => g.clone(),
        Some(g @ Value::Number(n)) if n.is_i64() || n.is_u64() => g.clone(),
        Some(other) => {
            return Err(format!(
                "\"group\" must be a string or an integer, got {other}"
            ))
        }
        None => {
            return Err(
                "missing field \"group\" (expected rlvr's layout with group, reward, \
                        length; verl's with input, output, score; or TRL's with prompt, \
                        completion, advantage)"
                    .into(),
            )
        }
    };
    let reward = number(obj, "reward")?.ok_or("missing field \"reward\"")?;
    let length = length_field(obj, "length")?.ok_or("missing field \"length\"")?;
    Ok(Rollout {
        group,
        reward,
        length,
        from: LengthFrom::Field("length"),
        advantage: number(obj, "advantage")?,
    })
}

/// Advantages, weights of every rule and the diagnostics of the file.
struct Report {
    seqs: Vec<Sequence>,
    weights: Vec<(AggRule, Vec<f64>)>,
    diagnostics: BatchDiagnostics,
    max_len: usize,
}

impl Report {
    fn new(
        rollouts: &[Rollout],
        estimator: AdvEstimator,
        max_len: Option<usize>,
    ) -> Result<Self, rlvr_core::CoreError> {
        let mut ids: HashMap<String, usize> = HashMap::new();
        let groups: Vec<usize> = rollouts
            .iter()
            .map(|r| {
                let next = ids.len();
                *ids.entry(r.group.to_string()).or_insert(next)
            })
            .collect();
        let rewards: Vec<f64> = rollouts.iter().map(|r| r.reward).collect();
        let cfg = AdvantageConfig {
            estimator,
            ..AdvantageConfig::default()
        };
        let estimated = advantage::compute(&cfg, &groups, &rewards)?;
        let seqs: Vec<Sequence> = rollouts
            .iter()
            .zip(&groups)
            .zip(&estimated)
            .map(|((r, &g), &a)| Sequence::new(g, r.advantage.unwrap_or(a), r.length))
            .collect();
        let max_len = max_len
            .unwrap_or_else(|| seqs.iter().map(|s| s.tokens).max().unwrap_or(0))
            .max(1);
        Ok(Self {
            weights: aggregation::all_weights(&seqs, max_len)?,
            diagnostics: batch_diagnostics(&seqs, max_len)?,
            seqs,
            max_len,
        })
    }

    fn to_json(&self, rollouts: &[Rollout], note: &LengthNote) -> Value {
        let sequences: Vec<Value> = self
            .seqs
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let weights: BTreeMap<&str, f64> = self
                    .weights
                    .iter()
                    .map(|(r, w)| (r.as_str(), w[i]))
                    .collect();
                json!({"group": rollouts[i].group, "reward": rollouts[i].reward, "length": s.tokens,
                       "advantage": s.advantage, "weights": weights})
            })
            .collect();
        let rules: BTreeMap<&str, Value> = self
            .diagnostics
            .rules
            .iter()
            .map(|(r, s)| (r.as_str(), json!(s)))
            .collect();
        let d = &self.diagnostics;
        let groups: Vec<Value> = d
            .groups
            .iter()
            .map(|g| {
                let mut v = json!(g);
                v["group"] = rollouts[self
                    .seqs
                    .iter()
                    .position(|s| s.group == g.group)
                    .unwrap_or(0)]
                .group
                .clone();
                v["rules"] = json!(g
                    .rules
                    .iter()
                    .map(|(r, s)| (r.as_str(), json!(s)))
                    .collect::<BTreeMap<_, _>>());
                v
            })
            .collect();
        json!({
            "sequences": sequences,
            "rules": rules,
            "batch": {
                "sequences": d.sequences, "groups": d.groups.len(), "tokens": d.tokens, "max_len": self.max_len,
                "length": d.length, "mixed_groups": d.mixed_groups, "pos_neg_gap": d.pos_neg_gap,
                "pos_neg_ratio": d.pos_neg_ratio, "mean_prefactor": d.mean_prefactor,
            },
            "groups": groups,
            "lengths": note.to_json(),
            "verdict": verdict(d),
        })
    }

    fn table(&self, path: &Path, estimator: AdvEstimator, note: &LengthNote) -> String {
        let d = &self.diagnostics;
        let opt = |x: Option<f64>, digits: usize| {
            x.map_or_else(|| "n/a".to_string(), |v| format!("{v:.digits$}"))
        };
        let mut out = format!(
            "{}: {} responses in {} groups, {} loss tokens; advantages: {} (lines with \"advantage\" keep theirs)\n\n",
            path.display(),
            d.sequences,
            d.groups.len(),
            d.tokens,
            estimator.as_str()
        );
        for line in note.lines() {
            out += &line;
            out.push('\n');
        }
        out += &format!(
            "length           mean {:.1}  min {}  max {}  CV {:.3}\n",
            d.length.mean, d.length.min, d.length.max, d.length.cv
        );
        out += &format!(
            "pos-neg gap      L+ - L- = {} tokens, L+/L- = {} (mean over {} groups with both signs; pooled L+ {}, L- {})\n",
            opt(d.pos_neg_gap, 1),
            opt(d.pos_neg_ratio, 3),
            d.mixed_groups,
            opt(d.length.mean_positive, 1),
            opt(d.length.mean_negative, 1)
        );
        out += &format!(
            "prefactor        sqrt(k(G-k))/G = {:.4} (mean over groups)\n\n",
            d.mean_prefactor
        );
        out += &format!(
            "{:<26}{:>16}{:>24}\n",
            "rule", "positive share", "longest-quartile share"
        );
        for (rule, s) in &d.rules {
            out += &format!(
                "{:<26}{:>16}{:>24}\n",
                rule.as_str(),
                opt(s.positive_share, 4),
                opt(s.longest_quartile_share, 4)
            );
        }
        out += &format!("\nverdict: {}\n", verdict(d));
        out
    }
}
