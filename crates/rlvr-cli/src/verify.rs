//! `rlvr verify`: the math verifier from the command line.
//!
//! - `rlvr verify --gold G --response TEXT` prints the verdict, the extracted answer and the
//!   reason (`--response -` reads the response from stdin). Exit code 0 whatever the verdict.
//!   With `--explain` it also prints the gold and answer trees (prefix form) and the rule
//!   that decided (see `rlvr_tasks::math::compare`).
//! - `rlvr verify --jsonl FILE` reads lines `{"gold": ..., "response": ...}` (`-` for stdin)
//!   and writes every line back, in order, with `"correct": true|false` appended (and
//!   `"extracted"`, `"reason"` with `--details`); blank lines are written back unchanged.
//!   Each line is written as soon as it is checked, so a bad line (exit code 2, with its line
//!   number) loses nothing before it. Field names are configurable. `--explain` adds
//!   `"gold_tree"`, `"answer_tree"`, `"extracted_by"` (the extraction rule that found the
//!   answer, e.g. `markdown answer block`) and `"reason"` to each line. A line whose
//!   `--choices-field` (default `choices`) holds a list of strings is a multiple-choice
//!   problem: it is scored by `rlvr_tasks::math::verify_with_choices` (the right option's
//!   letter or text, nothing else).
//! - Bounds: a `--jsonl` line may hold at most `rlvr_tasks::data::MAX_LINE_BYTES` (64 MiB; a
//!   longer one, or an endless one such as `/dev/zero`'s, is an error naming the file and
//!   line, read no further than one byte past the limit), and as many JSON values as its size
//!   allows (`rlvr_tasks::data::check_json_values`); `--response -` reads at most as much
//!   from stdin. A response longer than `rlvr_tasks::math::MAX_RESPONSE_BYTES` scores wrong.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::output::outln;
use crate::BadInput;

/// Check answers with rlvr's math verifier (extraction, normalization, equivalence).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The gold answer (with --response).
    #[arg(long, requires = "response", conflicts_with = "jsonl")]
    gold: Option<String>,
    /// The model response to check; `-` reads it from stdin.
    #[arg(long, requires = "gold")]
    response: Option<String>,
    /// JSONL file of {"gold": ..., "response": ...} lines (`-`: stdin).
    #[arg(long, required_unless_present = "gold")]
    jsonl: Option<PathBuf>,
    /// Where --jsonl output goes (default: stdout).
    #[arg(long, short, requires = "jsonl")]
    output: Option<PathBuf>,
    /// Field holding the gold answer in --jsonl lines.
    #[arg(long, default_value = "gold")]
    gold_field: String,
    /// Field holding the response in --jsonl lines.
    #[arg(long, default_value = "response")]
    response_field: String,
    /// Field holding a multiple-choice problem's options (a list of strings) in --jsonl
    /// lines; a line without it is scored without options.
    #[arg(long, default_value = "choices")]
    choices_field: String,
    /// Field holding the problem's question in --jsonl lines: with it, an answer that restates
    /// the question's own expression instead of working it out is wrong, as in training
    /// (`rlvr_tasks::math::explain_asked`); a line without it, or with a number there (the
    /// problem index `rlvr eval --out` writes under `problem`), is scored without the question.
    #[arg(long, default_value = "problem")]
    question_field: String,
    /// Also add "extracted" and "reason" to each --jsonl line.
    #[arg(long)]
    details: bool,
    /// Print both parsed trees and the rule that decided (with --jsonl: add them to each line).
    #[arg(long)]
    explain: bool,
}

pub fn run(args: Args) -> Result<()> {
    match (&args.gold, &args.jsonl) {
        (Some(gold), None) => {
            let response = match args.response.as_deref() {
                Some("-") => {
                    let max = rlvr_tasks::data::MAX_LINE_BYTES;
                    let mut s = String::new();
                    io::stdin()
                        .take(max as u64 + 1)
                        .read_to_string(&mut s)
                        .context("reading stdin")?;
                    if s.len() > max {
                        return Err(BadInput(format!(
                            "--response -: stdin holds more than {max} bytes, the most read"
                        ))
                        .into());
                    }
                    s
                }
                Some(r) => r.to_string(),
                None => return Err(BadInput("--gold needs --response".into()).into()),
            };
            if args.explain {
                outln!("{}", rlvr_tasks::math::explain(gold, &response))?;
                return Ok(());
            }
            let s = rlvr_tasks::math::verify(gold, &response);
            outln!("correct: {}", s.correct)?;
            outln!("extracted: {}", s.extracted.as_deref().unwrap_or("(none)"))?;
            outln!("reason: {}", s.reason)?;
            Ok(())
        }
        (None, Some(path)) => run_jsonl(&args, path),
        _ => Err(BadInput("give --gold and --response, or --jsonl FILE".into()).into()),
    }
}

fn run_jsonl(args: &Args, path: &PathBuf) -> Result<()> {
    let name = path.display().to_string();
    let input: Box<dyn BufRead> = if name == "-" {
        Box::new(BufReader::new(io::stdin()))
    } else {
        let f = File::open(path).map_err(|e| BadInput(format!("{name}: {e}")))?;
        Box::new(BufReader::new(f))
    };
    let mut out: Box<dyn Write> = match &args.output {
        Some(p) => Box::new(BufWriter::new(
            File::create(p).with_context(|| format!("creating {}", p.display()))?,
        )),
        None => Box::new(BufWriter::new(io::stdout().lock())),
    };
    // a failed write names where it went: the --output file, or stdout
    let write_err = |e: io::Error| -> anyhow::Error {
        match &args.output {
            Some(p) => anyhow::Error::new(e).context(format!("writing {}", p.display())),
            None => crate::output::StdoutError(e).into(),
        }
    };
    let mut input = input;
    let mut buf = Vec::new();
    let max = rlvr_tasks::data::MAX_LINE_BYTES;
    for i in 1.. {
        use rlvr_tasks::data::{read_line_bounded, BoundedLine};
        let read = read_line_bounded(&mut input, &mut buf, max)
            .with_context(|| format!("{name}: reading line {i}"))?;
        let result = match read {
            BoundedLine::End => break,
            BoundedLine::TooLong => Err(format!(
                "the line is longer than {max} bytes, the most a --jsonl line may hold"
            )),
            BoundedLine::Line => match std::str::from_utf8(&buf) {
                Ok(line) => check_line(line, args),
                Err(e) => Err(format!(
                    "not UTF-8 (invalid byte at column {})",
                    e.valid_up_to() + 1
                )),
            },
        }
        .map_err(|e| BadInput(format!("{name}:{i}: {e}")));
        let written = match result {
            Ok(text) => text,
            Err(e) => {
                out.flush().map_err(write_err)?;
                return Err(e.into());
            }
        };
        writeln!(out, "{written}").map_err(write_err)?;
        out.flush().map_err(write_err)?;
    }
    out.flush().map_err(write_err)?;
    Ok(())
}

/// The output line for one input line.
fn check_line(line: &str, args: &Args) -> std::result::Result<String, String> {
    if line.trim().is_empty() {
        return Ok(line.to_string());
    }
    rlvr_tasks::data::check_json_values(line.as_bytes())?;
    let v: Value = serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
    let Value::Object(mut obj) = v else {
        return Err("expected a JSON object".into());
    };
    let text = |field: &str| -> std::result::Result<String, String> {
        match obj.get(field) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            Some(_) => Err(format!("field `{field}` must be a string")),
            None => Err(format!("missing field `{field}`")),
        }
    };
    let gold = text(&args.gold_field)?;
    let response = text(&args.response_field)?;
    let choices: Option<Vec<String>> = match obj.get(&args.choices_field) {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    Value::Number(n) => Ok(n.to_string()),
                    _ => Err(format!(
                        "field `{}` must be a list of strings",
                        args.choices_field
                    )),
                })
                .collect::<std::result::Result<_, _>>()?,
        ),
        Some(_) => {
            return Err(format!(
                "field `{}` must be a list of strings",
                args.choices_field
            ))
        }
    };
    let question = match obj.get(&args.question_field) {
        // a number is a problem index (`rlvr eval --out`'s `problem`), not a question
        None | Some(Value::Null) | Some(Value::Number(_)) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(format!(
                "field `{}` must be a string (the question) or a number (a problem index)",
                args.question_field
            ))
        }
    };
    let e =
        rlvr_tasks::math::explain_asked(&gold, &response, choices.as_deref(), question.as_deref());
    let mut added = vec![("correct", Value::Bool(e.correct))];
    if args.details || args.explain {
        added.push(("extracted", e.extracted.map_or(Value::Null, Value::String)));
        added.push(("reason", Value::String(e.rule)));
    }
    if args.explain {
        added.push(("extracted_by", Value::String(e.extracted_by)));
        let tree = |t: Result<String, String>| {
            Value::String(t.unwrap_or_else(|e| format!("(not parsed: {e})")))
        };
        added.push(("gold_tree", tree(e.gold_tree)));
        added.push(("answer_tree", tree(e.answer_tree)));
    }
    if added.iter().any(|(k, _)| obj.contains_key(*k)) {
        // replace existing fields (key order may change)
        for (k, val) in added {
            obj.insert(k.to_string(), val);
        }
        return Ok(Value::Object(obj).to_string());
    }
    // append to the original text, keeping its key order and formatting
    let trimmed = line.trim_end();
    let body = trimmed
        .strip_suffix('}')
        .ok_or("expected a JSON object")?
        .trim_end();
    let sep = if body.trim_start() == "{" { "" } else { "," };
    let extra: Vec<String> = added
        .into_iter()
        .map(|(k, val)| format!("\"{k}\":{val}"))
        .collect();
    Ok(format!("{body}{sep}{}}}", extra.join(",")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(details: bool) -> Args {
        Args {
            gold: None,
            response: None,
            jsonl: Some(PathBuf::from("-")),
            output: None,
            gold_field: "gold".into(),
            response_field: "response".into(),
            choices_field: "choices".into(),
            question_field: "problem".into(),
            details,
            explain: false,
        }
    }

    #[test]
    fn lines_keep_their_text_and_gain_correct() {
        let a = args(false);
        assert_eq!(
            check_line(r#"{"response": "\\boxed{1/2}", "gold": "0.5", "z": 1}"#, &a).unwrap(),
            r#"{"response": "\\boxed{1/2}", "gold": "0.5", "z": 1,"correct":true}"#
        );
        assert_eq!(
            check_line(r#"{"gold": 3, "response": "Answer: 4"}  "#, &a).unwrap(),
            r#"{"gold": 3, "response": "Answer: 4","correct":false}"#
        );
        assert_eq!(check_line("  ", &a).unwrap(), "  ");
        let d = check_line(
            r#"{"gold": "3", "response": "x", "correct": null}"#,
            &args(true),
        )
        .unwrap();
        let v: Value = serde_json::from_str(&d).unwrap();
        assert_eq!(v["correct"], Value::Bool(false));
        assert_eq!(v["extracted"], Value::String("x".into()));
    }

    #[test]
    fn explain_adds_trees_and_rule() {
        let mut a = args(false);
        a.explain = true;
        let d = check_line(r#"{"gold": "x = 3", "response": "\\boxed{3}"}"#, &a).unwrap();
        let v: Value = serde_json::from_str(&d).unwrap();
        assert_eq!(v["correct"], Value::Bool(true));
        assert_eq!(v["gold_tree"], Value::String("(rel x = 3)".into()));
        assert_eq!(v["answer_tree"], Value::String("3".into()));
        assert_eq!(
            v["reason"],
            Value::String("label dropped, values equal".into())
        );
        assert_eq!(v["extracted_by"], Value::String("last \\boxed{}".into()));
    }

    #[test]
    fn choices_are_read_from_their_field() {
        let a = args(true);
        let line = r#"{"gold": "B", "response": "The answer is 0.5.", "choices": ["3", "1/2"]}"#;
        let v: Value = serde_json::from_str(&check_line(line, &a).unwrap()).unwrap();
        assert_eq!(v["correct"], Value::Bool(true));
        let line = r#"{"gold": "B", "response": "The answer is (A).", "choices": ["3", "1/2"]}"#;
        let v: Value = serde_json::from_str(&check_line(line, &a).unwrap()).unwrap();
        assert_eq!(v["correct"], Value::Bool(false));
        assert!(
            check_line(r#"{"gold": "B", "response": "B", "choices": "AB"}"#, &a)
                .unwrap_err()
                .contains("`choices`")
        );
    }

    #[test]
    fn bad_lines_say_why() {
        let a = args(false);
        assert!(check_line("{oops", &a)
            .unwrap_err()
            .contains("invalid JSON"));
        assert!(check_line("[1]", &a).unwrap_err().contains("object"));
        assert!(check_line(r#"{"gold": "1"}"#, &a)
            .unwrap_err()
            .contains("`response`"));
        assert!(check_line(r#"{"gold": [1], "response": "1"}"#, &a)
            .unwrap_err()
            .contains("`gold`"));
        assert!(
            check_line(r#"{"gold": "1", "response": "1", "problem": {}}"#, &a)
                .unwrap_err()
                .contains("`problem` must be a string (the question) or a number")
        );
    }

    /// `rlvr eval --out`'s lines score as they are: their `problem` is the problem's index, not
    /// its question.
    #[test]
    fn eval_output_lines_score_without_a_question() {
        let mut a = args(false);
        a.gold_field = "answer".into();
        let line = r#"{"answer":"2052","correct":false,"problem":0,"response":"76 * 27 = 2052"}"#;
        let correct = |line: &str| {
            let out: Value = serde_json::from_str(&check_line(line, &a).unwrap()).unwrap();
            out["correct"].clone()
        };
        assert_eq!(correct(line), Value::Bool(true));
        let gamed = r#"{"answer":"2052","correct":true,"problem":1,"response":"1740 = 76 * 27"}"#;
        assert_eq!(correct(gamed), Value::Bool(false));
    }
}
