//! The ledger of one export: every key of the config carried, or named with why it is not.

use std::collections::BTreeSet;

use rlvr_train::TrainConfig;

/// A key the engine has no form of, with its value and why.
#[derive(Debug, Clone, PartialEq)]
pub struct NotCarried {
    pub key: String,
    pub value: String,
    pub why: String,
    /// Whether it is printed in full: the config's value differs from rlvr's default, or the
    /// engine's behaviour differs from rlvr's at that value.
    pub set: bool,
}

/// The keys one export used and dropped; [`Ledger::finish`] names every key of the config
/// that neither list holds, so none is lost in silence.
pub(super) struct Ledger {
    table: toml::Table,
    defaults: toml::Table,
    used: BTreeSet<String>,
    dropped: Vec<NotCarried>,
}

impl Ledger {
    pub(super) fn new(cfg: &TrainConfig) -> Self {
        let parse = |c: &TrainConfig| -> toml::Table {
            toml::from_str(&c.to_toml()).expect("to_toml parses")
        };
        Self {
            table: parse(cfg),
            defaults: parse(&TrainConfig::default()),
            used: BTreeSet::new(),
            dropped: Vec::new(),
        }
    }

    pub(super) fn value(table: &toml::Table, key: &str) -> Option<toml::Value> {
        let (section, name) = key.split_once('.')?;
        table.get(section)?.get(name).cloned()
    }

    pub(super) fn shown(&self, key: &str) -> String {
        Self::value(&self.table, key).map_or("(unset)".into(), |v| v.to_string())
    }

    /// Marks `keys` as carried.
    pub(super) fn used(&mut self, keys: &[&str]) {
        for k in keys {
            self.used.insert((*k).to_string());
        }
    }

    /// Names `key` as not carried, with why.
    pub(super) fn drop(&mut self, key: &str, why: impl Into<String>) {
        let set = Self::value(&self.table, key) != Self::value(&self.defaults, key);
        self.dropped.push(NotCarried {
            key: key.to_string(),
            value: self.shown(key),
            why: why.into(),
            set,
        });
    }

    /// [`Ledger::drop`], printed in full even at rlvr's default: the engine then behaves
    /// differently from rlvr's run.
    pub(super) fn diverges(&mut self, key: &str, why: impl Into<String>) {
        self.drop(key, why);
        if let Some(last) = self.dropped.last_mut() {
            last.set = true;
        }
    }

    /// `[rollout]`'s sampler keys every engine carries (G, temperature, top-p, top-k, the
    /// response length), and the two it may not: the stop strings (`no_stop`: why this engine
    /// has none; carried when none is set) and the generation batch (`batching`: how the engine
    /// batches generation itself).
    pub(super) fn rollout(&mut self, no_stop: &str, batching: &str) {
        self.used(&[
            "rollout.num_generations",
            "rollout.temperature",
            "rollout.top_p",
            "rollout.top_k",
            "rollout.max_response_length",
        ]);
        let stops = Self::value(&self.table, "rollout.stop_strings");
        if stops
            .as_ref()
            .and_then(|v| v.as_array())
            .is_none_or(|a| a.is_empty())
        {
            self.used(&["rollout.stop_strings"]);
        } else {
            self.drop("rollout.stop_strings", no_stop);
        }
        self.drop("rollout.generation_batch_size", batching);
    }

    /// The keys only rlvr has, whatever the engine: its code sandbox, and `[testbed]`, which a
    /// run of a Hugging Face model (the only kind exported) never reads: validation keeps
    /// every key of it at its default there, so none is listed.
    pub(super) fn drop_rlvr_only(&mut self) {
        let testbed: Vec<String> = self
            .table
            .get("testbed")
            .and_then(|t| t.as_table())
            .map(|t| t.keys().map(|k| format!("testbed.{k}")).collect())
            .unwrap_or_default();
        for k in &testbed {
            self.used(&[k.as_str()]);
        }
        for k in ["code_mode", "code_max_tests", "allow_unsandboxed"] {
            self.drop(
                &format!("reward.{k}"),
                "code rewards run in rlvr's own sandbox",
            );
        }
    }

    /// Every key neither used nor dropped, dropped as "no mapping" (the completeness test keeps
    /// this list empty), then the dropped list.
    pub(super) fn finish(mut self) -> Vec<NotCarried> {
        let mut rest = Vec::new();
        for (section, keys) in &self.table {
            let Some(keys) = keys.as_table() else {
                continue;
            };
            for name in keys.keys() {
                let key = format!("{section}.{name}");
                if !self.used.contains(&key) && !self.dropped.iter().any(|d| d.key == key) {
                    rest.push(key);
                }
            }
        }
        for key in rest {
            self.drop(&key, "no mapping to this engine");
        }
        self.dropped
    }
}
