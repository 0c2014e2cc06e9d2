//! Records to problems: which fields hold what ([`FieldMap`], [`AnswerSource`],
//! [`AnswerType`]), dotted field paths ([`get_path`]), and [`load_file`], which reads a file's
//! records (see [`super::readers`]) into a dataset.

use std::path::Path;

use serde_json::Value;

use super::readers::for_each_record;
use super::DataError;
use crate::{ChatMessage, Dataset, Problem, Prompt};

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
    /// The paths that may hold a multiple-choice problem's options, tried in order; the first
    /// one present and not null is read ([`read_choices`]: a list of strings, MMLU's and
    /// MMLU-Pro's; or ARC's `{"text": [...], "label": [...]}`). A record with none of them is
    /// not multiple choice. Empty: options are never read.
    pub choices: Vec<String>,
}

/// The option fields [`FieldMap::verl`] and [`FieldMap::problem_answer`] read: `choices`
/// (MMLU, ARC), then `options` (MMLU-Pro, AQuA).
pub const CHOICE_FIELDS: [&str; 2] = ["choices", "options"];

impl FieldMap {
    /// verl's layout: `prompt` (chat), `reward_model.ground_truth`, `data_source`,
    /// `extra_info.index` as the id; options from `choices`, `options`, then
    /// `extra_info.choices` (where `rlvr export data` writes them, [`crate::verl_format`]).
    pub fn verl() -> Self {
        let mut choices = CHOICE_FIELDS.map(String::from).to_vec();
        choices.push("extra_info.choices".into());
        FieldMap {
            prompt: "prompt".into(),
            answer: AnswerSource::Field("reward_model.ground_truth".into()),
            solution: None,
            id: Some("extra_info.index".into()),
            data_source: Some("data_source".into()),
            context: None,
            choices,
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
            choices: CHOICE_FIELDS.map(String::from).to_vec(),
        }
    }
}

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

/// The longest prompt a record may hold (4 MiB of text: 32 bytes per token of a 131,072-token
/// context, beyond any model rlvr loads). A record with a longer prompt is an error naming the
/// file and line (row, element), so that no prompt reaches a tokenizer or a chat template at
/// a size that exhausts memory; trainers drop shorter but still over-long prompts by their own
/// token limit.
pub const MAX_PROMPT_BYTES: usize = 4 << 20;

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
pub(super) enum RecordError {
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

pub(super) fn to_problem(
    v: &Value,
    f: &FieldMap,
    stem: &str,
    index: usize,
) -> Result<Problem, RecordError> {
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
    let (choices, answer) = match f
        .choices
        .iter()
        .find_map(|p| get_path(v, p).filter(|x| !x.is_null()).map(|x| (p, x)))
    {
        None => (None, answer),
        Some((path, value)) => {
            let options = read_choices(path, value)?;
            let answer = options.gold(answer);
            (Some(options.texts), answer)
        }
    };
    Ok(Problem {
        id,
        prompt,
        answer,
        solution: optional_text(&f.solution),
        data_source,
        choices,
    })
}

/// The letter of option `i` (`A` for 0; `i` below [`MAX_CHOICES`](crate::math::MAX_CHOICES)).
fn letter(i: usize) -> char {
    char::from(b'A' + i as u8)
}

/// A record's options, read by [`read_choices`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choices {
    /// The option texts in letter order, labels such as AQuA's `A)` removed
    /// ([`strip_labels`](crate::math::strip_labels)).
    pub texts: Vec<String>,
    /// ARC's labels, in the same order (empty for a plain list).
    pub labels: Vec<String>,
}

impl Choices {
    /// The gold answer as the checker takes it: a gold written as one of ARC's labels (`"1"`
    /// of labels 1 to 4) becomes that option's letter; any other gold is kept.
    pub fn gold(&self, answer: String) -> String {
        self.labels
            .iter()
            .position(|l| l.trim() == answer.trim())
            .map_or(answer, |i| letter(i).to_string())
    }
}

/// Reads the options of field `path`: a list of strings (a number is read as JSON writes
/// it), or an object `{"text": [...], "label": [...]}` (ARC: two lists of the same length;
/// the order of the lists gives the letters, whatever the labels are). Options that each
/// start with their own letter's label (`A)21`, `B)21.5`) are stored without it. A value of
/// another shape, an element that is not a string, an empty list and more than
/// [`MAX_CHOICES`](crate::math::MAX_CHOICES) options (the letters A to Z) are errors naming
/// the field.
pub fn read_choices(path: &str, value: &Value) -> Result<Choices, String> {
    let strings = |key: &str, v: &Value| -> Result<Vec<String>, String> {
        let Value::Array(items) = v else {
            return Err(format!(
                "field `{key}`: expected a list of strings, found {}",
                kind(v)
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, x)| match x {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                other => Err(format!(
                    "field `{key}.{i}`: expected a string, found {}",
                    kind(other)
                )),
            })
            .collect()
    };
    let (texts, labels) = match value {
        Value::Array(_) => (strings(path, value)?, Vec::new()),
        Value::Object(m) => {
            let part = |name: &str| -> Result<Vec<String>, String> {
                let key = format!("{path}.{name}");
                let v = m.get(name).ok_or_else(|| {
                    format!(
                        "field `{key}`: missing (an object of options holds the lists `text` and `label`, as ARC's `choices`)"
                    )
                })?;
                strings(&key, v)
            };
            let (texts, labels) = (part("text")?, part("label")?);
            if texts.len() != labels.len() {
                return Err(format!(
                    "field `{path}`: {} texts and {} labels (one label per option)",
                    texts.len(),
                    labels.len()
                ));
            }
            (texts, labels)
        }
        other => {
            return Err(format!(
                "field `{path}`: expected a list of strings or an object {{\"text\": [...], \
                 \"label\": [...]}}, found {}",
                kind(other)
            ))
        }
    };
    if texts.is_empty() {
        return Err(format!(
            "field `{path}`: an empty list of options (leave the field out, or null, for a problem that is \
             not multiple choice)"
        ));
    }
    let max = crate::math::MAX_CHOICES;
    if texts.len() > max {
        return Err(format!(
            "field `{path}`: {} options, more than the {max} that the letters A to Z name",
            texts.len()
        ));
    }
    Ok(Choices {
        texts: crate::math::strip_labels(&texts),
        labels,
    })
}

/// What a JSON value is, as errors name it ("a number", "a list", ...).
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

pub(super) fn file_stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("data")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::presets::fm;
    use crate::data::write;

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
            choices: Vec::new(),
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
}
