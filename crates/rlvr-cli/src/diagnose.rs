//! `rlvr diagnose ROLLOUTS.jsonl`: which aggregation bias a batch of rollouts is exposed to.
//!
//! Input: one response per line, `{"group": <string or integer>, "reward": <number>,
//! "length": <integer>}`, with an optional `"advantage"` that overrides the estimator for that
//! line. Other fields (response text, ...) are ignored, so dumps from verl, TRL or OpenRLHF can
//! be fed after a one-line `jq` projection. Blank lines are skipped. A malformed line is an
//! error naming the file and line (exit code 2).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rlvr_core::diagnostics::{batch_diagnostics, verdict, BatchDiagnostics};
use rlvr_core::{advantage, aggregation, AdvEstimator, AdvantageConfig, AggRule, Sequence};
use serde_json::{json, Value};

use crate::BadInput;

/// Arguments of `rlvr diagnose`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Rollouts file: one JSON object per line with "group", "reward", "length" and optionally
    /// "advantage".
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
}

fn parse_estimator(s: &str) -> Result<AdvEstimator, String> {
    s.parse().map_err(|e: rlvr_core::CoreError| e.to_string())
}

/// One parsed line.
struct Rollout {
    group: Value,
    reward: f64,
    length: usize,
    advantage: Option<f64>,
}

pub fn run(args: Args) -> Result<()> {
    let rollouts = read_rollouts(&args.rollouts)?;
    let report = Report::new(&rollouts, args.adv, args.max_len)
        .map_err(|e| BadInput(format!("{}: {e}", args.rollouts.display())))?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report.to_json(&rollouts))?
        );
    } else {
        print!("{}", report.table(&args.rollouts, args.adv));
    }
    Ok(())
}

fn read_rollouts(path: &Path) -> Result<Vec<Rollout>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {}", path.display()))
        .map_err(|e| BadInput(format!("{e:#}")))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |reason: String| BadInput(format!("{}:{}: {reason}", path.display(), i + 1));
        out.push(parse_line(line).map_err(bad)?);
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

fn parse_line(line: &str) -> Result<Rollout, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not valid JSON: {e}"))?;
    let obj = v.as_object().ok_or("expected a JSON object")?;
    let group = match obj.get("group") {
        Some(g @ Value::String(_)) => g.clone(),
        Some(g @ Value::Number(n)) if n.is_i64() || n.is_u64() => g.clone(),
        Some(other) => {
            return Err(format!(
                "\"group\" must be a string or an integer, got {other}"
            ))
        }
        None => return Err("missing field \"group\"".into()),
    };
    let number = |key: &str| -> Result<Option<f64>, String> {
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
            Some(other) => Err(format!("\"{key}\" must be a number, got {other}")),
        }
    };
    let reward = number("reward")?.ok_or("missing field \"reward\"")?;
    let length = match obj.get("length") {
        Some(Value::Number(n)) => n.as_u64().ok_or(format!(
            "\"length\" must be a non-negative integer, got {n}"
        ))? as usize,
        Some(other) => {
            return Err(format!(
                "\"length\" must be a non-negative integer, got {other}"
            ))
        }
        None => return Err("missing field \"length\"".into()),
    };
    Ok(Rollout {
        group,
        reward,
        length,
        advantage: number("advantage")?,
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

    fn to_json(&self, rollouts: &[Rollout]) -> Value {
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
            "verdict": verdict(d),
        })
    }

    fn table(&self, path: &Path, estimator: AdvEstimator) -> String {
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
