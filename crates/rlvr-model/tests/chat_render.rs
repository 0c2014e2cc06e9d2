//! Chat rendering equals transformers' `apply_chat_template` (5.24, fixture made by
//! scripts/model/chat_render_fixtures.py): multi-turn lists with system, assistant (with and
//! without `<think>` reasoning) and tool turns, the tiny qwen2 fixture's ChatML template and
//! Qwen3's real chat template (tests/fixtures/chat/qwen3.jinja, see SOURCE.md) without
//! template arguments and with `enable_thinking` false and true, with and without the
//! generation prompt; text and token ids.

mod common;

use common::fixture;
use rlvr_model::{ChatMessage, ChatTokenizer};
use serde_json::Value;

#[test]
fn renders_equal_transformers_for_multi_turn_and_enable_thinking() {
    let cases: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("chat").join("renders.json")).unwrap(),
    )
    .unwrap();
    let base = ChatTokenizer::from_dir(&fixture("qwen2-tiny")).unwrap();
    let qwen3 = std::fs::read_to_string(fixture("chat").join("qwen3.jinja")).unwrap();
    let mut seen_thinking_off = 0;
    let cases = cases["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 48);
    for c in cases {
        let mut tok = base.clone();
        if c["template"] == "qwen3" {
            tok.chat_template = Some(qwen3.clone());
        }
        tok.template_kwargs = c["kwargs"].as_object().unwrap().clone();
        let messages: Vec<ChatMessage> = serde_json::from_value(c["messages"].clone()).unwrap();
        let gen = c["add_generation_prompt"].as_bool().unwrap();
        let text = tok.apply_chat_template(&messages, gen).unwrap();
        let label = format!(
            "{} {} {} gen={gen}",
            c["template"], c["conversation"], c["kwargs"]
        );
        assert_eq!(text, c["text"].as_str().unwrap(), "{label}");
        let ids: Vec<u32> = serde_json::from_value(c["token_ids"].clone()).unwrap();
        assert_eq!(tok.encode(&text, false).unwrap(), ids, "{label}");
        // every turn is in the prompt, not only the last user message
        for m in &messages {
            if m.role != "assistant" {
                assert!(text.contains(&m.content), "{label}: {} missing", m.role);
            }
        }
        if c["template"] == "qwen3" {
            if c["kwargs"]["enable_thinking"] == false && gen {
                assert!(text.ends_with("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
                seen_thinking_off += 1;
            }
            if c["conversation"] == "multi-turn" {
                // the reasoning of an assistant turn before the last user turn is dropped
                assert!(!text.contains("2+3=5") && text.contains("assistant\nThe answer is 5."));
            }
            if c["conversation"] == "assistant-last" {
                // ... and kept after it
                assert!(text.contains("<think>\n56*2 = 112\n</think>\n\nIt is 112."));
            }
        }
    }
    assert_eq!(seen_thinking_off, 4);
}

/// Template arguments cannot replace the context transformers sets itself.
#[test]
fn kwargs_do_not_override_messages_or_generation_prompt() {
    let mut tok = ChatTokenizer::from_dir(&fixture("qwen2-tiny")).unwrap();
    let msgs = [ChatMessage::new("user", "hi")];
    let plain = tok.apply_chat_template(&msgs, true).unwrap();
    tok.template_kwargs = serde_json::json!({"messages": [], "add_generation_prompt": false})
        .as_object()
        .unwrap()
        .clone();
    assert_eq!(tok.apply_chat_template(&msgs, true).unwrap(), plain);
}
