//! `[reward]`: the reward settings are `rlvr_tasks::RewardConfig`, read as they are (one type
//! for the config section and the reward function it builds).

pub use rlvr_tasks::RewardConfig;
