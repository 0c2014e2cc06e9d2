//! Writing `report.md`, `report.html` and the PNG plots.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::machines::{machine_notes, MachineNotes};
use crate::paired::{paired_differences, Interval, PairedRow};
use crate::plot::{line_band_plot, regime_map_plot, Curve, MapPoint};
use crate::runs::{load_run, Run};
use crate::stats::{band, mean_over_runs, rule_summaries, window_over_runs, RuleSummary, Spread};

/// The rule every other rule is paired against.
const REFERENCE: &str = "balanced";
use crate::{io_err, ReportError};

/// The training metrics plotted per condition: (metrics key, file stem, title, y label).
const TRAIN_PLOTS: [(&str, &str, &str, &str); 7] = [
    ("reward_mean", "reward", "Training reward", "mean reward"),
    ("pg_loss", "pg_loss", "Policy-gradient loss", "pg_loss"),
    (
        "entropy",
        "entropy",
        "Policy entropy",
        "mean token entropy (nats)",
    ),
    (
        "pos_neg_gap_rel",
        "pos_neg_gap_rel",
        "Relative positive-negative length gap",
        "(L+ - L-) / mean length",
    ),
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

/// What a report draws besides its tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportOptions {
    /// The per-condition curves (accuracy, reward, PG loss, entropy, lengths, CV, gap, positive
    /// share); without them a report holds its tables and the regime map only, which is what a
    /// summary over runs already reported part by part needs.
    pub curves: bool,
    /// `report.html` asks the browser to reload it every this many seconds (`rlvr report
    /// --watch`); `None`: a static page.
    pub refresh_s: Option<u64>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            curves: true,
            refresh_s: None,
        }
    }
}

/// Writes `text` to `path` through a temporary file in the same directory renamed over it, so
/// a reader (a browser reloading a watched report) never sees half a file.
fn write_whole(path: &Path, text: &str) -> Result<(), ReportError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&tmp, text).map_err(io_err(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io_err(path))
}

/// Loads `run_dirs`, writes `report.md`, `report.html` and PNGs into `out_dir` (created), and
/// returns the paths written.
pub fn write_report(run_dirs: &[PathBuf], out_dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    write_report_with(run_dirs, out_dir, ReportOptions::default())
}

/// [`write_report`] with the given options.
pub fn write_report_with(
    run_dirs: &[PathBuf],
    out_dir: &Path,
    options: ReportOptions,
) -> Result<Vec<PathBuf>, ReportError> {
    if run_dirs.is_empty() {
        return Err(ReportError::Empty("give at least one run directory".into()));
    }
    let runs: Vec<Run> = run_dirs
        .iter()
        .map(|d| load_run(d))
        .collect::<Result<_, _>>()?;
    std::fs::create_dir_all(out_dir).map_err(io_err(out_dir))?;
    let condition = condition_namer(&runs);
    let mut by_condition: BTreeMap<String, Vec<&Run>> = BTreeMap::new();
    for r in &runs {
        by_condition.entry(condition(r)).or_default().push(r);
    }
    let mut written = Vec::new();
    let mut sections = Vec::new();
    for (cond, rs) in &by_condition {
        let section = regime_section(cond, rs, out_dir, options.curves, &mut written)?;
        sections.push(section);
    }
    let map: Vec<MapPoint> = sections
        .iter()
        .flat_map(|s| {
            s.paired.iter().filter_map(|p| {
                Some(MapPoint {
                    rule: p.rule.clone(),
                    gap_rel: s.gap_rel?.mean,
                    length_cv: s.length_cv?.mean,
                    diff: p.last5,
                })
            })
        })
        .collect();
    let map_file = (!map.is_empty()).then(|| "regime-map.png".to_string());
    if let Some(file) = &map_file {
        let path = out_dir.join(file);
        regime_map_plot(
            &path,
            "Regime map: each rule minus balanced, mean of the last five evaluations",
            "paired difference in accuracy",
            &map,
        )?;
        written.push(path);
    }
    let notes = machine_notes(&runs, &condition);
    let md = markdown(&runs, &sections, &notes, map_file.as_deref());
    let md_path = out_dir.join("report.md");
    write_whole(&md_path, &md)?;
    let html = html(
        &runs,
        &sections,
        &notes,
        out_dir,
        map_file.as_deref(),
        options.refresh_s,
    )?;
    let html_path = out_dir.join("report.html");
    write_whole(&html_path, &html)?;
    written.push(md_path);
    written.push(html_path);
    Ok(written)
}

/// Everything the documents say about one condition (a regime, and a learning rate when the
/// runs differ in it).
struct Section {
    regime: String,
    rows: Vec<RuleSummary>,
    paired: Vec<PairedRow>,
    length_cv: Option<Spread>,
    pos_neg_gap: Option<Spread>,
    gap_rel: Option<Spread>,
    /// (steps, relative gap, length CV) over the first, middle and last ten steps.
    phases: Vec<(String, Option<Spread>, Option<Spread>)>,
    plots: Vec<(String, String)>, // (title, file name)
}

/// Config keys that never tell conditions apart: what varies within a condition by design
/// (the rule, the seed), where a run writes, and its display; and the keys the condition's name
/// already gives (the data or regime, the learning rate, the warm start, the model).
const NOT_A_CONDITION: &[&str] = &[
    "algorithm.loss_agg_mode",
    "trainer.seed",
    "trainer.run_name",
    "trainer.runs_dir",
    "data.train_files",
    "testbed.regime",
    "data.testbed_regime",
    "optim.lr",
    "testbed.warm_start_steps",
    "trainer.warm_start_steps",
    "model.path",
];

/// Whether config key `key` can tell conditions apart ([`NOT_A_CONDITION`]; `logging.*` and
/// `testbed.cache_dir` are where and how a run reports, not what it trains).
fn names_a_condition(key: &str) -> bool {
    !NOT_A_CONDITION.contains(&key) && !key.starts_with("logging.") && key != "testbed.cache_dir"
}

/// Names each run's condition: its regime, then every setting the runs differ in: the learning
/// rate (`lr=`), the warm-start length (`warm-start=`, in steps), the model the run started
/// from (`model=`: runs from different starting points are no seeds of one condition), and any
/// other config key (`section.key=value`, e.g. a `rlvr sweep --grid` axis). A key some runs'
/// configs lack (written by a build before it) tells nothing apart.
fn condition_namer(runs: &[Run]) -> impl Fn(&Run) -> String {
    let differ = |f: &dyn Fn(&Run) -> String| {
        runs.iter()
            .map(f)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            > 1
    };
    let warm = |r: &Run| {
        r.warm_start_steps
            .map_or_else(|| "?".into(), |n| n.to_string())
    };
    let model = |r: &Run| r.model.clone().unwrap_or_else(|| "?".into());
    let (lr_differs, warm_differs) = (differ(&|r| fmt_lr(r.lr)), differ(&warm));
    let model_differs = differ(&model);
    let named = move |r: &Run| {
        let mut name = r.regime.clone();
        if lr_differs {
            name += &format!(" lr={}", fmt_lr(r.lr));
        }
        if warm_differs {
            name += &format!(" warm-start={}", warm(r));
        }
        if model_differs {
            name += &format!(" model={}", model(r));
        }
        name
    };
    // any other key that differs between runs the name so far puts together (a regime that
    // sets its own response length is not split by it), among the keys every run's config has
    let mut first_value: std::collections::BTreeMap<(String, &str), &str> = Default::default();
    let mut other: std::collections::BTreeSet<String> = Default::default();
    for r in runs {
        let name = named(r);
        for (k, v) in &r.settings {
            let seen = *first_value.entry((name.clone(), k)).or_insert(v);
            if seen != v && names_a_condition(k) {
                other.insert(k.clone());
            }
        }
    }
    other.retain(|k| runs.iter().all(|r| r.settings.contains_key(k)));
    move |r: &Run| {
        let mut name = named(r);
        for k in &other {
            name += &format!(" {k}={}", r.settings[k]);
        }
        name
    }
}

/// A learning rate as configs write it (`5e-5`), or `?`.
fn fmt_lr(lr: Option<f64>) -> String {
    lr.map_or_else(|| "?".into(), |x| format!("{x:e}"))
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
    curves: bool,
    written: &mut Vec<PathBuf>,
) -> Result<Section, ReportError> {
    let mut by_rule: BTreeMap<&str, Vec<&Run>> = BTreeMap::new();
    for r in runs {
        by_rule.entry(r.rule.as_str()).or_default().push(r);
    }
    let mut plots = Vec::new();
    let mut plot =
        |stem: &str, title: String, y: &str, lines: Vec<Curve>| -> Result<(), ReportError> {
            if !curves {
                return Ok(());
            }
            let file = format!("{}-{stem}.png", slug(regime));
            let path = out.join(&file);
            line_band_plot(&path, &title, y, &lines)?;
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
        format!("Evaluation accuracy, {regime}"),
        "mean@k (held-out)",
        per_rule(&|r| r.accuracy()),
    )?;
    for (key, stem, title, y) in TRAIN_PLOTS {
        plot(
            stem,
            format!("{title}, {regime}"),
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
        format!("Positive share of gradient mass on the live batches, {regime}"),
        "positive share (0.5 = signs balanced)",
        shares,
    )?;
    let last = runs
        .iter()
        .filter_map(|r| r.train.last().map(|t| t.step))
        .max()
        .unwrap_or(0);
    let mid = last / 2;
    let phases = [
        (1, 10.min(last)),
        (mid.saturating_sub(4).max(1), mid + 5),
        (last.saturating_sub(9).max(1), last),
    ]
    .into_iter()
    .map(|(a, b)| {
        (
            format!("{a}-{b}"),
            window_over_runs(runs, "pos_neg_gap_rel", a, b),
            window_over_runs(runs, "response_length_cv", a, b),
        )
    })
    .collect();
    Ok(Section {
        regime: regime.to_string(),
        rows: rule_summaries(runs),
        paired: paired_differences(runs, REFERENCE),
        length_cv: mean_over_runs(runs, "response_length_cv"),
        pos_neg_gap: mean_over_runs(runs, "pos_neg_gap"),
        gap_rel: mean_over_runs(runs, "pos_neg_gap_rel"),
        phases,
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
const COLUMNS: [&str; 9] = [
    "rule",
    "seeds",
    "peak accuracy",
    "last-step accuracy",
    "peak-to-last drop",
    "gain over step 0",
    "mean of last 5 evaluations",
    "length CV",
    "pos-neg gap",
];

/// The cells of one rule's row, in [`COLUMNS`] order (the rule name unescaped).
fn row_cells(r: &RuleSummary) -> [String; 9] {
    [
        r.rule.clone(),
        r.seeds.len().to_string(),
        fmt_spread(&r.peak),
        fmt_spread(&r.last),
        fmt_spread(&r.drop),
        fmt_spread(&r.gain),
        fmt_spread(&r.last5),
        fmt_opt(&r.length_cv),
        fmt_opt(&r.pos_neg_gap),
    ]
}

/// The column names of the paired table.
const PAIRED_COLUMNS: [&str; 6] = [
    "rule minus balanced",
    "seeds",
    "peak accuracy",
    "last-step accuracy",
    "peak-to-last drop",
    "mean of last 5 evaluations",
];

/// `+0.012 [-0.003, +0.027]`, with `*` when the interval excludes zero.
fn fmt_interval(i: &Interval) -> String {
    let star = if i.excludes_zero() { " *" } else { "" };
    if i.n > 1 {
        format!("{:+.3} [{:+.3}, {:+.3}]{star}", i.mean, i.lo, i.hi)
    } else {
        format!("{:+.3}", i.mean)
    }
}

fn paired_cells(p: &PairedRow) -> [String; 6] {
    [
        p.rule.clone(),
        p.seeds.len().to_string(),
        fmt_interval(&p.peak),
        fmt_interval(&p.last),
        fmt_interval(&p.drop),
        fmt_interval(&p.last5),
    ]
}

fn paired_md(rows: &[PairedRow]) -> String {
    let mut t = format!(
        "| {} |\n|{}\n",
        PAIRED_COLUMNS.join(" | "),
        "---|".repeat(PAIRED_COLUMNS.len())
    );
    for r in rows {
        let mut cells = paired_cells(r);
        cells[0] = format!("`{}`", cells[0]);
        let _ = writeln!(t, "| {} |", cells.join(" | "));
    }
    t
}

fn phases_md(s: &Section) -> String {
    let mut t = String::from("| steps | pos-neg gap / mean length | length CV |\n|---|---|---|\n");
    for (steps, gap, cv) in &s.phases {
        let _ = writeln!(t, "| {steps} | {} | {} |", fmt_opt(gap), fmt_opt(cv));
    }
    t
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

/// `M1`, `M2`, ...: the label of each machine, in the order of [`MachineNotes::machines`].
fn machine_label(notes: &MachineNotes, machine: &str) -> String {
    notes
        .machines
        .iter()
        .position(|(m, _)| m == machine)
        .map_or_else(|| "?".into(), |i| format!("M{}", i + 1))
}

/// The machine labels of one run (`M1, M2` for a run resumed elsewhere), `-` when unrecorded.
fn run_machines(notes: &MachineNotes, r: &Run) -> String {
    let mut labels: Vec<String> = Vec::new();
    for m in &r.machines {
        let l = machine_label(notes, m);
        if labels.last() != Some(&l) {
            labels.push(l);
        }
    }
    if labels.is_empty() {
        "-".into()
    } else {
        labels.join(", ")
    }
}

/// The sentences under the machines table.
fn machine_sentences(notes: &MachineNotes) -> Vec<String> {
    let mut out = Vec::new();
    if notes.unrecorded > 0 {
        out.push(format!(
            "{} run(s) did not record their machine (no `host.jsonl`: written before rlvr kept one).",
            notes.unrecorded
        ));
    }
    if notes.mixed.is_empty() {
        if !notes.machines.is_empty() {
            out.push("Every seed whose runs recorded it ran all its rules of a condition on one machine.".into());
        }
    } else {
        let seeds: Vec<String> = notes
            .mixed
            .iter()
            .map(|(c, seed, ms)| {
                let labels: Vec<String> = ms.iter().map(|m| machine_label(notes, m)).collect();
                format!("`{c}` seed {seed} ({})", labels.join(", "))
            })
            .collect();
        out.push(format!(
            "Seeds whose runs ran on more than one machine, so that their paired differences include the machines' rounding (docs/determinism.md): {}.",
            seeds.join("; ")
        ));
    }
    out
}

/// The runs that have logged fewer steps than they were set to take, each with where it
/// stands; None when every run has finished (or none says how long it is).
pub(crate) fn in_progress_line(runs: &[Run]) -> Option<String> {
    let open: Vec<String> = runs
        .iter()
        .filter(|r| r.in_progress())
        .map(|r| {
            format!(
                "`{}` seed {} at step {} of {}",
                r.rule,
                r.seed,
                r.last_step(),
                r.planned_steps.unwrap_or(0)
            )
        })
        .collect();
    (!open.is_empty()).then(|| {
        format!(
            "Still training or stopped short, {} of {} runs: {}. Until they finish, their \
             last-step accuracy, peak-to-last drop and paired differences are those of the step \
             they have reached.",
            open.len(),
            runs.len(),
            open.join("; ")
        )
    })
}

fn markdown(runs: &[Run], sections: &[Section], notes: &MachineNotes, map: Option<&str>) -> String {
    let mut md = String::from("# rlvr report: aggregation rules compared\n\n");
    let _ = writeln!(
        md,
        "{} runs. Accuracy is the sampled held-out accuracy (mean@k) of the first evaluated dataset. \
Each cell is the mean over seeds with [min, max] when there are several. Peak = best evaluation of a run; \
drop = peak minus last-step accuracy; gain = last-step minus step-0 accuracy of the same run. Length CV and gap are measured on the runs' own training batches \
(mean over steps, then over runs). The paired table gives, per rule, the mean over seeds of its difference from `balanced` on the same seed \
(same warm start, data order and sampling seeds) with a Student-t 95% confidence interval; `*` marks an interval that excludes zero.\n",
        runs.len()
    );
    if let Some(line) = in_progress_line(runs) {
        let _ = writeln!(md, "{line}\n");
    }
    if let Some(file) = map {
        let _ = writeln!(md, "![Regime map]({file})\n");
    }
    for s in sections {
        let _ = writeln!(md, "## Condition `{}`\n", s.regime);
        let _ = writeln!(
            md,
            "Measured over all runs of this condition: response-length CV {}, within-group pos-neg length gap (L+ - L-) {} tokens, {} of the mean length.\n",
            fmt_opt(&s.length_cv),
            fmt_opt(&s.pos_neg_gap),
            fmt_opt(&s.gap_rel)
        );
        md += &table_md(&s.rows);
        md.push('\n');
        if !s.paired.is_empty() {
            md += &paired_md(&s.paired);
            md.push('\n');
        }
        md += "Live length statistics by training phase (mean over steps, then over runs, [min, max] over runs):\n\n";
        md += &phases_md(s);
        md.push('\n');
        for (title, file) in &s.plots {
            let _ = writeln!(md, "![{title}]({file})\n");
        }
    }
    md += "## Runs\n\n| run | regime | rule | seed | train steps | evaluations | machine |\n|---|---|---|---|---|---|---|\n";
    for r in runs {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.dir.display(),
            r.regime,
            r.rule,
            r.seed,
            r.train.len(),
            r.eval.len(),
            run_machines(notes, r)
        );
    }
    md += "\n## Machines\n\n";
    if !notes.machines.is_empty() {
        md += "| machine | cpu (features); matmul; threads | runs |\n|---|---|---|\n";
        for (m, n) in &notes.machines {
            let _ = writeln!(md, "| {} | {m} | {n} |", machine_label(notes, m));
        }
        md.push('\n');
    }
    for line in machine_sentences(notes) {
        let _ = writeln!(md, "{line}\n");
    }
    md
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn html_table(head: &[&str], rows: impl Iterator<Item = Vec<String>>) -> String {
    let mut h = String::from("<table><tr>");
    for c in head {
        let _ = write!(h, "<th>{}</th>", escape(c));
    }
    h += "</tr>";
    for r in rows {
        let mut cells: Vec<String> = r.iter().map(|c| escape(c)).collect();
        cells[0] = format!("<code>{}</code>", cells[0]);
        let _ = write!(h, "<tr><td>{}</td></tr>", cells.join("</td><td>"));
    }
    h + "</table>"
}

fn html_figure(out: &Path, title: &str, file: &str) -> Result<String, ReportError> {
    let path = out.join(file);
    let png = std::fs::read(&path).map_err(io_err(&path))?;
    let b64 = base64::engine::general_purpose::STANDARD.encode(png);
    Ok(format!(
        "<figure><img alt=\"{0}\" src=\"data:image/png;base64,{b64}\"><figcaption>{0}</figcaption></figure>",
        escape(title)
    ))
}

fn html(
    runs: &[Run],
    sections: &[Section],
    notes: &MachineNotes,
    out: &Path,
    map: Option<&str>,
    refresh_s: Option<u64>,
) -> Result<String, ReportError> {
    let mut h = String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\">");
    if let Some(s) = refresh_s {
        let _ = write!(h, "<meta http-equiv=\"refresh\" content=\"{s}\">");
    }
    h.push_str(
        "<title>rlvr report</title><style>\
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
    if let Some(line) = in_progress_line(runs) {
        let _ = write!(h, "<p>{}</p>", escape(&line));
    }
    if let Some(file) = map {
        h += &html_figure(out, "Regime map", file)?;
    }
    for s in sections {
        let _ = write!(
            h,
            "<h2>Condition <code>{}</code></h2><p>Measured: response-length CV {}, within-group pos-neg length gap {} tokens ({} of the mean length).</p>",
            escape(&s.regime),
            fmt_opt(&s.length_cv),
            fmt_opt(&s.pos_neg_gap),
            fmt_opt(&s.gap_rel)
        );
        h += &html_table(&COLUMNS, s.rows.iter().map(|r| row_cells(r).to_vec()));
        if !s.paired.is_empty() {
            h += &html_table(
                &PAIRED_COLUMNS,
                s.paired.iter().map(|p| paired_cells(p).to_vec()),
            );
        }
        h += &html_table(
            &["steps", "pos-neg gap / mean length", "length CV"],
            s.phases
                .iter()
                .map(|(st, g, c)| vec![st.clone(), fmt_opt(g), fmt_opt(c)]),
        );
        for (title, file) in &s.plots {
            h += &html_figure(out, title, file)?;
        }
    }
    h += "<h2>Machines</h2>";
    if !notes.machines.is_empty() {
        h += &html_table(
            &["machine", "cpu (features); matmul; threads", "runs"],
            notes
                .machines
                .iter()
                .map(|(m, n)| vec![machine_label(notes, m), m.clone(), n.to_string()]),
        );
    }
    for line in machine_sentences(notes) {
        let _ = write!(h, "<p>{}</p>", escape(&line.replace('`', "")));
    }
    h += "</body></html>\n";
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every metric the report plots or tabulates is one the metrics schema names (a typo
    /// would plot nothing).
    #[test]
    fn every_plotted_metric_is_in_the_schema() {
        let line = rlvr_core::metrics::TrainLine {
            positive_share: SHARE_RULES.iter().map(|r| (r.to_string(), 0.5)).collect(),
            ..Default::default()
        };
        let names = TRAIN_PLOTS
            .iter()
            .map(|p| p.0.to_string())
            .chain(["response_length_cv", "pos_neg_gap", "pos_neg_gap_rel"].map(String::from))
            .chain(SHARE_RULES.iter().map(|r| format!("positive_share.{r}")));
        for name in names {
            assert!(line.value(&name).is_some(), "{name}");
        }
    }

    fn write_run(dir: &Path, rule: &str, seed: u64, peak_at: usize) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(
            dir.join("config.toml"),
            format!("[algorithm]\nloss_agg_mode = \"{rule}\"\n[trainer]\nseed = {seed}\n[testbed]\nregime = \"gap\"\n"),
        )
        .unwrap();
        let mut lines = String::new();
        for step in 1..=6usize {
            let share =
                serde_json::json!({"token-mean": 0.4, "seq-mean-token-mean": 0.5, "balanced": 0.5});
            lines += &serde_json::json!({"kind": "train", "step": step, "reward_mean": 0.1 * step as f64, "pg_loss": 0.01,
                "response_length_mean": 20.0 + step as f64, "response_length_cv": 0.4, "pos_neg_gap": -5.0,
                "pos_neg_gap_rel": -0.25, "entropy": 0.5,
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
        assert_eq!(pngs, 10, "9 per condition and the regime map: {written:?}");
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
        // paired against balanced, seed by seed: last 0.5 + 0.01 s - (0.7 + 0.01 s) = -0.2
        assert!(
            md.contains("| `token-mean` | 2 | +0.000 [+0.000, +0.000] | -0.200 [-0.200, -0.200] * | +0.200 [+0.200, +0.200] * |"),
            "{md}"
        );
        assert!(
            md.contains("| 1-6 | -0.250 [-0.250, -0.250] | 0.400 [0.400, 0.400] |"),
            "{md}"
        );
        assert!(md.contains("![Regime map](regime-map.png)"), "{md}");
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert_eq!(html.matches("data:image/png;base64,").count(), 10);
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn runs_that_differ_in_warm_start_or_lr_are_separate_conditions() {
        let tmp = std::env::temp_dir().join(format!("rlvr-report-cond-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let mut runs = Vec::new();
        for (i, extra) in [
            "[trainer]\nwarm_start_steps = 450\n[optim]\nlr = 5e-5\n",
            "[trainer]\nwarm_start_steps = 1200\n[optim]\nlr = 5e-5\n",
            "[trainer]\nwarm_start_steps = 1200\n[optim]\nlr = 5e-5\n",
        ]
        .iter()
        .enumerate()
        {
            let d = tmp.join(format!("r{i}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("config.toml"),
                format!("[data]\ntestbed_regime = \"gap\"\n{extra}"),
            )
            .unwrap();
            std::fs::write(d.join("metrics.jsonl"), "").unwrap();
            runs.push(crate::runs::load_run(&d).unwrap());
        }
        let name = condition_namer(&runs);
        // the lr is the same everywhere, so it is not named
        assert_eq!(name(&runs[0]), "gap warm-start=450");
        assert_eq!(name(&runs[1]), "gap warm-start=1200");
        let same = condition_namer(&runs[1..]);
        assert_eq!(same(&runs[1]), "gap");
        let _ = std::fs::remove_dir_all(&tmp);
    }

    /// A run with this `config.toml` and no metrics yet, in `root/name`.
    fn run_with_config(root: &Path, name: &str, config: &str) -> Run {
        let d = root.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("config.toml"), config).unwrap();
        std::fs::write(d.join("metrics.jsonl"), "").unwrap();
        crate::runs::load_run(&d).unwrap()
    }

    /// A second stage from a trained checkpoint and the same config from the base model are
    /// two conditions, not two seeds of one.
    #[test]
    fn runs_from_different_models_are_separate_conditions() {
        let tmp = tempfile::tempdir().unwrap();
        let runs: Vec<Run> = [
            "runs/stage-1/checkpoint",
            "HuggingFaceTB/SmolLM2-135M-Instruct",
        ]
        .iter()
        .enumerate()
        .map(|(i, model)| {
            let config = format!("[model]\npath = {model:?}\n[data]\ntrain_files = \"arith\"\n");
            run_with_config(tmp.path(), &format!("r{i}"), &config)
        })
        .collect();
        let name = condition_namer(&runs);
        assert_eq!(name(&runs[0]), "arith model=runs/stage-1/checkpoint");
        assert_eq!(
            name(&runs[1]),
            "arith model=HuggingFaceTB/SmolLM2-135M-Instruct"
        );
        // one model throughout: not named
        assert_eq!(condition_namer(&runs[..1])(&runs[0]), "arith");
    }

    /// Any other config key the runs differ in (a `--grid` axis) names the condition; where and
    /// how a run reports, and a key an older run's config lacks, do not.
    #[test]
    fn runs_that_differ_in_any_setting_are_separate_conditions() {
        let tmp = tempfile::tempdir().unwrap();
        let runs: Vec<Run> = [
            "[rollout]\ntemperature = 0.7\n[logging]\nprogress = true\n[eval]\nk = 4\n",
            "[rollout]\ntemperature = 1.0\n[logging]\nprogress = false\n",
            "[rollout]\ntemperature = 1.0\n[trainer]\nrun_name = \"x\"\nseed = 3\n",
        ]
        .iter()
        .enumerate()
        .map(|(i, extra)| {
            let config = format!("[data]\ntrain_files = \"arith\"\n{extra}");
            run_with_config(tmp.path(), &format!("r{i}"), &config)
        })
        .collect();
        let name = condition_namer(&runs);
        assert_eq!(name(&runs[0]), "arith rollout.temperature=0.7");
        assert_eq!(name(&runs[1]), "arith rollout.temperature=1.0");
        assert_eq!(
            name(&runs[2]),
            name(&runs[1]),
            "seed and run name are no condition"
        );
        assert_eq!(condition_namer(&runs[1..])(&runs[1]), "arith");
        // a setting that comes with the data (each regime its own length) splits nothing
        let other = run_with_config(
            tmp.path(),
            "other-data",
            "[data]\ntrain_files = \"gsm8k\"\n[rollout]\ntemperature = 0.7\n",
        );
        let pair = [runs[1].clone(), other];
        let name = condition_namer(&pair);
        assert_eq!(
            (name(&pair[0]), name(&pair[1])),
            ("arith".into(), "gsm8k".into())
        );
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

    #[test]
    fn machines_are_listed_and_a_seed_split_across_them_is_flagged() {
        let tmp = tempfile::tempdir().unwrap();
        let host = |machine: &str, step: usize| {
            format!(
                "{}\n",
                serde_json::json!({"step": step, "machine": machine})
            )
        };
        let mut dirs = Vec::new();
        for (rule, seed, hosts) in [
            ("balanced", 0, host("cpu A; blas; 1 thread(s)", 0)),
            ("token-mean", 0, host("cpu A; blas; 1 thread(s)", 0)),
            ("balanced", 1, host("cpu A; blas; 1 thread(s)", 0)),
            (
                "token-mean",
                1,
                host("cpu A; blas; 1 thread(s)", 0) + &host("cpu B; blas; 2 thread(s)", 4),
            ),
            ("balanced", 2, String::new()),
        ] {
            let d = tmp.path().join(format!("{rule}-s{seed}"));
            write_run(&d, rule, seed, 6);
            if !hosts.is_empty() {
                std::fs::write(d.join("host.jsonl"), hosts).unwrap();
            }
            dirs.push(d);
        }
        write_report(&dirs, &tmp.path().join("out")).unwrap();
        let md = std::fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
        let machines = md.split("## Machines").nth(1).expect("a machines section");
        assert!(
            machines.contains("| M1 | cpu A; blas; 1 thread(s) | 4 |")
                && machines.contains("| M2 | cpu B; blas; 2 thread(s) | 1 |"),
            "{md}"
        );
        assert!(machines.contains("1 run(s) did not record"), "{md}");
        assert!(machines.contains("`gap` seed 1 (M1, M2)"), "{md}");
        assert!(!machines.contains("seed 0"), "{md}");
        // the runs table names each run's machines, in the order the run used them
        assert!(md.contains("| 6 | 3 | M1, M2 |"), "{md}");
        assert!(md.contains("| 6 | 3 | - |"), "{md}");
        let html = std::fs::read_to_string(tmp.path().join("out/report.html")).unwrap();
        assert!(html.contains("<h2>Machines</h2>") && html.contains("gap seed 1 (M1, M2)"));
    }

    #[test]
    fn a_bad_host_line_names_file_and_line() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("balanced-s0");
        write_run(&d, "balanced", 0, 6);
        std::fs::write(
            d.join("host.jsonl"),
            "{\"machine\": \"m\"}\n{\"step\": 3}\n",
        )
        .unwrap();
        let err = write_report(&[d], &tmp.path().join("out"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("host.jsonl:2:") && err.contains("machine"),
            "{err}"
        );
    }

    #[test]
    fn without_curves_a_report_has_its_tables_and_the_map_only() {
        let tmp = tempfile::tempdir().unwrap();
        let mut dirs = Vec::new();
        for (rule, peak) in [("balanced", 6), ("token-mean", 2)] {
            for seed in 0..2 {
                let d = tmp.path().join(format!("{rule}-s{seed}"));
                write_run(&d, rule, seed, peak);
                dirs.push(d);
            }
        }
        let (full, short) = (tmp.path().join("full"), tmp.path().join("short"));
        write_report(&dirs, &full).unwrap();
        let written = write_report_with(
            &dirs,
            &short,
            ReportOptions {
                curves: false,
                refresh_s: None,
            },
        )
        .unwrap();
        let pngs: Vec<_> = written
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "png"))
            .collect();
        assert_eq!(pngs, vec![&short.join("regime-map.png")]);
        let md = |d: &Path| std::fs::read_to_string(d.join("report.md")).unwrap();
        let (full_md, short_md) = (md(&full), md(&short));
        assert!(!short_md.contains("-accuracy.png"), "{short_md}");
        // the same tables: the full report less its curve lines
        let tables: String = full_md
            .split("\n\n")
            .filter(|block| !block.starts_with("![") || block.contains("regime-map"))
            .collect::<Vec<_>>()
            .join("\n\n");
        assert_eq!(tables, short_md);
    }
}
