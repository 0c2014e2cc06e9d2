//! rlvr-core: the math of GRPO-style training, on plain numbers.
//!
//! Inputs are per-sequence slices (group ids, rewards, advantages, token counts); outputs are
//! `Vec<f64>` or small structs. No tensors, files or randomness: every function is exact, cheap
//! and usable from any trainer (verl, TRL and OpenRLHF users can call it on their own batches).
//!
//! | module | what it holds |
//! |---|---|
//! | [`advantage`] | group-relative advantages: `grpo`, `dr-grpo`, `rloo` |
//! | [`aggregation`] | the per-sequence loss weight `w_i` of every aggregation rule (docs/architecture.md §2) |
//! | [`split`] | cutting a batch into data-parallel ranks and micro-batches |
//! | [`policy_loss`] | per-token PPO clip / dual clip / GSPO / CISPO terms with their derivative (the scalar reference of rlvr-train's tensor loss) |
//! | [`kl`] | the k1, k2, k3 KL estimators with their derivative (the scalar reference of rlvr-train's tensor form, and its clamp) |
//! | [`diagnostics`] | length variation, pos-neg length gap, positive share per rule (docs/architecture.md §3) |
//! | [`estimators`] | pass@k (unbiased), mean@k, maj@k |
//! | [`metrics`] | the schema of `metrics.jsonl` (train and eval lines), written by rlvr-train and read by every reader: not math, here because it is the one crate the writer and the readers share |
//! | [`chat`] | the chat message type rlvr-tasks (data) and rlvr-model (chat templates) share: not math, here because it is the one crate both depend on |
//!
//! # Contract
//!
//! Every aggregation rule is linear in the token terms: `loss = Σ_i Σ_t w_i · l_{i,t}`.
//! Weights are computed once per optimizer batch over the WHOLE batch; any micro-batch,
//! gradient-accumulation or data-parallel split that sums `w_i · l_{i,t}` over its own tokens
//! (and sums, not averages, across ranks: with an all-reduce that averages, each rank multiplies
//! its loss by the world size) gets exactly the
//! gradient of the whole batch.

pub mod advantage;
pub mod aggregation;
pub mod chat;
pub mod diagnostics;
mod error;
pub mod estimators;
pub mod kl;
pub mod metrics;
pub mod policy_loss;
mod rule;
pub mod run_dir;
mod sequence;
pub mod split;

pub use advantage::{AdvEstimator, AdvantageConfig, StdScope};
pub use chat::ChatMessage;
pub use error::CoreError;
pub use rule::AggRule;
pub use sequence::Sequence;
