//! `runs/<name>/metrics.jsonl`: writing it, reading it back, and a text sparkline for the
//! terminal.
//!
//! The schema of its lines is `rlvr_core::metrics` ([`MetricsLine`]: `"kind":"train"`, one
//! per GRPO step; `"kind":"eval"`, one per evaluated dataset and evaluation point), the one
//! definition that the end-of-run summary and `rlvr report` read too.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use rlvr_core::metrics::MetricsLine;

/// Appends lines to a metrics file, flushing each.
pub struct MetricsWriter {
    path: PathBuf,
    file: File,
}

impl MetricsWriter {
    /// Opens `path` for appending, first dropping lines of steps after `keep_through` (a resumed
    /// run rewrites the steps it redoes). `None` keeps everything.
    pub fn open(path: &Path, keep_through: Option<usize>) -> std::io::Result<Self> {
        if let (Some(last), true) = (keep_through, path.exists()) {
            let kept: Vec<String> = BufReader::new(File::open(path)?)
                .lines()
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .filter(|line| {
                    serde_json::from_str::<serde_json::Value>(line)
                        .ok()
                        .and_then(|v| v.get("step").and_then(|s| s.as_u64()))
                        .is_some_and(|s| s as usize <= last)
                })
                .collect();
            let tmp = path.with_extension("jsonl.tmp");
            let mut f = File::create(&tmp)?;
            for line in kept {
                writeln!(f, "{line}")?;
            }
            f.sync_all()?;
            std::fs::rename(&tmp, path)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one line, whole or not at all: one `write_all` of the line and its newline, and
    /// on a failure (a full disk) the file cut back to its length before, so that no torn line
    /// is left for a reader or a resume.
    pub fn write(&mut self, line: &MetricsLine) -> std::io::Result<()> {
        self.write_json(line)
    }

    /// Writes any serializable value as one line (with a `step` field, to be dropped on a
    /// resume as [`MetricsWriter::open`] drops lines), whole or not at all.
    pub fn write_json<T: serde::Serialize>(&mut self, value: &T) -> std::io::Result<()> {
        let mut text = serde_json::to_string(value).map_err(std::io::Error::other)?;
        text.push('\n');
        crate::tensorboard::append_whole(&mut self.file, text.as_bytes())
    }
}

/// Reads every non-blank line of a metrics file; a line that is not a metrics line is an
/// `InvalidData` error naming the file and its 1-based line number.
pub fn read_lines(path: &Path) -> std::io::Result<Vec<MetricsLine>> {
    let mut lines = Vec::new();
    for (i, line) in BufReader::new(File::open(path)?).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        lines.push(serde_json::from_str(&line).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}, line {}: {e}", path.display(), i + 1),
            )
        })?);
    }
    Ok(lines)
}

/// The `"kind":"train"` lines of a metrics file, in file order.
pub fn train_lines(path: &Path) -> std::io::Result<Vec<rlvr_core::metrics::TrainLine>> {
    Ok(read_lines(path)?
        .into_iter()
        .filter_map(|l| match l {
            MetricsLine::Train(t) => Some(t),
            _ => None,
        })
        .collect())
}

/// A text sparkline of `values` (one character per value, at most `width`, averaging buckets).
pub fn sparkline(values: &[f64], width: usize) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() || width == 0 {
        return String::new();
    }
    let buckets = finite.len().min(width);
    let means: Vec<f64> = (0..buckets)
        .map(|b| {
            let (s, e) = (
                b * finite.len() / buckets,
                ((b + 1) * finite.len() / buckets).max(b * finite.len() / buckets + 1),
            );
            finite[s..e].iter().sum::<f64>() / (e - s) as f64
        })
        .collect();
    let lo = means.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    means
        .iter()
        .map(|&v| {
            let x = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
            BARS[((x * 7.0).round() as usize).min(7)]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rlvr_core::metrics::TrainLine;

    #[test]
    fn reopening_drops_later_steps() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.jsonl");
        let mut w = MetricsWriter::open(&path, None).unwrap();
        let line = |step| {
            MetricsLine::Train(TrainLine {
                step,
                ..TrainLine::default()
            })
        };
        for step in 1..=5 {
            w.write(&line(step)).unwrap();
        }
        drop(w);
        let mut w = MetricsWriter::open(&path, Some(3)).unwrap();
        w.write(&line(4)).unwrap();
        let steps: Vec<usize> = train_lines(&path).unwrap().iter().map(|t| t.step).collect();
        assert_eq!(steps, [1, 2, 3, 4]);
    }

    #[test]
    fn a_bad_line_is_named_by_file_and_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.jsonl");
        std::fs::write(
            &path,
            "{\"kind\":\"train\",\"step\":1}\n\n{\"kind\":\"train\"}\n",
        )
        .unwrap();
        let err = read_lines(&path).unwrap_err().to_string();
        assert!(
            err.contains("metrics.jsonl, line 3: missing field `step`"),
            "{err}"
        );
    }

    #[test]
    fn sparkline_spans_the_range() {
        assert_eq!(sparkline(&[0.0, 1.0], 10), "▁█");
        assert_eq!(sparkline(&[0.0, 0.0, 1.0, 1.0], 2), "▁█");
        assert_eq!(sparkline(&[], 5), "");
    }
}
