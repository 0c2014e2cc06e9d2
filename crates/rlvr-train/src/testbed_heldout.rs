//! The testbed's held-out evaluation task ([`heldout_task`], one evaluation set of
//! [`crate::eval_set`]) and the testbed checker as a task's environment ([`with_environment`],
//! for its training task too).

use rlvr_tasks::testbed::{self as tb, Split, TestbedConfig, NAME};
use rlvr_tasks::PromptTemplate;

use crate::config::TrainConfig;
use crate::environment::TestbedChecker;
use crate::policy::Policy;
use crate::setup::reward_fn;
use crate::task::{build_task, PromptFormat, Task};
use crate::TrainError;

/// The seed of the held-out problem stream (fixed: every run evaluates on the same problems).
const HELDOUT_SEED: u64 = 0x7E57;

/// Held-out problems for evaluation: `n_problems` (0 means 500) distinct ones, in a fixed
/// order; when the held-out split has fewer, each is evaluated equally often
/// (`rlvr_tasks::testbed::distinct_problems`). Built through [`crate::eval_set::eval_task`].
pub(crate) fn heldout_task(
    cfg: &TrainConfig,
    policy: &Policy,
    n_problems: usize,
) -> Result<Task, TrainError> {
    let t = cfg.testbed.task_config(cfg.trainer.seed);
    let n = if n_problems == 0 { 500 } else { n_problems };
    let fixed = TestbedConfig {
        seed: HELDOUT_SEED,
        ..t
    };
    let (problems, _) = tb::distinct_problems(&fixed, Split::Heldout, n);
    let verifier = reward_fn(&cfg.reward, &problems)?;
    let task = build_task(NAME, problems, raw(), &policy.tokenizer, 0, verifier)?.0;
    with_environment(task, &t, policy)
}

/// `task` with the testbed checker as its environment when the regime has one
/// ([`tb::Regime::on_failed_step`]).
pub(crate) fn with_environment(
    mut task: Task,
    t: &TestbedConfig,
    policy: &Policy,
) -> Result<Task, TrainError> {
    if let Some(on_fail) = t.regime.on_failed_step() {
        let eos = *policy.tokenizer.eos_token_ids.first().ok_or_else(|| {
            TrainError::Msg("the testbed tokenizer has no end-of-sequence token".into())
        })?;
        let checker = TestbedChecker::new(&task.problems, &policy.tokenizer, eos, on_fail)?;
        task.environment = Some(std::sync::Arc::new(checker));
    }
    Ok(task)
}

/// Testbed prompts: the problems as they are, no chat template.
pub(crate) fn raw() -> PromptFormat {
    PromptFormat {
        template: PromptTemplate::Raw,
        chat: false,
    }
}
