//! `rlvr ... | head`: a stdout whose reader has gone ends `rlvr` quietly (the status SIGPIPE's
//! default action gives, no message), both where a `println!` hits the closed pipe and where
//! a subcommand's write returns the error, while SIGPIPE itself stays ignored in `rlvr` (so a
//! sandboxed program that stops reading its input cannot kill it; see
//! `crates/rlvr-tasks/tests/sandbox.rs`).

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// A pipe whose read end is already closed: (write end).
fn closed_pipe() -> OwnedFd {
    let mut fds = [0; 2];
    // SAFETY: an out-array of two descriptors.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: fresh descriptors, owned from here on.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(r);
    w
}

#[test]
fn a_closed_stdout_ends_rlvr_quietly() {
    // println! on a closed pipe (the panic hook's path)
    let o = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(["verify", "--gold", "1", "--response", "1"])
        .stdout(Stdio::from(closed_pipe()))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{:?}", o.status);
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");

    // a stream of results whose reader stops after a few bytes (the error path)
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("many.jsonl");
    std::fs::write(
        &data,
        "{\"gold\": \"1\", \"response\": \"1\"}\n".repeat(50_000),
    )
    .unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(["verify", "--jsonl", data.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = c.stdout.take().unwrap();
    let mut first = [0u8; 16];
    out.read_exact(&mut first).unwrap();
    drop(out);
    let o = c.wait_with_output().unwrap();
    assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{:?}", o.status);
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
}
