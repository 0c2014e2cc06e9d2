//! A write that fails part way (a full disk; here the file-size limit `RLIMIT_FSIZE`, which
//! fails a write past it the same way, after writing what fits) leaves `metrics.jsonl` and the
//! TensorBoard event file whole: the torn bytes are cut off, every line and record before them
//! reads back. This test binary holds this one test: the limit applies to the whole process.

use rlvr_core::metrics::{MetricsLine, TrainLine};
use rlvr_train::metrics::{read_lines, MetricsWriter};
use rlvr_train::tensorboard::EventWriter;

fn line(step: usize) -> MetricsLine {
    MetricsLine::Train(TrainLine {
        step,
        ..TrainLine::default()
    })
}

/// Sets the soft file-size limit (None: no limit).
fn file_size_limit(bytes: Option<u64>) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain get/setrlimit on this process
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &mut lim), 0);
        lim.rlim_cur = bytes.unwrap_or(lim.rlim_max);
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lim), 0);
    }
}

#[test]
fn a_write_that_fails_part_way_leaves_no_torn_record() {
    // a write past the limit fails with EFBIG instead of killing the process
    // SAFETY: ignoring a signal
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let tmp = tempfile::tempdir().unwrap();

    let path = tmp.path().join("metrics.jsonl");
    let mut w = MetricsWriter::open(&path, None).unwrap();
    w.write(&line(1)).unwrap();
    let whole = std::fs::metadata(&path).unwrap().len();
    // room for half of the next line
    file_size_limit(Some(whole + whole / 2));
    let failed = w.write(&line(2));
    file_size_limit(None);
    assert!(failed.is_err(), "the write past the limit succeeded");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), whole);
    assert_eq!(read_lines(&path).unwrap().len(), 1);
    // and the writer goes on once there is room
    w.write(&line(3)).unwrap();
    let steps: Vec<usize> = read_lines(&path)
        .unwrap()
        .iter()
        .map(|l| match l {
            MetricsLine::Train(t) => t.step,
            _ => 0,
        })
        .collect();
    assert_eq!(steps, [1, 3]);

    let mut tb = EventWriter::create(&tmp.path().join("tb")).unwrap();
    tb.scalars(1, &[("a".into(), 1.0)]).unwrap();
    let whole = std::fs::metadata(tb.path()).unwrap().len();
    file_size_limit(Some(whole + 8));
    let failed = tb.scalars(2, &[("a".into(), 2.0), ("b".into(), 3.0)]);
    file_size_limit(None);
    assert!(failed.is_err(), "the event write past the limit succeeded");
    assert_eq!(std::fs::metadata(tb.path()).unwrap().len(), whole);
}
