//! The schema of `metrics.jsonl`: one JSON object per line, flat keys, told apart by `"kind"`.
//!
//! The one definition the trainer writes and every reader (the end-of-run summary, `rlvr
//! report`) reads back. Serialize a [`MetricsLine`] to write a line; deserialize one to read it.
//!
//! - `"kind":"train"` ([`TrainLine`]), one per GRPO step.
//! - `"kind":"eval"` ([`EvalLine`]), one per evaluated dataset at step 0, every `eval.every`
//!   steps and at the end.
//! - any other kind reads as [`MetricsLine::Other`] (room for kinds a later version adds).
//!
//! Numbers: JSON has no NaN, so a non-finite number is written as `null` and `null` reads back
//! as NaN. Fields added after a file was written read as NaN (numbers), 0 (counts) or empty;
//! unknown fields are ignored. `step`, and an eval line's `dataset`, `k`, `n_problems` and
//! `mean_at_k`, are required. Keep the names stable: dashboards and scripts read them.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

/// One line of `metrics.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
// lines are made and read one at a time: a boxed train line would buy nothing
#[allow(clippy::large_enum_variant)]
pub enum MetricsLine {
    /// `"kind":"train"`.
    Train(TrainLine),
    /// `"kind":"eval"`.
    Eval(EvalLine),
    /// A kind this version does not know (read only; nothing writes it).
    #[serde(other)]
    Other,
}

impl MetricsLine {
    /// The step the line belongs to (`None` for [`MetricsLine::Other`]).
    pub fn step(&self) -> Option<usize> {
        match self {
            MetricsLine::Train(t) => Some(t.step),
            MetricsLine::Eval(e) => Some(e.step),
            MetricsLine::Other => None,
        }
    }
}

/// One `"kind":"train"` line: what one GRPO step sampled, scored and applied.
///
/// Lengths and the gap count the tokens the policy sampled, not those a task's environment
/// inserted. The bias diagnostics (`response_length_cv`, `pos_neg_gap`, `positive_share`) are
/// docs/architecture.md §3's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainLine {
    /// Optimizer step, from 1.
    pub step: usize,
    /// Mean reward over the batch's responses.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub reward_mean: f64,
    /// Population standard deviation of the rewards.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub reward_std: f64,
    /// Share of responses the verifier judged correct.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub accuracy: f64,
    /// Mean response length in sampled tokens.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub response_length_mean: f64,
    /// Shortest response.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub response_length_min: f64,
    /// Longest response.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub response_length_max: f64,
    /// Coefficient of variation of the response lengths: `std(L) / mean(L)`.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub response_length_cv: f64,
    /// Share of responses cut at `rollout.response_length`.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub truncated_share: f64,
    /// Mean over groups with both signs of `L+ - L-` (mean length of positive-advantage
    /// responses minus that of negative ones); NaN when no group has both.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub pos_neg_gap: f64,
    /// `pos_neg_gap / response_length_mean`.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub pos_neg_gap_rel: f64,
    /// Rule name -> share of the advantage-weighted token mass on positive responses under
    /// that rule (0.5 = signs balanced).
    #[serde(default, deserialize_with = "nullable_map")]
    pub positive_share: BTreeMap<String, f64>,
    /// The aggregated policy-gradient loss, mean over the step's optimizer updates.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub pg_loss: f64,
    /// KL to the reference (0 without a KL term).
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub kl: f64,
    /// Mean token entropy of the policy on the sampled responses.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub entropy: f64,
    /// Share of tokens clipped at `1 - clip_ratio_low`.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub pg_clipfrac_low: f64,
    /// Share of tokens clipped at `1 + clip_ratio_high`.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub pg_clipfrac_high: f64,
    /// Gradient norm before clipping.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub grad_norm: f64,
    /// Learning rate of the step.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub lr: f64,
    /// Sampled tokens per second of rollout time.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub rollout_tokens_per_s: f64,
    /// Trained tokens per second of update time.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub train_tokens_per_s: f64,
    /// Seconds spent sampling.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub time_rollout_s: f64,
    /// Seconds spent scoring.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub time_reward_s: f64,
    /// Seconds spent in the update.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub time_train_s: f64,
    /// Groups kept after dynamic sampling's filter.
    #[serde(default)]
    pub groups_kept: usize,
    /// Generation rounds dynamic sampling drew.
    #[serde(default)]
    pub gen_batches: usize,
    /// Seconds since the run started.
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub wall_s: f64,
    /// Whether the step applied nothing.
    #[serde(default)]
    pub skipped: bool,
    /// Why, when skipped.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub skip_reason: Option<String>,
    /// The batch's aggregation-bias verdict in plain words ([`crate::diagnostics::verdict`]),
    /// when the step trained.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub verdict: Option<String>,
}

impl TrainLine {
    /// The names [`TrainLine::value`] takes besides `positive_share.<rule>`: every number of
    /// the line.
    pub const SCALARS: [&'static str; 27] = [
        "step",
        "reward_mean",
        "reward_std",
        "accuracy",
        "response_length_mean",
        "response_length_min",
        "response_length_max",
        "response_length_cv",
        "truncated_share",
        "pos_neg_gap",
        "pos_neg_gap_rel",
        "pg_loss",
        "kl",
        "entropy",
        "pg_clipfrac_low",
        "pg_clipfrac_high",
        "grad_norm",
        "lr",
        "rollout_tokens_per_s",
        "train_tokens_per_s",
        "time_rollout_s",
        "time_reward_s",
        "time_train_s",
        "groups_kept",
        "gen_batches",
        "wall_s",
        "skipped",
    ];

    /// The number a metric name stands for: a field name (`pg_loss`, `response_length_cv`;
    /// counts and `skipped` as numbers) or `positive_share.<rule>`. `None` when the name is not
    /// a metric, or names a rule the line has no share for; a NaN value (a `null` in the file)
    /// is returned as NaN.
    pub fn value(&self, name: &str) -> Option<f64> {
        Some(match name {
            "step" => self.step as f64,
            "reward_mean" => self.reward_mean,
            "reward_std" => self.reward_std,
            "accuracy" => self.accuracy,
            "response_length_mean" => self.response_length_mean,
            "response_length_min" => self.response_length_min,
            "response_length_max" => self.response_length_max,
            "response_length_cv" => self.response_length_cv,
            "truncated_share" => self.truncated_share,
            "pos_neg_gap" => self.pos_neg_gap,
            "pos_neg_gap_rel" => self.pos_neg_gap_rel,
            "pg_loss" => self.pg_loss,
            "kl" => self.kl,
            "entropy" => self.entropy,
            "pg_clipfrac_low" => self.pg_clipfrac_low,
            "pg_clipfrac_high" => self.pg_clipfrac_high,
            "grad_norm" => self.grad_norm,
            "lr" => self.lr,
            "rollout_tokens_per_s" => self.rollout_tokens_per_s,
            "train_tokens_per_s" => self.train_tokens_per_s,
            "time_rollout_s" => self.time_rollout_s,
            "time_reward_s" => self.time_reward_s,
            "time_train_s" => self.time_train_s,
            "groups_kept" => self.groups_kept as f64,
            "gen_batches" => self.gen_batches as f64,
            "wall_s" => self.wall_s,
            "skipped" => f64::from(u8::from(self.skipped)),
            _ => *self
                .positive_share
                .get(name.strip_prefix("positive_share.")?)?,
        })
    }
}

/// One `"kind":"eval"` line: one dataset evaluated at one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalLine {
    /// Training step the evaluation was taken at (0 = before training).
    pub step: usize,
    /// Dataset name (`testbed` for the testbed's held-out problems).
    pub dataset: String,
    /// Samples per problem.
    pub k: usize,
    /// Problems evaluated (the testbed draws held-out problems with replacement, so some
    /// repeat; see `distinct_problems`).
    pub n_problems: usize,
    /// Distinct problems among them.
    #[serde(default)]
    pub distinct_problems: usize,
    /// mean@k: the share of correct samples.
    #[serde(deserialize_with = "nullable")]
    pub mean_at_k: f64,
    /// pass@k (unbiased estimator).
    #[serde(default = "nan", deserialize_with = "nullable")]
    pub pass_at_k: f64,
}

fn nan() -> f64 {
    f64::NAN
}

/// A number, or `null` read as NaN.
fn nullable<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// A map of numbers whose values may be `null` (read as NaN).
fn nullable_map<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, f64>, D::Error> {
    let m = BTreeMap::<String, Option<f64>>::deserialize(d)?;
    Ok(m.into_iter()
        .map(|(k, v)| (k, v.unwrap_or(f64::NAN)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<MetricsLine, serde_json::Error> {
        serde_json::from_str(text)
    }

    #[test]
    fn every_scalar_name_has_a_value_and_nothing_else_does() {
        let line = TrainLine {
            positive_share: [("balanced".to_string(), 0.5)].into(),
            ..TrainLine::default()
        };
        for name in TrainLine::SCALARS {
            assert!(line.value(name).is_some(), "{name}");
        }
        assert_eq!(line.value("positive_share.balanced"), Some(0.5));
        assert_eq!(line.value("positive_share.token-mean"), None);
        assert_eq!(line.value("positive_share"), None);
        assert_eq!(line.value("balanced"), None);
        assert_eq!(line.value("pg_los"), None);
    }

    /// The written keys are `kind` first, then the scalars, `positive_share` and, when there,
    /// `skip_reason` (a skipped step) or `verdict` (one that trained): nothing a reader cannot
    /// name.
    #[test]
    fn a_train_line_writes_kind_first_and_exactly_the_named_keys() {
        let line = MetricsLine::Train(TrainLine {
            step: 3,
            skipped: true,
            skip_reason: Some("no group with reward variation".into()),
            ..TrainLine::default()
        });
        let text = serde_json::to_string(&line).unwrap();
        assert!(text.starts_with(r#"{"kind":"train","step":3,"#), "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        keys.sort_unstable();
        let mut want: Vec<&str> = TrainLine::SCALARS.to_vec();
        want.extend(["kind", "positive_share", "skip_reason"]);
        want.sort_unstable();
        assert_eq!(keys, want);
        let trained = MetricsLine::Train(TrainLine {
            step: 4,
            verdict: Some("no material aggregation bias".into()),
            ..TrainLine::default()
        });
        let v = serde_json::to_value(&trained).unwrap();
        assert_eq!(v["verdict"], "no material aggregation bias");
        assert!(v.get("skip_reason").is_none());
    }

    #[test]
    fn nan_is_written_as_null_and_read_back_as_nan() {
        let line = TrainLine {
            step: 1,
            pos_neg_gap: f64::NAN,
            reward_mean: 0.25,
            positive_share: [("balanced".to_string(), f64::NAN)].into(),
            ..TrainLine::default()
        };
        let text = serde_json::to_string(&MetricsLine::Train(line)).unwrap();
        assert!(text.contains(r#""pos_neg_gap":null"#), "{text}");
        assert!(
            text.contains(r#""positive_share":{"balanced":null}"#),
            "{text}"
        );
        let MetricsLine::Train(back) = parse(&text).unwrap() else {
            panic!("not a train line: {text}")
        };
        assert!(back.pos_neg_gap.is_nan() && back.positive_share["balanced"].is_nan());
        assert_eq!(back.reward_mean, 0.25);
        assert_eq!(
            serde_json::to_string(&MetricsLine::Train(back)).unwrap(),
            text
        );
    }

    /// A line written before a field existed reads it as NaN / 0 / empty; fields this version
    /// does not know are ignored; a kind it does not know is `Other`.
    #[test]
    fn older_and_newer_lines_read() {
        let MetricsLine::Train(t) =
            parse(r#"{"kind":"train","step":2,"pg_loss":0.5,"future":1}"#).unwrap()
        else {
            panic!()
        };
        assert_eq!((t.step, t.pg_loss, t.groups_kept), (2, 0.5, 0));
        assert!(t.pos_neg_gap_rel.is_nan() && t.positive_share.is_empty() && !t.skipped);
        let MetricsLine::Eval(e) = parse(
            r#"{"kind":"eval","step":0,"dataset":"math500","k":4,"n_problems":10,"mean_at_k":0.5}"#,
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!((e.distinct_problems, e.mean_at_k), (0, 0.5));
        assert!(e.pass_at_k.is_nan());
        assert_eq!(
            parse(r#"{"kind":"warm-start","loss":1.0}"#).unwrap(),
            MetricsLine::Other
        );
        assert_eq!(MetricsLine::Other.step(), None);
    }

    #[test]
    fn required_fields_and_kind_are_named_when_missing() {
        for (text, want) in [
            (r#"{"kind":"train","pg_loss":1}"#, "missing field `step`"),
            (
                r#"{"kind":"eval","step":1,"dataset":"d","k":1,"n_problems":1}"#,
                "missing field `mean_at_k`",
            ),
            (r#"{"step":1}"#, "missing field `kind`"),
            (r#"{"kind":"train","step":-1}"#, "invalid value"),
            (r#"{"kind":"train","step":1,"kl":"x"}"#, "invalid type"),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
