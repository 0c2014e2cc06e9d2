//! The run directory as a careless or hostile user meets it: one writer per run (a second is
//! refused with the holder's pid, whether it is another process or another set-up in this
//! one), a run whose checkpoints were all refused stays refused until restarted explicitly,
//! overrides on resume that cannot apply are refused instead of recorded, and run names that
//! would leave `runs_dir`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::Fixture;
use rlvr_train::checkpoint;
use rlvr_train::run::{train, RunLock, TrainOptions, LOCK_FILE};
use rlvr_train::TrainConfig;

fn options(fx: &Fixture, name: &str, extra: &[&str]) -> TrainOptions {
    let mut o = fx.overrides(extra);
    o.push(format!("trainer.run_name={name}"));
    o.push("trainer.total_training_steps=6".into());
    TrainOptions {
        overrides: o,
        quiet: true,
        ..TrainOptions::default()
    }
}

fn resume(run_dir: &Path, overrides: &[&str]) -> TrainOptions {
    TrainOptions {
        resume: Some(run_dir.to_path_buf()),
        overrides: overrides.iter().map(|s| s.to_string()).collect(),
        quiet: true,
        ..TrainOptions::default()
    }
}

/// Every file under `dir` (the lock file aside) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.file_name().unwrap() != LOCK_FILE {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}

fn train_steps(run_dir: &Path) -> Vec<usize> {
    rlvr_train::metrics::train_lines(&run_dir.join("metrics.jsonl"))
        .unwrap()
        .iter()
        .map(|t| t.step)
        .collect()
}

/// A run directory held by another writer (here a second lock of this process: `flock` locks
/// belong to one open file, so they conflict within a process as between processes): every
/// way of writing into it is refused with an error naming the directory and the holder's pid,
/// and none of the run's files changes. Released, the run resumes.
#[test]
fn a_second_writer_on_a_held_run_directory_is_refused_with_the_holders_pid() {
    let fx = Fixture::new();
    let mut first = options(&fx, "held", &[]);
    first.stop_after = Some(2);
    train(&first).unwrap();
    let run_dir = fx.root.join("runs/held");
    let before = snapshot(&run_dir);
    let holder = RunLock::acquire(&run_dir).unwrap();
    let pid = format!("pid {}", std::process::id());
    let mut restart = resume(&run_dir, &[]);
    restart.restart = true;
    for (what, opts) in [
        ("--resume", resume(&run_dir, &[])),
        ("--resume --set", resume(&run_dir, &["optim.lr=0.0005"])),
        ("--resume --restart", restart),
    ] {
        let err = train(&opts).map(|_| ()).unwrap_err();
        assert!(err.is_user_input(), "{what}: {err}");
        let msg = err.to_string();
        assert!(
            msg.contains(&pid) && msg.contains(&run_dir.display().to_string()),
            "{what}: {msg}"
        );
        assert_eq!(snapshot(&run_dir), before, "{what} changed the run's files");
    }
    // a fresh run under the name of a held directory that has no checkpoint yet
    let early = fx.root.join("runs/early");
    std::fs::create_dir_all(&early).unwrap();
    let early_holder = RunLock::acquire(&early).unwrap();
    let err = train(&options(&fx, "early", &[])).map(|_| ()).unwrap_err();
    assert!(err.to_string().contains(&pid), "{err}");
    assert!(snapshot(&early).is_empty(), "the refused run wrote into it");
    drop(early_holder);
    // released: both go on
    drop(holder);
    assert_eq!(train(&resume(&run_dir, &[])).unwrap().steps, 6);
    assert_eq!(train_steps(&run_dir), [1, 2, 3, 4, 5, 6]);
    assert_eq!(train(&options(&fx, "early", &[])).unwrap().steps, 6);
}

const CHILD_ENV: &str = "RLVR_TEST_LOCK_CHILD";

/// Not a test on its own: the child process of
/// `a_run_in_another_process_holds_its_directory_until_it_ends`; it trains until killed.
#[test]
#[ignore = "spawned by a_run_in_another_process_holds_its_directory_until_it_ends"]
fn lock_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let fx = Fixture::at(Path::new(&dir));
    let mut o = options(&fx, "live", &[]);
    o.overrides
        .push("trainer.total_training_steps=1000000".into());
    train(&o).unwrap();
}

/// A run in another process holds its directory while it trains: `--resume` of it (with the
/// `optim.lr` override that once ended up in config.toml beside weights trained at another
/// rate) is refused with that process's pid, and its config.toml is not touched. Once the
/// process is killed (SIGKILL: no clean-up runs), the kernel has released the lock and the run
/// resumes.
#[test]
fn a_run_in_another_process_holds_its_directory_until_it_ends() {
    let fx = Fixture::new();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "lock_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &fx.root)
        .spawn()
        .unwrap();
    let run_dir = fx.root.join("runs/live");
    let deadline = Instant::now() + Duration::from_secs(300);
    while checkpoint::find(&run_dir).is_none() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("child exited: {status}");
        }
        assert!(Instant::now() < deadline, "child made no progress");
        std::thread::sleep(Duration::from_millis(5));
    }
    let config = std::fs::read_to_string(run_dir.join("config.toml")).unwrap();
    let err = train(&resume(&run_dir, &["optim.lr=0.0005"]))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    let pid = format!("pid {}", child.id());
    assert!(err.contains(&pid), "{err}");
    assert_eq!(
        std::fs::read_to_string(run_dir.join("config.toml")).unwrap(),
        config
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let mut again = resume(&run_dir, &[]);
    again.stop_after = Some(1);
    train(&again).unwrap();
}

/// Truncates the weights of every checkpoint of a run.
fn damage_all(run_dir: &Path) {
    for d in checkpoint::candidates(run_dir) {
        let w = d.join("model.safetensors");
        let len = std::fs::metadata(&w).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(&w).unwrap();
        f.set_len(len / 2).unwrap();
    }
}

/// Every checkpoint of a run damaged: `--resume` is refused, and stays refused when run again
/// (it used to start the run over from step 0 and replace its metrics), a fresh run under its
/// name is refused too; each refusal says how to restart it. `--restart` trains it again from
/// step 0 and is itself refused once the run has an intact checkpoint.
#[test]
fn a_run_whose_checkpoints_were_all_refused_stays_refused_until_restarted() {
    let fx = Fixture::new();
    let keep = ["trainer.save_freq=2", "trainer.keep_checkpoints=2"];
    train(&options(&fx, "broken", &keep)).unwrap();
    let run_dir = fx.root.join("runs/broken");
    assert_eq!(checkpoint::candidates(&run_dir).len(), 2);
    damage_all(&run_dir);
    let metrics = std::fs::read(run_dir.join("metrics.jsonl")).unwrap();
    let config = std::fs::read(run_dir.join("config.toml")).unwrap();
    let restart_cmd = format!("--resume {} --restart", run_dir.display());
    for attempt in 1..=3 {
        let err = train(&resume(&run_dir, &[])).map(|_| ()).unwrap_err();
        assert!(err.is_user_input(), "attempt {attempt}: {err}");
        let msg = err.to_string();
        assert!(
            msg.contains("no intact checkpoint") && msg.contains(&restart_cmd),
            "attempt {attempt}: {msg}"
        );
        if attempt > 1 {
            assert!(msg.contains("refused as damaged"), "{msg}");
        }
        assert_eq!(
            std::fs::read(run_dir.join("metrics.jsonl")).unwrap(),
            metrics
        );
        assert_eq!(std::fs::read(run_dir.join("config.toml")).unwrap(), config);
        assert_eq!(checkpoint::damaged(&run_dir).len(), 2);
    }
    let err = train(&options(&fx, "broken", &keep))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains(&restart_cmd), "{err}");
    assert_eq!(
        std::fs::read(run_dir.join("metrics.jsonl")).unwrap(),
        metrics
    );
    // the explicit restart
    let mut restart = resume(&run_dir, &[]);
    restart.restart = true;
    assert_eq!(train(&restart).unwrap().steps, 6);
    assert_eq!(train_steps(&run_dir), [1, 2, 3, 4, 5, 6]);
    assert!(checkpoint::damaged(&run_dir).is_empty());
    assert_eq!(std::fs::read(run_dir.join("config.toml")).unwrap(), config);
    let err = train(&restart).map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("intact"), "{err}");
    assert_eq!(train_steps(&run_dir), [1, 2, 3, 4, 5, 6]);
}

/// `--resume R --set` of a key fixed at the start of a run (the seed, the run's name and place,
/// the model itself; the testbed's fixed keys: `config::tests`) is refused with an error naming the key, and the
/// run's config.toml keeps what the run used; an override that applies is recorded.
#[test]
fn overrides_on_resume_are_refused_where_they_cannot_apply() {
    let fx = Fixture::new();
    let mut first = options(&fx, "paused", &[]);
    first.stop_after = Some(2);
    train(&first).unwrap();
    let run_dir = fx.root.join("runs/paused");
    let config = std::fs::read_to_string(run_dir.join("config.toml")).unwrap();
    for (over, key) in [
        ("trainer.seed=5", "trainer.seed"),
        ("trainer.run_name=other", "trainer.run_name"),
        ("trainer.runs_dir=\"elsewhere\"", "trainer.runs_dir"),
        ("model.path=\"another-model\"", "model.path"),
    ] {
        let err = train(&resume(&run_dir, &[over])).map(|_| ()).unwrap_err();
        assert!(err.is_user_input(), "{over}: {err}");
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("`{key}`")) && msg.contains("--resume"),
            "{over}: {msg}"
        );
        assert_eq!(
            std::fs::read_to_string(run_dir.join("config.toml")).unwrap(),
            config,
            "{over} was recorded"
        );
        // the dry run of the same resume says the same
        let err = rlvr_train::run::dry_run(&resume(&run_dir, &[over]), &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("`{key}`")), "{over}: {err}");
    }
    // repeating the saved value is no change; an override that applies is recorded
    let saved = TrainConfig::load(Some(&run_dir.join("config.toml")), &[]).unwrap();
    let same = format!("testbed.hidden_size={}", saved.testbed.hidden_size);
    let done = train(&resume(&run_dir, &[&same, "optim.lr=0.02"])).unwrap();
    assert_eq!(done.steps, 6);
    let after = TrainConfig::load(Some(&run_dir.join("config.toml")), &[]).unwrap();
    assert_eq!(after.optim.lr, 0.02);
    assert_eq!(after.testbed, saved.testbed);
}

/// `trainer.run_name` is one plain directory name inside `runs_dir`: `../x`, `..`, `.`, an
/// absolute path, nested names and names with control characters are errors naming the key, and a run given one writes
/// nothing, inside or outside `runs_dir`.
#[test]
fn run_names_that_leave_runs_dir_are_refused() {
    let fx = Fixture::new();
    let outside = fx.root.join("escaped");
    let absolute = outside.display().to_string();
    for name in [
        "../escaped",
        "..",
        ".",
        absolute.as_str(),
        "a/../../escaped",
        "nested/run",
        "run/",
        "back\\slash",
        // a line break in a directory name would be a line break in every exported script
        "line\nbreak",
        "tab\there",
    ] {
        let over = format!("trainer.run_name={name:?}");
        let err = TrainConfig::load(None, &fx.overrides(&[&over]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("trainer.run_name"), "{name}: {err}");
        let mut o = fx.overrides(&[]);
        o.push(over.clone());
        let err = train(&TrainOptions {
            overrides: o,
            quiet: true,
            ..TrainOptions::default()
        })
        .map(|_| ())
        .unwrap_err();
        assert!(err.is_user_input(), "{name}: {err}");
        assert!(
            err.to_string().contains("trainer.run_name"),
            "{name}: {err}"
        );
        assert!(!outside.exists(), "{name}: wrote {}", outside.display());
        assert!(
            !fx.root.join("runs").exists(),
            "{name}: wrote into runs_dir"
        );
    }
    for ok in ["plain", "run-1.2_b", "..."] {
        let over = format!("trainer.run_name={ok:?}");
        TrainConfig::load(None, &fx.overrides(&[&over])).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
}

/// A fresh run whose set-up fails leaves no directory behind (the lock file alone would make
/// the next automatic name `-2`), and the automatic name is the same on the next try.
#[test]
fn a_run_that_fails_in_set_up_leaves_no_directory() {
    let fx = Fixture::new();
    let missing = fx.root.join("missing.jsonl").display().to_string();
    let mut o = fx.overrides(&[&format!("data.train_files={missing:?}")]);
    o.retain(|k| !k.starts_with("trainer.run_name"));
    let err = train(&TrainOptions {
        overrides: o,
        quiet: true,
        ..TrainOptions::default()
    })
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(err.contains("missing.jsonl"), "{err}");
    let runs = fx.root.join("runs");
    let left: Vec<_> = std::fs::read_dir(&runs)
        .map(|rd| rd.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
}
