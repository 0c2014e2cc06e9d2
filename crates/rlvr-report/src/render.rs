//! Writing `report.md`, `report.html` and the PNG plots.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::plot::{line_band_plot, Curve};
use crate::runs::{load_run, Run};
use crate::stats::{band, mean_over_runs, rule_summaries, RuleSummary, Spread};
use crate::{io_err, ReportError};

/// The training metrics plotted per regime: (metrics key, file stem, title, y label).
const TRAIN_PLOTS: [(&str, &str, &str, &str); 5] = [
    ("reward_mean", "reward", "Training reward", "mean reward"),
    ("pg_loss", "pg_loss", "Policy-gradient loss", "pg_loss"),
    (
        "response_length_mean",
        "response_length",
        "Response length",
        "mean tokens per response",
    ),
    (
        "response_length_cv",
        "length_cv",
        "Response-length variation",
        "length CV (std/mean)",
    ),
    (
        "pos_neg_gap",
        "pos_neg_gap",
        "Positive-negative length gap",
        "L+ - L- (tokens, within group)",
    ),
];

/// The rules whose live positive share is plotted.
const SHARE_RULES: [&str; 3] = ["token-mean", "seq-mean-token-mean", "balanced"];

/// Loads `run_dirs`, writes `report.md`, `report.html` and PNGs into `out_dir` (created), and
/// returns the paths written.
pub fn write_report(run_dirs: &[PathBuf], out_dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    if run_dirs.is_empty() {
        return Err(ReportError::Empty("give at least one run directory".into()));
    }
    let runs: Vec<Run> = run_dirs
        .iter()
        .map(|d| load_run(d))
        .collect::<Result<_, _>>()?;
    std::fs::create_dir_all(out_dir).map_err(io_err(out_dir))?;
    let mut by_regime: BTreeMap<&str, Vec<&Run>> = BTreeMap::new();
    for r in &runs {
        by_regime.entry(r.regime.as_str()).or_default().push(r);
    }
    let mut written = Vec::new();
    let mut sections = Vec::new();
    for (regime, rs) in &by_regime {
        let section = regime_section(regime, rs, out_dir, &mut written)?;
        sections.push(section);
    }
    let md = markdown(&runs, &sections);
    let md_path = out_dir.join("report.md");
    std::fs::write(&md_path, md).map_err(io_err(&md_path))?;
    let html = html(&runs, &sections, out_dir)?;
    let html_path = out_dir.join("report.html");
    std::fs::write(&html_path, html).map_err(io_err(&html_path))?;
    written.push(md_path);
    written.push(html_path);
    Ok(written)
}

/// Everything the documents say about one regime.
struct Section {
    regime: String,
    rows: Vec<RuleSummary>,
    length_cv: Option<Spread>,
    pos_neg_gap: Option<Spread>,
    plots: Vec<(String, String)>, // (title, file name)
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn regime_section(
    regime: &str,
    runs: &[&Run],
    out: &Path,
    written: &mut Vec<PathBuf>,
) -> Result<Section, ReportError> {
    let mut by_rule: BTreeMap<&str, Vec<&Run>> = BTreeMap::new();
    for r in runs {
        by_rule.entry(r.rule.as_str()).or_default().push(r);
    }
    let mut plots = Vec::new();
    let mut plot =
        |stem: &str, title: String, y: &str, curves: Vec<Curve>| -> Result<(), ReportError> {
            let file = format!("{}-{stem}.png", slug(regime));
            let path = out.join(&file);
            line_band_plot(&path, &title, y, &curves)?;
            written.push(path);
            plots.push((title, file));
            Ok(())
        };
    let per_rule = |f: &dyn Fn(&Run) -> Vec<(usize, f64)>| -> Vec<Curve> {
        by_rule
            .iter()
            .map(|(rule, rs)| Curve {
                label: rule.to_string(),
                points: band(&rs.iter().map(|r| f(r)).collect::<Vec<_>>()),
            })
            .filter(|c| !c.points.is_empty())
            .collect()
    };
    plot(
        "accuracy",
        format!("Evaluation accuracy, regime {regime}"),
        "mean@k (held-out)",
        per_rule(&|r| r.accuracy()),
    )?;
    for (key, stem, title, y) in TRAIN_PLOTS {
        plot(
            stem,
            format!("{title}, regime {regime}"),
            y,
            per_rule(&|r| r.series(key)),
        )?;
    }
    let shares: Vec<Curve> = SHARE_RULES
        .iter()
        .map(|rule| Curve {
            label: rule.to_string(),
            points: band(
                &runs
                    .iter()
                    .map(|r| r.series(&format!("positive_share.{rule}")))
                    .collect::<Vec<_>>(),
            ),
        })
        .filter(|c| !c.points.is_empty())
        .collect();
    plot(
        "positive_share",
        format!("Positive share of gradient mass on the live batches, regime {regime}"),
        "positive share (0.5 = signs balanced)",
        shares,
    )?;
    Ok(Section {
        regime: regime.to_string(),
        rows: rule_summaries(runs),
        length_cv: mean_over_runs(runs, "response_length_cv"),
        pos_neg_gap: mean_over_runs(runs, "pos_neg_gap"),
        plots,
    })
}

fn fmt_spread(s: &Spread) -> String {
    if s.n > 1 {
        format!("{:.3} [{:.3}, {:.3}]", s.mean, s.min, s.max)
    } else {
        format!("{:.3}", s.mean)
    }
}

fn fmt_opt(s: &Option<Spread>) -> String {
    s.as_ref().map_or_else(|| "n/a".into(), fmt_spread)
}

/// The column names of the per-rule table (Markdown and HTML alike).
const COLUMNS: [&str; 8] = [
    "rule",
    "seeds",
    "peak accuracy",
    "last-step accuracy",
    "peak-to-last drop",
    "gain over step 0",
    "length CV",
    "pos-neg gap",
];

/// The cells of one rule's row, in [`COLUMNS`] order (the rule name unescaped).
fn row_cells(r: &RuleSummary) -> [String; 8] {
    [
        r.rule.clone(),
        r.seeds.len().to_string(),
        fmt_spread(&r.peak),
        fmt_spread(&r.last),
        fmt_spread(&r.drop),
        fmt_spread(&r.gain),
        fmt_opt(&r.length_cv),
        fmt_opt(&r.pos_neg_gap),
    ]
}

fn table_md(rows: &[RuleSummary]) -> String {
    let mut t = format!(
        "| {} |\n|{}\n",
        COLUMNS.join(" | "),
        "---|".repeat(COLUMNS.len())
    );
    for r in rows {
        let mut cells = row_cells(r);
        cells[0] = format!("`{}`", cells[0]);
        let _ = writeln!(t, "| {} |", cells.join(" | "));
    }
    t
}

fn markdown(runs: &[Run], sections: &[Section]) -> String {
    let mut md = String::from("# rlvr report: aggregation rules compared\n\n");
    let _ = writeln!(
        md,
        "{} runs. Accuracy is the sampled held-out accuracy (mean@k) of the first evaluated dataset. \
Each cell is the mean over seeds with [min, max] when there are several. Peak = best evaluation of a run; \
drop = peak minus last-step accuracy; gain = last-step minus step-0 accuracy of the same run. Length CV and gap are measured on the runs' own training batches \
(mean over steps, then over runs).\n",
        runs.len()
    );
    for s in sections {
        let _ = writeln!(md, "## Regime `{}`\n", s.regime);
        let _ = writeln!(
            md,
            "Measured over all runs of this regime: response-length CV {}, within-group pos-neg length gap (L+ - L-) {} tokens.\n",
            fmt_opt(&s.length_cv),
            fmt_opt(&s.pos_neg_gap)
        );
        md += &table_md(&s.rows);
        md.push('\n');
        for (title, file) in &s.plots {
            let _ = writeln!(md, "![{title}]({file})\n");
        }
    }
    md += "## Runs\n\n| run | regime | rule | seed | train steps | evaluations |\n|---|---|---|---|---|---|\n";
    for r in runs {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} |",
            r.dir.display(),
            r.regime,
            r.rule,
            r.seed,
            r.train.len(),
            r.eval.len()
        );
    }
    md
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn html(runs: &[Run], sections: &[Section], out: &Path) -> Result<String, ReportError> {
    let mut h = String::from(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>rlvr report</title><style>\
body{font-family:sans-serif;max-width:1000px;margin:2em auto;padding:0 1em}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:4px 8px;text-align:right}\
td:first-child,th:first-child{text-align:left}img{max-width:100%;border:1px solid #ddd;margin:0.5em 0}\
</style></head><body><h1>rlvr report: aggregation rules compared</h1>",
    );
    let _ = write!(
        h,
        "<p>{} runs. Accuracy is the sampled held-out accuracy (mean@k). Cells: mean over seeds [min, max]. \
Peak = best evaluation of a run; drop = peak minus last-step accuracy.</p>",
        runs.len()
    );
    for s in sections {
        let _ = write!(
            h,
            "<h2>Regime <code>{}</code></h2><p>Measured: response-length CV {}, within-group pos-neg length gap {} tokens.</p>",
            escape(&s.regime),
            fmt_opt(&s.length_cv),
            fmt_opt(&s.pos_neg_gap)
        );
        h += "<table><tr>";
        for c in COLUMNS {
            let _ = write!(h, "<th>{c}</th>");
        }
        h += "</tr>";
        for r in &s.rows {
            let mut cells = row_cells(r).map(|c| escape(&c));
            cells[0] = format!("<code>{}</code>", cells[0]);
            let _ = write!(h, "<tr><td>{}</td></tr>", cells.join("</td><td>"));
        }
        h += "</table>";
        for (title, file) in &s.plots {
            let path = out.join(file);
            let png = std::fs::read(&path).map_err(io_err(&path))?;
            let b64 = base64::engine::general_purpose::STANDARD.encode(png);
            let _ = write!(h, "<figure><img alt=\"{0}\" src=\"data:image/png;base64,{b64}\"><figcaption>{0}</figcaption></figure>", escape(title));
        }
    }
    h += "</body></html>\n";
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_run(dir: &Path, rule: &str, seed: u64, peak_at: usize) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(
            dir.join("config.toml"),
            format!("[algorithm]\nloss_agg_mode = \"{rule}\"\n[trainer]\nseed = {seed}\n[data]\ntestbed_regime = \"gap\"\n"),
        )
        .unwrap();
        let mut lines = String::new();
        for step in 1..=6usize {
            let share =
                serde_json::json!({"token-mean": 0.4, "seq-mean-token-mean": 0.5, "balanced": 0.5});
            lines += &serde_json::json!({"kind": "train", "step": step, "reward_mean": 0.1 * step as f64, "pg_loss": 0.01,
                "response_length_mean": 20.0 + step as f64, "response_length_cv": 0.4, "pos_neg_gap": -5.0,
                "positive_share": share, "skipped": false}).to_string();
            lines.push('\n');
            if step % 2 == 0 {
                let acc = if step == peak_at { 0.7 } else { 0.5 } + 0.01 * seed as f64;
                lines += &serde_json::json!({"kind": "eval", "step": step, "dataset": "testbed", "k": 4, "n_problems": 100,
                    "mean_at_k": acc, "pass_at_k": acc}).to_string();
                lines.push('\n');
            }
        }
        std::fs::write(dir.join("metrics.jsonl"), lines).unwrap();
    }

    #[test]
    fn writes_md_html_and_pngs() {
        let tmp = std::env::temp_dir().join(format!("rlvr-report-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let mut dirs = Vec::new();
        for (rule, peak) in [("balanced", 6), ("token-mean", 2)] {
            for seed in 0..2 {
                let d = tmp.join(format!("{rule}-s{seed}"));
                write_run(&d, rule, seed, peak);
                dirs.push(d);
            }
        }
        let out = tmp.join("report");
        let written = write_report(&dirs, &out).unwrap();
        let pngs = written
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "png"))
            .count();
        assert_eq!(pngs, 7, "{written:?}");
        for p in &written {
            assert!(
                std::fs::metadata(p).unwrap().len() > 1000,
                "{} is too small",
                p.display()
            );
        }
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        // token-mean peaks at step 2 (0.70, 0.71) and ends at 0.50, 0.51: drop 0.2
        assert!(md.contains("| `token-mean` | 2 | 0.705 [0.700, 0.710] | 0.505 [0.500, 0.510] | 0.200 [0.200, 0.200] | -0.200 [-0.200, -0.200]"), "{md}");
        assert!(
            md.contains("| `balanced` | 2 | 0.705 [0.700, 0.710] | 0.705 [0.700, 0.710] | 0.000"),
            "{md}"
        );
        assert!(md.contains("response-length CV 0.400"), "{md}");
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert_eq!(html.matches("data:image/png;base64,").count(), 7);
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn bad_metrics_line_names_file_and_line() {
        let tmp = std::env::temp_dir().join(format!("rlvr-report-bad-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::write(
            tmp.join("metrics.jsonl"),
            "{\"kind\":\"train\",\"step\":1}\n{oops\n",
        )
        .unwrap();
        let err = write_report(std::slice::from_ref(&tmp), &tmp.join("out"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("metrics.jsonl:2:"), "{err}");
        let err = write_report(&[], &tmp).unwrap_err().to_string();
        assert!(err.contains("no runs"), "{err}");
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
