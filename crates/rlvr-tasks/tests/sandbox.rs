//! The Python sandbox contains an infinite loop, a fork bomb, a memory hog, a network
//! connection and writes outside its directory, and leaves the machine as it was. It also
//! stops each escape a policy could learn to earn reward: writing to a descriptor inherited
//! from the caller, SysV shared memory that outlives the run, reading the data set (expected
//! outputs included) or anything else of the host, signalling host processes, a daemon left
//! behind, one process's clean-up killing another's programs (uid slots derived from process
//! ids), running unsandboxed where the kernel refuses namespaces, an early exit on a big input
//! killing the caller (SIGPIPE), reading the caller's kernel keyrings or keeping state in a
//! uid's keyring, filling the disk through the writable directory, SysV and POSIX shared
//! memory beyond the memory limit, and the kernel interfaces the system call filter closes.
//!
//! Isolation needs namespaces (root here and in CI, or unprivileged user namespaces): without
//! them the isolation tests print why they skip, and fail under `CI=true`. Several tests start
//! this test binary again as helper processes ([`helper_process`]).

use std::io::{ErrorKind, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use rlvr_tasks::code::{
    isolation_available, memory_cgroup, run_python, CodeVerifier, Limits, RewardMode, RunOutcome,
    SandboxConfig, Termination,
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
    rlvr_test_support::python(&SandboxConfig::default().python).is_some()
}

fn isolation_or_skip() -> bool {
    let found = if isolation_available() {
        Ok(())
    } else {
        Err("not root, no unprivileged user namespaces")
    };
    rlvr_test_support::or_skip(found, "the sandbox's namespaces are not available").is_some()
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
        choices: None,
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

// ---- escapes a policy could learn (each fails without the matching isolation) ----

/// Whether a process whose command line contains `marker` is alive on the host.
fn process_with_marker(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&cmd).contains(marker)
            && std::fs::read_to_string(e.path().join("status"))
                .map(|s| {
                    !s.lines()
                        .any(|l| l.starts_with("State:") && l.contains('Z'))
                })
                .unwrap_or(false)
    })
}

#[test]
fn descriptors_inherited_from_the_caller_are_closed() {
    if !python_available() || !isolation_or_skip() {
        return;
    }
    // a root-only file this process holds open without O_CLOEXEC, as a shell's redirection
    // would leave it
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secret.log");
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; the descriptor is closed below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_WRONLY | libc::O_CREAT, 0o600) };
    assert!(fd >= 3, "open: {}", std::io::Error::last_os_error());
    let code = "import os\nhit = []\nfor fd in range(3, 65):\n    try:\n        os.write(fd, b'escaped')\n        hit.append(fd)\n    except OSError:\n        pass\nprint('wrote', hit)\n";
    let o = run_python(code, "", &cfg(5000, 2)).unwrap();
    // SAFETY: our own descriptor.
    unsafe { libc::close(fd) };
    assert!(o.success(), "{o:?}");
    assert_eq!(o.stdout.trim(), "wrote []", "{o:?}");
    assert_eq!(std::fs::read(&path).unwrap(), b"", "{o:?}");
}

#[test]
fn sysv_shared_memory_does_not_outlive_the_run() {
    if !python_available() || !isolation_or_skip() {
        return;
    }
    let key = 0x524c_0000_i32 | (std::process::id() as i32 & 0xffff);
    let code = format!(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint(libc.shmget({key}, 1 << 20, 0o1000 | 0o600))\n"
    );
    let o = run_python(&code, "", &cfg(5000, 2)).unwrap();
    assert!(o.success(), "{o:?}");
    let id: i64 = o.stdout.trim().parse().unwrap_or(-1);
    // (not root, the system call filter refuses SysV IPC altogether)
    assert!(
        id >= 0 || o.uid.is_none(),
        "the program could not create a segment at all: {o:?}"
    );
    // the host's IPC namespace: the segment must not be there
    let table = std::fs::read_to_string("/proc/sysvipc/shm").unwrap_or_default();
    let leaked = table.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.first()? == &key.to_string()).then(|| f[1].parse::<i32>().ok())?
    });
    if let Some(shmid) = leaked {
        // SAFETY: removes the leaked segment by id; no memory is touched.
        unsafe { libc::shmctl(shmid, libc::IPC_RMID, std::ptr::null_mut()) };
        panic!("a SysV segment (key {key}, id {shmid}) outlived the run: {o:?}");
    }
}

#[test]
fn dataset_files_host_directories_and_processes_are_invisible() {
    if !python_available() || !isolation_or_skip() {
        return;
    }
    // a "dataset" readable by everyone, in /tmp and next to this crate (as a data directory
    // inside a checkout would be)
    let host = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        host.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let in_tmp = host.path().join("codeforces.jsonl");
    let in_repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("sandbox-dataset-{}.jsonl", std::process::id()));
    for p in [&in_tmp, &in_repo] {
        std::fs::write(p, "{\"expected\": \"SECRET-ANSWER\"}\n").unwrap();
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    }
    let input = format!(
        "{}\n{}\n{}\n",
        in_tmp.display(),
        in_repo.display(),
        std::process::id()
    );
    let code = "import os, sys\nlines = sys.stdin.read().split('\\n')\nfor p in lines[:2]:\n    try:\n        print('read', open(p).read().strip())\n    except OSError as e:\n        print('denied', e.errno)\ntry:\n    os.kill(int(lines[2]), 0)\n    print('signalled')\nexcept ProcessLookupError:\n    print('no such process')\nexcept OSError as e:\n    print('kill denied', e.errno)\nprint(' '.join(sorted(os.listdir('/'))))\n";
    let o = run_python(code, &input, &cfg(5000, 2));
    let _ = std::fs::remove_file(&in_repo);
    let o = o.unwrap();
    assert!(o.success(), "{o:?}");
    assert!(!o.stdout.contains("SECRET-ANSWER"), "{o:?}");
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert!(
        lines[0].starts_with("denied") && lines[1].starts_with("denied"),
        "{o:?}"
    );
    // a new PID namespace: the caller does not exist there
    assert_eq!(lines[2], "no such process", "{o:?}");
    // the private root holds the interpreter's directories and the sandbox's own, nothing
    // else: no home, no /root, no checkout, no /work
    let python_top = SandboxConfig::default()
        .python
        .canonicalize()
        .ok()
        .and_then(|p| p.iter().nth(1).map(|c| c.to_string_lossy().into_owned()));
    let allowed = [
        "bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sandbox", "sbin", "tmp",
        "usr",
    ];
    for entry in lines[3].split_whitespace() {
        assert!(
            allowed.contains(&entry) || python_top.as_deref() == Some(entry),
            "/{entry} is visible in the sandbox: {o:?}"
        );
    }
}

#[test]
fn a_detached_daemon_does_not_survive_the_run() {
    if !python_available() || !isolation_or_skip() {
        return;
    }
    let marker = format!("rlvr-daemon-{}", std::process::id());
    let code = format!(
        "import os, sys\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(30)', '{marker}'])\n    os._exit(0)\nos.wait()\nprint('started')\n"
    );
    let o = run_python(&code, "", &cfg(5000, 2)).unwrap();
    assert_eq!(o.stdout.trim(), "started", "{o:?}");
    let mut alive = process_with_marker(&marker);
    for _ in 0..40 {
        if !alive {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        alive = process_with_marker(&marker);
    }
    assert!(!alive, "the daemon survived the run");
}

/// Environment variable that turns [`helper_process`] into one of the processes the tests
/// below start (the test binary runs itself).
const HELPER: &str = "RLVR_SANDBOX_TEST_HELPER";

/// Starts this test binary running only [`helper_process`] with `role`.
fn spawn_helper(role: &str) -> std::process::Child {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "helper_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HELPER, role)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Not a test of its own: does nothing unless [`HELPER`] is set (see the tests that set it).
#[test]
fn helper_process() {
    let Ok(role) = std::env::var(HELPER) else {
        return;
    };
    match role.as_str() {
        "short" | "long" => concurrent_helper(&role),
        "unsandboxed" => unsandboxed_helper(),
        "sigpipe" => sigpipe_helper(),
        "keyring-read" => keyring_read_helper(false),
        "keyring-read-nobody" => keyring_read_helper(true),
        "keyring-state" => keyring_state_helper(),
        "fill" => fill_helper(),
        other => panic!("unknown helper role {other}"),
    }
}

/// Waits for a line on stdin, then scores a correct solution: `short` runs many quick tests
/// (each run ends with the sandbox's clean-up), `long` one slow test that spans them.
fn concurrent_helper(role: &str) {
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    if go.trim() != "go" {
        return;
    }
    let (tests, program) = if role == "short" {
        let t: Vec<String> = (0..20)
            .map(|i| format!("{{\"input\": \"{i}\", \"output\": \"{}\"}}", i + 1))
            .collect();
        (
            format!("[{}]", t.join(",")),
            "```python\nimport time\ntime.sleep(0.1)\nprint(int(input()) + 1)\n```",
        )
    } else {
        (
            r#"[{"input": "20", "output": "21"}]"#.to_string(),
            "```python\nimport time\ntime.sleep(2.0)\nprint(int(input()) + 1)\n```",
        )
    };
    let v = CodeVerifier::default();
    let s = v.score(program, &problem(&tests));
    println!(
        "HELPER-RESULT {role} reward={} reason={}",
        s.reward, s.reason
    );
}

#[test]
fn concurrent_processes_do_not_kill_each_other() {
    if !python_available() || !isolation_or_skip() {
        return;
    }
    // two "rlvr processes" whose process ids are equal modulo 64 (where pid-derived uid slots
    // would collide): the first run of each takes the same slot number
    let dismiss = |mut c: std::process::Child| {
        drop(c.stdin.take()); // exits without running anything
        let _ = c.wait();
    };
    let mut a = spawn_helper("long");
    let mut b = None;
    // process ids usually rise by one per spawn, but a busy machine (or a spawn that takes two
    // ids) can step over `a`'s residue for a long time: every 100 misses, take a new `a`
    for tries in 1..=2000 {
        let c = spawn_helper("short");
        if c.id() % 64 == a.id() % 64 {
            b = Some(c);
            break;
        }
        dismiss(c);
        if tries % 100 == 0 {
            dismiss(std::mem::replace(&mut a, spawn_helper("long")));
        }
    }
    let b = b.expect("no helper with a colliding pid in 2000 tries");
    let mut outputs = Vec::new();
    for mut c in [a, b] {
        writeln!(c.stdin.as_mut().unwrap(), "go").unwrap();
        drop(c.stdin.take());
        outputs.push(c);
    }
    for c in outputs {
        let o = c.wait_with_output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{out}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        // (libtest's own `test helper_process ... ` may start the line)
        let line = out
            .lines()
            .find_map(|l| l.find("HELPER-RESULT").map(|i| &l[i..]))
            .unwrap_or_else(|| panic!("no result: {out}"));
        assert!(line.contains("reward=1 "), "{line}");
    }
}

/// Drops root (to `nobody`) and makes the kernel refuse `unshare` (a seccomp filter): a user
/// without namespaces. Code rewards must refuse to run, unless unsandboxed runs are allowed.
fn unsandboxed_helper() {
    // SAFETY: plain system calls on this (helper) process; the filter program outlives the
    // prctl call that copies it.
    unsafe {
        if libc::geteuid() == 0 {
            assert_eq!(libc::setgroups(0, std::ptr::null()), 0);
            assert_eq!(libc::setresgid(65534, 65534, 65534), 0);
            assert_eq!(libc::setresuid(65534, 65534, 65534), 0);
        }
        assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        let nr_offset = 0; // offsetof(struct seccomp_data, nr)
        let mut filter = [
            libc::sock_filter {
                code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
                jt: 0,
                jf: 0,
                k: nr_offset,
            },
            libc::sock_filter {
                code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
                jt: 0,
                jf: 1,
                k: libc::SYS_unshare as u32,
            },
            libc::sock_filter {
                code: (libc::BPF_RET | libc::BPF_K) as u16,
                jt: 0,
                jf: 0,
                k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
            },
            libc::sock_filter {
                code: (libc::BPF_RET | libc::BPF_K) as u16,
                jt: 0,
                jf: 0,
                k: libc::SECCOMP_RET_ALLOW,
            },
        ];
        let prog = libc::sock_fprog {
            len: filter.len() as u16,
            filter: filter.as_mut_ptr(),
        };
        assert_eq!(
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog
            ),
            0,
            "seccomp: {}",
            std::io::Error::last_os_error()
        );
    }
    assert!(!isolation_available());
    // refused: the sandbox, and code rewards through the reward function's check
    let e = run_python("print(6 * 7)", "", &cfg(5000, 2))
        .unwrap_err()
        .to_string();
    assert!(e.contains("allow_unsandboxed"), "{e}");
    let f = rlvr_tasks::RewardFn::new(&rlvr_tasks::RewardConfig::default()).unwrap();
    let p = problem(r#"[{"input": "", "output": "42"}]"#);
    let e = f.check(std::slice::from_ref(&p)).unwrap_err().to_string();
    assert!(e.contains("allow_unsandboxed"), "{e}");
    let s = f.score_batch(&[("```python\nprint(42)\n```", &p)]);
    assert!(s.is_err(), "{s:?}");
    // allowed: it runs, and says it ran without isolation
    let allowed = SandboxConfig {
        allow_unsandboxed: true,
        ..cfg(5000, 2)
    };
    let o = run_python("print(6 * 7)", "", &allowed).unwrap();
    assert_eq!(o.stdout.trim(), "42", "{o:?}");
    assert!(!o.isolated && o.uid.is_none(), "{o:?}");
    println!("HELPER-RESULT unsandboxed ok");
}

#[test]
fn code_rewards_refuse_to_run_unsandboxed_unless_allowed() {
    if !python_available() {
        return;
    }
    let o = spawn_helper("unsandboxed").wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.contains("HELPER-RESULT unsandboxed ok"),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

// ---- round three: SIGPIPE, keyrings, the writable directory's size, shared memory ----

/// Starts [`helper_process`] with `role` and `TMPDIR` (where the sandbox makes its host
/// directories) set to `tmp`.
fn spawn_helper_in(role: &str, tmp: &Path) -> std::process::Child {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "helper_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HELPER, role)
        .env("TMPDIR", tmp)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for a helper and asserts it exited 0 and printed `HELPER-RESULT <role> ok`.
fn assert_helper_ok(c: std::process::Child, role: &str) -> String {
    let o = c.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && out.contains(&format!("HELPER-RESULT {role} ok")),
        "helper {role} ended with {:?}\n{out}\n{err}",
        o.status
    );
    out
}

/// A sandbox config for a helper: isolated where the kernel allows it, else unsandboxed
/// (the property under test holds in both).
fn helper_cfg() -> SandboxConfig {
    SandboxConfig {
        allow_unsandboxed: !isolation_available(),
        ..cfg(10_000, 5)
    }
}

/// Entries left under `dir` (recursively: files and directories).
fn entries_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(p.clone());
            }
            out.push(p);
        }
    }
    out
}

/// Bytes in the regular files under `dir` (files that vanish while it looks count 0).
fn bytes_under(dir: &Path) -> u64 {
    entries_under(dir)
        .iter()
        .filter_map(|p| std::fs::symlink_metadata(p).ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// In a process whose SIGPIPE disposition is the default (as `rlvr` had it): programs that
/// exit at once, or after reading a little, on an 8 MiB input are judged on their output,
/// and the process survives.
fn sigpipe_helper() {
    // SAFETY: setting a signal disposition of this (helper) process.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let big = "7 ".repeat(4 << 20);
    let c = helper_cfg();
    for code in [
        "print('early')",
        "import sys\nsys.stdin.read(100)\nprint('early')",
        "import os\nos.close(0)\nprint('early')",
    ] {
        let o = run_python(code, &big, &c).unwrap();
        assert_eq!(o.termination, Termination::Exited(0), "{code}: {o:?}");
        assert_eq!(o.stdout.trim(), "early", "{o:?}");
    }
    // through the verifier: a right answer on a big input scores 1, a wrong one 0
    let tests = serde_json::json!([{"input": big, "output": "early"}]).to_string();
    let v = CodeVerifier {
        sandbox: c,
        ..CodeVerifier::default()
    };
    let s = v.score("```python\nprint('early')\n```", &problem(&tests));
    assert_eq!(s.reward, 1.0, "{s:?}");
    let s = v.score("```python\nprint('late')\n```", &problem(&tests));
    assert_eq!(s.reward, 0.0, "{s:?}");
    println!("HELPER-RESULT sigpipe ok");
}

#[test]
fn early_exit_on_a_big_input_does_not_kill_a_caller_with_default_sigpipe() {
    if !python_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let c = spawn_helper_in("sigpipe", tmp.path());
    assert_helper_ok(c, "sigpipe");
    // every run's host directory is gone
    assert_eq!(entries_under(tmp.path()), Vec::<std::path::PathBuf>::new());
}

/// A Python program that looks for the key `desc` in its keyrings (`request_key`, a search
/// of the session keyring, `/proc/keys`) and prints what it finds.
fn keyring_reader(desc: &str) -> String {
    format!(
        r#"import ctypes
libc = ctypes.CDLL(None, use_errno=True)
desc = b"{desc}"
kid = libc.syscall({request_key}, b"user", desc, None, 0)
print("request_key", kid, ctypes.get_errno())
found = libc.syscall({keyctl}, 10, -3, b"user", desc, 0)
print("search", found, ctypes.get_errno())
for k in (kid, found):
    if k > 0:
        buf = ctypes.create_string_buffer(4096)
        n = libc.syscall({keyctl}, 11, k, buf, 4096)
        print("read", n, buf.raw[:max(n, 0)])
try:
    print("proc-keys", open("/proc/keys").read().replace("\n", "|"))
except OSError as e:
    print("proc-keys denied", e.errno)
"#,
        request_key = libc::SYS_request_key,
        keyctl = libc::SYS_keyctl,
    )
}

/// Joins a new session keyring and puts a secret key in it (as the caller would hold a
/// credential), as root or (`nobody`) as a normal user; then a sandboxed program must not
/// read it. Where this process may not use keyrings itself (a container's filter), the
/// program's attempts must fail all the same.
fn keyring_read_helper(as_nobody: bool) {
    // SAFETY: plain system calls on this (helper) process.
    unsafe {
        if as_nobody && libc::geteuid() == 0 {
            assert_eq!(libc::setgroups(0, std::ptr::null()), 0);
            assert_eq!(libc::setresgid(65534, 65534, 65534), 0);
            assert_eq!(libc::setresuid(65534, 65534, 65534), 0);
            // (a changed uid makes the process undumpable, which makes its /proc/self files
            // root's: the sandbox could not write a user namespace's maps)
            assert_eq!(libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
        }
    }
    let desc = format!("rlvr-secret-{}", std::process::id());
    let payload = b"SECRET-PAYLOAD-42";
    // SAFETY: keyctl/add_key with valid C strings and a buffer of the given length.
    let added = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            1 as libc::c_long, /* KEYCTL_JOIN_SESSION_KEYRING */
            std::ptr::null::<libc::c_char>(),
        );
        let d = std::ffi::CString::new(desc.clone()).unwrap();
        libc::syscall(
            libc::SYS_add_key,
            c"user".as_ptr(),
            d.as_ptr(),
            payload.as_ptr(),
            payload.len(),
            -3 as libc::c_long, /* KEY_SPEC_SESSION_KEYRING */
        )
    };
    if added < 0 {
        eprintln!(
            "note: this process cannot add a key ({}); checking that the program's key calls fail",
            std::io::Error::last_os_error()
        );
    }
    let o = run_python(&keyring_reader(&desc), "", &helper_cfg()).unwrap();
    assert!(o.success(), "{o:?}");
    assert!(
        !o.stdout.contains("SECRET-PAYLOAD"),
        "the program read the caller's key: {o:?}"
    );
    // isolated, /proc/keys is masked too (unsandboxed, the host's /proc lists the
    // descriptions of the caller uid's keys, never their contents)
    assert!(
        !o.isolated || !o.stdout.contains(&desc),
        "the program saw the caller's key: {o:?}"
    );
    for call in ["request_key", "search"] {
        let line = o
            .stdout
            .lines()
            .find(|l| l.starts_with(call))
            .unwrap_or_else(|| panic!("no {call} line: {o:?}"));
        assert_eq!(
            line,
            format!("{call} -1 {}", libc::EPERM),
            "the program's {call} was not refused: {o:?}"
        );
    }
    println!(
        "HELPER-RESULT keyring-read{} ok (isolated: {})",
        if as_nobody { "-nobody" } else { "" },
        o.isolated
    );
}

#[test]
fn the_callers_session_keyring_is_unreadable_as_root_and_as_a_user() {
    if !python_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o1777),
    )
    .unwrap();
    for role in ["keyring-read", "keyring-read-nobody"] {
        let c = spawn_helper_in(role, tmp.path());
        let out = assert_helper_ok(c, role);
        eprintln!(
            "{}",
            out.lines()
                .find(|l| l.contains("HELPER-RESULT"))
                .unwrap_or("")
        );
    }
}

/// One run writes a key to its uid's user keyring, the next looks for it: the write is
/// refused and nothing is found, so keyrings carry no state between runs.
fn keyring_state_helper() {
    let desc = format!("rlvr-state-{}", std::process::id());
    let writer = format!(
        r#"import ctypes
libc = ctypes.CDLL(None, use_errno=True)
k = libc.syscall({add_key}, b"user", b"{desc}", b"from-run-1", 10, -4)
print("add_key", k, ctypes.get_errno())
"#,
        add_key = libc::SYS_add_key
    );
    let reader = format!(
        r#"import ctypes
libc = ctypes.CDLL(None, use_errno=True)
k = libc.syscall({keyctl}, 10, -4, b"user", b"{desc}", 0)
print("search", k, ctypes.get_errno())
if k > 0:
    buf = ctypes.create_string_buffer(64)
    n = libc.syscall({keyctl}, 11, k, buf, 64)
    print("read", buf.raw[:max(n, 0)])
"#,
        keyctl = libc::SYS_keyctl
    );
    let c = helper_cfg();
    let w = run_python(&writer, "", &c).unwrap();
    let r = run_python(&reader, "", &c).unwrap();
    assert!(w.success() && r.success(), "{w:?}\n{r:?}");
    assert_eq!(
        w.stdout.trim(),
        format!("add_key -1 {}", libc::EPERM),
        "{w:?}"
    );
    assert_eq!(
        r.stdout.trim(),
        format!("search -1 {}", libc::EPERM),
        "{r:?}"
    );
    println!("HELPER-RESULT keyring-state ok");
}

#[test]
fn the_user_keyring_keeps_no_state_between_runs() {
    if !python_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_helper_ok(
        spawn_helper_in("keyring-state", tmp.path()),
        "keyring-state",
    );
}

/// The limits of the disk-filling test: a 4 MiB directory, 1 MiB files.
const FILL_DIR_BYTES: u64 = 4 << 20;

/// Writes 256 KiB files (each under the per-file limit) until a write fails, up to 16 MiB.
fn fill_helper() {
    let c = SandboxConfig {
        limits: Limits {
            max_file_bytes: 1 << 20,
            max_dir_bytes: FILL_DIR_BYTES,
            ..cfg(10_000, 5).limits
        },
        ..SandboxConfig::default()
    };
    let code = "total = 0\ntry:\n    for i in range(64):\n        with open(f'f{i}', 'wb') as f:\n            f.write(b'x' * (256 << 10))\n        total += 256 << 10\n    print('wrote', total)\nexcept OSError as e:\n    print('stopped', e.errno, total)\n";
    let o = run_python(code, "", &c).unwrap();
    assert!(o.success(), "{o:?}");
    let f: Vec<&str> = o.stdout.split_whitespace().collect();
    assert_eq!(
        f.first(),
        Some(&"stopped"),
        "the writer was not stopped: {o:?}"
    );
    assert_eq!(f[1], libc::ENOSPC.to_string(), "{o:?}");
    let total: u64 = f[2].parse().unwrap();
    assert!(total <= FILL_DIR_BYTES, "{total} bytes written: {o:?}");
    assert!(
        total >= FILL_DIR_BYTES / 2,
        "only {total} bytes written: {o:?}"
    );
    println!("HELPER-RESULT fill ok");
}

#[test]
fn a_disk_filling_writer_stops_at_the_directory_limit() {
    if !python_available() || !isolation_or_skip() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut c = spawn_helper_in("fill", tmp.path());
    // the host directory of the run never holds more than the limit
    let mut most = 0;
    while c.try_wait().unwrap().is_none() {
        most = most.max(bytes_under(tmp.path()));
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_helper_ok(c, "fill");
    assert!(
        most <= FILL_DIR_BYTES,
        "the host directory held {most} bytes"
    );
    assert_eq!(entries_under(tmp.path()), Vec::<std::path::PathBuf>::new());
}

#[test]
fn sysv_shared_memory_beyond_its_limit_is_refused() {
    if !python_available() || !isolation_or_skip() {
        return;
    }
    // 4 MiB segments, each touched page by page, then detached (they stay allocated): 320 MiB
    // would be far over the 256 MiB memory limit
    let code = r#"import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
seg = 4 << 20
total = 0
for i in range(80):
    sid = libc.shmget(0, seg, 0o1000 | 0o600)
    if sid < 0:
        print("stopped", ctypes.get_errno(), total)
        break
    addr = libc.shmat(sid, None, 0)
    if addr is None or addr == ctypes.c_void_p(-1).value:
        print("shmat failed", ctypes.get_errno(), total)
        break
    ctypes.memset(addr, 1, seg)
    libc.shmdt(addr)
    total += seg
else:
    print("allocated", total)
"#;
    let o = run_python(code, "", &cfg(10_000, 5)).unwrap();
    assert!(o.success(), "{o:?}");
    let f: Vec<&str> = o.stdout.split_whitespace().collect();
    assert_eq!(f.first(), Some(&"stopped"), "{o:?}");
    let total: u64 = f[2].parse().unwrap();
    assert!(
        total <= rlvr_tasks::code::SYSV_SHM_BYTES,
        "{total} bytes of SysV shared memory: {o:?}"
    );
    if o.uid.is_some() {
        // root: the IPC namespace's limit (not a refusal of SysV IPC as a whole)
        assert!(total >= 8 << 20, "{o:?}");
        assert_eq!(f[1], libc::ENOSPC.to_string(), "{o:?}");
    }
}

#[test]
fn posix_shared_memory_beyond_its_limit_is_refused() {
    if !python_available() || !isolation_or_skip() {
        return;
    }
    // 4 MiB POSIX shm objects in /dev/shm, each mapped, touched page by page, unmapped (the
    // objects stay): a full tmpfs fails the next one (ENOSPC) or kills the toucher (SIGBUS)
    let code = r#"import mmap, os, _posixshmem
seg = 4 << 20
total = 0
for i in range(80):
    try:
        fd = _posixshmem.shm_open(f"/seg{i}", os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        os.ftruncate(fd, seg)
        m = mmap.mmap(fd, seg)
        for off in range(0, seg, 4096):
            m[off] = 1
        m.close()
        os.close(fd)
    except OSError as e:
        print("stopped", e.errno, total, flush=True)
        break
    total += seg
    print("at", total, flush=True)
else:
    print("allocated", total)
"#;
    let o = run_python(code, "", &cfg(10_000, 5)).unwrap();
    assert!(!o.stdout.contains("allocated"), "{o:?}");
    let stopped =
        o.stdout.contains("stopped") || o.termination == Termination::Signaled(libc::SIGBUS);
    assert!(stopped, "{o:?}");
    let total: u64 = o
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().last()?.parse().ok())
        .max()
        .unwrap_or(0);
    assert!(
        total <= rlvr_tasks::code::TMPFS_BYTES,
        "{total} bytes of POSIX shared memory: {o:?}"
    );
}

/// The memory a program takes with write() into a memory file (`memfd_create`) is neither
/// mapped (RLIMIT_AS) nor on a bounded tmpfs: without the filter, one program held 938 MiB of
/// host memory this way under a 512 MiB address-space limit. With it, the file cannot be
/// made, and the same program through `/dev/shm` stops at that tmpfs's size.
#[test]
fn memory_files_cannot_take_host_memory() {
    if !python_available() {
        return;
    }
    // the /dev/shm half only where it is the sandbox's own (unsandboxed, it is the host's)
    let hows = if isolation_available() {
        r#"("memfd", "shm")"#
    } else {
        r#"("memfd",)"#
    };
    let code = r#"import os
chunk = b"x" * (16 << 20)
for how in HOWS:
    total = 0
    try:
        if how == "memfd":
            fd = os.memfd_create("hog")
        else:
            fd = os.open("/dev/shm/hog", os.O_CREAT | os.O_RDWR, 0o600)
        for _ in range(64):
            os.write(fd, chunk)
            total += len(chunk)
        print(how, "wrote", total)
    except OSError as e:
        print(how, "stopped", e.errno, total)
"#
    .replace("HOWS", hows);
    let c = SandboxConfig {
        allow_unsandboxed: !isolation_available(),
        ..cfg(20_000, 10)
    };
    let o = run_python(&code, "", &c).unwrap();
    let lines: Vec<Vec<&str>> = o
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines.len(),
        if isolation_available() { 2 } else { 1 },
        "{o:?}"
    );
    assert_eq!(
        lines[0],
        ["memfd", "stopped", libc::EPERM.to_string().as_str(), "0"],
        "{o:?}"
    );
    if isolation_available() {
        // the private /dev/shm: full at its size
        assert_eq!(lines[1][1], "stopped", "{o:?}");
        let total: u64 = lines[1][3].parse().unwrap();
        assert!(total <= rlvr_tasks::code::TMPFS_BYTES, "{o:?}");
    }
}

/// Processes of one run together: six children each fill 150 MiB (each under its own 256 MiB
/// address-space limit) and hold it for 3 s. Per-process limits let the run take 900 MiB of
/// the host; as root with a memory cgroup ([`memory_cgroup`]) the run holds at most its bound
/// (the address-space limit plus its bounded file systems: 321 MiB here), its peak says so,
/// the OOM killer takes at least four children (never the supervisor: the run ends with the
/// program's own status), and the group is gone afterwards. Without a cgroup the documented
/// fallback holds: no bound is claimed, each process stops at its own limit.
#[test]
fn a_run_s_processes_together_stay_within_its_memory_bound() {
    if !python_available() || !isolation_or_skip() {
        return;
    }
    let code = r#"import os, sys, time
kids = []
for i in range(6):
    pid = os.fork()
    if pid == 0:
        try:
            b = b"x" * (150 << 20)
            print("held", i, flush=True)
            time.sleep(3)
            os._exit(0)
        except MemoryError:
            os._exit(3)
    kids.append(pid)
for pid in kids:
    _, st = os.waitpid(pid, 0)
    print("child", os.WTERMSIG(st) if os.WIFSIGNALED(st) else -os.WEXITSTATUS(st), flush=True)
"#;
    let c = cfg(30_000, 20);
    let o = run_python(code, "", &c).unwrap();
    let held = o.stdout.lines().filter(|l| l.starts_with("held")).count();
    let killed = o.stdout.lines().filter(|l| *l == "child 9").count();
    match memory_cgroup() {
        Ok(parent) => {
            let bound = c.limits.run_memory_bytes(code.len());
            assert_eq!(o.memory_bound, Some(bound), "{o:?}");
            assert!(o.out_of_memory, "{o:?}");
            // two children's 150 MiB fit under the bound, a third's does not: each of the
            // four beyond two costs one child (a holder or the one allocating; a killed holder
            // may have said "held" first)
            assert!(killed >= 4, "{held} held, {killed} killed: {o:?}");
            if let Some(peak) = o.memory_peak {
                assert!(peak <= bound, "peak {peak} above the bound {bound}: {o:?}");
                eprintln!(
                    "six 150 MiB children: {held} held at once, {killed} killed, the run's \
                     peak {} MiB under its {} MiB bound",
                    peak >> 20,
                    bound >> 20
                );
            }
            // the parent program outlived its children and ended with its own status
            assert_eq!(o.termination, Termination::Exited(0), "{o:?}");
            let group = parent.join(format!("run-{}", o.uid.unwrap()));
            assert!(!group.exists(), "{} left behind", group.display());
        }
        Err(why) => {
            eprintln!("no memory cgroup here ({why}): per-process limits only");
            assert_eq!((o.memory_bound, o.out_of_memory), (None, false), "{o:?}");
            assert!(o.success(), "{o:?}");
            assert_eq!(held, 6, "each child fits its own limit: {o:?}");
        }
    }
}

/// The memory cgroup's limit is the sum the docs state (saturating), and a run the group's OOM
/// killer hit is reported as `memory limit`, whatever signal or status it ended with.
#[test]
fn the_run_memory_bound_and_its_reason() {
    let l = Limits::default();
    assert_eq!(l.run_memory_bytes(0), (512 + 16 + 32 + 16 + 1) << 20);
    assert_eq!(
        l.run_memory_bytes(1000),
        ((512 + 16 + 32 + 16 + 1) << 20) + 1000
    );
    let huge = Limits {
        memory_bytes: u64::MAX - 5,
        ..Limits::default()
    };
    assert_eq!(huge.run_memory_bytes(10), u64::MAX);
    let outcome = |termination, out_of_memory| RunOutcome {
        termination,
        stdout: String::new(),
        stderr: "Traceback\nValueError: x\n".into(),
        wall: Duration::ZERO,
        truncated: false,
        isolated: true,
        uid: None,
        memory_bound: Some(1 << 20),
        memory_peak: None,
        out_of_memory,
    };
    assert_eq!(
        outcome(Termination::Signaled(9), true).reason(),
        "memory limit"
    );
    assert_eq!(
        outcome(Termination::Exited(1), true).reason(),
        "memory limit"
    );
    assert_eq!(
        outcome(Termination::Signaled(9), false).reason(),
        "signal 9"
    );
    assert_eq!(
        outcome(Termination::Exited(1), false).reason(),
        "exit code 1: ValueError: x"
    );
    assert_eq!(
        outcome(Termination::WallTimeout, true).reason(),
        "wall-clock limit"
    );
}

#[test]
fn the_system_call_filter_closes_kernel_interfaces() {
    if !python_available() {
        return;
    }
    let code = format!(
        r#"import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def call(name, nr, *args):
    r = libc.syscall(nr, *args)
    print(name, r, ctypes.get_errno() if r < 0 else 0)
call("unshare", {unshare}, 0x10000000)
call("ptrace", {ptrace}, 0, 0, 0, 0)
call("bpf", {bpf}, 0, None, 0)
call("perf_event_open", {perf}, None, 0, -1, -1, 0)
call("userfaultfd", {uffd}, 0)
call("io_uring_setup", {uring}, 1, ctypes.create_string_buffer(256))
call("mount", {mount}, b"none", b"/tmp", b"tmpfs", 0, None)
call("keyctl", {keyctl}, 0, -3, 0)
call("clone", {clone}, 0x10000000 | 17, None, None, None, None)
call("memfd_create", {memfd}, b"x", 0)
"#,
        unshare = libc::SYS_unshare,
        ptrace = libc::SYS_ptrace,
        bpf = libc::SYS_bpf,
        perf = libc::SYS_perf_event_open,
        uffd = libc::SYS_userfaultfd,
        uring = libc::SYS_io_uring_setup,
        mount = libc::SYS_mount,
        keyctl = libc::SYS_keyctl,
        clone = libc::SYS_clone,
        memfd = libc::SYS_memfd_create,
    );
    let c = SandboxConfig {
        allow_unsandboxed: !isolation_available(),
        ..cfg(5000, 2)
    };
    let o = run_python(&code, "", &c).unwrap();
    assert!(o.success(), "{o:?}");
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.len(), 10, "{o:?}");
    for l in lines {
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(
            (f[1], f[2]),
            ("-1", libc::EPERM.to_string().as_str()),
            "{} was not refused with EPERM: {o:?}",
            f[0]
        );
    }
}

#[test]
fn normal_programs_run_under_the_system_call_filter() {
    if !python_available() {
        return;
    }
    // threads (clone3 refused: the C library falls back to clone), subprocesses, fork,
    // multiprocessing with its semaphores, a file in the writable directory and /tmp
    let code = r#"import os, subprocess, sys, threading
from multiprocessing import Pool
out = []
t = threading.Thread(target=lambda: out.append(6 * 7))
t.start(); t.join()
print("thread", out[0])
print("subprocess", subprocess.run([sys.executable, "-c", "print(5)"], capture_output=True, text=True).stdout.strip())
pid = os.fork()
if pid == 0:
    os._exit(3)
print("fork", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
if __name__ == "__main__":
    with Pool(2) as p:
        print("pool", sum(p.map(abs, [-1, -2, 3])))
open("f.txt", "w").write("x" * 1000)
open("/tmp/g.txt", "w").write("y")
print("files", os.path.getsize("f.txt"))
"#;
    let c = SandboxConfig {
        allow_unsandboxed: !isolation_available(),
        ..cfg(10_000, 5)
    };
    let o = run_python(code, "", &c).unwrap();
    assert!(o.success(), "{o:?}");
    assert_eq!(
        o.stdout.split_whitespace().collect::<Vec<_>>(),
        [
            "thread",
            "42",
            "subprocess",
            "5",
            "fork",
            "3",
            "pool",
            "6",
            "files",
            "1000"
        ],
        "{o:?}"
    );
}
