use super::*;

fn yes(g: &str, p: &str) {
    assert!(equivalent(g, p), "expected {g:?} == {p:?}");
}
fn no(g: &str, p: &str) {
    assert!(!equivalent(g, p), "expected {g:?} != {p:?}");
}

#[test]
fn extraction_rules() {
    assert_eq!(
        extract_answer("so \\boxed{\\frac{1}{2}} and later \\boxed{\\{1, \\frac{3}{4}\\}}.")
            .as_deref(),
        Some("\\{1, \\frac{3}{4}\\}")
    );
    assert_eq!(extract_answer("\\fbox{7}").as_deref(), Some("7"));
    assert_eq!(extract_answer("$\\boxed 5$").as_deref(), Some("5"));
    assert_eq!(extract_answer("x\n#### 1,234\n").as_deref(), Some("1,234"));
    assert_eq!(extract_answer("work\nAnswer: $42$").as_deref(), Some("42"));
    assert_eq!(
        extract_answer("work\n**Final Answer:** 3.5.").as_deref(),
        Some("3.5")
    );
    assert_eq!(
        extract_answer("So the answer is 3.5. Done").as_deref(),
        Some("3.5")
    );
    assert_eq!(
        extract_answer("The answer is $\\frac{1}{2}$.").as_deref(),
        Some("\\frac{1}{2}")
    );
    assert_eq!(
        extract_answer("\\boxed{2} and \\boxed{3}").as_deref(),
        Some("2, 3")
    );
    assert_eq!(
        extract_answer("we get $180+24=204$. -sepehr2010").as_deref(),
        Some("204")
    );
    assert_eq!(extract_answer("x = 3").as_deref(), Some("x = 3"));
    assert_eq!(
        extract_answer("unbalanced \\boxed{1 + {2"),
        Some("unbalanced \\boxed{1 + {2".into())
    );
    assert_eq!(
        extract_answer("Final Answer: The largest $n$ is 34.").as_deref(),
        Some("34")
    );
    assert_eq!(
        extract_answer("Final Answer: The final answer is $(0, 1)$. I hope it is correct.")
            .as_deref(),
        Some("(0, 1)")
    );
    assert_eq!(extract_answer(""), None);
}

#[test]
fn numbers() {
    yes("27", "27.0");
    yes("015", "15");
    yes("0.5", "\\frac{1}{2}");
    yes("\\frac{1}{2}", "\\dfrac12");
    yes("2\\frac{1}{2}", "\\frac{5}{2}");
    yes("-1\\frac{1}{2}", "-1.5");
    yes("3-1\\frac{1}{2}", "1.5");
    yes("2\\frac{\\sqrt{3}}{2}", "\\sqrt{3}");
    yes("50\\%", "0.5");
    yes("50\\%", "50");
    yes("1.5\\times10^{3}", "1500");
    yes("1.5e3", "1500");
    yes("-\\frac{3}{4}", "-0.75");
    yes("1,234", "1234");
    no("204", "205");
    no("0.33", "\\frac{1}{3}");
    no("123456789012", "123456789013");
    no("2^{1009}", "2^{1009}+1");
    yes("2^{100}", "1267650600228229401496703205376");
    no("2^{100}", "1267650600228229401496703205377");
    yes("2^{10}\\cdot 3", "3072");
    yes("\\frac{2^{70}}{4}", "2^{68}");
    no("3^{200}", "3^{200}-1");
    no("\\frac{1}{2}", "\\frac{1}{3}");
}

#[test]
fn radicals_and_pi() {
    yes("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt2}");
    yes("2\\sqrt{3}", "\\sqrt{12}");
    yes("\\sqrt[3]{8}", "2");
    yes("\\frac{\\pi}{2}", "\\pi/2");
    yes("4\\pi", "4 \\pi");
    no("2\\sqrt{3}", "3\\sqrt{2}");
    no("\\pi", "3.14");
}

#[test]
fn structures() {
    yes("\\left( 3, \\frac{\\pi}{2} \\right)", "(3, \\pi/2)");
    no("(3, \\frac{\\pi}{2})", "(\\frac{\\pi}{2}, 3)");
    yes("[2, 5)", "[2,5)");
    no("[2, 5)", "(2, 5)");
    yes("\\{1, 2, 3\\}", "\\{3, 1, 2\\}");
    yes("1, 2", "2, 1");
    yes("x = 3", "3");
    yes("3", "x=3");
    yes("-2, 1", "x = 1 \\text{ or } x = -2");
    yes(
        "(-\\infty, 3] \\cup (5, \\infty)",
        "(5,\\infty)\\cup(-\\infty,3]",
    );
    yes(
        "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}",
        "\\begin{pmatrix}1\\\\ 2.0\\end{pmatrix}",
    );
    no("1, 2", "1, 3");
    no("1, 2", "1");
    yes("2x+3", "3+2x");
    yes("\\frac{x^2-1}{x-1}", "x+1");
    no("\\sqrt{x^2}", "x");
    yes("\\sqrt{x}", "x^{1/2}");
    no("2x+3", "2x-3");
    yes("\\text{Evelyn}", "Evelyn");
    yes("(C)", "C");
}

#[test]
fn verify_scores() {
    let s = verify("42", "blah \\boxed{42}");
    assert!(s.correct && s.reward == 1.0);
    assert_eq!(s.extracted.as_deref(), Some("42"));
    let s = verify(
        "42",
        "no digits here, long enough to not be a bare answer at all, no\nreally",
    );
    assert!(!s.correct);
    assert_eq!(s.reason, "no answer found");
    assert!(verify("\\boxed{7}", "Answer: 7").correct);
}

#[test]
fn relations() {
    yes("x \\geq 5", "x >= 5");
    yes("x < 3", "x \\lt 3");
    yes("x > 5", "x \\gt 5");
    yes("x \\neq 3", "x != 3");
    yes("x \\leq 5", "5 \\geq x");
    yes("x < 1", "-x > -1");
    no("x < 1", "x > -1");
    no("x > 5", "x < 5");
    no("x \\geq 5", "x > 5");
    no("\\cos(x)=\\frac{42}{59}", "\\sin(x)=\\frac{42}{59}");
    no("\\cos(x)=\\frac{42}{59}", "\\frac{42}{59}");
    yes("0<f(x)<1", "(0,1)");
    no("0<f(x)<1", "[0,1)");
    yes("-2 \\le x \\le 7", "x \\in [-2,7]");
    yes("k \\ge 2", "[2, \\infty)");
    yes("2x+4y-3=0", "y=-\\frac{1}{2}x+\\frac{3}{4}");
    no("2x+4y-3=0", "y=-\\frac{1}{2}x-\\frac{3}{4}");
    yes("x^2/4 + y^2/3 = 1", "x^2/16 + y^2/12 = 1/4");
    no("7 = 11a+c", "11a+c");
    no("a^2 + b = 0", "0");
    yes("x = 11", "x = 5+5+1 = 7 = 11");
}

#[test]
fn labels_and_lists() {
    yes("(p,q)=(3,2)", "(3,2)");
    yes("|AB|=1", "1");
    yes("V_1:V_2=11:21", "11:21");
    no("V_1:V_2=11:21", "21:11");
    yes(
        "\\frac{NO}{BO}=\\frac{1}{\\sqrt{6}}",
        "\\frac{1}{\\sqrt{6}}",
    );
    yes("\\pm 2021", "\\{-2021, 2021\\}");
    no("\\pm 2021", "2021");
    yes("\\{1\\pm\\sqrt{5},-2\\}", "\\{-2, 1-\\sqrt5, 1+\\sqrt 5\\}");
    yes("\\{a, 2b\\}", "\\{2b, a\\}");
    yes("AB=4,CD=5", "4, 5");
    yes("(1,3)", "{1,3}");
    no("(3,1)", "{1,3}");
    no("32349", "32, 349");
    yes("32349", "32,\\! 349");
    yes("14916", "14{,}916");
    yes("4210_{7}", "4210_7");
    no("1112112_3", "1112122_3");
    yes("\\frac{3}{2}", "1 1/2");
    assert!(verify("\\{1,2,3\\}", "so \\boxed{1}, \\boxed{2} and \\boxed{3}").correct);
    assert!(!verify("\\{1,2,3\\}", "so \\boxed{1}, \\boxed{2}").correct);
}

#[test]
fn units_and_words() {
    yes("10", "10\\text{ cm}^{2}");
    yes("10", "10 square units");
    yes("125", "125\\textnormal{ miles}");
    yes("15\\mbox{ cm}^2", "15");
    yes("\\text{odd}", "odd");
    yes("\\text{E}", "E");
    no("d", "\\text{E}");
    yes("28\\%", "28 percent");
    no("0.28", "28");
    yes("90^\\circ", "90");
}

#[test]
fn identities() {
    yes("\\sec x", "\\frac{1}{\\cos x}");
    yes("\\tan^2 y+1", "\\sec^2 y");
    yes("i(2-i)", "1+2i");
    no("i(2-i)", "2+i");
    yes("\\sin(90^\\circ-x)", "\\cos x");
    no("\\sin(90^\\circ-x)", "\\sin x");
    // a rounded decimal answer is an approximation of an exact gold (the grading policy's
    // rule 2); a rounded gold stands for the exact answer that rounds to it
    no("\\frac{1}{12}", "0.0833333333333333");
    no("\\frac{563}{13}", "43.3077");
    no("\\pi", "3.14159");
    yes("0.0833333", "\\frac{1}{12}");
    yes("3.14159", "\\pi");
    yes("\\frac{1}{8}", "0.125");
    no("\\frac{1}{3}", "0.33");
    no("(a+5)(b+2)", "(+5)(b+2)");
    no("x+2n+1", "x+1");
    yes(
        "\\frac{\\sqrt{\\sqrt{11}+\\sqrt{194}}}{15+2\\sqrt{33}}",
        "\\frac{\\sqrt{\\sqrt{11}+\\sqrt{194}}}{2\\sqrt{33}+15}",
    );
}

#[test]
fn matrices() {
    yes(
        "\\begin{pmatrix}1 & 2 \\\\3 & 4\\end{pmatrix}",
        "\\left[\\begin{array}{cc}1 & 2 \\\\3 & 4\\end{array}\\right]",
    );
    yes(
        "\\begin{bmatrix}0 & 0 \\\\0 & 0\\end{bmatrix}",
        "\\begin{pmatrix}0 & 0 \\\\0 & 0\\end{pmatrix}",
    );
    no(
        "\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}",
        "\\begin{pmatrix}1 & 2 \\\\ 3 & 5\\end{pmatrix}",
    );
}

#[test]
fn explain_prints_trees_and_rule() {
    let e = explain("x = 3", "so \\boxed{3}");
    assert!(e.correct);
    assert_eq!(e.gold_tree.as_deref(), Ok("(rel x = 3)"));
    assert_eq!(e.answer_tree.as_deref(), Ok("3"));
    assert_eq!(e.rule, "label dropped, values equal");
    let text = e.to_string();
    assert!(text.contains("gold tree: (rel x = 3)") && text.contains("rule: "));
}

fn rule_of(response: &str) -> Option<Rule> {
    extract_with_rule(response).ok().map(|e| e.rule)
}

#[test]
fn answer_statements_are_cut_at_the_end_of_the_expression() {
    let r = "By Cayley's formula the count is n^{n-2}.\n\nSo the answer is that there are \
             125 trees on 5 labeled vertices.";
    assert_eq!(extract_answer(r).as_deref(), Some("125"));
    assert!(verify("125", r).correct);
    let r = "Adding the two cases gives 3/4 of the total.\n\nTherefore, the answer is \
             $\\frac{3}{4}$.";
    assert_eq!(extract_answer(r).as_deref(), Some("\\frac{3}{4}"));
    assert_eq!(rule_of(r), Some(Rule::AnswerStatement));
    let r = "Final Answer: The final answer is $(0, 1)$. I hope it is correct.";
    assert_eq!(extract_answer(r).as_deref(), Some("(0, 1)"));
    // an earlier statement the response moved on from does not count
    let r = "The answer is 12.\n\nWait, I double-counted. The answer is 10.";
    assert_eq!(extract_answer(r).as_deref(), Some("10"));
    // a later marker without an expression gives way to the one before it
    let r = "So the answer is 42.\n\nI checked it twice, and the answer is correct.";
    assert_eq!(extract_answer(r).as_deref(), Some("42"));
}

#[test]
fn markdown_answer_blocks_and_gsm8k_lines() {
    // PRM800K's solutions end in a "# Answer" block
    let r = "I need to find the number of ways, which is $\\binom{6}{2} = 15$.\n\nSo $x = 3$ \
             is not it; the count is what was asked.\n\n# Answer\n\n15";
    assert_eq!(extract_answer(r).as_deref(), Some("15"));
    assert_eq!(rule_of(r), Some(Rule::AnswerBlock));
    let r = "Work with $y = 2$.\n\n**Final Answer**\n\n$\\frac{7}{2}$";
    assert_eq!(extract_answer(r).as_deref(), Some("\\frac{7}{2}"));
    let r = "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n#### 72";
    assert_eq!(extract_answer(r).as_deref(), Some("72"));
    assert_eq!(rule_of(r), Some(Rule::Hashes));
    let r = "He has 40-14=<<40-14=26>>26 pieces left.\nA: 26";
    assert_eq!(extract_answer(r).as_deref(), Some("26"));
    let r = "```json\n{\n  \"reasoning\": \"8 + 24 = 32\",\n  \"answer\": \"32\"\n}\n```</s></s>";
    assert_eq!(extract_answer(r).as_deref(), Some("32"));
}

#[test]
fn the_final_line_of_a_finished_response() {
    let r = "Step 1: the first bag has $3 \\cdot 4 = 12$ apples.\nStep 2: the second has 3.\n\
             So she has 15 apples in total.";
    assert_eq!(extract_answer(r).as_deref(), Some("15"));
    assert_eq!(rule_of(r), Some(Rule::FinalLine));
    // a truncated response whose last number equals the gold has no answer
    let r = "First we find the sum of the roots, which is 7.\nThen we add 3 + 4 = 7 and \
             multiply by";
    let e = explain("7", r);
    assert!(!e.correct && e.extracted.is_none(), "{e}");
    assert!(e.rule.contains("truncated"), "{}", e.rule);
    let looping = format!(
        "We need $f(2)$.\n{}",
        "Wait, let me recompute: 3 + 4 = 7.\n".repeat(30)
    );
    assert!(!verify("7", &looping).correct);
}

#[test]
fn special_tokens_do_not_hide_the_answer() {
    assert!(verify("5", "So the answer is \\boxed{5}.<|im_end|>").correct);
    assert!(verify("5", "The answer is 5.</s><s>").correct);
    assert!(verify("12", "Thus there are 12 ways.<|eot_id|><|endoftext|>").correct);
    assert!(verify("3", "Answer: 3<｜end▁of▁sentence｜>").correct);
    // what follows the end of the turn is not the answer
    assert!(
        !verify(
            "7",
            "\\boxed{5}<|im_end|>\n<|im_start|>user\nWhat about 7?\\boxed{7}"
        )
        .correct
    );
    assert_eq!(
        strip_tokens(
            "\\boxed{4}<|my_eos|>\\boxed{9}",
            &["<|my_eos|>".to_string()]
        ),
        "\\boxed{4}"
    );
}

#[test]
fn equation_chains_resolve_to_their_final_value_against_a_value() {
    assert!(verify("56", "There are \\boxed{8C3 = 56} ways.").correct);
    assert!(verify("14", "So \\boxed{p'(2) = 14}.").correct);
    assert!(verify("7", "\\boxed{x = 3 + 4 = 7}").correct);
    assert!(verify("\\frac{1}{9}", "\\boxed{P = \\frac{4}{36} = \\frac{1}{9}}").correct);
    // a gold relation is still compared as a relation
    no("7 = 11a+c", "11a+c");
    no("a^2 + b = 0", "0");
    // a chain ending in an expression with variables is not a value
    assert!(!verify("5", "\\boxed{y = 5x}").correct);
}

#[test]
fn notation_units_bases_spacing_ratios() {
    yes("40", "40m");
    yes("5", "5cm");
    yes("12", "12 km/h");
    yes("40\\text{ m}", "40m");
    no("40", "40x");
    no("5m", "5");
    yes("1358", "2516_8");
    yes("1358", "2516_{8}");
    yes("11", "1011_2");
    yes("2516_8", "2516_8");
    no("2516_8", "1358");
    no("1358", "2517_8");
    yes("2024", "2 0 2 4");
    yes("3/4", "3:4");
    yes("3:4", "\\frac{3}{4}");
    no("3/4", "4:3");
    no("3/4", "3:4:5");
}

#[test]
fn restatements_count_once_hedges_are_wrong() {
    assert!(verify("\\frac14", "The probability is 0.25, or 1/4.").correct);
    assert!(verify("0.5", "The answer is $\\frac12$, i.e. $0.5$.").correct);
    assert!(verify("5", "\\boxed{5} or equivalently \\boxed{\\frac{10}{2}}").correct);
    assert!(!verify("3", "The answer is 3 or 5.").correct);
    assert!(!verify("3", "The answer is either 3 or 5.").correct);
    assert!(!verify("5", "so it is \\boxed{3} or \\boxed{5}").correct);
    // several answers when the gold has several
    assert!(verify("3, 5", "The answer is 3 or 5.").correct);
}

#[test]
fn refusals_are_wrong() {
    let r = "We know $f(1) = 2$ only.\nThere is not enough information to determine f(0).";
    let e = explain("0", r);
    assert!(!e.correct, "{e}");
    assert!(!verify("0", "The answer is that $f(0)$ cannot be determined.").correct);
    assert!(!verify("5", "The answer is not 5.").correct);
}

#[test]
fn explain_names_the_extraction_rule() {
    let e = explain("15", "Work.\n\n# Answer\n\n15");
    assert_eq!(e.extracted_by, "markdown answer block");
    assert!(e
        .to_string()
        .contains("extracted by: markdown answer block"));
    assert_eq!(explain("4", "so \\boxed{4}").extracted_by, "last \\boxed{}");
}

/// Forms of answers other models write that the checker read wrong: answer statements in other
/// languages, clock times, emphasis around a value, a closing question or an equation line at
/// the end (not a truncation), a one-word negative answer (not a negation). Each with the
/// counter-case that must keep failing.
#[test]
fn answers_in_other_languages_and_layouts() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    // answer statements in other languages; the marker wins over an earlier number
    ok("5", "先算 3 + 4 = 7，再减 2。答案是 5");
    ok("5", "计算过程略。\n答案：5");
    ok("5", "所以，答案为 5。");
    ok("12", "Sumamos 7 y 5. La respuesta es 12.");
    ok("12", "Somamos 7 e 5. A resposta é 12.");
    ok("12", "Sommiamo 7 e 5. La risposta è 12.");
    ok("12", "On ajoute 7 et 5. La réponse est 12.");
    ok("12", "Wir addieren 7 und 5. Die Antwort lautet 12.");
    ok("12", "Wir addieren 7 und 5. Die Antwort ist 12.");
    ok("12", "Складываем 7 и 5.\nОтвет: 12");
    wrong("12", "Die Antwort ist 13.");
    // "respuesta estimada" is not "respuesta es": no statement takes the 7
    assert_ne!(
        extract_answer("La respuesta estimada 7 no vale.\nTotal: 9").as_deref(),
        Some("7")
    );
    // clock times: the periods of P.M. are not a sentence end; spellings compare equal;
    // AM is not PM
    ok(
        "8:45 P.M.",
        "The train leaves at 8:05 and takes 40 minutes.\nIt arrives at 8:45 P.M.",
    );
    ok("8:45 PM", "The answer is 8:45 p.m.");
    ok("8:45 p.m.", "The answer is 8:45PM.");
    wrong("8:45 AM", "The answer is 8:45 p.m.");
    wrong("8:45 PM", "The answer is 8:15 PM.");
    // a meridiem in \text, on either side, apart from its time or not (Qwen2.5-Math's
    // `\boxed{4:30 \text{ p.m.}}` against MATH's `\text{4:30 p.m.}`)
    for response in [
        "They arrive at \\boxed{4:30 \\text{ p.m.}}.",
        "They arrive at \\boxed{4:30 p.m.}.",
        "They arrive at \\boxed{4:30 \\text{p.m}}",
        "They arrive at \\boxed{4:30 PM}",
    ] {
        ok("\\text{4:30 p.m.}", response);
    }
    wrong(
        "\\text{4:30 p.m.}",
        "They arrive at \\boxed{4:30 \\text{ a.m.}}.",
    );
    wrong(
        "\\text{4:30 p.m.}",
        "They arrive at \\boxed{5:30 \\text{ p.m.}}.",
    );
    wrong("\\text{4:30 p.m.}", "They arrive at \\boxed{4:30}.");
    // Markdown emphasis around the value, but not Python's power
    ok("4", "So x = **4**.");
    ok("4", "So x = **4");
    ok("4", "Therefore $x$ is __4__.");
    assert_eq!(super::normalize::clean_inline("2**3"), "2**3");
    // a closing question without digits after the answer is not a truncation
    ok(
        "12",
        "First 7 + 5.\nThe total is 12\n\nIs there anything else I can help you with?",
    );
    // but a question holding the number is no answer line of its own
    wrong("7", "Let me think.\nWait, is 7 right?");
    // an equation line ending in a number ends the response
    ok("0.452", "We use the binomial formula.\nP(X > 2) = 0.452");
    ok("-3", "Solve for x.\nx = -3");
    // a prose line cut after a number still looks truncated
    wrong("7", "First we find the sum.\nThen we add 3 + 4 = 7");
    // a one-word negative answer is the answer, not a negation
    ok("No", "Since 7 is not divisible by 2, the answer is No.");
    ok("none", "The answer is none.");
    wrong("5", "The answer is not 5.");
    wrong("No", "The answer is Yes.");
}

#[test]
fn a_letter_with_its_option_s_value_names_the_option() {
    let opts = ["30°", "40°", "50°", "60°"];
    let v = |g: &str, r: &str| super::verify_with_choices(g, r, &opts).correct;
    assert!(v("C", "The answer is C (50°)."));
    assert!(v("C", "答案是(C) 50°"));
    assert!(v("C", "答案：(c) 50°"));
    // a letter with another option's value: the letter decides no option here, wrong
    assert!(!v("C", "The answer is C (40°)."));
    assert!(!v("B", "The answer is C (50°)."));
    let formulas = ["$\\theta^2$", "$2\\theta^2$", "$3\\theta$", "$\\theta$"];
    assert!(super::verify_with_choices("B", "The answer is (b) $2\\theta^2$", &formulas).correct);
}

#[test]
fn a_decimal_comma_against_a_number() {
    yes("1000.99", "1000,99");
    yes("1.22", "1,22");
    yes("0.111", "0,111");
    yes("-2.5", "-2,5");
    // the gold written so
    yes("1,22", "1.22");
    yes("0,111", "0.111");
    no("0,111", "0.112");
    // three digits after the comma: thousands, not a decimal
    no("1.234", "1,234");
    yes("1234", "1,234");
    // against a list gold the text is that list
    yes("1, 2", "1,2");
    no("1.2", "1.3");
}

#[test]
fn an_answer_that_opens_with_approximately_is_its_value() {
    yes("3.14", "\\approx 3.14");
    yes("3.14", "≈ 3.14");
    no("3.14", "\\approx 3.15");
    // a relation between two sides stays one
    yes("3.14", "x \\approx 3.14");
    assert!(verify("3.14", "The answer is $\\approx 3.14$.").correct);
}

/// A computation written out is not its value: a real model under GRPO on the arith task learned
/// to answer "903 * 6116 is equal to 58076" (restating the question), which the comparison
/// accepted as 5522748 by evaluating the product: every held-out answer of that checkpoint
/// scored right, none was. Fractions, mixed numbers, powers and scientific notation stay values.
#[test]
fn a_computation_written_out_is_not_its_value() {
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}");
    wrong("5522748", "903 * 6116 is equal to 58076 in decimal format");
    wrong("56", "7 * 8");
    wrong("1561", "The answer is $76 + 27 \\times 55$.");
    wrong("12", "\\boxed{2 \\cdot 6}");
    wrong("-12", "\\boxed{-(2 \\cdot 6)}");
    no("10", "9+1");
    // in words: a word of arithmetic between two numbers is an operation, not a unit the
    // comparison may drop (the bare "76 times 27" read as 76 * 27, 2052)
    wrong("2052", "76 times 27");
    wrong("2052", "**76 Times 27.**");
    wrong("544", "34 plus 16");
    wrong("50", "34 plus 16");
    wrong("9", "27 over 3");
    wrong("2052", "76 into 27");
    // a unit after the value stays a unit
    ok("2052", "2052 apples");
    ok("2052", "$2052 \\text{ apples}$");
    ok("18", "2 times 9 equals 18");
    // the value, or a chain that ends in it
    ok("1561", "76 + 27 * 55 = 1561");
    ok("56", "The answer is 56.");
    // values written as fractions, mixed numbers, powers, scientific notation
    yes("0.5", "\\frac{1}{2}");
    yes("2.5", "2\\frac{1}{2}");
    yes("1000", "10^3");
    yes("300000000", "3 \\times 10^8");
    // not a number gold: symbolic answers compare as before
    yes("2\\sqrt{3}", "\\sqrt{12}");
    yes("x + 1", "1 + x");
}

/// Chinese answer headings: `【答案】` (GAOKAO-Bench's answer section) wherever it sits, and
/// `答案：` / `答案:` opening a line, with either colon, are answer markers; a section that holds
/// working commits to the value it ends on. Each with the counter-case that must stay wrong.
#[test]
fn chinese_answer_headings_are_answer_markers() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    let opts = ["$1$", "$2$", "$3$", "$4$"];
    let choice = |g: &str, r: &str| super::verify_with_choices(g, r, &opts).correct;
    // the heading, with or without a colon of either width
    ok("7", "【解析】先求和，得 3+4=7。\n【答案】7");
    ok("7", "【解析】略\n【答案】：7");
    ok("7", "【解析】略\n【答案】: 7");
    ok("7", "计算略。\n答案:7");
    ok("7", "计算略。\n答案：\n7");
    ok("\\frac{1}{3}", "【答案】$\\frac{1}{3}$");
    assert_eq!(
        rule_of("【解析】略\n【答案】7"),
        Some(Rule::AnswerStatement)
    );
    // the heading is the last marker: it wins over an earlier statement the response moved on from
    assert!(choice("C", "所以答案是B。\n【答案】C"));
    assert!(!choice("B", "所以答案是B。\n【答案】C"));
    // a section of working commits to the value it ends on
    ok("4", "【答案】\n由 $2x=8$ 得 $x=4$。");
    ok("4", "【答案】解方程 $2x = 8$，得到 $x = 4$。");
    ok(
        "9",
        "【答案】\n先求公差：$d=2$。\n再求 $a_5=1+4\\times 2=9$。",
    );
    ok("6", "【答案】\n解得k=6.");
    wrong("2", "【答案】解方程 $2x = 8$，得到 $x = 4$。");
    // a section that names no value, two values, or a list, is no single answer
    wrong("5", "【答案】题目条件不足，无法求出。");
    wrong("3", "【答案】3或5");
    wrong("3", "【答案】\n解得 $x=3$ 或 $x=5$。");
    wrong("A", "【答案】A、C");
    // 【解析】 (the working) is no answer heading
    wrong("5", "【解析】x=5\n【答案】6");
}

/// End-of-answer and end-of-explanation tokens glued to the text (GAOKAO-Bench's `<eoa>`,
/// `<eoe>`; chat models' end-of-turn tokens) are no part of the answer and do not make the line
/// read as unfinished; what follows an end-of-answer token is not the answer.
#[test]
fn end_of_answer_tokens_glued_to_the_answer() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    ok("12", "Adding gives 12.<eoe>\n【答案】12<eoa>");
    ok("12", "【解析】3 \\times 4 = 12<eoe>\n【答案】$12$<eoa>");
    ok("5", "We solve 2x = 10.\nSo x = 5<eoa>");
    ok("5", "The answer is 5<|eot_id|>");
    ok("5", "So x = 5<|im_end|>");
    ok("9", "Answer: 9<|EOT|>");
    // after the end of the answer, nothing counts
    wrong("9", "【答案】5<eoa>\n【答案】9<eoa>");
    // the token does not finish a line that was cut
    wrong("5", "We add the two.\nFirst 2 + 3 = 5 and then we<eoa>");
}

/// Currency amounts in prose (`$25`, `$5.50`, `$25/$5`) are not math delimiters: a `$` that a
/// digit follows and that no `$` closes (a space before the next one, or a digit after it) is a
/// dollar sign. Real LaTeX keeps its spans, those that open with a digit included.
#[test]
fn currency_amounts_are_not_math_delimiters() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    ok(
        "6",
        "Each ticket costs $4.\nHe has $24, so he buys $24/$4 = 6 tickets.",
    );
    ok("7.5", "She pays $5.00 + $2.50 = $7.50.");
    ok("7.5", "The answer is $7.50.");
    ok("7", "He had $12 and spent $5, so $7 is left.");
    wrong("12", "He had $12 and spent $5, so $7 is left.");
    wrong(
        "24",
        "Each ticket costs $4.\nHe has $24, so he buys $24/$4 = 6 tickets.",
    );
    // LaTeX spans stay math
    ok("5", "Solving, we get $x = 5$.");
    ok("204", "Then we get $180+24=204$.");
    ok("3", "Adding $2$ and $1$ gives $3$.");
    ok("8", "It costs $5, and $x = 8$.");
    wrong("5", "It costs $5, and $x = 8$.");
}

/// After a `Final Answer:` heading (or `# Answer`, `Answer:` on its own line), a section that
/// holds working commits to the value it ends on, not to its first line; a section whose first
/// line is already an answer keeps it (later lines are a check), and one that ends in prose
/// keeps its first line.
#[test]
fn an_answer_section_of_working_ends_on_its_value() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    ok(
        "5",
        "Let x be the number.\nFinal Answer:\nx + 4x = 25\n5x = 25\nx = 5",
    );
    ok(
        "9",
        "We set up the equation.\n\n# Answer\n\n2y - 4 = 14\n2y = 18\ny = 9",
    );
    ok("9", "Answer:\n2y - 4 = 14\n$2y = 18$\n$y = 9$");
    wrong(
        "25",
        "Let x be the number.\nFinal Answer:\nx + 4x = 25\n5x = 25\nx = 5",
    );
    // a first line that answers keeps its answer; the lines after it are a check
    ok("5", "Final Answer:\n5\n5 + 20 = 25");
    wrong("25", "Final Answer:\n5\n5 + 20 = 25");
    ok("5", "Final Answer:\nx = 5\nCheck: 5 + 4 * 5 = 25");
    wrong("25", "Final Answer:\nx = 5\nCheck: 5 + 4 * 5 = 25");
    // a section that ends in prose commits to no value of its working
    wrong(
        "5",
        "Final Answer:\nx + 4x = 25\nso we divide both sides by 5",
    );
    // one line: the statement as before
    ok("5", "Final Answer:\n\nx = 5");
}

#[test]
fn answer_statements_of_the_second_held_out_set() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    // "the answer to this question is" is an answer statement: a step label before it
    // (`#5. (by #3 #4)`) or the restated question's formula is not the answer
    let np = "#5. (by #1 #4) The original question is #2. Simplify $\\sqrt{9^3}$. We do not \
              miss information on the rewritten labels. So the answer to this question is 27.";
    ok("27", np);
    wrong("4", np);
    ok("6", "The answer for the problem is 6.");
    wrong("6", "The answer to this question is not 6.");
    // a clause after the statement: its value, past names joined by "and"
    ok(
        "273",
        "So the answer to this question is Mariah and her grandma used 273 yards of yarn altogether.",
    );
    ok(
        "48",
        "So the answer is Joan and Tom have 48 books together.",
    );
    wrong(
        "49",
        "So the answer is Joan and Tom have 48 books together.",
    );
    // "and" before a value still lists values: a hedge against one gold
    wrong("3", "The answer is 3 and 5.");
    // after the copula that a value follows, not a later one
    ok(
        "500",
        "So the answer is there are 500 jigsaw pieces left to be placed.",
    );
    ok("34", "The largest $n$ is 34.");
    wrong(
        "500",
        "So the answer is there are 50 pieces left to be placed.",
    );
    // "the correct option is" / "the best option is" states a choice
    let choices = ["126", "77", "88"];
    let aqua = "So the answer to this question is train fare for one person is Rs. 126. Among \
                all the answer choices, the correct option is A) 126.";
    assert!(choices::verify_with_choices("A", aqua, &choices).correct);
    assert!(!choices::verify_with_choices("B", aqua, &choices).correct);
    let men = ["93 men", "96 men"];
    let best = "The answer to the question is 96 men. Among all the answer choices, the best \
                option is B) 96 men.";
    assert!(choices::verify_with_choices("B", best, &men).correct);
    assert!(!choices::verify_with_choices("A", best, &men).correct);
    // the fraction slash and the division slash divide (`π⁄4`)
    ok("\\frac{\\pi}{4}", "```json\n{\"answer\": \"π⁄4\"}\n```");
    ok("0.75", "The answer is 3⁄4.");
    ok("0.75", "The answer is 3∕4.");
    wrong("\\frac{\\pi}{3}", "The answer is π⁄4.");
    // a JSON list of values is a list (`"answer": ["B", "F"]`)
    ok(
        "B, F",
        "{\"reasoning\": \"...\", \"answer\": [\"B\", \"F\"]}",
    );
    ok("[1,2]", "{\"answer\": [1, 2]}");
    wrong("B", "{\"answer\": [\"B\", \"F\"]}");
    ok("[0,1)", "The answer is [0, 1).");
}

#[test]
fn decimals_printed_at_double_precision_are_one_value() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    // both renderings of 5/12 that f64 arithmetic gives
    ok("0.4166666666666667", "The answer is 0.4166666666666666.");
    ok("0.8333333333333334", "The answer is 0.8333333333333333.");
    ok("-1234.567890123457", "The answer is -1234.567890123456.");
    // more than f64's rounding apart, or fewer than 15 significant digits: exact as before
    wrong("0.4166666666666667", "The answer is 0.4166666666666647.");
    wrong("0.41666666666667", "The answer is 0.41666666666666.");
    wrong("3.3e12", "The answer is 3.3e12+1.");
    wrong("0.42", "The answer is 0.4166666666666667.");
}

/// Final answers written as a sentence in the language of the question (MGSM's ten languages,
/// as GPT-4 answers them): the sentence's one number; nothing when it holds a negation, a
/// variable, an option's label or several numbers.
#[test]
fn a_sentence_in_any_language_states_its_one_number() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    let block = |s: &str| format!("Work.\n\n>> FINAL ANSWER:\n\"\"\"\n{s}\n\"\"\"");
    for (gold, sentence) in [
        ("5", "Cecilia benötigt 5 Tüten Hundefutter im ersten Jahr."),
        ("34", "Raphael gastó $34 en total."),
        ("320", "Elaine possède maintenant 320 cartes Pokemon."),
        ("18", "Mélanie avait 18 aspirateurs au départ."),
        (
            "243",
            "Mishka a dépensé 243,00 $ en tout pour l'achat de ces vêtements.",
        ),
        ("13", "Уолт прошел 13 миль в среду."),
        ("15", "彼は15個のおもちゃを取り除く必要があります。"),
        ("220", "珍妮丝剩余的欠款为 220 美元。"),
        ("70000", "เขาทำกำไรได้ $70,000 ดอลลาร์"),
        ("10", "জন 10 মাইল প্রতি ঘণ্টা দ্রুতির সাথে দৌড়ান।"),
        (
            "24",
            "গোলাপি প্লাস্টিক ফ্লেমিংগোর সংখ্যা সাদা প্লাস্টিক ফ্লেমিংগোর সংখ্যা থেকে 24টি বেশি।",
        ),
        ("7", "బిల్లీ మంగళవారంనాడు 7 DVDలను విక్రయించాడు."),
        ("100", "100 Mädchen im chinesischen Team."),
        ("14", "14 años"),
        (
            "32",
            "Each person (Isabel, her mother, and her father) contributed $32 to the party.",
        ),
        ("109", "10 years from now, Allen's age will be 109 years."),
        ("-5", "The temperature at night is -5 degrees."),
    ] {
        ok(gold, &block(sentence));
        let other = format!("{}1", gold.trim_start_matches('-'));
        wrong(&other, &block(sentence));
    }
    // not one plain number
    for (gold, sentence) in [
        ("5", "Cecilia benötigt nicht 5 Tüten."),   // negated
        ("5", "Walt ne marche pas 5 miles."),       // negated
        ("5", "彼は5個のおもちゃを持っていない。"), // negated
        ("5", "The answer is not 5 apples."),       // negated
        ("10", "Half of the 10 apples are left."),  // scaled
        ("12", "8 pens cost $12.00 in total."),     // two numbers
    ] {
        wrong(gold, &block(sentence));
    }
    // an option's label decides, not the number after it
    let options = ["2.85 miles", "3.5 miles", "3.65 miles", "3.85 miles"];
    let r = "So, the correct answer is:\n\nD) 3.85 miles";
    assert!(choices::verify_with_choices("D", r, &options).correct);
    // a value opening the sentence stays the answer when nothing but commentary follows
    ok("12", "The answer is 12, and the sum is 7.");
    // `3,5` is not a decimal comma; `1,234` is thousands
    ok("1234", &block("Der Bauer hat 1,234 Äpfel."));
}

/// The peer suites' open forms: boxes that each restate the variable, Greek letters, a value
/// with its approximation.
#[test]
fn boxes_per_root_greek_letters_and_approximations() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    // one box per root, each after the variable it solves for: both roots
    ok("2, 3", "So $x=\\boxed{2}$ or $x=\\boxed{3}$.");
    ok("2, 3", "So $x = \\boxed{2}$ and $x = \\boxed{3}$.");
    wrong("2", "So $x=\\boxed{2}$ or $x=\\boxed{3}$.");
    // words between boxes still keep them apart: the last box
    ok(
        "3",
        "First we get \\boxed{2}, which is wrong; then \\boxed{3}.",
    );
    // Greek letters written as themselves are the LaTeX letters
    ok("2", "The answer is $y(τ) = 2$.");
    ok("2\\alpha", "The answer is 2α.");
    ok("\\theta^2", "The answer is θ^2.");
    wrong("2\\beta", "The answer is 2α.");
    // a value with its approximation: either side is the answer
    ok("\\pi", "The answer is $\\pi \\approx 3.14$.");
    ok("3.14", "The answer is $\\pi \\approx 3.14$.");
    ok(
        "\\frac{1}{3}",
        "The answer is $\\frac{1}{3} \\approx 0.333$.",
    );
    wrong("3", "The answer is $\\pi \\approx 3.14$.");
    wrong("0.5", "The answer is $\\frac{1}{3} \\approx 0.333$.");
}

/// Named values against a tuple, several blanks after `;`, math spans joined by `and` in a
/// final line, a restated instruction, a final statement after a box, refusals in other
/// languages.
#[test]
fn named_values_blanks_restated_instructions_and_answers_after_a_box() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    let reason = |g: &str, r: &str| verify(g, r).reason;
    // named values: a tuple in the order written, each name once
    ok("[3, 5]", "Solving, we get B = 3, E = 5.");
    ok("[3, 5]", "So the answer is $B = 3$ and $E = 5$.");
    ok("(1, -2)", "Therefore $x = 1$, $y = -2$.");
    wrong("[5, 3]", "Solving, we get B = 3, E = 5.");
    wrong("[3, 5, 7]", "Solving, we get B = 3, E = 5.");
    // one unknown twice is two alternatives, not a pair
    wrong("(2, 3)", "So $x = 2$ or $x = 3$.");
    // and against one value they are a hedge, as before
    wrong("3", "So $x = 2$ or $x = 3$.");
    ok("2, 3", "So $x = 2$ or $x = 3$.");
    // a span that words separate is a step, not part of the answer
    ok("5", "From $x = 2$ we get $y = 5$.");
    // several blanks after `;`: kept when a value alone follows
    ok("0; 3", "The answers are 0; 3");
    ok("0; 3", "The answer is 0; 3.");
    ok("5", "The answer is 5; the other root is extraneous.");
    // a restated instruction answers nothing
    wrong("0", "Return 1 for finite dimension and 0 for infinite.");
    wrong("1", "Return 1 for finite dimension and 0 for infinite.");
    assert!(
        reason("0", "Return 1 for finite dimension and 0 for infinite.").contains("instruction"),
        "{}",
        reason("0", "Return 1 for finite dimension and 0 for infinite.")
    );
    ok("0", "The space is infinite-dimensional, so we return 0.");
    ok(
        "0",
        "We output 1 if finite and 0 if infinite.\nThe space is infinite-dimensional, so the answer is 0.",
    );
    // a final statement after the last box overrides it; a check, a hedge or commentary does not
    ok(
        "12",
        "We first get \\boxed{10}. Wait, recheck: the correct total is 12. So the final answer is 12.",
    );
    wrong(
        "10",
        "We first get \\boxed{10}. Wait, recheck: the correct total is 12. So the final answer is 12.",
    );
    ok("36", "\\boxed{36}. To check the answer: 36 / 3 = 12.");
    ok(
        "36",
        "The answer is \\boxed{36}. I hope the answer is clear.",
    );
    ok("36", "\\boxed{36}. But the answer should be 37.");
    ok("36", "$\\boxed{36}$\n\nThe final answer is 36.");
    ok("7", "所以 \\boxed{5}。重新检查后，答案是 7。");
    // refusals in the languages models answer in
    for r in [
        "条件不足，无法确定答案。",
        "Por lo tanto, no se puede determinar el valor de f(0).",
        "Daher kann f(0) nicht bestimmt werden.",
        "Donc f(0) ne peut pas être déterminé.",
    ] {
        wrong("0", r);
        assert!(
            reason("0", r).contains("declines"),
            "{r}: {}",
            reason("0", r)
        );
    }
}

/// The sixth held-out set's misses: a function of numbers left unevaluated, a list gold written
/// as a tuple, set-builder intervals, a marker inside `\text{}`, a decimal comma before a lone 0.
#[test]
fn unevaluated_functions_tuples_set_builder_and_text_markers() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    // a restated expression is not its value, though it evaluates to it
    wrong(
        "-\\sqrt{3}",
        "Answer: $\\tan 100^\\circ + 4 \\sin 100^\\circ$",
    );
    wrong("\\frac{1}{2}", "The answer is $\\sin 30^\\circ$.");
    wrong("3", "The answer is $\\log_2 8$.");
    wrong("\\frac{\\sqrt{2}}{2}", "So $x = \\cos 45^\\circ$.");
    ok("-\\sqrt{3}", "Answer: $-\\sqrt{3}$");
    ok("\\frac{\\pi}{4}", "The answer is $\\frac{\\pi}{4}$.");
    ok("2^{10}", "The answer is $1024$.");
    // a gold that holds such a function is compared by value
    ok("\\log_2 3", "The answer is $\\frac{\\ln 3}{\\ln 2}$.");
    ok("\\ln 2", "The answer is $\\ln 2$.");
    // a function of a variable is an expression, not a computation left over
    ok("\\sin x", "The answer is $\\sin x$.");
    // a list gold written as a tuple, in its order
    ok("10^{3},10", "The answer is $(1000, 10)$.");
    wrong("10^{3},10", "The answer is $(10, 1000)$.");
    wrong("10^{3},10,5", "The answer is $(1000, 10)$.");
    // set-builder notation of one variable is its interval
    ok("\\{x|-2\\le x<1\\}", "The answer is $[-2, 1)$.");
    ok("[-2,1)", "The answer is $\\{x \\mid -2 \\le x < 1\\}$.");
    ok(
        "(3,\\infty)",
        "The answer is $\\{x \\in \\mathbb{R} : x > 3\\}$.",
    );
    wrong("\\{x|-2\\le x<1\\}", "The answer is $[-2, 1]$.");
    wrong("\\{x|-2\\le x<1\\}", "The answer is $(-2, 1)$.");
    // the marker inside `\text{}` in display math
    ok(
        "\\frac{17}{50}",
        "So we get: $$\\text{Answer: } \\frac{17}{50}$$",
    );
    // `-3,0` is two values, not -3.0; other decimal commas stay decimals
    wrong("-3,0", "So the answer is \\boxed{-3}.");
    ok("-3,0", "So the answer is \\boxed{-3, 0}.");
    ok("1,22", "The answer is 1.22");
    ok("2.5", "Die Antwort ist 2,5.");
}

/// A system's solution in a `cases` environment is the list of its rows; a piecewise
/// definition (rows with `&`) is not parsed and only matches the same text.
#[test]
fn cases_environments_are_lists_of_their_rows() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    let system = "The solution is $\\begin{cases} x=1 \\\\ y=2 \\end{cases}$";
    ok("x=1, y=2", system);
    ok("(1, 2)", system);
    wrong("(2, 1)", system);
    wrong("x=2, y=3", system);
    ok("1", "\\boxed{\\begin{cases} x=1 \\end{cases}}");
    let piecewise = "\\begin{cases} x^2 & x>0 \\\\ -x & x\\le 0 \\end{cases}";
    ok(piecewise, &format!("The answer is ${piecewise}$."));
    wrong("x^2", &format!("The answer is ${piecewise}$."));
}

/// A function's definition under another name for its variable is the same function.
#[test]
fn a_function_defined_under_another_variable_name() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    ok("f(z)=z", "The answer is $f(x) = x$.");
    ok("f(z)=z^2+1", "The answer is $f(x) = x^2 + 1$.");
    wrong("f(z)=z^2+1", "The answer is $f(x) = x^2 + 2$.");
    // another function, or a renaming that would capture a parameter
    wrong("f(z)=z^2+1", "The answer is $g(x) = x^2 + 1$.");
    wrong("f(z)=z+x", "The answer is $f(x) = x + z$.");
}

/// An answer in quotes after a marker is what the quotes hold (`The final answer is "even".`);
/// a JSON list and an escaped quote keep their readings, and a quote that never closes on the
/// line changes nothing.
#[test]
fn a_quoted_answer_is_what_its_quotes_hold() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    let minerva = |a: &str| format!("Final Answer: The final answer is {a}. I hope it is correct.");
    ok("\\text{even}", &minerva("\"even\""));
    ok("\\text{odd}", &minerva("'odd'"));
    ok("\\text{even}", &minerva("“even”"));
    wrong("\\text{odd}", &minerva("\"even\""));
    ok("12", &minerva("\"$12$\""));
    ok("\\frac{3}{2}", "The answer is \"3/2\", as computed.");
    wrong("\\frac{3}{2}", "The answer is \"2/3\", as computed.");
    ok("B, F", "{\"answer\": [\"B\", \"F\"]}");
    ok("12, 13", "The final answer is \\\"$12$ and $13$\\\".");
    // an opening quote with no close on its line: read as before
    ok("7", "The answer is \"7.\nDone.");
}

/// The ninth held-out set's forms (chat and reasoning models' plain-text math): Unicode
/// superscripts, subscripts and spaces; a list item's number; a scoring rule's "answer is
/// worth"; a display closed on its own line; a gold's Greek letter glued to a variable.
#[test]
fn unicode_math_list_numbers_scoring_rules_displays_and_glued_greek() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    // superscripts and subscripts outside `$..$`
    ok(
        "\\frac{16}{27}",
        "After 3 miles: 2 × (2/3)³ = 2 × (8/27) = 16/27 gallons.",
    );
    wrong(
        "\\frac{8}{27}",
        "After 3 miles: 2 × (2/3)³ = 2 × (8/27) = 16/27 gallons.",
    );
    ok("2x^2", "The answer is 2x².");
    ok("10^{-2}", "The answer is 10⁻².");
    ok("504", "Hence the answer is: a₁ = 504.");
    // a unit's power is no value
    ok("1000.99", "not it's not 10 it's 1,000.99m²");
    ok("25", "The area is 25 cm².");
    // no-break and thin spaces
    ok("2", "**Answer:** Sam took\u{202f}2 more hours than Bill.");
    ok("12", "The answer is\u{a0}12.");
    // a list item's number is not the line's value
    ok(
        "203",
        "2) Then x = 29.\n\n3) Therefore, the original total is 7×29 = 203.",
    );
    wrong(
        "3",
        "2) Then x = 29.\n\n3) Therefore, the original total is 7×29 = 203.",
    );
    ok("17", "(b) So the number of apples is 17.");
    // "each incorrect answer is worth -2 points" states the problem's scoring
    let frank = "Each correct answer is worth 5 points and each incorrect answer is worth -2 \
                 points.\n\n7C = 392\nC = 56\n\nTherefore, Frank answered 56 questions correctly.";
    ok("56", frank);
    wrong("-2", frank);
    ok("5", "The correct answer is 5.");
    // a display whose delimiters stand on their own lines ends the response on its math
    let m = "\\begin{pmatrix}0&1\\\\1&0\\end{pmatrix}";
    ok(
        m,
        "This matrix swaps the rows.\n\n\\[\n\\begin{pmatrix} 0 & 1 \\\\ 1 & 0 \\end{pmatrix}\n\\]",
    );
    ok("5", "Thus\n$$\nx = 5\n$$");
    wrong("6", "Thus\n\\[\nx = 5\n\\]");
    // a gold that lost its spaces: a Greek letter glued to the variables after it
    ok(
        "2\\cos(\\pit+\\pi/3)",
        "\\boxed{2 \\cos \\left( \\pi t + \\frac{\\pi}{3} \\right)}",
    );
    wrong(
        "2\\cos(\\pit+\\pi/3)",
        "\\boxed{2 \\cos \\left( \\pi + \\frac{\\pi}{3} \\right)}",
    );
    ok(
        "\\frac{h c}{\\lambdakT}",
        "\\boxed{\\frac{hc}{\\lambda k T}}",
    );
    // a command that is one stays one
    ok("\\pi", "\\boxed{\\pi}");
    ok("\\epsilon", "\\boxed{\\varepsilon}");
}

/// Options that are bare labels (`(A)`..`(E)`, `A)`..`E)`: the options were in a figure) name
/// only their own letter: a letter is right only when it is the gold's (the tenth held-out
/// set's false positives).
#[test]
fn bare_label_options_are_right_only_at_the_gold_letter() {
    use super::verify_with_choices as with;
    for choices in [
        vec!["(A)", "(B)", "(C)", "(D)", "(E)"],
        vec!["A)", "B)", "C)", "D)", "E)"],
        vec!["A", "B", "C", "D", "E"],
    ] {
        assert!(with("D", "\\boxed{D}", &choices).correct, "{choices:?}");
        assert!(!with("D", "\\boxed{A}", &choices).correct, "{choices:?}");
        assert!(
            !with("B", "so the correct answer is (A).", &choices).correct,
            "{choices:?}"
        );
        assert!(
            with("B", "so the correct answer is (B).", &choices).correct,
            "{choices:?}"
        );
    }
    // options with the same text are still the same answer
    let same = ["3", "4", "3", "5"];
    assert!(with("A", "\\boxed{C}", &same).correct);
    assert!(!with("A", "\\boxed{B}", &same).correct);
}

/// Small constants are compared relatively (the eleventh held-out set's false positives): an
/// absolute floor made every two values below 1e-12 "the same value"; and one label with two
/// constant values is two answers, whatever their difference's ratio at the sample points.
#[test]
fn small_constants_compare_relatively_and_labelled_constants_by_value() {
    let ok = |g: &str, r: &str| assert!(verify(g, r).correct, "{g:?} <- {r:?}: {:?}", verify(g, r));
    let wrong = |g: &str, r: &str| assert!(!verify(g, r).correct, "{g:?} <- {r:?}");
    wrong("10^{-16}", "\\boxed{10^{-40}}");
    wrong("6.626 \\times 10^{-34}", "\\boxed{10^{-34}}");
    ok("10^{-16}", "\\boxed{1 \\times 10^{-16}}");
    ok("6.626 \\times 10^{-34}", "\\boxed{6.626e-34}");
    ok("0", "\\boxed{\\sqrt{2}^2 - 2}");
    ok(
        "\\frac{1}{4} \\times 10^{-20}",
        "\\boxed{2.5 \\times 10^{-21}}",
    );
    wrong(
        "d = 3 \\times 10^{15}",
        "\\boxed{d \\approx 3.3 \\times 10^{13}}",
    );
    ok("d = 3 \\times 10^{15}", "\\boxed{d = 3 \\times 10^{15}}");
    // equations in variables keep their proportional reading
    ok("2x + 2y = 4", "\\boxed{x + y = 2}");
}

/// Two boxed displays joined by "or" are a hedge between them (the eleventh set's last false
/// positive); joined by "and" after a display, the last box answers (another part's box before
/// it is not a hedge).
#[test]
fn displays_joined_by_or_hedge_and_by_and_leave_the_last_box() {
    let hedge = "only two options seem likely:\n\n\\[\n\\boxed{T=10^6 \\text{ years}}\n\\]\nor \n\\[\n\\boxed{T=10^9 \\text{ years}}\n\\] \n\nBut both could be.";
    assert!(!verify("10^9", hedge).correct);
    assert!(!verify("10^6", hedge).correct);
    let parts = "Thus the polynomial is:\n\\[ \\boxed{\\epsilon y^{10} + y^{7} + 1} \\]\nand\n\\[ \\boxed{\\epsilon = \\frac{a}{b}} \\]";
    assert!(
        verify("\\frac{a}{b}", parts).correct,
        "{:?}",
        verify("\\frac{a}{b}", parts)
    );
    // inline boxes keep their readings
    assert!(!verify("10^9", "So $\\boxed{10^6}$ or $\\boxed{10^9}$.").correct);
    assert!(verify("2, 3", "$x = \\boxed{2}$ and $x = \\boxed{3}$").correct);
}

/// A final line whose text opens with a character of several bytes across the length of
/// "choice" / "option" is read, not sliced inside the character (the fuzz test found a panic).
#[test]
fn a_multibyte_final_line_against_options_does_not_panic() {
    for r in [
        "Let me think about this problem with care first\nabcde“xyz and then",
        "We still need more steps here before any answer\nSolution: ab√cdefg",
        "abcde“x",
    ] {
        let s = super::verify_with_choices("A", r, &["1", "2"]);
        assert!(!s.correct, "{r}");
    }
}

/// A gold that is a relation sign alone (the key of "compare: 3/4 _ 2/3"): the sign, or the
/// completed comparison with that sign, when it holds between its two values.
#[test]
fn a_relation_sign_gold_takes_the_completed_comparison() {
    yes(">", ">");
    yes(">", "5 > 2");
    yes("<", "\\frac{2}{3} < \\frac{3}{4}");
    yes("=", "\\frac{1}{2} = 0.5");
    yes("\\geq", "7 \\geq 7");
    // another sign, a comparison that does not hold, one without values, a chain
    no(">", "5 < 7");
    no(">", "2 > 5");
    no("=", "3 = 4");
    no("<", "x < 3");
    no("<", "1 < 2 < 3");
    no(">", "5");
    assert!(verify(">", "Reasoning: 6 > 5.\n### Answer: 6 > 5").correct);
    assert!(!verify("<", "Reasoning: 6 > 5.\n### Answer: 6 > 5").correct);
}

/// The answers of MathCAMPS's base models: a new plain-text turn ends the response, GSM8K's
/// calculator annotations are dropped, a remark in parentheses is not the answer, and two
/// answer lines in a row with different values are a hedge.
#[test]
fn base_model_turns_annotations_remarks_and_stacked_answer_lines() {
    let turn = "Reasoning: 23.0+17.2 = <<23.0+17.2=40.2>>40.2 km.\n### Answer: 40.2\n###\n|user| A car travels at 60 km/h for 2.5 hours?\n###|assistant| Reasoning: 60*2.5 = <<60*2.5=150>>150\n### Answer: 150";
    assert_eq!(extract_answer(turn).as_deref(), Some("40.2"));
    let placeholder = "61.571 - 26.25 = 35.321\n### Answer: 35.321\n\nNow, the next problem.\n\n|system| The last line should be \"### Answer: <<your final answer here.>>\".";
    assert_eq!(extract_answer(placeholder).as_deref(), Some("35.321"));
    let annotated = "There are 83 ballerinas.\nAfter the first round, 49 are eliminated, leaving 83 - 49 = <<83-49=34>>34 ballerinas for the next round.";
    assert!(verify("34", annotated).correct);
    assert!(verify("8.329", "### Answer: 8.329 (rounded to 2 decimal places)").correct);
    let stacked = "### Answer: 5/9 ...............(Simplified form)\n### Answer: 75/54 ...............(Without simplification)";
    assert!(!verify("25/18", stacked).correct);
    assert!(!verify("5/9", stacked).correct);
    // the same value on both lines is one answer; an answer in the working above is not a line
    assert!(verify("5/9", "### Answer: 5/9\n### Answer: 10/18").correct);
    assert!(verify("7", "so the answer is 4.\n### Answer: 7").correct);
    // pairs listed without the list's brackets
    yes("[(1, 27), (3, 9)]", "(1, 27), (3, 9)");
    yes("[(1, 27), (3, 9)]", "(3, 9), (1, 27)");
    no("[(1, 27), (3, 9)]", "(1, 27), (3, 8)");
    no("(3, 5)", "3, 5");
}

/// A decimal answer against an exact gold: equal only when it is the value (terminating, or
/// repeating with an ellipsis); a rounding of it is an approximation (policy rule 2).
#[test]
fn rounded_and_repeating_decimals_against_exact_golds() {
    assert!(verify("637/37", "### Answer: $17.2162162162...").correct);
    assert!(verify("\\frac{1}{3}", "The answer is 0.333...").correct);
    assert!(verify("0.333...", "The answer is $\\frac{1}{3}$").correct);
    assert!(!verify("\\frac{1}{3}", "The answer is 0.33...").correct);
    assert!(!verify("259/60", "### Answer: 4.316666666666666").correct);
    assert!(!verify("563/13", "### Answer: 43.3077 feet.").correct);
    assert!(verify("7/8", "### Answer: 0.875").correct);
}

/// Reasoning Gym's answers: `<answer>` tags hold the answer, hexadecimal literals are numbers
/// in base 16, and a float-printed gold is the value it prints.
#[test]
fn answer_tags_hex_literals_and_float_printed_golds() {
    let r = "<think>2 + 3 is \\boxed{6}? no: 5</think>\n<answer>5</answer>";
    assert_eq!(
        extract_with_rule(r).map(|e| (e.answer, e.rule)),
        Ok(("5".into(), Rule::AnswerTag))
    );
    assert!(verify("5", r).correct);
    assert!(verify("x^2 + C", "The final answer is: <answer>x^2 + C</answer>").correct);
    assert!(
        verify(
            "\\frac{1}{2}",
            "work\n<answer>The answer is $\\frac{1}{2}$.</answer>"
        )
        .correct
    );
    assert!(verify("Tuesday", "so it is Tuesday.\n<ANSWER>Tuesday</ANSWER>").correct);
    // an empty pair (an echoed instruction) leaves the rest to the other rules
    assert!(
        verify(
            "7",
            "I will put it in <answer></answer> tags. The answer is 7."
        )
        .correct
    );
    // a refusal inside the tags is no answer
    assert!(!verify("7", "<answer>I cannot determine the answer.</answer>").correct);
    // hexadecimal: digits in base 16, never `0 x ...`
    yes("0x9c2", "0x9C2");
    yes("0xb1d", "0x0b1d");
    no("0x9c2", "0x155");
    no("0x1aaf16b9", "0xdb9925");
    no("0x9c2", "2498");
    // a gold printed at double precision is the double it prints
    yes("186253.57700000002", "186253.577000");
    yes("3.0000000000000004", "3");
    no("186253.57700000002", "186253.58");
}

/// Python's and SymPy's `**` is a power: SymPy-printed antiderivatives and polynomials against
/// the same in another order or grouping.
#[test]
fn python_powers() {
    yes(
        "10*X**7/3 + 5*X**4/2 + 8*X**3 + C",
        "(10/3)*X**7 + (5/2)*X**4 + 8*X**3 + C",
    );
    yes("2*(5 - 3*x)**(3/2)/3 + C", "(2/3)*(5 - 3*x)**(3/2) + C");
    yes("x**2", "x^2");
    no("x**2", "2*x");
    no("6*X**5 - 7*X**4/4 + C", "6*X**5 - 7*X**3/4 + C");
    // Markdown bold around a value is still emphasis
    yes("4", "**4**");
}

/// A last line that is one bracketed word is the answer in the form the prompt asked for.
#[test]
fn a_bracketed_word_on_the_last_line() {
    let r = "Check 2, 3, ..., 135: none divides 18367.\nSo 18367 is a prime number.\n\n[Yes]";
    assert!(verify("yes", r).correct);
    assert!(!verify("no", r).correct);
    assert!(verify("No", "17 = 1 * 17 ... so 18 = 2 * 9.\n[No].").correct);
}

/// `response` scored right (or wrong) against `gold`.
fn right(gold: &str, response: &str) {
    assert!(
        verify(gold, response).correct,
        "expected {response:?} right for {gold:?}"
    );
}
fn wrong(gold: &str, response: &str) {
    assert!(
        !verify(gold, response).correct,
        "expected {response:?} wrong for {gold:?}"
    );
}

/// The factorial and binomial of a variable have values at the real sample points (through the
/// Gamma function), so expressions built from them compare as expressions; at whole numbers the
/// values are the products, as before.
#[test]
fn factorials_of_a_variable() {
    right("\\pm 1/n!", "\\boxed{\\pm\\dfrac{1}{n!}}");
    right("$\\pm 1/n!$", "\\boxed{\\frac{1}{n!}, -\\frac{1}{n!}}");
    right("$\\pm 1/n!$", "\\boxed{x=\\pm\\frac1{n!}}");
    wrong("$\\pm 1/n!$", "\\boxed{\\pm\\frac{1}{(n+1)!}}");
    wrong("1/n!", "\\boxed{\\pm\\frac{1}{n!}}");
    right("n!", "\\boxed{n \\cdot (n-1)!}");
    wrong("n!", "\\boxed{(n-1)!}");
    right("\\binom{2n}{n}", "\\boxed{\\frac{(2n)!}{(n!)^2}}");
    wrong("\\binom{2n}{n}", "\\boxed{\\frac{(2n)!}{n!(n+1)!}}");
    right("\\binom{n}{2}", "\\boxed{\\frac{n(n-1)}{2}}");
    // whole numbers: the exact products
    right("120", "\\boxed{5!}");
    right("10", "\\boxed{\\binom{5}{2}}");
    wrong("121", "\\boxed{5!}");
}

/// Two answers in words alone say the same thing when their words agree in order, wrappers,
/// punctuation, a leading article and the blank's closing noun "condition" aside.
#[test]
fn answers_in_words() {
    right("sampling survey", "\\boxed{\\text{sampling survey}}");
    right(
        "sampling survey",
        "So it is \\boxed{\\textbf{A Sampling Survey}}",
    );
    right(
        "sufficient but not necessary condition",
        "\\boxed{\\text{sufficient but not necessary}}",
    );
    right(
        "necessary and sufficient condition",
        "\\boxed{necessary and sufficient}",
    );
    right(
        "necessary and sufficient condition",
        "\\boxed{\\text{necessary and sufficient condition}}",
    );
    // order and negation matter
    wrong(
        "sufficient but not necessary condition",
        "\\boxed{\\text{necessary but not sufficient}}",
    );
    wrong(
        "necessary and sufficient condition",
        "\\boxed{\\text{neither necessary nor sufficient}}",
    );
    wrong("sampling survey", "\\boxed{\\text{census}}");
    // mathematics is not words: letters that are variables or option letters, digits
    wrong("A, C", "\\boxed{\\text{A, C, D}}");
    wrong("in x", "\\boxed{\\text{in y}}");
    wrong("necessary condition", "\\boxed{\\text{2 necessary}}");
}

/// An angle in degrees answers a gold in radians (the degree sign means ×π/180), only when
/// the values agree.
#[test]
fn degrees_against_radians() {
    right("\\frac{\\pi}{4}", "\\boxed{45^\\circ}");
    right("$\\frac{3\\pi}{4}$", "The angle is \\boxed{135°}.");
    right("\\frac{\\pi}{4}", "\\boxed{\\frac{\\pi}{4}}");
    wrong("\\frac{\\pi}{3}", "\\boxed{45^\\circ}");
    wrong("\\frac{\\pi}{4}", "\\boxed{45}");
    // a gold in degrees: the sign is dropped as before
    right("45", "\\boxed{45^\\circ}");
    wrong("45", "\\boxed{\\frac{\\pi}{4}}");
}

/// Spacing commands do not make two unparsed answers differ.
#[test]
fn spacing_in_unparsed_answers() {
    right(
        "$n = 1 \\text{ or } n \\equiv 2$ \\pmod{4}$",
        "\\boxed{\\,n=1\\text{ or }n\\equiv2\\pmod4\\,}",
    );
    wrong(
        "$n = 1 \\text{ or } n \\equiv 2$ \\pmod{4}$",
        "\\boxed{\\,n=1\\text{ or }n\\equiv3\\pmod4\\,}",
    );
}

/// A relation between constants is a statement about numbers: right when it holds and uses the
/// gold's numbers in the gold's order (any operators in the same blanks, sides swapped with the
/// relation flipped); a true statement with other numbers is another answer (the value of its
/// sides, or a difference of zero, decides nothing).
#[test]
fn relations_between_constants() {
    right(
        "19 - 8 * 28 = -205",
        "FINAL ANSWER:\n<answer>\n19 - 8 \\times 28 = -205\n</answer>",
    );
    right("4 - 17 / 1 = -13", "\\boxed{4 - 17 * 1 = -13}");
    right("\\frac34 > \\frac23", "\\boxed{\\frac23 < \\frac34}");
    // other numbers, or a false statement
    wrong(
        "22 + 16 * 6 - 21 + 9 = 106",
        "<answer>22 + 16 + 6 + 21 + 41 = 106</answer>",
    );
    wrong(
        "18 * 10 - 12 + 1 * 23 = 191",
        "<answer>18 * 10 + 12 - 1 = 191</answer>",
    );
    wrong("4 - 17 / 1 = -13", "\\boxed{1 + 1 = 2}");
    wrong("4 - 17 / 1 = -13", "\\boxed{4 + 17 * 1 = -13}");
    wrong("\\frac34 > \\frac23", "\\boxed{\\frac34 < \\frac23}");
    // equations in a variable are still compared as equations
    right("2x + 1 = 7", "\\boxed{4x + 2 = 14}");
    wrong("2x + 1 = 7", "\\boxed{2x + 1 = 9}");
}

/// Tags named `final` and `final_answer` hold the answer as `answer` tags do; a closing tag
/// whose opening tag was dropped closes its line's answer.
#[test]
fn final_answer_tags() {
    right("-620", "S = 31/2 (2a + 30d) = -620\n\n<final>-620</final>");
    right("1771", "... = 1771\n\n<FINAL>\n1771\n</FINAL>");
    right("7", "<final_answer>\\boxed{7}</final_answer>");
    wrong("-620", "so -620 is the sum?\n<final>620</final>");
    // the last tag of any of the names decides
    right("5", "<answer>3</answer> checking again... <final>5</final>");
    wrong("3", "<answer>3</answer> checking again... <final>5</final>");
    // a closing tag without its opening one
    right("9", "the sum of the digits is 9\n9</final>");
    wrong("9", "the sum of the digits is 9\n8</final>");
}

/// Decimal digits of other scripts are digits: Bengali, Devanagari, Arabic-Indic, Thai,
/// fullwidth.
#[test]
fn digits_of_other_scripts() {
    right("\\frac{7}{9}", "<final>৭/৯</final>");
    right("4", "<final>৪</final>");
    right("2,125", "জনি মোট ২১২৫টি ব্লক তুলেছিল। The answer is ২১২৫.");
    right("36", "The answer is ३६.");
    right("25", "The answer is ٢٥.");
    right("12", "The answer is ๑๒.");
    right("12", "答案是 １２");
    wrong("4", "<final>৫</final>");
}

/// A closing `+ ...` that marks the rest of a series is not part of the compared answer: the
/// leading terms asked for are.
#[test]
fn the_rest_of_a_series() {
    let gold = "1-\\frac{7}{2x}+\\frac{21}{4x^2}-\\frac{35}{8x^3}+.....";
    right(
        gold,
        "<final>1 - \\frac{7}{2x} + \\frac{21}{4x^2} - \\frac{35}{8x^3}</final>",
    );
    right(
        gold,
        "\\boxed{1 - \\frac{7}{2x} + \\frac{21}{4x^2} - \\frac{35}{8x^3} + \\cdots}",
    );
    wrong(
        gold,
        "\\boxed{1 - \\frac{7}{2x} + \\frac{21}{4x^2} + \\cdots}",
    );
    right(
        "1 + x + \\frac{x^2}{2} + \\dots",
        "\\boxed{1 + x + \\frac{x^2}{2} + \\ldots}",
    );
    // the marks repeated (a textbook key's `+ \dots\dots\dots`)
    let gold = "1 - 14x^2 + 84x^4 - 280x^6 + \\dots\\dots\\dots";
    right(gold, "<final>1 - 14x^2 + 84x^4 - 280x^6</final>");
    right(gold, "\\boxed{1 - 14x^{2} + 84x^{4} - 280x^{6} + \\cdots}");
    wrong(gold, "<final>1 - 14x^2 + 84x^4 + 280x^6</final>");
}

/// The answer statement in more of the languages models answer in, with a colon or the
/// language's "is": the value after it is the answer, not the working's last number.
#[test]
fn answer_statements_in_more_languages() {
    // each statement is followed by a sentence with another number, which the last-number
    // fallback would take
    for (gold, response) in [
        ("4", "৮ - ৪ = ৪। উত্তর: ৪। এটি ২ ধাপে পাওয়া গেছে।"),
        ("12", "3×4 を計算します。答え：12。2 段階で求めました。"),
        ("12", "3×4를 계산합니다. 정답: 12. 2단계로 구했습니다."),
        ("12", "3 × 4 की गणना। उत्तर: 12। यह 2 चरणों में मिला।"),
        ("12", "بحساب 3 × 4 الإجابة هي 12. وجدناها في 2 خطوات."),
        ("7", "3 + 4 = 7. Cevap: 7. 2 adımda bulundu."),
        ("7", "Lasketaan 3 + 4. Vastaus on 7. Löydetty 2 vaiheessa."),
        (
            "7",
            "Skaičiuojame 3 + 4. Atsakymas: 7. Rasta per 2 žingsnius.",
        ),
        ("7", "3 + 4 есептейміз. Жауап: 7. 2 қадамда табылды."),
        ("7", "Рахуємо 3 + 4. Відповідь: 7. Знайдено за 2 кроки."),
        (
            "7",
            "We tellen 3 + 4. Het antwoord is 7. Gevonden in 2 stappen.",
        ),
        ("7", "Liczymy 3 + 4. Odpowiedź: 7. Znaleziono w 2 krokach."),
        (
            "7",
            "Kita hitung 3 + 4. Jawabannya adalah 7. Ditemukan dalam 2 langkah.",
        ),
        ("7", "Ta tính 3 + 4. Đáp án là 7. Tìm được trong 2 bước."),
        ("7", "คำนวณ 3 + 4 คำตอบคือ 7 พบใน 2 ขั้นตอน"),
        ("7", "Tunahesabu 3 + 4. Jibu ni 7. Imepatikana kwa hatua 2."),
    ] {
        right(gold, response);
        wrong("2", response);
    }
}

/// One answer in several notations joined by "or" is not a hedge when every alternative equals
/// the gold (policy rule 13); alternatives of which one differs still are.
#[test]
fn alternatives_that_each_equal_the_gold() {
    right(
        "\\frac{\\pi}{4}",
        "\\boxed{\\frac{\\pi}{4} \\text{ or } 45°}",
    );
    right(
        "\\frac{\\pi}{4}",
        "\\boxed{45^\\circ \\text{ or } \\frac{\\pi}{4}}",
    );
    right("2", "\\boxed{x = 2 \\text{ or } x = \\frac{4}{2}}");
    wrong(
        "\\frac{\\pi}{4}",
        "\\boxed{\\frac{\\pi}{4} \\text{ or } 60°}",
    );
    wrong("2", "\\boxed{2 \\text{ or } 3}");
    // a gold of several values is not answered by one of them written twice
    wrong("2, 3", "\\boxed{2 \\text{ or } 2}");
}

/// The gold's variables written in another case (`k`, `l` for the problem's `K`, `L`) are the
/// same variables (policy rule 14); a variable that matches none of the gold's, or a gold that
/// uses both cases of one letter, is not renamed.
#[test]
fn variables_in_another_case() {
    right("\\frac{K-1}{L}", "\\boxed{\\frac{k-1}{l}}");
    right(
        "\\pi R^2 \\left(1 + \\frac{2GM}{V_0^2 R}\\right)",
        "\\boxed{\\pi R^2 \\left(1 + \\frac{2 G M}{R v_0^2}\\right)}",
    );
    wrong("\\frac{K-1}{L}", "\\boxed{\\frac{k+1}{l}}");
    wrong("k + K", "\\boxed{2k}");
    wrong("\\frac{K-1}{L}", "\\boxed{\\frac{k-1}{m}}");
    // a label the gold does not name stays, and is dropped as usual
    right(
        "cx^{-2}-\\frac{\\cos(2x)}{2x^{2}}",
        "\\boxed{y = -\\frac{1}{2x^2}\\cos(2x) + \\frac{C}{x^2}}",
    );
}

/// An identity `E = v` that works out the question's expression reads as its final side `v`
/// when every side is equal as an expression; an equation to solve does not.
#[test]
fn an_identity_read_by_its_final_side() {
    let gold = "1-15x+90x^2-270x^3+405x^4-243x^5";
    right(
        gold,
        "<final>(1-3x)^5 = 1 - 15x + 90x^2 - 270x^3 + 405x^4 - 243x^5</final>",
    );
    right("15x - 80", "$$19x - 4x + 1 - 81 = 15x - 80.$$");
    right("(x+2)(x+3)", "\\boxed{x^2 + 5x + 6 = (x+2)(x+3)}");
    // a false identity (the sides differ) is not the answer
    wrong(
        gold,
        "<final>(1-3x)^5 = 1 - 15x + 90x^2 - 270x^3 + 405x^4 - 240x^5</final>",
    );
    wrong("15x - 80", "\\boxed{19x - 4x + 1 - 81 = 15x - 79}");
    wrong("2x + 1", "\\boxed{x^2 = 2x + 1}");
}

/// A gold of integers joined by bare commas (`45,135`) is a list when the question asks for
/// values separated by commas; without such a question it stays one number with digit groups.
#[test]
fn a_comma_list_the_question_asks_for() {
    use super::verify_asked;
    let asks = "Enter the possible values of $\\angle C,$ in degrees, separated by commas.";
    let score = |gold: &str, response: &str, question: Option<&str>| {
        verify_asked(gold, response, None, question).correct
    };
    assert!(score("45,135", "\\boxed{45, 135}", Some(asks)));
    assert!(score("45,135", "\\boxed{135, 45}", Some(asks)));
    assert!(!score("45,135", "\\boxed{45}", Some(asks)));
    assert!(!score("45,135", "\\boxed{45, 135}", None));
    assert!(!score(
        "45,135",
        "\\boxed{45, 135}",
        Some("What is the total?")
    ));
    // a number with digit groups is still that number without the question's request
    assert!(score(
        "45,135",
        "\\boxed{45135}",
        Some("What is the total?")
    ));
}

/// A prompt's answer template copied into the response (`#### <number>`, `Answer: [num]`) is no
/// answer marker: the answer is found as if it were not there. A bracketed answer is an answer.
#[test]
fn template_placeholders_are_no_answers() {
    let chat = "请逐步解答，最后一行写 \"#### <number>\"。\n问题：Erika 有多少钱？\n\
                Erika 花了 $30，还剩 $90。\n因此，Erika 的钱包里原本有 $120。";
    right("120", chat);
    right("30", "The class has 30 students.\n**\"Answer: [num]\"**");
    right(
        "1771",
        "So S_23 = 23 x 77 = 1771.\nFinal Answer: [Numeric result]",
    );
    right(
        "1771",
        "\\[ S_{23} = 23 \\times 77 = 1771 \\]\n\nFinal Answer:\n[Numeric result]",
    );
    right("7", "The answer is {your answer}. We found 7.");
    // an answer in brackets is an answer
    right("yes", "Is 7 prime? Answer: [Yes]");
    right(
        "5",
        "End with a line \"#### <number>\".\nWe add 3 and 2: 3 + 2 = 5.\n#### 5",
    );
    wrong(
        "4",
        "End with a line \"#### <number>\".\nWe add 3 and 2: 3 + 2 = 5.\n#### 5",
    );
}

/// An amount with a currency sign other than `$` is its number, the sign before or after it.
#[test]
fn amounts_in_other_currencies() {
    right("66", "Answer: ₨66.");
    right("66", "The answer is €66.");
    right("66", "\\boxed{66€}");
    right("12.50", "The total is £12.50. The answer is £12.50");
    right("120", "উত্তর: ৳১২০");
    right("300", "\\boxed{\\yen 300}");
    right("5", "\\boxed{5 \\euro}");
    wrong("66", "The answer is €67.");
}

/// A response cut inside its thinking (`<think>` opened, never closed) has no final answer,
/// whatever values its working reaches; a closed block is read as before.
#[test]
fn a_response_cut_inside_its_thinking() {
    wrong("24", "<think>\nFour rows of six: 4 x 6, that's 24.\nI don");
    wrong(
        "24",
        "<think>\nSo the answer is \\boxed{24}. Let me double-check the rows",
    );
    right(
        "24",
        "<think>\nFour rows of six: 24.\n</think>\nThe answer is \\boxed{24}.",
    );
    right("24", "Four rows of six.\n</think>\n\\boxed{24}");
}

/// A quoted answer line keeps its value when the statement cuts it inside the quotes.
#[test]
fn a_quoted_answer_line() {
    right(
        "66",
        "3. Conclusion:\n   \"Answer: ₨66.\"\n\nThat settles it.",
    );
    right(
        "30",
        "So 30 students.\nSo, the final answer is **\"Answer: [num]\"**.",
    );
}

/// An equation answering a number must hold between its numbers, and state a value: a policy
/// trained against a checker that read `1740 = 76 * 27` by its last side (the question's product,
/// evaluated) learned to write the product after any number and scored 1.0 on 2-digit
/// multiplication. Found in a real-model training run (EXPERIMENTS.md).
#[test]
fn an_equation_answering_a_number_must_hold_and_state_a_value() {
    // the gamed form: any number, then the question's computation
    wrong("2052", "1740 = 76 * 27");
    wrong("2052", "The answer is 1740 = 76 * 27.");
    wrong("50", "13 = 34 + 16");
    wrong("2052", "\\boxed{2000 = 76 \\times 27}");
    // a computation with a label, or inside a fraction or power, is no value either
    wrong("2052", "x = 76 * 27");
    wrong("2052", "\\boxed{\\frac{76 \\cdot 27}{1}}");
    wrong("2052", "\\boxed{(76 \\cdot 27)^1}");
    // equations that hold and state the value
    right("2052", "76 * 27 = 2052");
    right("2052", "2052 = 76 * 27");
    right("7", "x = 3 + 4 = 7");
    right("0.333", "x = \\frac{1}{3} = 0.333");
    // a lone `e` opening the chain is a label (an eccentricity), not Euler's number
    right(
        "\\frac{\\sqrt{66}}{6}",
        "\\boxed{e=\\sqrt{\\dfrac{11}{6}}=\\dfrac{\\sqrt{66}}{6}}",
    );
    right("56", "\\binom{8}{3} = 56");
    right("14", "f(2) = 14");
    // nor is a list or set of computations, or of false equations
    wrong("2052", "76 * 27 or 76 * 27");
    wrong("2052", "\\boxed{76 \\times 27, 76 \\times 27}");
    wrong("2052", "\\boxed{\\{76 \\times 27\\}}");
    wrong("2052", "1740 = 76 * 27 or 1740 = 76 * 27");
    wrong("2052", "76 * 27 = 76 * 27");
    right("2052", "2052, or 76 * 27");
    // a factor wrapped in a function of whole value is still a computation
    wrong("2052", "\\boxed{|76| \\times 27}");
    wrong("2052", "\\boxed{\\sqrt{76^2} \\cdot 27}");
    wrong("2052", "\\boxed{\\lceil 76 \\rceil \\cdot 27}");
    right("3.46410161514", "\\boxed{2\\sqrt{3}}");
    // an approximation is read by the value it states, not by the computation beside it
    wrong("2052", "1740 \\approx 76 * 27");
    wrong("2052", "76 \\times 27 \\approx 2050");
    right("2052", "76 \\times 27 \\approx 2052");
    right("3.14", "\\pi \\approx 3.14");
    // a false equation between other constants is no answer either
    wrong("2\\sqrt{2}", "\\boxed{5 = 2\\sqrt{2}}");
    right("2\\sqrt{2}", "\\boxed{\\sqrt{8} = 2\\sqrt{2}}");
    right("\\sqrt{2}", "\\boxed{\\sqrt{2} \\approx 1.414}");
    right("0.333", "x = \\frac{1}{3} = 0.333");
    // a lone `e` opening the chain is a label (an eccentricity), not Euler's number
    right(
        "\\frac{\\sqrt{66}}{6}",
        "\\boxed{e=\\sqrt{\\dfrac{11}{6}}=\\dfrac{\\sqrt{66}}{6}}",
    );
    // values that are no computation
    right("300000000", "\\boxed{3 \\times 10^8}");
    right("1024", "\\boxed{2^{10}}");
    right("2.5", "\\boxed{2 \\frac{1}{2}}");
}

/// A reasoning model's thinking returned as its reply states its answer as what its response
/// should be ("My response should be just: 144"), then closes with remarks: that statement is
/// the answer.
#[test]
fn a_reply_that_says_what_it_should_be() {
    let trace = "The user asks for 12 times 12. Let me do the math: 12 × 12 = 144.\n\
                 My response should be just: 144\n\
                 Finally, as an AI, I should respond helpfully and accurately.";
    right("144", trace);
    wrong("145", trace);
    right(
        "56088",
        "So, 123 × 456 = 56088. Okay, confirmed.\nSo, my final response should be the number \
         56088, boxed.\nI'll make sure the output is clean.",
    );
}

/// Options that are only a relation sign (which sign fills the blank) are named however the sign
/// is written: `\ge` for the option `$\geq$`.
#[test]
fn options_that_are_relation_signs() {
    use super::verify_with_choices;
    let choices = [
        "$\\leq$",
        "$\\geq$",
        "$=$",
        "$<$",
        "$>$",
        "None of the above",
    ];
    let score = |gold: &str, response: &str| verify_with_choices(gold, response, &choices).correct;
    assert!(score(
        "B",
        "Hence the relation is \\ge.\n\nThe answer is (B) $\\ge$."
    ));
    assert!(score("C", "The answer is (C) $=$."));
    assert!(score("B", "The answer is $\\geq$."));
    assert!(!score("B", "The answer is (A) $\\le$."));
    assert!(!score("B", "The answer is $\\le$."));
}

/// A one-line response that joins a computation and its value with "is" or "equals" answers with
/// the value.
#[test]
fn a_bare_line_with_is() {
    right("25", "5/6 of 30 is 25.");
    right("5", "x is 5");
    right("4", "So the total is = **4**");
    right("56", "7 times 8 equals 56");
    wrong("25", "5/6 of 30 is 24.");
}

/// A key in scientific notation is a rounded measurement (policy rule 10): an answer that states
/// the value more precisely is right; one that differs at the key's precision, or is coarser, is
/// not, and plain decimal keys keep their strict reading.
#[test]
fn a_key_in_scientific_notation_is_rounded() {
    right("4.6e-24", "\\boxed{4.57 \\times 10^{-24} \\text{ m}}");
    right("2.7778e-6", "\\boxed{\\frac{1}{360000}}");
    right("2.7778e-6", "The answer is 2.77778e-6.");
    wrong("4.6e-24", "\\boxed{4.4 \\times 10^{-24}}");
    wrong("2.7778e-6", "The answer is 2.8e-6.");
    // one significant digit, or a plain decimal: no rounding read
    wrong("5e-3", "The answer is 0.0046.");
    wrong("0.33", "\\boxed{\\frac{1}{3}}");
}
