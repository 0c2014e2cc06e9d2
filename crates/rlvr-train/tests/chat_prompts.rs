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

/// A multiple-choice problem's options reach the model under every template, with and
/// without the chat template, for text and chat prompts; a question that lists them already
/// and a problem without options are rendered as before.
#[test]
fn multiple_choice_options_are_rendered_after_the_question() {
    let tok = ChatTokenizer::from_dir(&fixtures().join("qwen2-tiny")).unwrap();
    let mc = |prompt: Prompt, choices: Option<&[&str]>| Problem {
        id: "mc".into(),
        prompt,
        answer: "B".into(),
        solution: None,
        data_source: "t".into(),
        choices: choices.map(|c| c.iter().map(|s| s.to_string()).collect()),
    };
    let options: &[&str] = &["Mars", "Jupiter", "Venus"];
    let with_block = "Which planet is largest?\nOptions:\nA. Mars\nB. Jupiter\nC. Venus";
    let listed = "Which planet is largest? (A) Mars (B) Jupiter (C) Venus";
    let cases = [
        // (problem, the problem text the template must wrap)
        (
            mc(
                Prompt::Text("Which planet is largest?".into()),
                Some(options),
            ),
            with_block,
        ),
        (
            mc(
                Prompt::Chat(vec![
                    msg("system", "Be brief."),
                    msg("user", "Which planet is largest?"),
                ]),
                Some(options),
            ),
            with_block,
        ),
        (mc(Prompt::Text(listed.into()), Some(options)), listed),
        (
            mc(Prompt::Text("Which planet is largest?".into()), None),
            "Which planet is largest?",
        ),
    ];
    for template in PromptTemplate::NAMES.map(|n| n.parse::<PromptTemplate>().unwrap()) {
        for (problem, question) in &cases {
            let want_user = template.render(question);
            // without the chat template: the templated text itself
            let plain = PromptFormat {
                template,
                chat: false,
            };
            assert_eq!(
                plain.render(problem, Some(&tok)).unwrap(),
                want_user,
                "{template:?}"
            );
            assert_eq!(plain.render(problem, None).unwrap(), want_user);
            // with it: the last user message holds the same text, earlier turns are kept
            let chat = PromptFormat {
                template,
                chat: true,
            };
            let messages = chat.messages(problem);
            assert_eq!(messages.last().unwrap().content, want_user, "{template:?}");
            assert_eq!(
                messages.len(),
                if matches!(problem.prompt, Prompt::Chat(_)) {
                    2
                } else {
                    1
                }
            );
            let text = chat.render(problem, Some(&tok)).unwrap();
            assert_eq!(text, tok.apply_chat_template(&messages, true).unwrap());
            assert!(text.contains(&want_user), "{template:?}: {text}");
            assert_eq!(
                text.matches("Options:").count(),
                usize::from(*question == with_block),
                "{template:?}: {text}"
            );
        }
    }
}
