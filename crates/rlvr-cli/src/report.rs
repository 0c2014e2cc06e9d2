//! `rlvr report RUN_DIR...`: compare aggregation rules across runs and seeds.

use std::path::PathBuf;

use anyhow::Result;

use crate::BadInput;

/// Arguments of `rlvr report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run directories (each with metrics.jsonl and config.toml), e.g. those of one `rlvr sweep`.
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    /// Where report.md, report.html and the PNG plots go.
    #[arg(long, default_value = "report")]
    pub out: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    let written = rlvr_report::write_report(&args.runs, &args.out).map_err(|e| match e {
        rlvr_report::ReportError::Plot { .. } => anyhow::Error::new(e),
        other => BadInput(other.to_string()).into(),
    })?;
    for p in &written {
        println!("wrote {}", p.display());
    }
    Ok(())
}
