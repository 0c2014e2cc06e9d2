//! `[reward]`: the reward settings are `rlvr_tasks::RewardConfig`, read as they are (one type
//! for the config section and the reward function it builds).

pub use rlvr_tasks::RewardConfig;

use super::section::{Keys, Section};
use super::ConfigError;

impl Section for RewardConfig {
    const NAME: &'static str = "reward";

    /// At most [`super::max_reward_workers`] workers: this machine's share (4 per core, at
    /// least 64; 0 = one per core).
    fn validate(&self) -> Result<(), ConfigError> {
        let most = super::max_reward_workers();
        if self.num_workers > most {
            return Err(Keys::<Self>::invalid(
                "num_workers",
                format!(
                    "{} workers: at most {most} here (4 per core, at least 64; 0 = one per core)",
                    self.num_workers
                ),
            ));
        }
        Ok(())
    }
}
