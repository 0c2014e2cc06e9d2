//! The math verifier never panics and answers within 100 ms (CPU time of the calling thread),
//! on random and adversarial input.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use rlvr_tasks::math;

const LIMIT: Duration = Duration::from_millis(100);

/// CPU time of the calling thread: the bound holds on the verifier's own work, so a loaded
/// machine (CI, parallel tests) does not make the test flaky. Wall time is checked loosely.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Verifies and returns the CPU time it took; panics past the limits.
fn timed(gold: &str, response: &str) -> Duration {
    let (t, c) = (Instant::now(), thread_cpu());
    let s = math::verify(gold, response);
    let (wall, cpu) = (t.elapsed(), thread_cpu() - c);
    assert!((0.0..=1.0).contains(&s.reward));
    assert!(
        cpu < LIMIT && wall < 10 * LIMIT,
        "took {cpu:?} CPU ({wall:?} wall) on gold of {} bytes, response of {} bytes (starts {:?})",
        gold.len(),
        response.len(),
        &response.chars().take(40).collect::<String>()
    );
    cpu
}

#[test]
fn adversarial_inputs_are_bounded() {
    let million_digits = "9".repeat(1_000_000);
    let cases: Vec<(String, String)> = vec![
        ("1".into(), million_digits.clone()),
        (million_digits.clone(), million_digits.clone()),
        ("1".into(), format!("\\boxed{{{million_digits}}}")),
        ("1".into(), "{".repeat(200_000)),
        ("1".into(), "}".repeat(200_000)),
        ("1".into(), format!("\\boxed{{{}", "{".repeat(100_000))),
        ("1".into(), "\\boxed{".repeat(50_000)),
        ("1".into(), "\\boxed{1}".repeat(50_000)),
        (
            "1".into(),
            format!("\\boxed{{{}1{}}}", "(".repeat(5_000), ")".repeat(5_000)),
        ),
        (
            "1".into(),
            format!(
                "\\boxed{{{}}}",
                "\\frac{1}{".repeat(1_000) + &"}".repeat(1_000)
            ),
        ),
        (
            "1".into(),
            format!("\\boxed{{{}2}}", "2^{".repeat(1_000) + &"}".repeat(999)),
        ),
        ("1".into(), "\\boxed{9^{9^{9^{9^{9^{9}}}}}}".into()),
        ("1".into(), "\\boxed{10^{10^{100}}}".into()),
        (
            "1".into(),
            format!(
                "\\boxed{{{}}}",
                "\\sqrt{".repeat(3_000) + "2" + &"}".repeat(3_000)
            ),
        ),
        ("1".into(), format!("\\boxed{{{}}}", "1,".repeat(100_000))),
        (
            "1, 2, 3".into(),
            format!("\\boxed{{{}}}", "\\{1,".repeat(60) + &"\\}".repeat(60)),
        ),
        (
            "\\{1,\\{2,\\{3,4\\}\\}\\},".repeat(20),
            "\\{4,\\{3,\\{2,1\\}\\}\\},".repeat(20),
        ),
        ("x".into(), "or ".repeat(300_000)),
        ("1".into(), "Answer: ".repeat(100_000)),
        ("1".into(), "the answer is ".repeat(100_000)),
        ("1".into(), "$".repeat(500_000)),
        ("1".into(), "####".repeat(200_000)),
        ("1".into(), "\n".repeat(500_000)),
        ("1".into(), "é\u{0301}∞√π".repeat(100_000)),
        ("\\boxed{".repeat(10_000), "1".into()),
        (
            "1".into(),
            format!("\\boxed{{{}}}", "\\left(".repeat(10_000)),
        ),
        (
            "1".into(),
            format!("\\boxed{{{}}}", "\\text{".repeat(10_000)),
        ),
        (
            "(1,2)".into(),
            format!("\\boxed{{({})}}", "1,".repeat(10_000)),
        ),
        ("1".into(), format!("\\boxed{{{}}}", "x".repeat(100_000))),
        (
            "1".into(),
            format!("\\boxed{{{}}}", "1e999999999".repeat(10)),
        ),
        ("1".into(), "\\boxed{\\begin{pmatrix}".repeat(1000)),
        // the extraction paths: markers, blocks, special tokens, statements, final lines
        ("1".into(), "# Answer\n\n".repeat(50_000)),
        ("1".into(), "</s>".repeat(200_000)),
        ("1".into(), format!("1{}", "<|im_start|>".repeat(50_000))),
        ("1".into(), "the answer should be ".repeat(50_000)),
        ("1".into(), "The answer is that there are ".repeat(30_000)),
        (
            "1".into(),
            format!("The answer is 1{}", ", or 1".repeat(100_000)),
        ),
        ("1".into(), format!("Answer: {}", "(".repeat(200_000))),
        (
            "1".into(),
            format!("Answer: 1{}", " i.e. 1".repeat(100_000)),
        ),
        ("1".into(), "\"answer\": \"".repeat(50_000)),
        ("1".into(), "A: 1\n".repeat(100_000)),
        ("1".into(), format!("x\n{}", "1 + 1 = 2. ".repeat(80_000))),
        ("1".into(), format!("x\n{}1.", "a ".repeat(400_000))),
        ("1".into(), "\\(".repeat(200_000)),
        ("1".into(), format!("{}\\)", "\\(".repeat(200_000))),
        ("1".into(), "The answer is $".repeat(50_000)),
    ];
    let mut slowest = Duration::ZERO;
    for (g, r) in &cases {
        for (a, b) in [(g, r), (r, g)] {
            slowest = slowest.max(timed(a, b));
        }
    }
    eprintln!("slowest adversarial case: {slowest:?} CPU (limit {LIMIT:?})");
}

fn latexish() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "\\boxed{",
        "\\fbox{",
        "{",
        "}",
        "\\{",
        "\\}",
        "(",
        ")",
        "[",
        "]",
        "\\frac",
        "\\dfrac",
        "\\sqrt",
        "\\pi",
        "^",
        "_",
        "1",
        "2",
        "0.5",
        "-",
        "+",
        "*",
        "/",
        ",",
        " or ",
        " and ",
        "=",
        "x",
        "\\text{",
        "\\left(",
        "\\right)",
        "\\infty",
        "\\cup",
        "%",
        "\\%",
        "$",
        "e",
        "Answer: ",
        "the answer is ",
        "####",
        "\n",
        " ",
        "^\\circ",
        "cm",
        "\\\\",
        "&",
        "\\begin{pmatrix}",
        "\\end{pmatrix}",
        "1,000",
        ".",
        "\\",
        "é",
        "# Answer\n\n",
        "**Final Answer**\n",
        "</s>",
        "<|im_end|>",
        "<|im_start|>",
        " or equivalently ",
        ", i.e. ",
        "A: ",
        "\"answer\": \"",
        " should be ",
        " not ",
        "cannot be determined",
        "\\(",
        "\\)",
        "2516_8",
        "3:4",
        "40m",
        // plain-text math of chat models, list items, displays on their own lines, glued
        // Greek letters (a list number before a multibyte character once panicked)
        "\n3) ",
        "\n4",
        "(b) ",
        "√",
        "²",
        "⁻",
        "₁",
        "\u{202f}",
        "\u{a0}",
        "\n\\[\n",
        "\n\\]",
        "\n$$",
        "\\pit",
        "\\lambdakT",
        "each answer is worth ",
        "“",
        "'",
    ]);
    prop::collection::vec(atoms, 0..80).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_strings_never_panic(g in ".{0,60}", r in ".{0,400}") {
        timed(&g, &r);
    }

    #[test]
    fn random_latex_never_panics(g in latexish(), r in latexish()) {
        timed(&g, &r);
        let _ = math::extract_answer(&r);
        let _ = math::normalize(&g);
    }

    #[test]
    fn options_never_panic(g in latexish(), r in latexish(), c in prop::collection::vec(latexish(), 0..6)) {
        let (t, cpu) = (Instant::now(), thread_cpu());
        let s = math::verify_with_choices(&g, &r, &c);
        prop_assert!((0.0..=1.0).contains(&s.reward));
        // one verify per option at most, plus the response's
        prop_assert!(thread_cpu() - cpu < 8 * LIMIT && t.elapsed() < 80 * LIMIT);
    }

    #[test]
    fn fractions_and_integers_verify(n in -100_000i64..100_000, d in 1i64..1000) {
        let g = format!("\\frac{{{n}}}{{{d}}}");
        let boxed = format!("\\boxed{{{g}}}");
        let same = format!("Answer: {n}");
        let next = format!("Answer: {}", n + 1);
        let (a, b, c) = (
            math::verify(&g, &boxed).correct,
            math::verify(&n.to_string(), &same).correct,
            math::verify(&n.to_string(), &next).correct,
        );
        prop_assert!(a && b && !c, "{} {} {}", a, b, c);
    }
}
