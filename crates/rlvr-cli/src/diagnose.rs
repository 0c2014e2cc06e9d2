//! `rlvr diagnose` (being written).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Rollouts file, one JSON object per line.
    pub rollouts: std::path::PathBuf,
}
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("diagnose is being written")
}
