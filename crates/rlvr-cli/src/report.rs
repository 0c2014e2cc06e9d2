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
    /// Tables and the regime map only, without the per-condition curves (a summary over runs
    /// whose parts were reported with their curves already).
    #[arg(long)]
    pub no_curves: bool,
}

pub fn run(args: Args) -> Result<()> {
    let options = rlvr_report::ReportOptions {
        curves: !args.no_curves,
    };
    let written =
        rlvr_report::write_report_with(&args.runs, &args.out, options).map_err(|e| match e {
            rlvr_report::ReportError::Plot { .. } => anyhow::Error::new(e),
            other => BadInput(other.to_string()).into(),
        })?;
    for p in &written {
        println!("wrote {}", p.display());
    }
    Ok(())
}
