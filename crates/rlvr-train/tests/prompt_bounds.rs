//! Prompts longer than the model's positions on the evaluation path of a training run
//! (`eval.datasets`, built by `build_eval_task`): refused with the data's name, the problem's
//! id and number, before rendering or tokenizing when the text alone is too long, after
//! tokenizing otherwise; never generated from.

mod common;

use std::sync::Arc;

use common::text_problem;
use rlvr_model::ChatTokenizer;
use rlvr_tasks::PromptTemplate;
use rlvr_train::task::{build_eval_task, PromptFormat, PROMPT_BYTES_PER_TOKEN};

#[test]
fn eval_prompts_beyond_the_models_positions_are_refused_naming_the_problem() {
    let dir = rlvr_test_support::models::qwen2_tiny_dir();
    let mut tok = ChatTokenizer::from_dir(&dir).unwrap();
    // rendering a long message is an error: a prompt refused by its size is never rendered
    tok.chat_template = Some(
        "{% for m in messages %}{% if m.content | length > 100000 %}\
         {{ raise_exception('rendered an over-long prompt') }}{% endif %}\
         {{ m.content }}{% endfor %}"
            .into(),
    );
    let format = PromptFormat {
        template: PromptTemplate::Raw,
        chat: true,
    };
    let positions = 64;
    let verifier = || Arc::new(rlvr_tasks::MathVerifier);
    // too long by its bytes: refused before rendering (3 MB, as in the issue)
    let problems = vec![
        text_problem("short", "1+1=".into()),
        text_problem("huge", "word ".repeat(600_000)),
    ];
    let err = build_eval_task("eval.jsonl", problems, format, &tok, positions, verifier())
        .err()
        .expect("a 3 MB prompt was accepted")
        .to_string();
    assert!(
        err.contains("eval.jsonl: problem huge (number 1)")
            && err.contains(&format!("{positions} positions"))
            && err.contains("not tokenized"),
        "{err}"
    );
    // short in bytes but more tokens than positions: refused after tokenizing
    let text = "1 2 3 4 5 6 7 8 9 ".repeat(10);
    assert!(text.len() <= positions * PROMPT_BYTES_PER_TOKEN);
    let problems = vec![
        text_problem("short", "1+1=".into()),
        text_problem("many", text),
    ];
    let err = build_eval_task("eval.jsonl", problems, format, &tok, positions, verifier())
        .err()
        .expect("a prompt over the positions was accepted")
        .to_string();
    assert!(
        err.contains("eval.jsonl: problem many (number 1)") && err.contains("tokens"),
        "{err}"
    );
    // prompts that fit are kept in order
    let problems = vec![
        text_problem("a", "1+1=".into()),
        text_problem("b", "2+2=".into()),
    ];
    let task =
        build_eval_task("eval.jsonl", problems, format, &tok, positions, verifier()).unwrap();
    assert_eq!(task.len(), 2);
    assert!(task.prompts.iter().all(|p| p.len() < positions));
}
