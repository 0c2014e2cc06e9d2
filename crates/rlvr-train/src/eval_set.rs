//! The task of one evaluation set ([`crate::config::EvalSet`]): the one function that
//! `rlvr train` (every task source) and `rlvr eval` build an evaluation from.

use std::path::Path;

use crate::config::{EvalSet, TrainConfig};
use crate::policy::Policy;
use crate::setup::{load_dataset, reward_fn};
use crate::task::{build_eval_task, PromptFormat, Task};
use crate::TrainError;

/// The evaluation task of `set` for `policy`, with at most `n_problems` problems (0 = all; for
/// the testbed, whose held-out stream is unbounded, 0 means 500):
/// - [`EvalSet::Testbed`]: the testbed's held-out problems (`[testbed]` settings, a fixed
///   seed: the same problems for every run), raw prompts, the testbed checker as environment
///   where the regime has one (`testbed_heldout::heldout_task`);
/// - [`EvalSet::Dataset`]: the preset or file read as training data is (`data_dir`, else
///   `data.data_dir`), its first `n_problems` problems, prompts rendered by `format` and each
///   checked against the model's context ([`build_eval_task`]), scored by the `[reward]`
///   settings.
pub fn eval_task(
    set: &EvalSet,
    cfg: &TrainConfig,
    policy: &Policy,
    format: PromptFormat,
    data_dir: Option<&Path>,
    n_problems: usize,
) -> Result<Task, TrainError> {
    match set {
        EvalSet::Testbed => crate::testbed_heldout::heldout_task(cfg, policy, n_problems),
        EvalSet::Dataset(name) => {
            let mut ds = load_dataset(name, data_dir.or(cfg.data.data_dir.as_deref()))?;
            if n_problems > 0 {
                ds.problems.truncate(n_problems);
            }
            let verifier = reward_fn(&cfg.reward, &ds.problems)?;
            build_eval_task(
                name,
                ds.problems,
                format,
                &policy.tokenizer,
                policy.config.max_position_embeddings,
                verifier,
            )
        }
    }
}
