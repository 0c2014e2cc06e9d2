//! rlvr's single-str pickle reader against streams made by Python's own `pickle.dumps`
//! (tests/fixtures/pickles.json, written by scripts/tasks/make_pickle_fixtures.py): every
//! pickled `str` at protocols 2 to 5 reads back to the same text; lists, ints, bytes, tuples,
//! the GLOBAL/REDUCE exploit, protocol 0, trailing data and truncated streams are refused with
//! the opcode or the reason named.

use std::io::Read;
use std::path::Path;

use base64::Engine;
use rlvr_tasks::livecodebench::{decode_private_tests, MAX_DECODED_TESTS_BYTES};
use rlvr_tasks::pickle::read_single_str;
use serde_json::Value;

fn entries() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pickles.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn stream(e: &Value) -> Vec<u8> {
    if let Some(hex) = e["hex"].as_str() {
        return (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
    }
    let z = base64::engine::general_purpose::STANDARD
        .decode(e["zlib_b64"].as_str().unwrap())
        .unwrap();
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(z.as_slice())
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[test]
fn python_pickled_strings_read_back_at_every_protocol() {
    let mut protocols = std::collections::BTreeSet::new();
    let mut n = 0;
    for e in entries() {
        let name = e["name"].as_str().unwrap();
        let want = match (e.get("str"), e.get("repeat")) {
            (Some(s), _) => s.as_str().unwrap().to_string(),
            (None, Some(r)) => r
                .as_str()
                .unwrap()
                .repeat(e["times"].as_u64().unwrap() as usize),
            _ => continue,
        };
        if e.get("base64").is_some() {
            continue;
        }
        let bytes = stream(&e);
        assert_eq!(
            read_single_str(&bytes, 1 << 20).unwrap_or_else(|err| panic!("{name}: {err}")),
            want,
            "{name}"
        );
        // the bound is on the string's length: one byte less is refused
        if !want.is_empty() {
            let err = read_single_str(&bytes, want.len() - 1).unwrap_err();
            assert!(err.reason.contains("over the bound"), "{name}: {err}");
        }
        protocols.insert(name.rsplit('-').next().unwrap().to_string());
        n += 1;
    }
    assert_eq!(n, 24, "6 strings x 4 protocols");
    assert_eq!(
        protocols.into_iter().collect::<Vec<_>>(),
        ["p2", "p3", "p4", "p5"]
    );
}

#[test]
fn anything_but_one_str_is_refused_naming_why() {
    let mut n = 0;
    for e in entries() {
        let Some(word) = e.get("refuse").and_then(Value::as_str) else {
            continue;
        };
        let name = e["name"].as_str().unwrap();
        let err = read_single_str(&stream(&e), 1 << 20)
            .err()
            .unwrap_or_else(|| panic!("{name}: accepted"));
        assert!(
            err.to_string().contains(word),
            "{name}: {word:?} not in {err}"
        );
        assert!(err.to_string().starts_with("pickle byte "), "{name}: {err}");
        n += 1;
    }
    assert_eq!(n, 14);
}

/// The whole LiveCodeBench encoding, made by Python: base64 of zlib of the pickle.
#[test]
fn livecodebench_private_tests_made_by_python_decode() {
    let e = entries()
        .into_iter()
        .find(|e| e["name"] == "livecodebench-private-tests")
        .unwrap();
    let got = decode_private_tests(e["base64"].as_str().unwrap(), MAX_DECODED_TESTS_BYTES).unwrap();
    assert_eq!(got, e["str"].as_str().unwrap());
    let tests: Value = serde_json::from_str(&got).unwrap();
    assert_eq!(tests[0]["testtype"], "stdin");
}
