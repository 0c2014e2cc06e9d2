//! Chat prompts from the data keep every message (system, earlier user and assistant turns);
//! the prompt template wraps the last user turn; `data.chat_template_kwargs` reaches the
//! template (Qwen3-style `enable_thinking`).

use std::path::{Path, PathBuf};

use rlvr_model::ChatTokenizer;
use rlvr_tasks::{ChatMessage, Problem, Prompt, PromptTemplate};
use rlvr_train::task::PromptFormat;
use rlvr_train::TrainConfig;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../rlvr-model/tests/fixtures")
}

fn msg(role: &str, content: &str) -> ChatMessage {
    ChatMessage {
        role: role.into(),
        content: content.into(),
    }
}

#[test]
fn multi_turn_chat_prompts_keep_every_turn_and_pass_template_kwargs() {
    let mut tok = ChatTokenizer::from_dir(&fixtures().join("qwen2-tiny")).unwrap();
    let problem = Problem {
        id: "p".into(),
        prompt: Prompt::Chat(vec![
            msg("system", "Be brief."),
            msg("user", "What is 1+1?"),
            msg("assistant", "2"),
            msg("user", "And 2+2?"),
        ]),
        answer: "4".into(),
        solution: None,
        data_source: "t".into(),
        choices: None,
    };
    let format = PromptFormat {
        template: PromptTemplate::QwenBoxed,
        chat: true,
    };
    let text = format.render(&problem, Some(&tok)).unwrap();
    let want = tok
        .apply_chat_template(
            &[
                rlvr_model::ChatMessage::new("system", "Be brief."),
                rlvr_model::ChatMessage::new("user", "What is 1+1?"),
                rlvr_model::ChatMessage::new("assistant", "2"),
                rlvr_model::ChatMessage::new("user", PromptTemplate::QwenBoxed.render("And 2+2?")),
            ],
            true,
        )
        .unwrap();
    assert_eq!(text, want);
    assert!(
        text.contains("<|im_start|>assistant\n2<|im_end|>"),
        "{text}"
    );
    assert_eq!(
        text.matches("\\boxed{}").count(),
        1,
        "only the last user turn is wrapped"
    );

    // data.chat_template_kwargs from the config reaches Qwen3's chat template
    let cfg = TrainConfig::load(
        None,
        &["data.chat_template_kwargs={enable_thinking=false}".into()],
    )
    .unwrap();
    assert_eq!(
        cfg.data.chat_template_kwargs.get("enable_thinking"),
        Some(&serde_json::Value::Bool(false))
    );
    tok.chat_template = Some(std::fs::read_to_string(fixtures().join("chat/qwen3.jinja")).unwrap());
    let thinking = format.render(&problem, Some(&tok)).unwrap();
    tok.template_kwargs = cfg.data.chat_template_kwargs.clone();
    let off = format.render(&problem, Some(&tok)).unwrap();
    assert_eq!(off, format!("{thinking}<think>\n\n</think>\n\n"));
    // the config round-trips through its TOML form
    let back = TrainConfig::from_toml_str(&cfg.to_toml(), "round trip").unwrap();
    assert_eq!(
        back.data.chat_template_kwargs,
        cfg.data.chat_template_kwargs
    );
}
