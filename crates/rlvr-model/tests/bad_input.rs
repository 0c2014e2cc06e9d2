//! Hostile or broken input through the public API: a checkpoint whose config.json has a zero
//! size, chat templates that loop, nest or repeat without bound, and files that cannot be
//! read. Each is an error that names the file (and key or template), quickly, never a panic,
//! a hang or an abort.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use candle_core::{DType, Device};
use common::{fixture, temp_dir};
use rlvr_model::{load_model, ChatMessage, ChatTokenizer, TemplateBudget};

/// A copy of the qwen2-tiny fixture with `key` of config.json set to `value`.
fn checkpoint_with(name: &str, key: &str, value: serde_json::Value) -> std::path::PathBuf {
    let dir = temp_dir(name);
    for entry in std::fs::read_dir(fixture("qwen2-tiny")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    let path = dir.join("config.json");
    let mut cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    cfg[key] = value;
    std::fs::write(&path, cfg.to_string()).unwrap();
    dir
}

#[test]
fn zero_sizes_in_a_checkpoint_config_are_errors_naming_file_and_key() {
    for key in [
        "hidden_size",
        "intermediate_size",
        "num_hidden_layers",
        "vocab_size",
    ] {
        let dir = checkpoint_with(&format!("zero-{key}"), key, 0.into());
        let err = load_model(dir.to_str().unwrap(), DType::F32, &Device::Cpu)
            .err()
            .unwrap_or_else(|| panic!("{key} = 0 loaded"));
        assert!(err.is_user_input(), "{err}");
        let msg = err.to_string();
        let file = dir.join("config.json").display().to_string();
        assert!(
            msg.contains(&file) && msg.contains(&format!("key {key}")),
            "{key}: {msg}"
        );
    }
    let dir = checkpoint_with("nan-theta", "rms_norm_eps", (-1.0).into());
    let msg = load_model(dir.to_str().unwrap(), DType::F32, &Device::Cpu)
        .err()
        .expect("a negative rms_norm_eps loaded")
        .to_string();
    assert!(msg.contains("key rms_norm_eps"), "{msg}");
}

/// The fixture's tokenizer with `template` as its chat_template.jinja, loaded from disk so
/// the template has a source to name.
fn tokenizer_with_template(name: &str, template: &str) -> (ChatTokenizer, String) {
    let dir = temp_dir(name);
    for f in ["tokenizer.json", "tokenizer_config.json"] {
        std::fs::copy(fixture("qwen2-tiny").join(f), dir.join(f)).unwrap();
    }
    let path = dir.join("chat_template.jinja");
    std::fs::write(&path, template).unwrap();
    let tok = ChatTokenizer::from_dir(&dir).unwrap();
    (tok, path.display().to_string())
}

fn render_fails_fast(name: &str, template: &str, expect: &str) {
    let (tok, source) = tokenizer_with_template(name, template);
    let t = Instant::now();
    let res = tok.apply_chat_template(&[ChatMessage::new("user", "1+1?")], true);
    let took = t.elapsed();
    let err = res.expect_err(&format!("{name} rendered")).to_string();
    eprintln!("{name}: {took:?}: {}", err.lines().next().unwrap_or(""));
    assert!(
        took < Duration::from_secs(1),
        "{name}: took {took:?} to fail: {err}"
    );
    assert!(
        err.contains(&source) && err.contains(expect),
        "{name}: {err}"
    );
}

#[test]
fn hostile_chat_templates_fail_quickly_naming_the_template() {
    // 10^10 iterations (each range stays under minijinja's own 100,000-item cap)
    render_fails_fast(
        "loop",
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "work budget",
    );
    // the same loop writing output: the fuel or the output budget stops it
    render_fails_fast(
        "loop-output",
        "{% for i in range(100000) %}{% for j in range(100000) %}{{ messages[0].content }}{% endfor %}{% endfor %}",
        "budget",
    );
    // 2^25 calls of a doubly recursive macro (shallow enough for the recursion limit)
    render_fails_fast(
        "exponential-macro",
        "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(25) }}",
        "work budget",
    );
    // a string doubled 60 times (2^60 bytes)
    render_fails_fast(
        "doubling",
        "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
        "budget",
    );
    // one huge repetition and one huge pycompat padding
    render_fails_fast("repeat", "{{ 'x' * 100000000000 }}", "budget");
    render_fails_fast(
        "replace",
        "{{ ('x' * 1000).replace('x', 'y' * 100000000) }}",
        "budget",
    );
    // 2 MB of output in one cheap expression: the output budget (1 MiB + 4 bytes per input
    // byte) stops it before the fuel does
    render_fails_fast("output", "{{ 'x' * 2000000 }}", "output passed its budget");
    // a list doubled in a loop: lazy concatenations materialize past depth 32 (2^33 items),
    // charged against the fuel before the allocation (the vendored minijinja's patch)
    render_fails_fast(
        "doubling-list",
        "{% set ns = namespace(x=[1]) %}{% for i in range(40) %}{% set ns.x = ns.x + ns.x %}{% endfor %}{{ ns.x|length }}",
        "work budget",
    );
    // the same with an unsized iterable (flattened, not materialized, past depth 32)
    render_fails_fast(
        "doubling-iterable",
        "{% set ns = namespace(x=range(1)) %}{% for i in range(40) %}{% set ns.x = ns.x + ns.x %}{% endfor %}{{ ns.x|length }}",
        "work budget",
    );
    // a doubly recursive macro doubling its argument (no namespace, no loop)
    render_fails_fast(
        "doubling-macro",
        "{% macro d(x, n) %}{% if n > 0 %}{{ d(x + x, n - 1) }}{% else %}{{ x|length }}{% endif %}{% endmacro %}{{ d([1], 40) }}",
        "work budget",
    );
    // a lazily doubled list printed through tojson: the JSON stops at the output budget
    render_fails_fast(
        "doubling-tojson",
        "{% set ns = namespace(x=[1]) %}{% for i in range(30) %}{% set ns.x = ns.x + ns.x %}{% endfor %}{{ ns.x|tojson }}",
        "budget",
    );
    // a list nested 30 times holding its inner list twice (2^30 leaves, built in 30 steps)
    // printed with pprint: stops at the output budget (was: an abort on a 1.2 GB allocation)
    render_fails_fast(
        "nested-pprint",
        "{% set ns = namespace(x=[1]) %}{% for i in range(30) %}{% set ns.x = [ns.x, ns.x] %}{% endfor %}{{ ns.x|pprint }}",
        "budget",
    );
    // two such lists compared with == (2^40 item comparisons; was: 29 s at depth 26,
    // doubling each level): the comparison is charged by the items it would visit
    render_fails_fast(
        "nested-compare",
        "{% set ns = namespace(x=[1], y=[1]) %}{% for i in range(40) %}{% set ns.x = [ns.x, ns.x] %}{% set ns.y = [ns.y, ns.y] %}{% endfor %}{{ ns.x == ns.y }}",
        "work budget",
    );
    // unbounded recursion: stops at the recursion limit, without overflowing the stack of a
    // test thread (2 MiB)
    render_fails_fast(
        "recursion",
        "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
        "recursion",
    );
}

#[test]
fn template_budget_scales_with_the_input() {
    // a long conversation renders: the budget grows with the messages
    let template = std::fs::read_to_string(fixture("chat").join("qwen3.jinja")).unwrap();
    let (tok, _) = tokenizer_with_template("long-conversation", &template);
    let long = "word ".repeat(200_000); // 1 MB per message
    let msgs: Vec<ChatMessage> = (0..8)
        .map(|i| ChatMessage::new(if i % 2 == 0 { "user" } else { "assistant" }, &*long))
        .collect();
    let text = tok.apply_chat_template(&msgs, true).unwrap();
    assert!(text.len() > 8 * long.len(), "{}", text.len());
    let b = TemplateBudget::for_input(8 << 20);
    assert!(b.fuel > TemplateBudget::BASE_FUEL && b.output_bytes > 32 << 20);
    assert_eq!(
        TemplateBudget::for_input(0).output_bytes,
        TemplateBudget::BASE_OUTPUT_BYTES
    );
}

#[test]
fn io_errors_name_the_path() {
    // a path under a regular file: ENOTDIR, through the public loaders and savers
    let dir = temp_dir("io-path");
    let file = dir.join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let under = file.join("x");
    let tok = ChatTokenizer::from_dir(&fixture("qwen2-tiny")).unwrap();
    let err = tok.save(&under).unwrap_err().to_string();
    assert!(err.contains(&*under.display().to_string()), "{err}");
    let err = rlvr_model::DecoderConfig::from_file(&under.join("config.json"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(Path::new("file.txt/x/config.json").to_str().unwrap()),
        "{err}"
    );
}

/// A copy of the qwen2-tiny fixture whose tokenizer.json has `edit` applied.
fn tokenizer_dir_with(name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> std::path::PathBuf {
    let dir = temp_dir(name);
    for f in ["tokenizer.json", "tokenizer_config.json"] {
        std::fs::copy(fixture("qwen2-tiny").join(f), dir.join(f)).unwrap();
    }
    let path = dir.join("tokenizer.json");
    let mut tok: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut tok);
    std::fs::write(&path, tok.to_string()).unwrap();
    dir
}

/// Loading `dir`'s tokenizer fails quickly, naming its tokenizer.json and saying `expect`.
fn tokenizer_refused(dir: &Path, expect: &str) {
    let t = Instant::now();
    let err = ChatTokenizer::from_dir(dir)
        .err()
        .unwrap_or_else(|| panic!("{}: loaded", dir.display()));
    let took = t.elapsed();
    assert!(err.is_user_input(), "{err}");
    let msg = err.to_string();
    let file = dir.join("tokenizer.json").display().to_string();
    assert!(msg.contains(&file) && msg.contains(expect), "{msg}");
    assert!(took < Duration::from_secs(10), "{took:?}: {msg}");
}

#[test]
fn hostile_tokenizer_json_is_refused_naming_the_file() {
    // a replacement far longer than a match
    let dir = tokenizer_dir_with("tok-replace-long", |t| {
        t["normalizer"] = serde_json::json!({
            "type": "Replace", "pattern": {"String": "a"}, "content": "x".repeat(100_000)
        });
    });
    tokenizer_refused(&dir, "Replace rule writes 100000 bytes per match");
    // an empty pattern (it matches between every two characters), inside a sequence
    let dir = tokenizer_dir_with("tok-replace-empty", |t| {
        t["normalizer"] = serde_json::json!({"type": "Sequence", "normalizers": [
            {"type": "NFC"},
            {"type": "Replace", "pattern": {"String": ""}, "content": "y"}
        ]});
    });
    tokenizer_refused(&dir, "empty or missing pattern");
    // a short replacement of every character: the probe grows 16 times
    let dir = tokenizer_dir_with("tok-replace-every", |t| {
        t["normalizer"] = serde_json::json!({
            "type": "Replace", "pattern": {"Regex": "."}, "content": "0123456789abcdef"
        });
    });
    tokenizer_refused(&dir, "more than 8 times");
    // eight 16-fold rules, each within the 16-byte rule, chained: refused from the file (the
    // probe would have grown 16^8 times: an abort on a 1.7 GB allocation)
    let dir = tokenizer_dir_with("tok-replace-chain", |t| {
        let rule = serde_json::json!({
            "type": "Replace", "pattern": {"Regex": "."}, "content": "0123456789abcdef"
        });
        t["normalizer"] = serde_json::json!({"type": "Sequence", "normalizers": vec![rule; 8]});
    });
    let t = std::time::Instant::now();
    tokenizer_refused(&dir, "in the worst case");
    assert!(t.elapsed().as_secs() < 10);
    // 100,000 Prepend rules (55.6 s before the growth check): refused from their count
    let dir = tokenizer_dir_with("tok-prepend-many", |t| {
        let rule = serde_json::json!({"type": "Prepend", "prepend": "▁"});
        t["normalizer"] =
            serde_json::json!({"type": "Sequence", "normalizers": vec![rule; 100_000]});
    });
    let t = std::time::Instant::now();
    tokenizer_refused(&dir, "Sequence of 100000 rules");
    assert!(t.elapsed().as_secs() < 10);
    // not JSON at all
    let dir = tokenizer_dir_with("tok-garbage", |_| {});
    std::fs::write(dir.join("tokenizer.json"), "{\"model\": [1, 2").unwrap();
    tokenizer_refused(&dir, "invalid JSON");
}
