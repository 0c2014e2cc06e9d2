//! `rlvr._rlvr`: the native half of the `rlvr` Python package (python/rlvr).
//!
//! Thin bindings of rlvr-core and rlvr-tasks on numpy arrays; the Python half
//! (`python/rlvr/__init__.py`) turns array-likes (lists, torch tensors, string group ids) into
//! the contiguous `float64` / `int64` arrays these functions take, and names the arguments.
//!
//! | function | Rust |
//! |---|---|
//! | `advantages(groups, rewards, estimator, std_scope, unbiased_std, eps)` | [`rlvr_core::advantage::compute`] |
//! | `weights(rule, tokens, advantages, groups, max_len)` | [`rlvr_core::aggregation::weights`] |
//! | `diagnostics_json(tokens, advantages, groups, max_len)` | [`rlvr_core::diagnostics::batch_diagnostics`] and `verdict` |
//! | `verify(gold, response, choices=None)` | [`rlvr_tasks::math::verify`], with options [`rlvr_tasks::math::verify_with_choices`] |
//!
//! Contract: bad input raises `ValueError` (the message names the argument and the index);
//! nothing here panics on user input. Group ids are any `int64` values (mapped to dense ids in
//! order of first appearance; only equality matters).

use std::collections::HashMap;

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rlvr_core::diagnostics::{batch_diagnostics, verdict, RuleShares};
use rlvr_core::{AdvEstimator, AdvantageConfig, AggRule, CoreError, Sequence, StdScope};
use serde_json::{json, Value};

fn value_error(e: CoreError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A contiguous view of a 1-D array, or a ValueError naming `name`.
fn slice<'a, T: numpy::Element>(a: &'a PyReadonlyArray1<'_, T>, name: &str) -> PyResult<&'a [T]> {
    a.as_slice()
        .map_err(|_| PyValueError::new_err(format!("{name} must be a contiguous 1-D array")))
}

/// Dense group indices (order of first appearance) from arbitrary `int64` ids.
fn dense(groups: &[i64]) -> Vec<usize> {
    let mut map = HashMap::new();
    groups
        .iter()
        .map(|g| {
            let next = map.len();
            *map.entry(*g).or_insert(next)
        })
        .collect()
}

/// The batch as rlvr-core's [`Sequence`]s; checks lengths, token counts and finiteness.
fn sequences(tokens: &[i64], advantages: &[f64], groups: &[i64]) -> PyResult<Vec<Sequence>> {
    for (name, len) in [("advantages", advantages.len()), ("groups", groups.len())] {
        if len != tokens.len() {
            return Err(PyValueError::new_err(format!(
                "length mismatch: tokens has {} entries, {name} has {len}",
                tokens.len()
            )));
        }
    }
    if let Some(i) = tokens.iter().position(|&t| t < 0) {
        return Err(PyValueError::new_err(format!(
            "tokens at index {i} is negative ({})",
            tokens[i]
        )));
    }
    if let Some(i) = advantages.iter().position(|a| !a.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "advantages at index {i} is not finite ({})",
            advantages[i]
        )));
    }
    Ok(dense(groups)
        .into_iter()
        .zip(tokens.iter().zip(advantages))
        .map(|(g, (&t, &a))| Sequence::new(g, a, t as usize))
        .collect())
}

/// `L` of `seq-mean-token-sum-norm`: the given value, else the longest response (at least 1).
fn max_len_or_longest(max_len: Option<i64>, seqs: &[Sequence]) -> PyResult<usize> {
    match max_len {
        Some(l) if l >= 1 => Ok(l as usize),
        Some(l) => Err(PyValueError::new_err(format!(
            "max_len must be at least 1 (got {l})"
        ))),
        None => Ok(seqs.iter().map(|s| s.tokens).max().unwrap_or(0).max(1)),
    }
}

/// Group-relative advantages of a batch (rlvr-core `advantage::compute`).
#[pyfunction]
#[pyo3(signature = (groups, rewards, estimator, std_scope, unbiased_std, eps))]
fn advantages<'py>(
    py: Python<'py>,
    groups: PyReadonlyArray1<'py, i64>,
    rewards: PyReadonlyArray1<'py, f64>,
    estimator: &str,
    std_scope: &str,
    unbiased_std: bool,
    eps: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let cfg = AdvantageConfig {
        estimator: estimator.parse::<AdvEstimator>().map_err(value_error)?,
        std_scope: std_scope.parse::<StdScope>().map_err(value_error)?,
        unbiased_std,
        eps,
    };
    let g = dense(slice(&groups, "groups")?);
    let r = slice(&rewards, "rewards")?;
    let adv = rlvr_core::advantage::compute(&cfg, &g, r).map_err(|e| match e {
        CoreError::NotFinite { index, value, .. } => {
            PyValueError::new_err(format!("rewards at index {index} is not finite ({value})"))
        }
        other => value_error(other),
    })?;
    Ok(PyArray1::from_vec(py, adv))
}

/// The per-sequence weight `w_i` of `rule` over one whole optimizer batch.
#[pyfunction]
#[pyo3(signature = (rule, tokens, advantages, groups, max_len))]
fn weights<'py>(
    py: Python<'py>,
    rule: &str,
    tokens: PyReadonlyArray1<'py, i64>,
    advantages: PyReadonlyArray1<'py, f64>,
    groups: PyReadonlyArray1<'py, i64>,
    max_len: Option<i64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let rule: AggRule = rule.parse().map_err(value_error)?;
    let seqs = sequences(
        slice(&tokens, "tokens")?,
        slice(&advantages, "advantages")?,
        slice(&groups, "groups")?,
    )?;
    let l = max_len_or_longest(max_len, &seqs)?;
    let w = rlvr_core::aggregation::weights(rule, &seqs, l).map_err(value_error)?;
    Ok(PyArray1::from_vec(py, w))
}

/// The names of every aggregation rule, in the order of docs/architecture.md's table.
#[pyfunction]
fn rules() -> Vec<&'static str> {
    AggRule::ALL.iter().map(|r| r.as_str()).collect()
}

fn shares_json(rules: &[(AggRule, RuleShares)], f: fn(&RuleShares) -> Option<f64>) -> Value {
    Value::Object(
        rules
            .iter()
            .map(|(r, s)| (r.as_str().to_string(), json!(f(s))))
            .collect(),
    )
}

/// The bias diagnostics of a batch (docs/architecture.md §3) as a JSON object (the Python side parses
/// it): batch lengths, within-group gap, mean prefactor, per-rule shares, the verdict and the
/// per-group figures.
#[pyfunction]
#[pyo3(signature = (tokens, advantages, groups, max_len))]
fn diagnostics_json(
    tokens: PyReadonlyArray1<'_, i64>,
    advantages: PyReadonlyArray1<'_, f64>,
    groups: PyReadonlyArray1<'_, i64>,
    max_len: Option<i64>,
) -> PyResult<String> {
    let group_ids = slice(&groups, "groups")?;
    let seqs = sequences(
        slice(&tokens, "tokens")?,
        slice(&advantages, "advantages")?,
        group_ids,
    )?;
    let l = max_len_or_longest(max_len, &seqs)?;
    let d = batch_diagnostics(&seqs, l).map_err(value_error)?;
    // dense id -> the caller's id (dense ids are assigned in order of first appearance)
    let mut original = Vec::new();
    for (s, &g) in seqs.iter().zip(group_ids) {
        if s.group == original.len() {
            original.push(g);
        }
    }
    let groups: Vec<Value> = d
        .groups
        .iter()
        .map(|g| {
            json!({
                "group": original.get(g.group).copied(),
                "size": g.size,
                "positives": g.positives,
                "negatives": g.negatives,
                "mean_length": g.length.mean,
                "length_cv": g.length.cv,
                "mean_positive_length": g.length.mean_positive,
                "mean_negative_length": g.length.mean_negative,
                "pos_neg_gap": g.pos_neg_gap,
                "pos_neg_ratio": g.pos_neg_ratio,
                "prefactor": g.prefactor,
                "positive_share": shares_json(&g.rules, |s| s.positive_share),
                "longest_quartile_share": shares_json(&g.rules, |s| s.longest_quartile_share),
            })
        })
        .collect();
    let out = json!({
        "sequences": d.sequences,
        "tokens": d.tokens,
        "mean_length": d.length.mean,
        "min_length": d.length.min,
        "max_length": d.length.max,
        "length_cv": d.length.cv,
        "mean_positive_length": d.length.mean_positive,
        "mean_negative_length": d.length.mean_negative,
        "mixed_groups": d.mixed_groups,
        "pos_neg_gap": d.pos_neg_gap,
        "pos_neg_ratio": d.pos_neg_ratio,
        "prefactor": d.mean_prefactor,
        "positive_share": shares_json(&d.rules, |s| s.positive_share),
        "longest_quartile_share": shares_json(&d.rules, |s| s.longest_quartile_share),
        "verdict": verdict(&d),
        "groups": groups,
    });
    Ok(out.to_string())
}

/// rlvr's math answer checker: `(correct, extracted answer or None, reason)`, exactly what
/// `rlvr verify --gold G --response TEXT` prints; with the problem's options, multiple choice
/// (`rlvr_tasks::math::verify_with_choices`, as `rlvr verify --jsonl` with a `choices` field);
/// with its question, an answer restating the question's own expression is wrong
/// (`rlvr_tasks::math::verify_asked`, as a `problem` field of `rlvr verify --jsonl`).
#[pyfunction]
#[pyo3(signature = (gold, response, choices=None, question=None))]
fn verify(
    gold: &str,
    response: &str,
    choices: Option<Vec<String>>,
    question: Option<String>,
) -> (bool, Option<String>, String) {
    let s = rlvr_tasks::math::verify_asked(gold, response, choices.as_deref(), question.as_deref());
    (s.correct, s.extracted, s.reason)
}

/// A problem's options as rlvr's dataset readers take them (`rlvr_tasks::read_choices`): the
/// JSON of a list of strings, or of ARC's `{"text": [...], "label": [...]}`, with labels the
/// options carry themselves (AQuA's `A)21`) removed; returns the option texts in letter order
/// and `gold` as the checker takes it (an ARC label becomes its letter). `field` names the
/// value in the error (a `ValueError`).
#[pyfunction]
fn read_choices(field: &str, options_json: &str, gold: String) -> PyResult<(Vec<String>, String)> {
    let value: Value = serde_json::from_str(options_json)
        .map_err(|e| PyValueError::new_err(format!("field `{field}`: not JSON ({e})")))?;
    let c = rlvr_tasks::data::read_choices(field, &value).map_err(PyValueError::new_err)?;
    let gold = c.gold(gold);
    Ok((c.texts, gold))
}

/// The native module.
#[pymodule]
fn _rlvr(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(advantages, m)?)?;
    m.add_function(wrap_pyfunction!(weights, m)?)?;
    m.add_function(wrap_pyfunction!(rules, m)?)?;
    m.add_function(wrap_pyfunction!(diagnostics_json, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(read_choices, m)?)?;
    Ok(())
}
