//! The Python sandbox contains an infinite loop, a fork bomb, a memory hog, a network
//! connection and writes outside its directory, and leaves the machine as it was.
//!
//! Network and file-system isolation need namespaces (root here and in CI): without them those
//! two tests print why they skip, and fail under `CI=true`.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use rlvr_tasks::code::{
    isolation_available, run_python, CodeVerifier, Limits, RewardMode, SandboxConfig, Termination,
};
use rlvr_tasks::{Problem, Prompt, Verifier};

fn cfg(wall_ms: u64, cpu_secs: u64) -> SandboxConfig {
    SandboxConfig {
        limits: Limits {
            wall: Duration::from_millis(wall_ms),
            cpu_secs,
            memory_bytes: 256 << 20,
            max_processes: 12,
            ..Limits::default()
        },
        ..SandboxConfig::default()
    }
}

fn python_available() -> bool {
    let ok = SandboxConfig::default().python.exists();
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but no python3"
        );
        eprintln!("skipping: no {}", SandboxConfig::default().python.display());
    }
    ok
}

fn isolation_or_skip() -> bool {
    if !isolation_available() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but network/mount namespaces are not available"
        );
        eprintln!("skipping: network/mount namespaces not available (not root?)");
        return false;
    }
    true
}

/// Live (not zombie) processes running as `uid`, and zombies (from /proc).
fn processes_of(uid: u32) -> (usize, usize) {
    let (mut live, mut zombies) = (0, 0);
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(e.path().join("status")) else {
            continue;
        };
        let field = |name: &str| {
            text.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .unwrap_or("")
                .to_string()
        };
        if field("Uid:") == uid.to_string() {
            if field("State:") == "Z" {
                zombies += 1;
            } else {
                live += 1;
            }
        }
    }
    (live, zombies)
}

#[test]
fn echo_program_runs_and_reads_stdin() {
    if !python_available() {
        return;
    }
    let o = run_python(
        "import sys\nprint(sum(map(int, sys.stdin.read().split())))",
        "1 2 3\n",
        &cfg(5000, 2),
    )
    .unwrap();
    assert_eq!(o.termination, Termination::Exited(0), "{o:?}");
    assert_eq!(o.stdout.trim(), "6");
    // writing inside its own directory works
    let o = run_python(
        "open('out.txt', 'w').write('hi')\nprint(open('out.txt').read())",
        "",
        &cfg(5000, 2),
    )
    .unwrap();
    assert_eq!(o.stdout.trim(), "hi", "{o:?}");
}

#[test]
fn infinite_loop_hits_the_cpu_limit() {
    if !python_available() {
        return;
    }
    let o = run_python("while True:\n    pass\n", "", &cfg(8000, 1)).unwrap();
    assert!(
        matches!(
            o.termination,
            Termination::Signaled(libc::SIGXCPU) | Termination::Signaled(libc::SIGKILL)
        ),
        "{o:?}"
    );
    assert!(o.wall < Duration::from_secs(5), "{o:?}");
    assert_eq!(
        o.reason(),
        if o.termination == Termination::Signaled(libc::SIGXCPU) {
            "CPU time limit"
        } else {
            "signal 9"
        }
    );
}

#[test]
fn sleeping_program_hits_the_wall_clock_limit() {
    if !python_available() {
        return;
    }
    let o = run_python("import time\ntime.sleep(60)\n", "", &cfg(700, 5)).unwrap();
    assert_eq!(o.termination, Termination::WallTimeout, "{o:?}");
    assert!(o.wall < Duration::from_secs(3), "{o:?}");
    assert_eq!(o.reason(), "wall-clock limit");
}

#[test]
fn fork_bomb_is_contained_and_cleaned_up() {
    if !python_available() {
        return;
    }
    let bomb = "import os, time\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        break\ntime.sleep(30)\n";
    let o = run_python(bomb, "", &cfg(3000, 2)).unwrap();
    assert!(o.wall < Duration::from_secs(6), "{o:?}");
    if let Some(uid) = o.uid {
        // every process of the run's uid is dead; orphans that died after their parent are
        // zombies of init until it reaps them
        // (SIGKILL is asynchronous: a process may take a moment to finish dying)
        let (mut live, mut zombies) = processes_of(uid);
        for _ in 0..40 {
            if live == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
            (live, zombies) = processes_of(uid);
        }
        assert_eq!(live, 0, "processes of uid {uid} survived");
        let mut left = zombies;
        for _ in 0..50 {
            if left == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
            left = processes_of(uid).1;
        }
        eprintln!(
            "fork bomb: {zombies} zombies right after the run, {left} after waiting for init"
        );
    }
    // the machine is fine: a new process starts and a normal run works
    assert!(std::process::Command::new("true")
        .status()
        .unwrap()
        .success());
    let ok = run_python("print('alive')", "", &cfg(5000, 2)).unwrap();
    assert_eq!(ok.stdout.trim(), "alive", "{ok:?}");
}

#[test]
fn memory_hog_is_stopped() {
    if !python_available() {
        return;
    }
    let o = run_python(
        "x = bytearray(2 << 30)\nprint('allocated')\n",
        "",
        &cfg(5000, 2),
    )
    .unwrap();
    assert!(!o.success(), "{o:?}");
    assert!(!o.stdout.contains("allocated"));
    assert_eq!(o.reason(), "memory limit", "{o:?}");
    // growing slowly hits the same limit
    let o = run_python(
        "a = []\nwhile True:\n    a.append(bytearray(1 << 20))\n",
        "",
        &cfg(5000, 3),
    )
    .unwrap();
    assert_eq!(o.reason(), "memory limit", "{o:?}");
}

#[test]
fn network_connection_to_a_local_listener_fails() {
    if !python_available() || !isolation_or_skip() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let code = format!(
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    print('connected')\nexcept OSError as e:\n    print('blocked', e.errno)\n"
    );
    let o = run_python(&code, "", &cfg(5000, 2)).unwrap();
    assert!(o.isolated);
    assert!(o.stdout.starts_with("blocked"), "{o:?}");
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the listener saw a connection: {other:?}"),
    }
}

#[test]
fn writes_outside_the_temporary_directory_fail() {
    if !python_available() || !isolation_or_skip() {
        return;
    }
    // a world-writable host directory in /tmp, a file next to this crate, and /dev/shm
    let host = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        host.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let in_tmp = host.path().join("escaped.txt");
    let in_repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("sandbox-escaped.txt");
    let in_shm = Path::new("/dev/shm").join(format!("rlvr-escaped-{}", std::process::id()));
    let mut code = String::from("import os\n");
    for p in [&in_tmp, &in_repo, &in_shm] {
        code += &format!(
            "try:\n    open({:?}, 'w').write('x')\n    print('wrote', {:?})\nexcept OSError as e:\n    print('denied', e.errno)\n",
            p.display().to_string(),
            p.display().to_string()
        );
    }
    let o = run_python(&code, "", &cfg(5000, 2)).unwrap();
    assert!(o.success(), "{o:?}");
    assert!(
        !in_tmp.exists() && !in_repo.exists() && !in_shm.exists(),
        "{o:?}"
    );
    // /tmp and /dev/shm are private tmpfs in the sandbox: a write may "succeed" there but
    // never reaches the host; the repository is read-only
    assert!(
        o.stdout.lines().nth(1).unwrap_or("").starts_with("denied"),
        "{o:?}"
    );
}

fn problem(tests: &str) -> Problem {
    Problem {
        id: "p".into(),
        prompt: Prompt::Text("min and max".into()),
        answer: tests.into(),
        solution: None,
        data_source: "test".into(),
    }
}

#[test]
fn code_verifier_rewards_fraction_or_all_or_nothing() {
    if !python_available() {
        return;
    }
    let p = problem(
        r#"[{"input": "3 1\n", "output": "1 3\n"}, {"input": "2 5", "output": "2 5"}, {"input": "4 4", "output": "4 4"}]"#,
    );
    let right = "```python\na, b = map(int, input().split())\nprint(min(a, b), max(a, b))\n```";
    let half = "```python\na, b = map(int, input().split())\nprint(a, b)\n```";
    let v = CodeVerifier::default();
    let s = v.score(right, &p);
    assert!(s.correct && s.reward == 1.0, "{s:?}");
    let s = v.score(half, &p);
    assert!(!s.correct && (s.reward - 2.0 / 3.0).abs() < 1e-12, "{s:?}");
    let strict = CodeVerifier {
        mode: RewardMode::AllOrNothing,
        ..CodeVerifier::default()
    };
    assert_eq!(strict.score(half, &p).reward, 0.0);
    assert_eq!(v.score("no code here", &p).reward, 0.0);
    let s = v.score(
        "```python\nwhile True: pass\n```",
        &problem(r#"[{"input": "", "output": "1"}]"#),
    );
    assert_eq!(s.reward, 0.0);
}
