//! What a command prints on stdout, written as a fallible write: a stdout that cannot take it
//! (a full disk, `> /dev/full`, an I/O error) ends the command with an error naming stdout, not
//! a panic. [`outln!`] and [`out!`] are `println!` and `print!` that return that error.

use std::io::Write;

/// A write to stdout failed.
#[derive(Debug, thiserror::Error)]
#[error("writing to stdout: {0}")]
pub struct StdoutError(#[source] pub std::io::Error);

/// Writes `args` to stdout, flushed (so that a full disk is seen here, not at exit).
pub fn write(args: std::fmt::Arguments<'_>) -> Result<(), StdoutError> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.flush())
        .map_err(StdoutError)
}

/// `println!` that returns [`StdoutError`] instead of panicking.
macro_rules! outln {
    () => {
        $crate::output::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that returns [`StdoutError`] instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*))
    };
}

pub(crate) use {out, outln};

/// Writes `args` to stderr, for notes and progress: a stderr that cannot take it is passed
/// over (the command's result is on stdout or in its files), never a panic.
pub fn note(args: std::fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.flush());
}

/// `eprintln!` that passes over a stderr that cannot be written ([`note`]).
macro_rules! noteln {
    () => {
        $crate::output::note(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::note(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use noteln;
