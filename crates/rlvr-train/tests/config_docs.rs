//! configs/README.md's key tables against the config structs: every key the config has is
//! documented in its section, every documented key exists, and every documented default is the
//! default `TrainConfig::default()` holds (`unset` for an optional key).

use std::collections::BTreeMap;
use std::path::Path;

use rlvr_train::TrainConfig;

/// `section.key` -> the default column's entry, from the `## Keys` tables.
fn documented() -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let keys_part = text.split("\n## Keys").nth(1).expect("a `## Keys` section");
    let keys_part = keys_part.split("\n## ").next().unwrap();
    let mut out = BTreeMap::new();
    let mut section = None;
    for line in keys_part.lines() {
        if let Some(rest) = line.strip_prefix("### `[") {
            section = Some(rest.trim_end_matches("]`").to_string());
            continue;
        }
        let Some(sec) = &section else { continue };
        let cells: Vec<&str> = line.split(" | ").collect();
        if !line.starts_with("| `") || cells.len() < 3 {
            continue;
        }
        let keys: Vec<&str> = cells[0]
            .trim_start_matches("| ")
            .split(", ")
            .map(|k| k.trim_matches('`'))
            .collect();
        // one default per key, or one for all (a list default such as `[]` has no comma)
        let defaults: Vec<&str> = if keys.len() == 1 {
            vec![cells[1]]
        } else {
            cells[1].split(", ").collect()
        };
        assert_eq!(
            keys.len(),
            defaults.len(),
            "configs/README.md [{sec}]: {} keys but defaults {:?}",
            keys.len(),
            cells[1]
        );
        for (k, d) in keys.iter().zip(defaults) {
            let prev = out.insert(format!("{sec}.{k}"), d.trim().to_string());
            assert!(
                prev.is_none(),
                "configs/README.md documents {sec}.{k} twice"
            );
        }
    }
    assert!(out.len() > 50, "parsed only {} keys", out.len());
    out
}

/// The default of every key `to_toml` writes (optional keys left unset are absent).
fn defaults() -> BTreeMap<String, toml::Value> {
    let table: toml::Table = toml::from_str(&TrainConfig::default().to_toml()).unwrap();
    let mut out = BTreeMap::new();
    for (section, keys) in table {
        for (k, v) in keys.as_table().unwrap() {
            out.insert(format!("{section}.{k}"), v.clone());
        }
    }
    out
}

/// A documented default as a TOML value: backticks dropped, a bare word taken as a string.
fn parse_doc(d: &str) -> toml::Value {
    let d = d.trim_matches('`');
    let table: Result<toml::Table, _> = toml::from_str(&format!("v = {d}"));
    match table {
        Ok(t) => t["v"].clone(),
        Err(_) => toml::Value::String(d.to_string()),
    }
}

fn same(doc: &toml::Value, real: &toml::Value) -> bool {
    match (doc, real) {
        (toml::Value::Integer(a), toml::Value::Float(b)) => (*a as f64 - b).abs() < 1e-12,
        (toml::Value::Float(a), toml::Value::Float(b)) => {
            (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
        }
        (a, b) => a == b,
    }
}

#[test]
fn every_key_is_documented_with_its_default() {
    let doc = documented();
    let real = defaults();
    let missing: Vec<&String> = real.keys().filter(|k| !doc.contains_key(*k)).collect();
    assert!(
        missing.is_empty(),
        "keys missing from configs/README.md: {missing:?}"
    );
    let mut wrong = Vec::new();
    for (key, value) in &real {
        let d = &doc[key];
        if !same(&parse_doc(d), value) {
            wrong.push(format!("{key}: documented {d}, default {value}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "wrong defaults in configs/README.md:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_documented_key_exists() {
    let real = defaults();
    for (key, d) in documented() {
        if real.contains_key(&key) {
            continue;
        }
        // an optional key unset by default: documented as unset, and the config accepts it
        assert_eq!(
            d, "unset",
            "{key}: not in the default config, documented default {d}"
        );
        let (section, name) = key.split_once('.').unwrap();
        let err = TrainConfig::from_toml_str(&format!("[{section}]\n{name} = 0\n"), "doc check")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            !err.contains("unknown field"),
            "configs/README.md documents {key}, which the config does not have: {err}"
        );
    }
}
