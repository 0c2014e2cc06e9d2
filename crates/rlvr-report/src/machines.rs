//! Which machines the runs ran on, and the seeds whose runs did not all run on one.
//!
//! A paired difference is exact only when the two runs of a seed computed alike, that is ran on
//! the same kind of machine (docs/determinism.md). Each run lists the `machine` of every process
//! that trained it (`host.jsonl`, written by `rlvr train`); a seed whose runs of one condition
//! name more than one machine is flagged, since its difference then includes the machine's
//! rounding along with the rule. Runs without a record (written before rlvr kept one) are
//! counted apart and never flagged.

use std::collections::{BTreeMap, BTreeSet};

use crate::runs::Run;

/// What the report says about the machines.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineNotes {
    /// Each machine and how many runs it trained (a run resumed elsewhere counts for both).
    pub machines: Vec<(String, usize)>,
    /// Runs with no `host.jsonl`.
    pub unrecorded: usize,
    /// (condition, seed, its machines) for every seed whose runs of a condition ran on more
    /// than one machine.
    pub mixed: Vec<(String, u64, Vec<String>)>,
}

/// Tallies the machines of `runs`, whose conditions `condition` names.
pub fn machine_notes(runs: &[Run], condition: impl Fn(&Run) -> String) -> MachineNotes {
    let mut machines: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_seed: BTreeMap<(String, u64), BTreeSet<&str>> = BTreeMap::new();
    let mut unrecorded = 0;
    for r in runs {
        if r.machines.is_empty() {
            unrecorded += 1;
            continue;
        }
        let distinct: BTreeSet<&str> = r.machines.iter().map(String::as_str).collect();
        for m in &distinct {
            *machines.entry(m).or_default() += 1;
        }
        by_seed
            .entry((condition(r), r.seed))
            .or_default()
            .extend(distinct);
    }
    let mixed = by_seed
        .into_iter()
        .filter(|(_, ms)| ms.len() > 1)
        .map(|((c, seed), ms)| (c, seed, ms.into_iter().map(String::from).collect()))
        .collect();
    MachineNotes {
        machines: machines
            .into_iter()
            .map(|(m, n)| (m.to_string(), n))
            .collect(),
        unrecorded,
        mixed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(regime: &str, rule: &str, seed: u64, machines: &[&str]) -> Run {
        Run {
            dir: format!("/x/{regime}/{rule}-s{seed}").into(),
            rule: rule.into(),
            seed,
            regime: regime.into(),
            lr: None,
            warm_start_steps: None,
            model: None,
            settings: Default::default(),
            machines: machines.iter().map(|m| m.to_string()).collect(),
            planned_steps: None,
            train: Vec::new(),
            eval: Vec::new(),
        }
    }

    #[test]
    fn counts_machines_and_flags_only_seeds_split_across_them() {
        let runs = vec![
            run("a", "balanced", 1, &["m1"]),
            run("a", "token-mean", 1, &["m1", "m1"]), // resumed on the same machine
            run("a", "balanced", 2, &["m1"]),
            run("a", "token-mean", 2, &["m1", "m2"]), // resumed elsewhere
            run("b", "balanced", 1, &["m2"]),         // another condition: not a split
            run("b", "token-mean", 1, &["m2"]),
            run("b", "balanced", 3, &[]), // not recorded: never flagged
            run("b", "token-mean", 3, &["m1"]),
        ];
        let notes = machine_notes(&runs, |r| r.regime.clone());
        assert_eq!(
            notes.machines,
            vec![("m1".to_string(), 5), ("m2".to_string(), 3)]
        );
        assert_eq!(notes.unrecorded, 1);
        assert_eq!(
            notes.mixed,
            vec![("a".to_string(), 2, vec!["m1".to_string(), "m2".to_string()])]
        );
    }

    #[test]
    fn nothing_recorded_gives_no_machines_and_no_flags() {
        let runs = vec![run("a", "balanced", 1, &[]), run("a", "token-mean", 1, &[])];
        let notes = machine_notes(&runs, |r| r.regime.clone());
        assert!(notes.machines.is_empty() && notes.mixed.is_empty());
        assert_eq!(notes.unrecorded, 2);
    }
}
