//! `[reward]`.

use serde::{Deserialize, Serialize};

/// `[reward]`: which scorer rewards a response (`rlvr_tasks::reward`), for training and for
/// evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RewardSection {
    /// `auto` (per problem by data source, as verl's `default_compute_score`: `testbed` to the
    /// testbed verifier, code presets and code tests to the sandboxed code runner, the rest to
    /// the math checker), or `math`, `code`, `testbed` for every problem.
    pub kind: rlvr_tasks::RewardKind,
    /// Code rewards: `all-or-nothing` (1 when every test passes; rllm/DeepCoder's sparse
    /// reward) or `fraction` (passed / run tests; verl's `default_compute_score` passes
    /// `continuous=True`, which is `fraction` over at most 10 tests).
    pub code_mode: rlvr_tasks::code::RewardMode,
    /// Code rewards: run at most this many stdin/stdout tests per response (0 = all).
    pub code_max_tests: usize,
    /// Threads scoring a step's responses, and so the most sandboxes at once (0 = the number
    /// of cores).
    pub num_workers: usize,
    /// Code rewards: run programs even where the kernel refuses the sandbox's namespaces (not
    /// root and no unprivileged user namespaces), without isolation: a program can then read
    /// the data set (expected outputs included), write the user's files and reach the
    /// network. Default false: such a machine is an error before the first step.
    pub allow_unsandboxed: bool,
}

impl Default for RewardSection {
    fn default() -> Self {
        Self {
            kind: rlvr_tasks::RewardKind::Auto,
            code_mode: rlvr_tasks::code::RewardMode::AllOrNothing,
            code_max_tests: 0,
            num_workers: 0,
            allow_unsandboxed: false,
        }
    }
}

impl RewardSection {
    /// The reward function these settings describe (the sandbox from `RLVR_PYTHON`, else
    /// `/usr/bin/python3`).
    pub fn reward_fn(&self) -> Result<rlvr_tasks::RewardFn, rlvr_tasks::RewardError> {
        rlvr_tasks::RewardFn::new(rlvr_tasks::RewardConfig {
            kind: self.kind,
            code_mode: self.code_mode,
            code_max_tests: (self.code_max_tests > 0).then_some(self.code_max_tests),
            workers: self.num_workers,
            sandbox: rlvr_tasks::code::SandboxConfig {
                allow_unsandboxed: self.allow_unsandboxed,
                ..rlvr_tasks::code::SandboxConfig::default()
            },
        })
    }
}
