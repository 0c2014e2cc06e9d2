//! `rlvr export verl|trl`: the scripts are data, not code. Hostile values (line breaks, quotes,
//! `$(...)`, backticks, `"""`, backslashes, a backslash-N, non-ASCII, Unicode line separators)
//! in every place a config, its file name or a `--set` can put them are exported, and the
//! scripts are run with the engines replaced by recorders: nothing runs but the intended
//! commands (no `PWNED` file appears), the recorded verl command line is exactly the exported
//! overrides, and the TRL script compiles and hands every value to `GRPOConfig` and the
//! trainer as it was. (python/tests/test_export.py reads the same overrides back through
//! verl's own Hydra config.)

use std::path::{Path, PathBuf};
use std::process::Command;

/// Payloads that run `touch PWNED_<where>` in the current directory if they ever execute, in
/// shell or in Python.
fn payload(tag: &str) -> String {
    format!(
        "\n$(touch PWNED_{tag}_dollar) `touch PWNED_{tag}_tick`\n\
         touch PWNED_{tag}_line\n\"\"\"\nopen('PWNED_{tag}_py', 'w')\n\"\"\" \\N{{x}} \\\"'"
    )
}

/// A string as a TOML basic string (every control character escaped).
fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A data directory that starts with `-` and holds a payload: one option value, never run.
const DATA_DIR: &str = "-d $(touch PWNED_datadir) 'x'";

/// An evaluation data file whose name is a payload: its data file is a plain name.
const EVAL_FILE: &str = "/data/my set $(touch PWNED_eval) 'x'.jsonl";
/// Its data file's stem: every character outside `[A-Za-z0-9._-]` as `_`.
const EVAL_STEM: &str = "my_set___touch_PWNED_eval___x_";

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    config: PathBuf,
    /// what the config holds that must arrive intact
    model: String,
    runs_dir: String,
    run_name: String,
    rollout_dir: String,
    kwarg: String,
    set: Vec<String>,
}

impl Fixture {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        // the config's own path: a directory whose name would close a docstring or a comment
        let dir = root.join("cfg \"\"\" \\N $(touch PWNED_path) `x`\n'q'");
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("recipe \u{2028} π.toml");
        // Hydra values cannot carry control characters (refused, tested below): these hold
        // everything else
        let model = "/models/it's \"q\" $(touch PWNED_model) `x` ${oc.env:HOME} \\ π\\".to_string();
        let runs_dir = "/runs/a b/$(touch PWNED_runs)/'\\'".to_string();
        let run_name = "run 'q' \"d\" $(touch PWNED_name) `x` π".to_string();
        let rollout_dir = "/dumps/${DATA} '$(touch PWNED_dump)'".to_string();
        let kwarg = "it's \"x\" ${y} \\ $(touch PWNED_kwarg)".to_string();
        let stops: Vec<String> = vec![payload("stop"), "\\N".into(), "\u{2029}".into()];
        let stops: Vec<String> = stops.iter().map(|s| toml_str(s)).collect();
        let toml = format!(
            "[model]\npath = {model}\ndtype = \"bf16\"\n\
             [data]\ntrain_files = \"gsm8k_train\"\napply_chat_template = true\n\
             data_dir = {data_dir}\n\
             chat_template_kwargs = {{ enable_thinking = false, note = {kwarg} }}\n\
             [rollout]\nstop_strings = [{stops}]\n\
             [eval]\ndatasets = [{eval_file}]\n\
             [trainer]\nruns_dir = {runs_dir}\nrun_name = {run_name}\nrollout_data_dir = {rollout_dir}\n",
            model = toml_str(&model),
            data_dir = toml_str(DATA_DIR),
            kwarg = toml_str(&kwarg),
            stops = stops.join(", "),
            eval_file = toml_str(EVAL_FILE),
            runs_dir = toml_str(&runs_dir),
            run_name = toml_str(&run_name),
            rollout_dir = toml_str(&rollout_dir),
        );
        std::fs::write(&config, toml).unwrap();
        // a --set whose text is hostile too (its value is a valid TOML string)
        let set = vec![format!(
            "rollout.stop_strings=[{}]",
            toml_str(&payload("set"))
        )];
        Self {
            _tmp: tmp,
            root,
            config,
            model,
            runs_dir,
            run_name,
            rollout_dir,
            kwarg,
            set,
        }
    }

    fn export(&self, args: &[&str]) -> std::process::Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rlvr"));
        c.arg("export").args(args).arg(&self.config);
        for s in &self.set {
            c.arg("--set").arg(s);
        }
        c.current_dir(&self.root).output().unwrap()
    }

    /// Asserts that an exported `script` ran to success (`o`) and ran nothing it does not say:
    /// no payload left a `PWNED` file anywhere under the fixture's root.
    fn ran_only_what_it_says(&self, o: &std::process::Output, script: &str) {
        assert!(
            o.status.success(),
            "{}\n{script}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(self.pwned(), Vec::<String>::new(), "{script}");
    }

    fn pwned(&self) -> Vec<String> {
        let mut found = Vec::new();
        for entry in walk(&self.root) {
            let name = entry.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("PWNED") {
                found.push(entry.display().to_string());
            }
        }
        found
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

fn stdout(o: &std::process::Output) -> String {
    assert!(
        o.status.success(),
        "{:?}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// python3 on PATH, or the shared skip rule (a failure under CI).
fn python() -> Option<PathBuf> {
    rlvr_test_support::python(&which("python3"))
}

/// Writes an executable file.
fn script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_verl_script_runs_only_the_exported_command() {
    let Some(py) = python() else { return };
    let fx = Fixture::new();
    let text = stdout(&fx.export(&["verl"]));
    let overrides: Vec<String> = stdout(&fx.export(&["verl", "--overrides-only"]))
        .lines()
        .map(str::to_string)
        .collect();
    // every override a line of its own, every comment one line
    assert!(overrides.iter().all(|o| o.contains('=')), "{overrides:?}");
    for line in text.lines().filter(|l| l.starts_with('#')) {
        assert!(
            !line.contains('\u{2028}') && !line.contains('\u{2029}'),
            "{line}"
        );
    }

    // recorders in place of python3 (main_ppo and the reward-path probe) and rlvr
    let bin = fx.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let record = fx.root.join("recorded.jsonl");
    script(
        &bin.join("python3"),
        &format!(
            "#!/bin/sh\nexec {py} -c 'import json, sys, os\n\
             args = sys.argv[1:]\n\
             if args[:1] == [\"-c\"]:\n    sys.stdout.write(\"/fake/reward.py\"); sys.exit(0)\n\
             with open(os.environ[\"RECORD\"], \"a\") as f:\n    \
             f.write(json.dumps({{\"python3\": args, \"ext\": os.environ.get(\"VERL_USE_EXTERNAL_MODULES\")}}) + \"\\n\")\n' \"$@\"\n",
            py = py.display()
        ),
    );
    script(
        &bin.join("fake-rlvr"),
        &format!(
            "#!/bin/sh\nexec {py} -c 'import json, sys, os\n\
             args = sys.argv[1:]\n\
             open(args[args.index(\"--out\") + 1], \"w\").close()\n\
             with open(os.environ[\"RECORD\"], \"a\") as f:\n    f.write(json.dumps({{\"rlvr\": args}}) + \"\\n\")\n' \"$@\"\n",
            py = py.display()
        ),
    );
    let verl_sh = fx.root.join("verl.sh");
    std::fs::write(&verl_sh, &text).unwrap();
    let data = fx.root.join("data dir");
    let o = Command::new("bash")
        .arg(&verl_sh)
        .arg("trainer.extra=1")
        .current_dir(&fx.root)
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .env("RECORD", &record)
        .env("RLVR", bin.join("fake-rlvr"))
        .env("DATA", &data)
        .env("N_GPUS", "2")
        .output()
        .unwrap();
    fx.ran_only_what_it_says(&o, &text);

    let calls: Vec<serde_json::Value> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // the data files, then main_ppo once
    assert_eq!(calls.len(), 3, "{calls:?}");
    let data_file = format!("{}/gsm8k_train.parquet", data.display());
    let eval_file = format!("{}/{EVAL_STEM}.parquet", data.display());
    let export = |name: &str, split: &str, out: &str| {
        serde_json::json!([
            "export",
            "data",
            "--prompt-template",
            "raw",
            "--split",
            split,
            format!("--data-dir={DATA_DIR}"),
            "--out",
            out,
            "--",
            name
        ])
    };
    assert_eq!(calls[0]["rlvr"], export("gsm8k_train", "train", &data_file));
    assert_eq!(calls[1]["rlvr"], export(EVAL_FILE, "test", &eval_file));
    let calls = &calls[1..];
    assert_eq!(calls[1]["ext"], "rlvr.verl");
    let mut expected: Vec<String> = vec!["-m".into(), "verl.trainer.main_ppo".into()];
    for o in &overrides {
        // the script's variables, where the exporter put them (a value's own `${DATA}` is
        // escaped as `\${DATA}` and stays text)
        let mut filled = String::new();
        let mut rest = o.as_str();
        while let Some(i) = rest.find("${") {
            let (head, tail) = rest.split_at(i);
            filled.push_str(head);
            let var = ["${DATA}", "${N_GPUS}", "${REWARD_PY}"]
                .into_iter()
                .find(|v| tail.starts_with(v) && !head.ends_with('\\'));
            match var {
                Some("${DATA}") => filled.push_str(&data.display().to_string()),
                Some("${N_GPUS}") => filled.push('2'),
                Some(_) => filled.push_str("/fake/reward.py"),
                None => {
                    filled.push_str("${");
                    rest = &tail[2..];
                    continue;
                }
            }
            rest = &tail[var.unwrap().len()..];
        }
        filled.push_str(rest);
        expected.push(filled);
    }
    expected.push("trainer.extra=1".into());
    let got: Vec<String> = calls[1]["python3"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, expected);
    // the values are there, quoted for Hydra (python/tests/test_export.py decodes them with
    // Hydra itself)
    let get = |key: &str| {
        overrides
            .iter()
            .find_map(|o| o.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("{key} missing: {overrides:?}"))
            .to_string()
    };
    assert!(get("actor_rollout_ref.model.path").contains("PWNED_model"));
    assert!(get("trainer.experiment_name").contains("PWNED_name"));
    assert!(get("trainer.default_local_dir").contains("PWNED_runs"));
    assert!(get("trainer.rollout_data_dir").contains("PWNED_dump"));
    assert!(get("++data.apply_chat_template_kwargs").starts_with("{enable_thinking:false,note:'"));
    // the keys not carried are named, their values on one line each
    assert!(text.contains("#   rollout.stop_strings = "), "{text}");
}

#[test]
fn the_trl_script_compiles_and_carries_every_value() {
    let Some(py) = python() else { return };
    let fx = Fixture::new();
    let text = stdout(&fx.export(&["trl"]));
    // fake datasets, trl and rlvr packages that record what the script hands them
    let fake = fx.root.join("fake");
    std::fs::create_dir_all(fake.join("rlvr")).unwrap();
    std::fs::write(
        fake.join("datasets.py"),
        "class _DS:\n    features = {'extra_info': {}}\n    column_names = ['prompt']\n\
         \x20   def map(self, f, remove_columns=()):\n        return self\n\
         CALLS = []\n\
         def load_dataset(kind, data_files):\n    CALLS.append(data_files)\n    return {'train': _DS()}\n",
    )
    .unwrap();
    std::fs::write(
        fake.join("trl.py"),
        "class GRPOConfig:\n    def __init__(self, **kw):\n        self.kw = kw\n",
    )
    .unwrap();
    std::fs::write(
        fake.join("rlvr/__init__.py"),
        "def math_reward(*a, **k):\n    return []\n",
    )
    .unwrap();
    std::fs::write(
        fake.join("rlvr/trl.py"),
        "import json, os, sys\nimport datasets\n\
         class GRPOTrainer:\n    def __init__(self, model, reward_funcs, args, train_dataset, eval_dataset):\n\
         \x20       main = sys.modules['__main__']\n\
         \x20       with open(os.environ['RECORD'], 'w') as f:\n\
         \x20           json.dump({'model': model, 'args': args.kw, 'doc': main.__doc__, 'data': datasets.CALLS}, f, default=str)\n\
         \x20       self.rlvr_verdict = 'ok'\n\
         \x20   def train(self):\n        pass\n",
    )
    .unwrap();
    let trl_py = fx.root.join("trl_script.py");
    std::fs::write(&trl_py, &text).unwrap();
    let record = fx.root.join("trl.json");
    let o = Command::new(&py)
        .arg(&trl_py)
        .current_dir(&fx.root)
        .env("PYTHONPATH", &fake)
        .env("RECORD", &record)
        .env("DATA", fx.root.join("d"))
        .output()
        .unwrap();
    fx.ran_only_what_it_says(&o, &text);
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(rec["model"], fx.model.as_str());
    assert_eq!(
        rec["args"]["output_dir"],
        format!("{}/{}", fx.runs_dir, fx.run_name)
    );
    assert_eq!(
        rec["args"]["chat_template_kwargs"],
        serde_json::json!({"enable_thinking": false, "note": fx.kwarg})
    );
    let d = fx.root.join("d");
    assert_eq!(
        rec["data"],
        serde_json::json!([
            format!("{}/gsm8k_train.parquet", d.display()),
            format!("{}/{EVAL_STEM}.parquet", d.display())
        ])
    );
    // the docstring holds the config's path and the --set text exactly, and names the keys
    // not carried
    let doc = rec["doc"].as_str().unwrap();
    let origin = format!("{} --set {}", fx.config.display(), fx.set[0]);
    assert!(doc.contains(&origin), "{doc}");
    assert!(doc.contains("rollout.stop_strings = "), "{doc}");
    assert!(doc.contains("trainer.rollout_data_dir = "), "{doc}");
    assert!(doc.contains(&toml_str(&fx.rollout_dir)), "{doc}");
}

#[test]
fn values_hydra_cannot_carry_are_refused_by_key() {
    let fx = Fixture::new();
    for (set, key) in [
        ("model.path=\"a\\nb\"", "model.path"),
        ("trainer.runs_dir=\"r\\u001b[2J\"", "trainer.runs_dir"),
        (
            "data.chat_template_kwargs={\"a b\"=1}",
            "data.chat_template_kwargs",
        ),
        (
            "data.chat_template_kwargs={x=\"l\\nm\"}",
            "data.chat_template_kwargs",
        ),
        ("trainer.run_name=\"a\\nb\"", "trainer.run_name"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_rlvr"))
            .args(["export", "verl"])
            .arg(&fx.config)
            .args(["--set", set])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{set}: {err}");
        assert!(err.contains(key), "{set}: {err}");
        assert!(o.stdout.is_empty(), "{set}");
    }
}

/// The absolute path of a program on PATH.
fn which(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}
