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
    yes("\\frac{1}{12}", "0.0833333333333333");
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
