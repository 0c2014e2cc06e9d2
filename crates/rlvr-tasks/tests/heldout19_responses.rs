//! A nineteenth held-out measurement of the checker against math-verify, on ARITHMETIC WITH LARGE
//! AND SIGNED INTEGERS and on SCHOOL-EXAM MULTIPLE CHOICE IN PORTUGUESE: 700 real responses from
//! three public projects that no other fixture uses (tests/fixtures/heldout19_responses.jsonl,
//! rebuilt from its sources by scripts/tasks/build_heldout19_responses.py):
//! - sanand0/llmmath (MIT; "Can LLMs do mental math?", 2025), 237: 52 chat and reasoning models
//!   (o3, o4-mini, GPT-4.5, GPT-4.1, GPT-4o, Claude 3.x, Gemini 2.5 and 2.0, Gemma 3, Llama 4, 3 and
//!   2, DeepSeek-R1 and V3, Qwen 2, Grok 3, Amazon Nova) asked "Calculate <a> times <b>. Reply
//!   without commas." for seven products from 12 x 12 to 987654321 x 123456789 =
//!   121932631112635269 (past 2^53); replies bare, in a sentence, bold, boxed, or a reasoning
//!   model's whole thinking;
//! - WHGTyen/BIG-Bench-Mistake (Apache-2.0; Tyen et al., 2023), 288: PaLM 2-L chain-of-thought
//!   traces on BIG-Bench's multistep arithmetic, ending "So the answer is -78", most of them wrong
//!   (the data set was built to annotate their mistakes), golds often negative;
//! - piresramon/gpt-4-enem (MIT; Nunes et al., 2023), 175: code-davinci-002, gpt-3.5-turbo-0301
//!   and gpt-4-0314 on the 22 mathematics questions of the 2022 ENEM, zero-shot, three-shot and
//!   three-shot chain-of-thought, in Portuguese, five options, the gold a letter ("Resposta: E.",
//!   "E. 1 350 000 000,00.").
//!
//! 525 of the 700 golds are plain integers, 175 letters. Each line records math-verify 0.9.0's
//! verdict. Nothing in `crates/rlvr-tasks/src` was changed for this set: it measures, it does not
//! tune.
//!
//! Graded by hand (tests/fixtures/heldout19_responses_labels.jsonl, under the policy of
//! real_responses_labels.jsonl) on 2026-12-07, against the checker of commit 646bbf0 (the frozen
//! release binary runs/checker-frozen19/rlvr): all 72 responses where rlvr and math-verify
//! disagree, and seeded random samples of 100 of the 128 `both-right` and 100 of the 500
//! `both-wrong`, in a shuffled order with neither checker's verdict shown.
//!
//! - `figures_of_record`: rlvr right on 70 of the 72 disagreements (97.2%; math-verify on
//!   2): 68 multiple-choice answers in Portuguese that math-verify, given a letter gold, does not
//!   read ("Resposta: E.", "E. 1 350 000 000,00.", a bare " C"), "Answer: 1234 multiplied by 5678
//!   equals 7006652. Here's the calculation ..." (#65) and DeepSeek-R1's thinking cut mid-sentence
//!   (#38, no answer, which math-verify takes as its 56088); the 2 misses are Grok 3 mini
//!   replies that are its whole reasoning, complete and ending on the product it means to give ("My
//!   response should be just: 144", "my final response should be the number 56088"): rlvr takes "or
//!   anything, to keep it minimal" and "456" for the answer (judgement call (a) of the labels: read
//!   the other way, 72 of 72). No false positive of rlvr in the 272 graded; 1 for math-verify
//!   (#38). All 100 sampled `both-right` and all 100 sampled `both-wrong` are right for both:
//!   wrong products off in a few digits, PaLM 2's wrong signs and products, wrong letters, and
//!   every exact answer to 987654321 x 123456789 (a gold past 2^53) read right by both. Whole set
//!   99.7% [95.4%, 99.7%] for rlvr, 90.0% [85.7%, 90.0%] for math-verify; at most 1.7 false
//!   positives of rlvr per 200 over the whole set (95%); the bar holds (both halves).
//! - `the_current_checker_on_the_nineteenth_held_out_set`: today's checker, after the rule written
//!   from this set (a reply that says what it should be). A checker change that makes an ungraded
//!   disagreement fails it (it names the ids) until it is graded and added to the labels under
//!   stratum `regraded-after-fix`; one that moves a figure fails it too (update docs/checker.md,
//!   "A nineteenth held-out set").
//!
//! `cargo test -p rlvr-tasks --test heldout19_responses -- --nocapture` prints the figures.

#[path = "common/heldout.rs"]
mod heldout;

use heldout::{Counts, CurrentFigures, MathVerify, RecordFigures, Sample, Set};

/// The set; the strata are as they were when it was graded (the labels file's header says how
/// the samples were drawn).
const SET: Set = Set {
    name: "nineteenth held-out set",
    graded_on: "2026-12-07",
    responses: (
        "heldout19_responses.jsonl",
        include_str!("fixtures/heldout19_responses.jsonl"),
    ),
    labels: (
        "heldout19_responses_labels.jsonl",
        include_str!("fixtures/heldout19_responses_labels.jsonl"),
    ),
    total: 700,
    sources: &["bbmistake", "enem", "llmmath"],
    disagree: 72,
    both_right: Sample {
        size: 128,
        sampled: 100,
    },
    both_wrong: Sample {
        size: 500,
        sampled: 100,
    },
    shape: |responses| {
        assert_eq!(
            heldout::plain_integers(responses),
            525,
            "525 of the 700 golds are plain integers (every llmmath and bbmistake gold)"
        );
        for r in responses {
            let enem = r.source.starts_with("enem:");
            assert_eq!(
                r.choices.as_ref().map(Vec::len),
                enem.then_some(5),
                "#{}: the enem questions, and they alone, list five options",
                r.id
            );
            if enem {
                assert!(
                    ["A", "B", "C", "D", "E"].contains(&r.gold.as_str()),
                    "#{}: an enem gold is a letter",
                    r.id
                );
            }
        }
        let groups: std::collections::BTreeMap<String, usize> =
            responses.iter().fold(Default::default(), |mut by, r| {
                *by.entry(heldout::source_fields(r, &[0])).or_default() += 1;
                by
            });
        assert_eq!(
            groups.into_iter().collect::<Vec<_>>(),
            [
                ("bbmistake".to_string(), 288),
                ("enem".to_string(), 175),
                ("llmmath".to_string(), 237),
            ],
            "the draw by source"
        );
    },
};

/// The measurement of record (the labels' header; docs/checker.md, "A nineteenth held-out set",
/// once written): rlvr's verdict then is its stratum's, so these figures hold for every later
/// checker.
#[test]
fn figures_of_record() {
    heldout::check_record(
        &SET,
        &RecordFigures {
            graded: 272,
            disagree: Counts {
                right: 70,
                false_pos: 0,
                false_neg: 2,
            },
            math_verify: Counts {
                right: 2,
                false_pos: 1,
                false_neg: 69,
            },
            both_right: 100,
            both_wrong: 100,
            false_positives: (0, 1),
            accuracy: ["99.7%", "95.4%", "99.7%"],
            math_verify_accuracy: ["90.0%", "85.7%", "90.0%"],
            fp_per_200: "1.7",
            // 70 of 72 disagreements right, no false positive in 272 graded
            bar: true,
        },
    );
}

/// Today's checker on the same fixed strata, and on every response where it and math-verify
/// disagree now (all of them graded).
#[test]
fn the_current_checker_on_the_nineteenth_held_out_set() {
    // After the rule written from this set (2026-12-07, docs/checker.md, "A nineteenth held-out
    // set": a reply that says what it should be, "My response should be just: 144"), its two
    // misses (#92, #102) are right. No longer a held-out measurement: when a checker change moves
    // a figure, grade any new disagreement under `regraded-after-fix` and update these (and
    // docs/checker.md).
    heldout::check_current(
        &SET,
        &CurrentFigures {
            graded: 272,
            disagree: Counts {
                right: 72,
                false_pos: 0,
                false_neg: 0,
            },
            both_right: 100,
            both_wrong: 100,
            accuracy: ["100.0%", "95.7%", "100.0%"],
            false_positives: 0,
            fp_per_200: "1.7",
            current: Counts {
                right: 70,
                false_pos: 0,
                false_neg: 0,
            },
            current_math_verify: MathVerify::Counts(Counts {
                right: 0,
                false_pos: 1,
                false_neg: 69,
            }),
            // by source ("llmmath", "enem", "bbmistake")
            key: |r| heldout::source_fields(r, &[0]),
            groups: Some(&[("enem", (68, 68)), ("llmmath", (2, 2))]),
            // 70 of 70 current disagreements right, no false positive in 272 graded
            bar: true,
        },
    );
}
