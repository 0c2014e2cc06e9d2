//! Loading a shared library at run time (the BLAS libraries of [`super::blas`] and
//! [`super::matmul::bf16`]), including one whose dependencies sit beside it without a search
//! path that finds them.
//!
//! Libraries that Python wheels ship are renamed and gathered in one directory per package
//! (auditwheel's `<package>.libs/`, e.g. `aoclda.libs/libblis-mt-3117697f.so.5.3.0` needing
//! `libomp-75ed4440.so`). The package's own Python extension finds them through its `RPATH`;
//! the libraries themselves may carry none, so the dynamic loader cannot find a dependency when
//! another program opens the library by its path. [`open`] then loads each missing dependency
//! from the library's own directory first (globally, so the library's references resolve to
//! it), and retries: what `LD_LIBRARY_PATH=<that directory>` would do, for that directory only.
//! (The loader matches a needed name against the loaded libraries' sonames, which auditwheel
//! sets to the new names; a dependency without a soname is not matched, and the loader's
//! message stands.)
//!
//! # Contract
//! * Only files in the directory of a library named by its path are loaded on its behalf, and
//!   only names the loader reported missing; a bare name (`libopenblas.so.0`) is left to the
//!   loader's own search.
//! * At most [`MAX_DEPENDENCIES`] dependencies are loaded this way per library.
//! * Never panics; the error names the library and, where a dependency failed, that one too.

use std::path::Path;

/// How many missing dependencies [`open`] loads from a library's directory before giving up.
pub const MAX_DEPENDENCIES: usize = 8;

/// The loader's words for a file it could not find, after the file's name.
const NOT_FOUND: &str = ": cannot open shared object file";

/// Loads the shared library `name` (a path or a name for the loader's search), loading the
/// dependencies the loader cannot find from its directory when `name` is a path (module
/// docs). The error reads `<name> could not be loaded (<loader's message>)`.
pub fn open(name: &str) -> Result<libloading::Library, String> {
    let dir = Path::new(name)
        .parent()
        .filter(|d| !d.as_os_str().is_empty());
    // the dependencies loaded for it stay loaded while `name` is tried; once `name` is loaded,
    // its own references keep them (dropping these handles only lowers their counts)
    let mut deps = Vec::new();
    loop {
        // SAFETY: loading a shared library runs its initializers; the libraries opened here
        // are BLAS builds (the search's names, or one the user named).
        let err = match unsafe { libloading::Library::new(name) } {
            Ok(lib) => return Ok(lib),
            Err(e) => e.to_string(),
        };
        let fail = || format!("{name} could not be loaded ({err})");
        let (Some(dir), Some(missing)) = (dir, missing_dependency(&err, name)) else {
            return Err(fail());
        };
        let beside = dir.join(missing);
        if deps.len() >= MAX_DEPENDENCIES || !beside.is_file() {
            return Err(fail());
        }
        deps.push(open_global(&beside).map_err(|e| {
            format!(
                "{name} could not be loaded: its dependency {} did not load ({e})",
                beside.display()
            )
        })?);
    }
}

/// The file name of the dependency the loader's message `err` says it could not find, when it
/// is not `name`'s own file.
fn missing_dependency<'a>(err: &'a str, name: &str) -> Option<&'a str> {
    let before = &err[..err.find(NOT_FOUND)?];
    // the message may start with libloading's own words; the file name is the last word
    let file = before.rsplit([' ', '(', ':']).next()?.trim();
    let own = Path::new(name).file_name()?.to_str()?;
    (!file.is_empty() && file != own && !file.contains('/')).then_some(file)
}

/// Loads `path` with its symbols global (as a dependency found by the loader would be).
fn open_global(path: &Path) -> Result<libloading::Library, String> {
    #[cfg(unix)]
    {
        use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
        // SAFETY: as in `open`: a dependency of a BLAS library, from that library's directory.
        unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }
            .map(libloading::Library::from)
            .map_err(|e| e.to_string())
    }
    #[cfg(not(unix))]
    {
        // SAFETY: as above.
        unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_missing_dependency_is_read_from_the_loaders_message() {
        let name = "/w/aoclda.libs/libblis-mt-3117697f.so.5.3.0";
        let err = "libomp-75ed4440.so: cannot open shared object file: No such file or directory";
        assert_eq!(missing_dependency(err, name), Some("libomp-75ed4440.so"));
        // the library itself missing is not a dependency
        let own = format!("{name}: cannot open shared object file: No such file or directory");
        assert_eq!(missing_dependency(&own, name), None);
        // other failures are not a missing file
        assert_eq!(missing_dependency("invalid ELF header", name), None);
        // a path in the message is never taken as a file of the library's directory
        let err = "/etc/x.so: cannot open shared object file";
        assert_eq!(missing_dependency(err, name), None);
    }

    #[test]
    fn a_missing_library_is_named() {
        let e = open("/nonexistent/libnothing.so").err().unwrap();
        assert!(
            e.starts_with("/nonexistent/libnothing.so could not be loaded ("),
            "{e}"
        );
    }

    /// A library whose dependency sits beside it, with no search path to it: the loader alone
    /// fails, `open` loads it. Built with the C compiler (skipped without one, outside CI).
    #[test]
    fn a_dependency_beside_the_library_is_loaded_from_its_directory() {
        let dir = std::env::temp_dir().join(format!("rlvr-library-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cc = |args: &[&str]| {
            std::process::Command::new("cc")
                .args(args)
                .current_dir(&dir)
                .status()
                .map(|s| s.success())
                .unwrap_or(false)
        };
        std::fs::write(
            dir.join("dep.c"),
            "int rlvr_dep_value(void) { return 41; }\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("main.c"),
            "int rlvr_dep_value(void);\nint rlvr_main_value(void) { return rlvr_dep_value() + 1; }\n",
        )
        .unwrap();
        // the dependency names itself (its SONAME), as auditwheel's renamed libraries do: the
        // loader matches a library's needed names against the sonames of those loaded
        let built = cc(&[
            "-shared",
            "-fPIC",
            "-Wl,-soname,libdep-0a1b.so",
            "-o",
            "libdep-0a1b.so",
            "dep.c",
        ]) && cc(&[
            "-shared",
            "-fPIC",
            "-o",
            "libmain-2c3d.so.1",
            "main.c",
            "-L.",
            "-l:libdep-0a1b.so",
        ]);
        if !built {
            assert!(
                std::env::var_os("CI").is_none(),
                "no C compiler to build the test libraries"
            );
            eprintln!("skipped: no C compiler");
            return;
        }
        let main = dir.join("libmain-2c3d.so.1").display().to_string();
        // the loader alone cannot find the dependency
        // SAFETY: the test's own two-function libraries.
        let alone = unsafe { libloading::Library::new(&main) };
        assert!(alone.is_err());
        let lib = open(&main).unwrap();
        // SAFETY: `int f(void)`, as compiled above.
        let f = unsafe { lib.get::<unsafe extern "C" fn() -> i32>(b"rlvr_main_value\0") }.unwrap();
        assert_eq!(unsafe { f() }, 42);
        // without the dependency beside it, the loader's message stands
        drop(lib);
        std::fs::remove_file(dir.join("libdep-0a1b.so")).unwrap();
        let copy = dir.join("libmain-copy.so");
        std::fs::copy(&main, &copy).unwrap();
        let e = open(&copy.display().to_string()).err().unwrap();
        assert!(
            e.contains("libdep-0a1b.so: cannot open shared object file"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
