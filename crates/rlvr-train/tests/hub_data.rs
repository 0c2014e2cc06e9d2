//! Dataset presets missing from the data directory come from their Hugging Face dataset
//! repository, here a loopback server (rlvr-hub's tests/common/hub_server.rs) serving the
//! hub's URL layout from a temporary directory.

#[path = "../../rlvr-hub/tests/common/hub_server.rs"]
mod hub_server;

use hub_server::HubServer;
use rlvr_hub::HubOptions;
use rlvr_train::setup::load_dataset_with;

#[test]
fn a_missing_preset_downloads_from_its_dataset_repository() {
    let root = tempfile::tempdir().unwrap();
    let repo = root.path().join("hub/datasets/HuggingFaceH4/MATH-500");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(
        repo.join("test.jsonl"),
        concat!(
            "{\"problem\": \"What is 1+1?\", \"solution\": \"\\\\boxed{2}\", \"answer\": \"2\", \"unique_id\": \"a\"}\n",
            "{\"problem\": \"What is 2+3?\", \"solution\": \"\\\\boxed{5}\", \"answer\": \"5\", \"unique_id\": \"b\"}\n",
        ),
    )
    .unwrap();
    let server = HubServer::start(&root.path().join("hub"));
    let data_dir = root.path().join("data");
    std::fs::create_dir_all(&data_dir).unwrap();
    let cache = root.path().join("cache");
    let mut opts = HubOptions::new(&server.endpoint, &cache);
    opts.offline = true;
    // offline: the error names the local file that is missing and the offline switch
    let err = load_dataset_with("math500", Some(&data_dir), &opts).unwrap_err();
    assert!(err.is_user_input());
    let msg = err.to_string();
    assert!(
        msg.contains("math500/test.jsonl") && msg.contains("HF_HUB_OFFLINE"),
        "{msg}"
    );
    assert!(server.take_log().is_empty());

    opts.offline = false;
    let ds = load_dataset_with("math500", Some(&data_dir), &opts).unwrap();
    assert_eq!(ds.name, "math500");
    assert_eq!(ds.problems.len(), 2);
    assert_eq!(ds.problems[1].answer, "5");
    let log = server.take_log();
    assert!(
        log.iter()
            .any(|l| l.starts_with("GET /datasets/HuggingFaceH4/MATH-500/resolve/ff5b20257d8185524591543f8ff5993951537bb8/test.jsonl")),
        "{log:?}"
    );
    assert!(cache
        .join(
            "datasets--HuggingFaceH4--MATH-500/snapshots/ff5b20257d8185524591543f8ff5993951537bb8/test.jsonl"
        )
        .is_file());
    // again: from the cache, no request
    let again = load_dataset_with("math500", Some(&data_dir), &opts).unwrap();
    assert_eq!(again.problems.len(), 2);
    assert!(server.take_log().is_empty());
    // a preset without a hub copy keeps the local-only error
    let err = load_dataset_with("aime24_polaris", Some(&data_dir), &opts)
        .unwrap_err()
        .to_string();
    assert!(err.contains("aime24/aime24.parquet"), "{err}");
    assert!(server.take_log().is_empty());
}

/// A dry run whose train set and two eval sets are all missing (local-only presets, an empty
/// data directory: nothing is fetched) names each failure exactly once: the others on the
/// dry run's output, the first as the error returned (which `rlvr` prints).
#[test]
fn several_missing_presets_are_each_reported_once() {
    let root = tempfile::tempdir().unwrap();
    let data_dir = root.path().join("data");
    std::fs::create_dir_all(&data_dir).unwrap();
    let config = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../configs/dapo17k-qwen3-1.7b.toml");
    let opts = rlvr_train::run::TrainOptions {
        config: Some(config),
        overrides: vec![
            "data.train_files=aime24_polaris".into(),
            "eval.datasets=[\"codeforces\", \"leetcode\"]".into(),
        ],
        data_dir: Some(data_dir),
        ..Default::default()
    };
    let mut out = Vec::new();
    let err = rlvr_train::run::dry_run(&opts, &mut out).unwrap_err();
    assert!(err.is_user_input(), "{err}");
    let shown = format!("{}\nerror: {err}\n", String::from_utf8(out).unwrap());
    for preset in ["aime24_polaris", "codeforces", "leetcode"] {
        let want = format!("preset {preset}: ");
        assert_eq!(
            shown.matches(&want).count(),
            1,
            "{want:?} once in:\n{shown}"
        );
    }
    // the first failure is the one returned
    assert!(
        err.to_string().starts_with("preset aime24_polaris: "),
        "{err}"
    );
}
