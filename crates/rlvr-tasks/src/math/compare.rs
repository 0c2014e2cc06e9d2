//! Comparison of two parsed answers: structure first, numbers last.
//!
//! Both trees first go through the same preparation ([`prepare_tree`]):
//! - **units and words** after a value are dropped: a product whose other factors hold no
//!   word loses its word factors (`10\text{ cm}^2` → 10, `10 square units` → 10,
//!   `0.06 \text{ yuan}` → 0.06); a lone word stays (a text answer);
//! - a **degree sign** on a whole answer is dropped (`90^\circ` → 90); inside an
//!   expression it means ×π/180 (`\sin(90^\circ - x)` = `\cos x`), and so it does on a whole
//!   answer that is otherwise unequal to a constant gold naming π (`45^\circ` ~ `\frac{\pi}{4}`:
//!   the same angle in radians; `45^\circ` is not `\frac{\pi}{3}`);
//! - **`±`** is expanded into its alternatives (`1 \pm \sqrt2` → the list `1+\sqrt2,
//!   1-\sqrt2`; at most 8), inside lists and sets flattened into their elements.
//!
//! - **unit letters** after a number are dropped from the answer when the gold has no
//!   variables: `40m`, `5 g`, `12 km/h`, `9.8 m/s^2` equal 40, 5, 12, 9.8 (the letters of
//!   [`UNIT_LETTERS`], and words); `40x` is still 40·x, and a gold with variables (`5m`)
//!   keeps the answer's letters as variables.
//!
//! Then, first rule that applies decides (the rule's name is what `verify` reports):
//! - **identical trees** are equal;
//! - **labels**: a relation `L = v` (also `L = ... = v`, trailing `≈ w` ignored, or
//!   `L \in S`) whose left side `L` is a label — made only of variables: `x`, `f(x)`,
//!   `(p,q)`, `|AB|`, `V_1:V_2`, `\frac{NO}{BO}` — stands for `v` against a side that is
//!   not a relation (`x = 3` ~ `3`, `(p,q)=(3,2)` ~ `(3,2)`); a left side with a number or
//!   a function (`7 = 11a+c`, `\sin x = a`) is an equation, never a label;
//! - **relations** against relations: same label and value; one-variable inequalities are
//!   compared as the intervals they define (`0 < f(x) < 1` ~ `(0,1)`, `x \ge 2` ~
//!   `[2,\infty)`, `5 \geq x` ~ `x \leq 5`); other equations are equal when `L₁−R₁` is a
//!   nonzero constant multiple of `L₂−R₂` at the sample points (`2x+4y-3=0` ~
//!   `y=-\frac12x+\frac34`), inequalities when the multiple is positive and the
//!   strictness agrees (`x<1` ~ `-x>-1`); a relation never equals a bare value otherwise;
//! - **equation chains** in the answer against a gold value: a chain of `=` (trailing `≈ w`
//!   ignored) whose last member has no variables stands for that value (`8C3 = 56` ~ 56,
//!   `p'(2) = 14` ~ 14, `x = 3 + 4 = 7` ~ 7); a gold that is itself a relation is compared
//!   as a relation (`7 = 11a+c` is not `11a+c`), and a chain ending in an expression with
//!   variables is not a value (`y = 5x` is not 5);
//! - **several answers**: lists (`1, 2`, `1 and 2`, several boxes), sets `\{..\}` and
//!   brace lists `{..}` are compared as multisets (order-free) with each other; a brace
//!   list against a tuple in order; against a single gold value, a list whose items are
//!   all equal is one answer restated (`0.25, 1/4` ~ `\frac14`, from "0.25, or 1/4") and a
//!   list of different items is a hedge, wrong even when one item is the gold (`3, 5` from
//!   "3 or 5" is not 3);
//! - **named values** against a tuple: a list of labelled values with different labels
//!   equals a tuple of those values in the order written (`B = 3, E = 5` ~ `[3, 5]`,
//!   `x = 1, y = -2` ~ `(1, -2)`); a repeated label lists alternatives of one unknown
//!   (`x = 2, x = 3` is not `(2, 3)`);
//! - **a list gold against a parenthesized tuple** of as many items: equal in the gold's
//!   order (`10^{3}, 10` ~ `(1000, 10)`; `(10, 1000)` is not);
//! - **a function's definition** under another name for its variable is the same function
//!   (`f(x) = x^2 + 1` ~ `f(z) = z^2 + 1`; one-letter names, one variable);
//! - **tuples and intervals**: same brackets, same length, equal in order; a one-row or
//!   one-column matrix equals a parenthesized tuple of its entries; **matrices** cell by
//!   cell; **unions** order-free; **ratios** term by term (or proportional, all terms
//!   nonzero); a **two-term ratio of constants** `a:b` equals the plain value `a/b` (a
//!   number or a fraction of numbers: `3:4` ~ `\frac34` ~ 0.75, either side gold), since a
//!   ratio of two quantities is that quotient; a ratio of three or more terms, or with
//!   variables, only equals a ratio (no single value is unambiguous: `3:4:5`);
//! - **words** compare case-insensitively ignoring spaces and punctuation;
//! - **numbers with a base** (`4210_7`): same digits and base; a bare gold number is read
//!   in the answer's base (`204` ~ `204_5`), and an answer in a base also equals a decimal
//!   gold of the same value (`1358` ~ `2516_8` ~ `2516_{8}`, `11` ~ `1011_2`); a gold in a
//!   base never equals its decimal value (`204_5` is not 54: the question asked for the
//!   base);
//! - **percent**: `p\%` equals `p` and `p/100`;
//! - **constant values**: exact rationals when both sides have one (so `2^{100}` and its
//!   31 digits are told apart from their neighbours); a decimal gold against an exact form
//!   with [`super::numeric::decimal_matches`] (the gold is the exact value rounded), but a
//!   decimal answer against an exact gold only when equal (a rounded decimal is an
//!   approximation: `0.0833333` is not `\frac{1}{12}`, `3.14159` not `\pi`); else values within
//!   [`super::numeric::REL_TOL`]; beyond 2^53 without exact values: not equal;
//! - **expressions with variables**: equal at all of [`REAL_POINTS`] real and (when both
//!   sides are holomorphic: no `|.|`, floor, factorial) [`COMPLEX_POINTS`] complex sample
//!   points, fixed and the same for both sides (`\tan^2 y + 1` ~ `\sec^2 y`, `i(2-i)` ~
//!   `1+2i`); a point where only one side is defined makes them unequal.
//!
//! Bounds: one comparison makes at most [`MAX_COMPARISONS`] element comparisons and
//! recurses at most 16 levels.

use num_complex::Complex64 as C;

use super::numeric::{
    close, decimal_matches, eval, exact, real, same_constant, significant_digits,
};
use super::parse::{Const, Expr, Func, RelOp, SetOp};

/// Element comparisons one call may make.
pub const MAX_COMPARISONS: u32 = 5_000;
/// Real sample points per comparison of expressions with variables.
pub const REAL_POINTS: usize = 5;
/// Complex sample points (holomorphic expressions only).
pub const COMPLEX_POINTS: usize = 3;
const MAX_ITEMS: usize = 64;

/// The rule that decided: Ok when equal, Err when not.
pub type Verdict = Result<&'static str, &'static str>;

thread_local! {
    static BUDGET: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

fn spend() -> bool {
    BUDGET.with(|b| {
        let left = b.get();
        b.set(left.saturating_sub(1));
        left > 0
    })
}

/// Compares a gold tree with an answer tree.
pub fn compare(gold: &Expr, answer: &Expr) -> Verdict {
    let verdict = compare_one(gold, answer);
    if verdict.is_ok() {
        return verdict;
    }
    let g = prepare_tree(gold);
    // alternatives that each equal the gold (`\frac{\pi}{4} \text{ or } 45°`, `x = 2` or
    // `x = \frac{4}{2}`): one answer in several notations, not a hedge (policy rule 13)
    if let Expr::List(items) = answer {
        let single = !matches!(g, Expr::List(_) | Expr::Set(_) | Expr::Braces(_));
        if single
            && (2..=8).contains(&items.len())
            && items.iter().all(|x| compare_one(gold, x).is_ok())
        {
            return Ok("each alternative equals the gold");
        }
    }
    // the gold's variables written in another case (`2\sqrt{km}` for `2\sqrt{Km}`, `v_0` for
    // `V_0`): the problem's variables in another notation (policy rule 14)
    let p = prepare_tree(answer);
    if let Some(renamed) = case_renamed(&g, &p) {
        BUDGET.with(|b| b.set(MAX_COMPARISONS));
        if eq(&g, &renamed, 0).is_ok() {
            return Ok("the gold's variables written in another case");
        }
    }
    verdict
}

/// `answer` with each variable the gold does not use renamed to the gold's variable of the
/// same name up to case and subscript marks (`k` → `K`, `v_0` → `V_0`, `V_{0}` → `V_0`; a
/// variable that matches none, a label `y =`, stays); None when no variable is renamed, or when
/// the gold or the answer holds two variables with one such name (`k` and `K` both: two
/// variables).
fn case_renamed(gold: &Expr, answer: &Expr) -> Option<Expr> {
    let fold = |n: &str| -> String {
        n.chars()
            .filter(|c| !matches!(c, '_' | '{' | '}'))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let (mut gv, mut pv) = (Vec::new(), Vec::new());
    vars(gold, &mut gv);
    vars(answer, &mut pv);
    let distinct = |names: &[String]| {
        let mut folded: Vec<String> = names.iter().map(|n| fold(n)).collect();
        folded.sort();
        folded.windows(2).all(|w| w[0] != w[1])
    };
    if gv.is_empty() || !distinct(&gv) || !distinct(&pv) {
        return None;
    }
    let mut renamed = answer.clone();
    let mut any = false;
    for name in pv.iter().filter(|n| !gv.contains(n)) {
        // the answer has no variable of the target's folded name but this one (`distinct`)
        if let Some(target) = gv.iter().find(|g| fold(g) == fold(name)) {
            renamed = rename(&renamed, name, target);
            any = true;
        }
    }
    any.then_some(renamed)
}

/// One gold tree against one answer tree (see [`compare`]).
fn compare_one(gold: &Expr, answer: &Expr) -> Verdict {
    BUDGET.with(|b| b.set(MAX_COMPARISONS));
    let g = prepare_tree(gold);
    let p = prepare_tree(answer);
    if !has_vars(&g) && has_vars(&p) {
        if let Some(q) = unit_free(&p).filter(|q| !has_vars(q)) {
            return eq(&g, &prepare_tree(&q), 0).map(|_| "unit after the number dropped");
        }
    }
    let verdict = eq(&g, &p, 0);
    // an angle in degrees against a gold in radians (`45^\circ` against `\frac{\pi}{4}`): the
    // degree sign, dropped above for golds written in degrees, means ×π/180 here
    if verdict.is_err() && mentions_pi(&g) && !has_vars(&g) {
        let degrees = strip_units(answer);
        if matches!(degrees, Expr::Degrees(_)) {
            BUDGET.with(|b| b.set(MAX_COMPARISONS));
            return eq(&g, &degrees, 0)
                .map(|_| "degrees against a gold in radians")
                .or(verdict);
        }
    }
    verdict
}

/// Whether `e` names π through signs, sums, products, quotients and powers (a constant in
/// radians: `\frac{\pi}{4}`, `\frac{3\pi}{2}`, `2\pi - 1`).
fn mentions_pi(e: &Expr) -> bool {
    match e {
        Expr::Const(Const::Pi) => true,
        Expr::Neg(x) => mentions_pi(x),
        Expr::Div(a, b) | Expr::Pow(a, b) => mentions_pi(a) || mentions_pi(b),
        Expr::Add(xs) | Expr::Mul(xs) => xs.iter().any(mentions_pi),
        _ => false,
    }
}

/// Single letters read as units after a number (`40m`, `12 km/h`, `9.8 m/s^2`) when the
/// gold answer has no variables.
pub const UNIT_LETTERS: &[&str] = &["m", "s", "g", "h", "l", "L", "J", "N", "W", "V", "K"];

fn unitish(e: &Expr) -> bool {
    match e {
        Expr::Var(v) => UNIT_LETTERS.contains(&v.as_str()),
        Expr::Word(_) => true,
        Expr::Pow(b, x) => unitish(b) && matches!(**x, Expr::Num(_)),
        Expr::Mul(xs) => xs.iter().all(unitish),
        Expr::Div(a, b) => unitish(a) && unitish(b),
        _ => false,
    }
}

/// A value with its unit letters dropped (`40m` → 40, `12 km/h` → 12), when the rest has
/// no variables.
fn unit_free(e: &Expr) -> Option<Expr> {
    match e {
        Expr::Mul(xs) => {
            let kept: Vec<Expr> = xs.iter().filter(|x| !unitish(x)).cloned().collect();
            if kept.is_empty() || kept.len() == xs.len() || kept.iter().any(has_vars) {
                return None;
            }
            Some(if kept.len() == 1 {
                kept.into_iter().next().expect("one")
            } else {
                Expr::Mul(kept)
            })
        }
        Expr::Div(a, b) if unitish(b) => {
            if has_vars(a) {
                unit_free(a)
            } else {
                Some((**a).clone())
            }
        }
        Expr::Neg(x) => unit_free(x).map(|y| Expr::Neg(Box::new(y))),
        _ => None,
    }
}

/// Units dropped, a whole-answer degree sign dropped, `±` expanded (see the module docs).
pub fn prepare_tree(e: &Expr) -> Expr {
    match e {
        Expr::List(items) => Expr::List(flatten_alternatives(items)),
        Expr::Set(items) => Expr::Set(flatten_alternatives(items)),
        Expr::Braces(items) => Expr::Braces(flatten_alternatives(items)),
        e => {
            let alts = alternatives(&prepare_item(e));
            if alts.len() == 1 {
                alts.into_iter().next().expect("one")
            } else {
                Expr::List(alts)
            }
        }
    }
}

fn flatten_alternatives(items: &[Expr]) -> Vec<Expr> {
    let mut out = Vec::new();
    for x in items.iter().take(MAX_ITEMS) {
        out.extend(alternatives(&prepare_item(x)));
    }
    out
}

fn prepare_item(e: &Expr) -> Expr {
    match e {
        Expr::Degrees(x) => strip_units(x),
        Expr::Tuple(o, c, items) => Expr::Tuple(*o, *c, items.iter().map(prepare_item).collect()),
        Expr::Rel(members, ops) => {
            Expr::Rel(members.iter().map(prepare_item).collect(), ops.clone())
        }
        Expr::Neg(x) => match prepare_item(x) {
            Expr::Degrees(y) => Expr::Neg(y),
            y => Expr::Neg(Box::new(y)),
        },
        e => match strip_units(e) {
            Expr::Degrees(x) => *x,
            x => x,
        },
    }
}

fn wordish(e: &Expr) -> bool {
    match e {
        Expr::Word(_) => true,
        Expr::Pow(b, x) => wordish(b) && matches!(**x, Expr::Num(_)),
        Expr::Div(a, b) => wordish(a) && (wordish(b) || matches!(**b, Expr::Var(_))),
        Expr::Mul(xs) => xs.iter().all(wordish),
        _ => false,
    }
}

fn has_word(e: &Expr) -> bool {
    match e {
        Expr::Word(_) => true,
        Expr::Neg(x) | Expr::Percent(x) | Expr::Degrees(x) => has_word(x),
        Expr::Add(xs) | Expr::Mul(xs) => xs.iter().any(has_word),
        Expr::Div(a, b) | Expr::Pow(a, b) => has_word(a) || has_word(b),
        _ => false,
    }
}

/// Words of arithmetic: between two numbers they are an operation, not a unit.
const OPERATION_WORDS: &[&str] = &[
    "times",
    "into",
    "plus",
    "minus",
    "over",
    "by",
    "multiplied",
    "divided",
    "add",
    "added",
    "subtract",
    "subtracted",
    "less",
    "more",
    "and",
    "of",
];

/// `e` without the words that name its unit (`5 \text{ cm}` is 5, `3 \times 10^8 \text{ m/s}`
/// is `3 \times 10^8`). A word of arithmetic between two of the product's other factors is an
/// operation (`76 times 27`, `34 plus 16`): such a product is kept as it is, with no value, so
/// the question's arithmetic restated in words is not its value.
fn strip_units(e: &Expr) -> Expr {
    match e {
        Expr::Mul(xs) => {
            let kept: Vec<Expr> = xs.iter().filter(|x| !wordish(x)).cloned().collect();
            if kept.is_empty() || kept.len() == xs.len() || kept.iter().any(has_word) {
                return e.clone();
            }
            // between the first and the last factor that is no word (kept is not empty)
            let span = xs
                .iter()
                .position(|x| !wordish(x))
                .zip(xs.iter().rposition(|x| !wordish(x)));
            let operation = |x: &Expr| matches!(x, Expr::Word(w) if OPERATION_WORDS.iter().any(|o| w.eq_ignore_ascii_case(o)));
            if span.is_some_and(|(a, b)| xs[a..=b].iter().any(operation)) {
                return e.clone();
            }
            if kept.len() == 1 {
                kept.into_iter().next().expect("one")
            } else {
                Expr::Mul(kept)
            }
        }
        Expr::Div(a, b) if wordish(b) && !has_word(&strip_units(a)) && has_word(a) => {
            strip_units(a)
        }
        Expr::Percent(x) => Expr::Percent(Box::new(strip_units(x))),
        Expr::Degrees(x) => Expr::Degrees(Box::new(strip_units(x))),
        Expr::Neg(x) => Expr::Neg(Box::new(strip_units(x))),
        e => e.clone(),
    }
}

/// The alternatives of a tree holding `±` (the tree itself when none; at most 8).
fn alternatives(e: &Expr) -> Vec<Expr> {
    if !has_pm(e) {
        return vec![e.clone()];
    }
    let mut out = Vec::new();
    for sign in [false, true] {
        if let Some(x) = choose_first_pm(e, sign) {
            out.extend(alternatives(&x));
        }
        if out.len() >= 8 {
            break;
        }
    }
    out.truncate(8);
    out
}

fn has_pm(e: &Expr) -> bool {
    match e {
        Expr::PlusMinus(..) => true,
        Expr::Neg(x) | Expr::Percent(x) | Expr::Degrees(x) => has_pm(x),
        Expr::Add(xs) | Expr::Mul(xs) | Expr::Func(_, xs) => xs.iter().any(has_pm),
        Expr::Div(a, b) | Expr::Pow(a, b) => has_pm(a) || has_pm(b),
        Expr::Rel(xs, _) | Expr::Tuple(_, _, xs) => xs.iter().any(has_pm),
        _ => false,
    }
}

/// `e` with its first `±` replaced by `+` (`minus` false) or `−`.
fn choose_first_pm(e: &Expr, minus: bool) -> Option<Expr> {
    let b = |x: Expr| Box::new(x);
    Some(match e {
        Expr::PlusMinus(a, x, mp) => {
            let neg = minus != *mp;
            let t = if neg {
                Expr::Neg(x.clone())
            } else {
                (**x).clone()
            };
            match a {
                Some(a) => Expr::Add(vec![(**a).clone(), t]),
                None => t,
            }
        }
        Expr::Neg(x) => Expr::Neg(b(choose_first_pm(x, minus)?)),
        Expr::Percent(x) => Expr::Percent(b(choose_first_pm(x, minus)?)),
        Expr::Degrees(x) => Expr::Degrees(b(choose_first_pm(x, minus)?)),
        Expr::Div(x, y) | Expr::Pow(x, y) => {
            let (x2, y2) = if has_pm(x) {
                (choose_first_pm(x, minus)?, (**y).clone())
            } else {
                ((**x).clone(), choose_first_pm(y, minus)?)
            };
            match e {
                Expr::Div(..) => Expr::Div(b(x2), b(y2)),
                _ => Expr::Pow(b(x2), b(y2)),
            }
        }
        Expr::Add(xs)
        | Expr::Mul(xs)
        | Expr::Func(_, xs)
        | Expr::Rel(xs, _)
        | Expr::Tuple(_, _, xs) => {
            let k = xs.iter().position(has_pm)?;
            let mut ys = xs.clone();
            ys[k] = choose_first_pm(&xs[k], minus)?;
            match e {
                Expr::Add(_) => Expr::Add(ys),
                Expr::Mul(_) => Expr::Mul(ys),
                Expr::Func(f, _) => Expr::Func(*f, ys),
                Expr::Rel(_, ops) => Expr::Rel(ys, ops.clone()),
                Expr::Tuple(o, c, _) => Expr::Tuple(*o, *c, ys),
                _ => unreachable!("matched above"),
            }
        }
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------

fn is_label(e: &Expr) -> bool {
    match e {
        Expr::Var(_) => true,
        Expr::Mul(xs) | Expr::Ratio(xs) | Expr::Tuple('(', ')', xs) => xs.iter().all(is_label),
        Expr::Func(Func::Abs, xs) => xs.iter().all(is_label),
        Expr::Div(a, b) => is_label(a) && is_label(b),
        Expr::Apply(_, xs) => xs.iter().all(is_label),
        _ => false,
    }
}

/// `(label, value)` of `L = ... = v` / `L ≈ v` / `L ∈ S` with a label `L`.
fn labelled(e: &Expr) -> Option<(&Expr, &Expr)> {
    let Expr::Rel(members, ops) = e else {
        return None;
    };
    if !is_label(&members[0]) {
        return None;
    }
    if ops.len() == 1 && ops[0] == RelOp::In {
        return Some((&members[0], &members[1]));
    }
    if !ops.iter().all(|o| matches!(o, RelOp::Eq | RelOp::Approx)) {
        return None;
    }
    // the last `=` member (trailing approximations dropped); `x ≈ 11` alone is 11
    let last_eq = ops.iter().rposition(|o| *o == RelOp::Eq).unwrap_or(0);
    Some((&members[0], &members[last_eq + 1]))
}

/// `f(x) = x` against `f(z) = z`: one function defined under another name for its variable.
/// When both sides define the same one-letter function of one variable (`f(u) = R`), with
/// different variables, the answer's variable is renamed to the gold's and the definitions
/// compared (`f(x) = x^2 + 1` ~ `f(z) = z^2 + 1`); None when they are not such definitions or
/// the renaming would capture a name the answer already uses.
fn same_function_renamed(g: &Expr, p: &Expr) -> Option<Verdict> {
    let definition = |e: &Expr| -> Option<(String, String, Expr)> {
        let Expr::Rel(m, ops) = e else { return None };
        if m.len() != 2 || ops[0] != RelOp::Eq {
            return None;
        }
        match &m[0] {
            Expr::Mul(xs) => match xs.as_slice() {
                [Expr::Var(f), Expr::Var(u)]
                    if f.chars().count() == 1 && u.chars().count() == 1 =>
                {
                    Some((f.clone(), u.clone(), m[1].clone()))
                }
                _ => None,
            },
            _ => None,
        }
    };
    let ((gf, gu, gr), (pf, pu, pr)) = (definition(g)?, definition(p)?);
    if gf != pf || gu == pu {
        return None;
    }
    let mut names = Vec::new();
    vars(&pr, &mut names);
    if names.contains(&gu) || !names.contains(&pu) {
        return None;
    }
    let renamed = rename(&pr, &pu, &gu);
    Some(
        eq(&gr, &renamed, 1)
            .map(|_| "the same function under another variable's name")
            .map_err(|_| "different functions"),
    )
}

/// `e` with the variable `from` written `to`.
fn rename(e: &Expr, from: &str, to: &str) -> Expr {
    let r = |x: &Expr| rename(x, from, to);
    let all = |xs: &[Expr]| xs.iter().map(r).collect::<Vec<_>>();
    let boxed = |x: &Expr| Box::new(r(x));
    match e {
        Expr::Var(v) if v == from => Expr::Var(to.to_string()),
        Expr::Neg(x) => Expr::Neg(boxed(x)),
        Expr::Add(xs) => Expr::Add(all(xs)),
        Expr::Mul(xs) => Expr::Mul(all(xs)),
        Expr::Div(a, b) => Expr::Div(boxed(a), boxed(b)),
        Expr::Pow(a, b) => Expr::Pow(boxed(a), boxed(b)),
        Expr::Func(f, xs) => Expr::Func(*f, all(xs)),
        Expr::Apply(n, xs) => Expr::Apply(n.clone(), all(xs)),
        Expr::PlusMinus(a, b, m) => Expr::PlusMinus(a.as_deref().map(boxed), boxed(b), *m),
        Expr::Percent(x) => Expr::Percent(boxed(x)),
        Expr::Degrees(x) => Expr::Degrees(boxed(x)),
        Expr::Tuple(o, c, xs) => Expr::Tuple(*o, *c, all(xs)),
        Expr::Set(xs) => Expr::Set(all(xs)),
        Expr::Braces(xs) => Expr::Braces(all(xs)),
        Expr::Matrix(rows) => Expr::Matrix(rows.iter().map(|row| all(row)).collect()),
        Expr::Rel(xs, ops) => Expr::Rel(all(xs), ops.clone()),
        Expr::SetOp(o, xs) => Expr::SetOp(*o, all(xs)),
        Expr::List(xs) => Expr::List(all(xs)),
        Expr::Ratio(xs) => Expr::Ratio(all(xs)),
        other => other.clone(),
    }
}

/// The values of a list of labelled values with different labels (`B = 3, E = 5` →
/// `[3, 5]`): a named tuple, written in the order the question asked for. None when an item
/// is not a label and its value, or when a label repeats (`x = 2, x = 3` lists two values of
/// one unknown: alternatives, not a tuple).
fn named_values(items: &[Expr]) -> Option<Vec<Expr>> {
    if items.len() < 2 || items.len() > MAX_ITEMS {
        return None;
    }
    let pairs: Vec<(&Expr, &Expr)> = items.iter().map(labelled).collect::<Option<_>>()?;
    for (i, (label, value)) in pairs.iter().enumerate() {
        if matches!(value, Expr::Rel(..)) || pairs[..i].iter().any(|(l, _)| l == label) {
            return None;
        }
    }
    Some(pairs.into_iter().map(|(_, v)| v.clone()).collect())
}

/// The final value of an equation chain `L = ... = v` (`8C3 = 56`, `p'(2) = 14`,
/// `x = 3 + 4 = 7`) when `v` has no variables; trailing `≈ w` ignored.
fn chain_value(e: &Expr) -> Option<&Expr> {
    let Expr::Rel(members, ops) = e else {
        return None;
    };
    if !ops.iter().all(|o| matches!(o, RelOp::Eq | RelOp::Approx)) {
        return None;
    }
    let last_eq = ops.iter().rposition(|o| *o == RelOp::Eq)?;
    let v = &members[last_eq + 1];
    (!has_vars(v) && !matches!(v, Expr::Rel(..) | Expr::List(_))).then_some(v)
}

/// The final side `v` of an identity `E = ... = v` whose members are all equal as
/// expressions (`(1-3x)^5 = 1 - 15x + 90x^2 - ...`, `x^2 + 5x + 6 = (x+2)(x+3)`): the
/// question's expression worked out, `v` the result. None for an equation to solve (`2x + 1 =
/// 7`), a label's value (which [`labelled`] reads) or a side that cannot be evaluated
/// (`f(\frac{1}{x}) = 2x`).
fn identity_value(e: &Expr, d: usize) -> Option<&Expr> {
    let Expr::Rel(members, ops) = e else {
        return None;
    };
    let (v, rest) = members.split_last()?;
    if rest.is_empty()
        || !ops.iter().all(|o| *o == RelOp::Eq)
        || !has_vars(v)
        || matches!(v, Expr::Rel(..) | Expr::List(_))
    {
        return None;
    }
    rest.iter().all(|m| eq(m, v, d).is_ok()).then_some(v)
}

/// `v ≈ a` (`\pi \approx 3.14`, `\frac{1}{3} \approx 0.333`): a value with no variable and
/// its approximation, the chain holding only `≈`.
fn approximated(e: &Expr) -> Option<(&Expr, &Expr)> {
    let Expr::Rel(members, ops) = e else {
        return None;
    };
    let (first, last) = (members.first()?, members.last()?);
    let plain = |v: &Expr| !has_vars(v) && !matches!(v, Expr::Rel(..) | Expr::List(_));
    (ops.iter().all(|o| *o == RelOp::Approx) && plain(first) && plain(last))
        .then_some((first, last))
}

/// A number or a fraction of numbers (what a two-term ratio can equal).
fn plain_value(e: &Expr) -> bool {
    match e {
        Expr::Num(n) => n.base.is_none(),
        Expr::Neg(x) => plain_value(x),
        Expr::Div(a, b) => plain_value(a) && plain_value(b),
        _ => false,
    }
}

fn has_vars(e: &Expr) -> bool {
    let mut v = Vec::new();
    vars(e, &mut v);
    !v.is_empty()
}

fn vars(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Var(n) => {
            if !out.contains(n) && out.len() < 16 {
                out.push(n.clone());
            }
        }
        e => e.children().into_iter().for_each(|c| vars(c, out)),
    }
}

/// The interval (or set) a one-variable relation defines.
fn interval_of(e: &Expr) -> Option<Expr> {
    let Expr::Rel(m, ops) = e else { return None };
    let inf = || Expr::Const(Const::Inf);
    let ninf = || Expr::Neg(Box::new(Expr::Const(Const::Inf)));
    let subject = |x: &Expr| is_label(x);
    let constant = |x: &Expr| !has_vars(x);
    let lower = |op: RelOp| matches!(op, RelOp::Lt | RelOp::Le);
    let greater = |op: RelOp| matches!(op, RelOp::Gt | RelOp::Ge);
    let strict = |op: RelOp| matches!(op, RelOp::Lt | RelOp::Gt);
    match (m.as_slice(), ops.as_slice()) {
        ([x, s], [RelOp::In]) if subject(x) => Some(s.clone()),
        ([x, c], [op]) if subject(x) && constant(c) && (lower(*op) || greater(*op)) => {
            Some(interval_side(*op, c, &inf, &ninf, strict(*op)))
        }
        ([c, x], [op]) if subject(x) && constant(c) && (lower(*op) || greater(*op)) => {
            Some(interval_side(op.flip(), c, &inf, &ninf, strict(*op)))
        }
        ([a, x, b], [o1, o2]) if subject(x) && constant(a) && constant(b) => {
            let (lo, hi, so, sc) = if lower(*o1) && lower(*o2) {
                (a, b, strict(*o1), strict(*o2))
            } else if greater(*o1) && greater(*o2) {
                (b, a, strict(*o2), strict(*o1))
            } else {
                return None;
            };
            Some(Expr::Tuple(
                if so { '(' } else { '[' },
                if sc { ')' } else { ']' },
                vec![lo.clone(), hi.clone()],
            ))
        }
        _ => None,
    }
}

/// `x op c` as an interval.
fn interval_side(
    op: RelOp,
    c: &Expr,
    inf: &dyn Fn() -> Expr,
    ninf: &dyn Fn() -> Expr,
    strict: bool,
) -> Expr {
    if matches!(op, RelOp::Lt | RelOp::Le) {
        Expr::Tuple('(', if strict { ')' } else { ']' }, vec![ninf(), c.clone()])
    } else {
        Expr::Tuple(if strict { '(' } else { '[' }, ')', vec![c.clone(), inf()])
    }
}

fn eq(g: &Expr, p: &Expr, depth: usize) -> Verdict {
    if !spend() {
        return Err("comparison budget spent");
    }
    if depth > 16 {
        return Err("nested too deep");
    }
    if g == p {
        return Ok("identical trees");
    }
    let d = depth + 1;
    match (g, p) {
        (Expr::Rel(..), Expr::Rel(..)) => return rel_eq(g, p, d),
        (Expr::Rel(..), other) | (other, Expr::Rel(..)) => {
            let rel = if matches!(g, Expr::Rel(..)) { g } else { p };
            if let Some((_, v)) = labelled(rel) {
                if !matches!(other, Expr::List(_)) || matches!(v, Expr::List(_)) {
                    return eq(v, other, d).map(|_| "label dropped, values equal");
                }
            }
            if matches!(p, Expr::Rel(..)) {
                if let Some(v) = chain_value(p) {
                    return eq(g, v, d).map(|_| "equation chain resolved to its final value");
                }
                if let Some(v) = identity_value(p, d) {
                    return eq(g, v, d).map(|_| "an identity resolved to its final side");
                }
                // a value and its approximation (`\pi \approx 3.14`): either is the answer
                if let Some((exact, approx)) = approximated(p) {
                    return eq(g, exact, d)
                        .or_else(|_| eq(g, approx, d))
                        .map(|_| "a value with its approximation");
                }
            }
            if let Some(iv) = interval_of(rel) {
                if matches!(other, Expr::Tuple(..) | Expr::SetOp(..)) {
                    return eq(&iv, other, d).map(|_| "inequality equals the interval");
                }
            }
            return Err("a relation against a value");
        }
        _ => {}
    }
    match (g, p) {
        (
            Expr::List(a) | Expr::Set(a) | Expr::Braces(a),
            Expr::List(b) | Expr::Set(b) | Expr::Braces(b),
        ) => {
            return multiset(a, b, d)
                .then_some("same elements in any order")
                .ok_or("different elements");
        }
        (Expr::Braces(a), Expr::Tuple('(', ')', b))
        | (Expr::Tuple('(', ')', b), Expr::Braces(a)) => {
            return in_order(a, b, d)
                .then_some("same elements in order")
                .ok_or("different elements");
        }
        (Expr::Set(a), x) | (x, Expr::Set(a)) if a.len() == 1 => {
            return eq(&a[0], x, d).map(|_| "one-element set");
        }
        (Expr::Tuple(_, _, a), Expr::List(b))
            if a.len() >= 2
                && a.len() == b.len()
                && a.iter().chain(b).all(|x| matches!(x, Expr::Tuple(..))) =>
        {
            // `(1, 27), (3, 9)` answers `[(1, 27), (3, 9)]`: the list's pairs listed without
            // its brackets (a list of tuples is no interval)
            return multiset(a, b, d)
                .then_some("the same tuples listed")
                .ok_or("different tuples");
        }
        (Expr::Tuple(_, _, a), Expr::List(items)) if named_values(items).is_some() => {
            // `B = 3, E = 5` answers `[3, 5]`: each value named once, in the gold's order
            let values = named_values(items).unwrap_or_default();
            return in_order(a, &values, d)
                .then_some("named values equal the tuple in order")
                .ok_or("different entries");
        }
        (_, Expr::List(items)) if !matches!(g, Expr::Set(_) | Expr::Braces(_)) => {
            // restatements of one value count as one answer; different values are a hedge
            if items.len() < 2 || items.len() > 8 {
                return Err("several answers against one");
            }
            if items[1..].iter().all(|x| eq(&items[0], x, d).is_ok()) {
                return eq(g, &items[0], d).map(|_| "restatements of one value");
            }
            return Err("different answers (a hedge) against one");
        }
        (Expr::List(a), Expr::Tuple('(', ')', b)) if a.len() >= 2 && a.len() == b.len() => {
            // the gold's values written as a pair in its order (`10^3, 10` ~ `(1000, 10)`)
            return in_order(a, b, d)
                .then_some("the listed values as a tuple, in order")
                .ok_or("different entries");
        }
        (Expr::List(_) | Expr::Set(_) | Expr::Braces(_), _)
        | (_, Expr::List(_) | Expr::Set(_) | Expr::Braces(_)) => {
            return Err("several answers against one");
        }
        (Expr::Ratio(a), x) | (x, Expr::Ratio(a))
            if a.len() == 2 && a.iter().all(|t| !has_vars(t)) && plain_value(x) =>
        {
            let q = Expr::Div(Box::new(a[0].clone()), Box::new(a[1].clone()));
            let r = if matches!(g, Expr::Ratio(_)) {
                eq(&q, x, d)
            } else {
                eq(x, &q, d)
            };
            return r.map(|_| "ratio a:b equals the value a/b");
        }
        (Expr::Tuple(o1, c1, a), Expr::Tuple(o2, c2, b)) => {
            if (o1, c1) != (o2, c2) {
                return Err("different brackets");
            }
            return in_order(a, b, d)
                .then_some("same tuple or interval")
                .ok_or("different entries");
        }
        (Expr::Matrix(a), Expr::Matrix(b)) => {
            if a.len() != b.len() || a[0].len() != b[0].len() {
                return Err("different matrix shapes");
            }
            let ok = a.iter().zip(b).all(|(r, s)| in_order(r, s, d));
            return ok
                .then_some("same matrix")
                .ok_or("different matrix entries");
        }
        (Expr::Matrix(m), Expr::Tuple('(', ')', t))
        | (Expr::Tuple('(', ')', t), Expr::Matrix(m)) => {
            let flat: Vec<Expr> = if m.len() == 1 {
                m[0].clone()
            } else if m.iter().all(|r| r.len() == 1) {
                m.iter().map(|r| r[0].clone()).collect()
            } else {
                return Err("a matrix against a tuple");
            };
            return in_order(&flat, t, d)
                .then_some("vector equals the tuple")
                .ok_or("different entries");
        }
        (Expr::SetOp(o1, a), Expr::SetOp(o2, b)) => {
            if o1 != o2 {
                return Err("different set operations");
            }
            let ok = if *o1 == SetOp::Minus {
                in_order(a, b, d)
            } else {
                multiset(a, b, d)
            };
            return ok.then_some("same set expression").ok_or("different sets");
        }
        (Expr::Ratio(a), Expr::Ratio(b)) => {
            if in_order(a, b, d) {
                return Ok("same ratio");
            }
            return proportional_terms(a, b)
                .then_some("proportional ratio")
                .ok_or("different ratio");
        }
        (
            Expr::Matrix(_)
            | Expr::Tuple(..)
            | Expr::SetOp(..)
            | Expr::Ratio(_)
            | Expr::EmptySet
            | Expr::Ellipsis,
            _,
        )
        | (
            _,
            Expr::Matrix(_)
            | Expr::Tuple(..)
            | Expr::SetOp(..)
            | Expr::Ratio(_)
            | Expr::EmptySet
            | Expr::Ellipsis,
        ) => {
            return Err("different kinds of answer");
        }
        _ => {}
    }
    scalar_eq(g, p, d)
}

fn in_order(a: &[Expr], b: &[Expr], d: usize) -> bool {
    a.len() == b.len() && a.len() <= MAX_ITEMS && a.iter().zip(b).all(|(x, y)| eq(x, y, d).is_ok())
}

/// Order-free comparison: every element of each side equals some element of the other
/// (set semantics: a repeated element counts once).
fn multiset(a: &[Expr], b: &[Expr], d: usize) -> bool {
    if a.len() > MAX_ITEMS || b.len() > MAX_ITEMS || a.is_empty() || b.is_empty() {
        return false;
    }
    let covers = |xs: &[Expr], ys: &[Expr], flip: bool| {
        xs.iter().all(|x| {
            ys.iter().any(|y| {
                if flip {
                    eq(y, x, d).is_ok()
                } else {
                    eq(x, y, d).is_ok()
                }
            })
        })
    };
    covers(a, b, false) && covers(b, a, true)
}

fn proportional_terms(a: &[Expr], b: &[Expr]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let no_var = |_: &str| None;
    let av: Option<Vec<C>> = a.iter().map(|x| eval(x, &no_var)).collect();
    let bv: Option<Vec<C>> = b.iter().map(|x| eval(x, &no_var)).collect();
    let (Some(av), Some(bv)) = (av, bv) else {
        return false;
    };
    if av.iter().chain(&bv).any(|z| z.norm() < 1e-12) {
        return false;
    }
    let r = av[0] / bv[0];
    av.iter().zip(&bv).all(|(x, y)| close(*x / *y, r))
}

fn rel_eq(g: &Expr, p: &Expr, d: usize) -> Verdict {
    let (Expr::Rel(gm, gops), Expr::Rel(pm, pops)) = (g, p) else {
        return Err("not relations");
    };
    if let (Some((gl, gv)), Some((pl, pv))) = (labelled(g), labelled(p)) {
        if eq(gl, pl, d).is_ok() {
            if eq(gv, pv, d).is_ok() {
                return Ok("same label and value");
            }
            // `d = 3 \times 10^{15}` against `d ≈ 3.3 \times 10^{13}`: one label, two constants;
            // read as equations their difference is nearly proportional at the sample points
            // (which lie far below the constants), which decides nothing
            if !has_vars(gv) && !has_vars(pv) {
                return Err("same label, different values");
            }
        }
    }
    if !has_vars(g) && !has_vars(p) {
        return constant_relations_eq((gm, gops), (pm, pops));
    }
    if let (Some(a), Some(b)) = (interval_of(g), interval_of(p)) {
        return eq(&a, &b, d)
            .map(|_| "inequalities define the same interval")
            .map_err(|_| "inequalities define different intervals");
    }
    if let Some(v) = same_function_renamed(g, p) {
        return v;
    }
    if gm.len() == 2 && pm.len() == 2 {
        let (go, po) = (gops[0], pops[0]);
        let equation = |o: RelOp| matches!(o, RelOp::Eq | RelOp::Approx);
        if equation(go) && equation(po) {
            let straight = eq(&gm[0], &pm[0], d).is_ok() && eq(&gm[1], &pm[1], d).is_ok();
            let crossed = || eq(&gm[0], &pm[1], d).is_ok() && eq(&gm[1], &pm[0], d).is_ok();
            if straight || crossed() {
                return Ok("same equation");
            }
            return match proportional(&diff(&gm[0], &gm[1]), &diff(&pm[0], &pm[1])) {
                Some(_) => Ok("equivalent equations (proportional)"),
                None => Err("different equations"),
            };
        }
        let canon = |m: &[Expr], o: RelOp| -> Option<(Expr, RelOp)> {
            Some(match o {
                RelOp::Lt | RelOp::Le => (diff(&m[0], &m[1]), o),
                RelOp::Gt | RelOp::Ge => (diff(&m[1], &m[0]), o.flip()),
                RelOp::Ne => (diff(&m[0], &m[1]), o),
                _ => return None,
            })
        };
        if let (Some((gf, go)), Some((pf, po))) = (canon(gm, go), canon(pm, po)) {
            if go != po {
                return Err("different relation symbols");
            }
            return match proportional(&gf, &pf) {
                Some(r) if go == RelOp::Ne || r > 0.0 => Ok("equivalent inequalities"),
                _ => Err("different inequalities"),
            };
        }
    }
    // chains: the same members and symbols, read either way
    if gm.len() == pm.len() {
        let straight = gops == pops && in_order(gm, pm, d);
        let reversed = || {
            let flipped: Vec<RelOp> = pops.iter().rev().map(|o| o.flip()).collect();
            let rev: Vec<Expr> = pm.iter().rev().cloned().collect();
            *gops == flipped && in_order(gm, &rev, d)
        };
        if straight || reversed() {
            return Ok("same chain of relations");
        }
    }
    Err("different relations")
}

/// Two relations between constants (`19 - 8 \times 28 = -205`, `\frac34 > \frac23`): statements
/// about numbers, not equations to solve, so the values of their sides decide nothing (every
/// true equation has the same value on both sides, and a difference of zero is proportional to
/// any other). Equal when the answer's relation holds and it is written with the gold's numbers
/// in the gold's order (the same expression, or other operators in the same blanks: the gold's
/// `4 - 17 / 1 = -13` and a true `4 - 17 \times 1 = -13`), read straight or, for two sides,
/// with the sides swapped and the relation flipped (`\frac23 < \frac34`); a true statement
/// with other numbers (`22 + 16 + 6 + 21 + 41 = 106` for `22 \times 16 - 6 \times 21 + 9 \cdot
/// ... = 106`) is another answer.
fn constant_relations_eq(
    (gm, gops): (&[Expr], &[RelOp]),
    (pm, pops): (&[Expr], &[RelOp]),
) -> Verdict {
    let literals = |members: &[Expr]| -> Vec<String> {
        let mut out = Vec::new();
        for m in members {
            number_literals(m, &mut out);
        }
        out
    };
    let holds = constant_relation_holds(pm, pops)
        .ok_or("a relation between constants that does not hold")?;
    if !holds {
        return Err("a relation between constants that does not hold");
    }
    let gold = literals(gm);
    let straight = gops == pops && literals(pm) == gold;
    let swapped = || {
        let flipped: Vec<RelOp> = pops.iter().rev().map(|o| o.flip()).collect();
        let rev: Vec<Expr> = pm.iter().rev().cloned().collect();
        gops == flipped.as_slice() && literals(&rev) == gold
    };
    if !gold.is_empty() && (straight || swapped()) {
        Ok("the same numbers in a relation that holds")
    } else {
        Err("a relation between other numbers")
    }
}

/// The number literals of `e` in reading order, as their exact values where they have one
/// (`0.50` and `0.5` alike), else as written.
fn number_literals(e: &Expr, out: &mut Vec<String>) {
    if out.len() > MAX_ITEMS {
        return;
    }
    match e {
        Expr::Num(n) => out.push(match exact(e) {
            Some(r) => format!("{}/{}", r.0, r.1),
            None => n.text.clone(),
        }),
        e => e
            .children()
            .into_iter()
            .for_each(|c| number_literals(c, out)),
    }
}

/// Whether a chain of relations between constants holds (each link, within
/// [`super::numeric::REL_TOL`] for `=`); None when a member has no value or a link is not an
/// order or equality.
fn constant_relation_holds(members: &[Expr], ops: &[RelOp]) -> Option<bool> {
    let none = |_: &str| None;
    let values: Vec<C> = members
        .iter()
        .map(|m| eval(m, &none))
        .collect::<Option<_>>()?;
    let mut all = true;
    for (w, op) in values.windows(2).zip(ops) {
        let (a, b) = (w[0], w[1]);
        let ok = match op {
            RelOp::Eq | RelOp::Approx => close(a, b),
            RelOp::Ne => !close(a, b),
            RelOp::Lt => real(a)? < real(b)? && !close(a, b),
            RelOp::Gt => real(a)? > real(b)? && !close(a, b),
            RelOp::Le => real(a)? <= real(b)? || close(a, b),
            RelOp::Ge => real(a)? >= real(b)? || close(a, b),
            _ => return None,
        };
        all &= ok;
    }
    Some(all)
}

fn diff(a: &Expr, b: &Expr) -> Expr {
    Expr::Add(vec![a.clone(), Expr::Neg(Box::new(b.clone()))])
}

/// The constant real ratio `f/g` at the sample points, when there is one (nonzero).
fn proportional(f: &Expr, g: &Expr) -> Option<f64> {
    let mut names = Vec::new();
    vars(f, &mut names);
    vars(g, &mut names);
    if names.is_empty() {
        return None;
    }
    let mut ratio: Option<C> = None;
    let mut used = 0;
    for k in 0..REAL_POINTS {
        let at = |n: &str| point(&names, n, k, false);
        let (a, b) = (eval(f, &at), eval(g, &at));
        let (Some(a), Some(b)) = (a, b) else {
            if a.is_some() != b.is_some() {
                return None;
            }
            continue;
        };
        let (za, zb) = (a.norm() < 1e-10, b.norm() < 1e-10);
        if za && zb {
            continue;
        }
        if za != zb {
            return None;
        }
        let r = a / b;
        match ratio {
            None => ratio = Some(r),
            Some(r0) if close(r, r0) => {}
            _ => return None,
        }
        used += 1;
    }
    let r = ratio?;
    (used >= 2 && r.im.abs() < 1e-9 * r.re.abs().max(1.0)).then_some(r.re)
}

/// Value of variable `name` at sample point `k` (the same for both sides of a comparison):
/// a fixed hash of (point, variable) in [-2.5, 2.5], away from integers, so that no two
/// variables move together (`k - n` is not constant across points).
fn point(names: &[String], name: &str, k: usize, complex: bool) -> Option<C> {
    let j = names.iter().position(|n| n == name)? as u64;
    let unit = |salt: u64| {
        let h = (k as u64 * 7919 + j * 104_729 + salt * 1_299_709 + 12_345)
            .wrapping_mul(2_654_435_761)
            % 4_294_967_296;
        let x = -2.5 + 5.0 * (h as f64 / 4_294_967_296.0);
        if (x - x.round()).abs() < 0.07 {
            x + 0.173
        } else {
            x
        }
    };
    Some(if complex {
        C::new(unit(1), unit(2))
    } else {
        C::new(unit(0), 0.0)
    })
}

fn holomorphic(e: &Expr) -> bool {
    match e {
        Expr::Func(Func::Abs | Func::Floor | Func::Ceil | Func::Factorial | Func::Binom, _) => {
            false
        }
        Expr::Func(_, xs) | Expr::Add(xs) | Expr::Mul(xs) => xs.iter().all(holomorphic),
        Expr::Neg(x) | Expr::Percent(x) | Expr::Degrees(x) => holomorphic(x),
        Expr::Div(a, b) | Expr::Pow(a, b) => holomorphic(a) && holomorphic(b),
        _ => true,
    }
}

fn infinity_sign(e: &Expr) -> Option<i8> {
    match e {
        Expr::Const(Const::Inf) => Some(1),
        Expr::Neg(x) => infinity_sign(x).map(|s| -s),
        _ => None,
    }
}

/// A one-letter word (`\text{E}`) against the same letter in math (`E`; `e`, `i`).
fn same_letter(w: &Expr, x: &Expr) -> bool {
    let Expr::Word(w) = w else { return false };
    match x {
        Expr::Var(v) => v == w,
        Expr::Const(Const::E) => w == "e",
        Expr::Const(Const::I) => w == "i",
        _ => false,
    }
}

fn words(e: &Expr) -> Option<String> {
    match e {
        Expr::Word(w) => Some(
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect(),
        ),
        _ => None,
    }
}

/// The fewest significant digits of a decimal taken as a printed `f64` (Python's `repr` and
/// Rust's `{}` print 15 to 17).
const FLOAT_PRINT_DIGITS: usize = 15;

/// Whether `a` and `b` differ by at most 4 units of `f64` rounding at their magnitude:
/// `|a − b| ≤ 4·ε·max(|a|, |b|)`, ε = 2⁻⁵².
fn float_rounding_apart(a: f64, b: f64) -> bool {
    (a - b).abs() <= 4.0 * f64::EPSILON * a.abs().max(b.abs())
}

fn decimal_literal(e: &Expr) -> Option<&str> {
    match e {
        Expr::Num(n) if n.base.is_none() && n.is_decimal() => Some(&n.text),
        Expr::Neg(x) => decimal_literal(x),
        _ => None,
    }
}

fn plain_literal(e: &Expr) -> bool {
    match e {
        Expr::Num(n) => n.base.is_none(),
        Expr::Neg(x) => plain_literal(x),
        _ => false,
    }
}

/// The value of a decimal integer literal (at most 30 digits).
fn decimal_value(n: &super::parse::Num) -> Option<u128> {
    (n.text.len() <= 30 && n.text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| n.text.parse().ok())
        .flatten()
}

/// The value of `digits_base` (base 2 to 36, digits valid in it, at most 24 of them).
fn value_in_base(n: &super::parse::Num) -> Option<u128> {
    let base: u32 = n
        .base
        .as_ref()?
        .trim_matches(['{', '}', ' '])
        .parse()
        .ok()?;
    if !(2..=36).contains(&base) || n.text.is_empty() || n.text.len() > 24 {
        return None;
    }
    let mut v: u128 = 0;
    for c in n.text.chars() {
        v = v * u128::from(base) + u128::from(c.to_digit(base)?);
    }
    Some(v)
}

const F64_EXACT: f64 = 9_007_199_254_740_992.0; // 2^53

fn scalar_eq(g: &Expr, p: &Expr, d: usize) -> Verdict {
    if let (Some(a), Some(b)) = (words(g), words(p)) {
        return (a == b && !a.is_empty())
            .then_some("same words")
            .ok_or("different words");
    }
    if same_letter(g, p) || same_letter(p, g) {
        return Ok("same letter");
    }
    if matches!(g, Expr::Word(_)) || matches!(p, Expr::Word(_)) {
        return Err("text against an expression");
    }
    // numbers written with a base
    match (g, p) {
        (Expr::Num(a), Expr::Num(b)) if a.base.is_some() || b.base.is_some() => {
            let digits = |t: &str| t.trim_start_matches('0').to_ascii_lowercase();
            let base_ok = match (&a.base, &b.base) {
                (Some(x), Some(y)) => x.trim_start_matches('0') == y.trim_start_matches('0'),
                _ => true,
            };
            if base_ok && digits(&a.text) == digits(&b.text) {
                return Ok("same digits in the same base");
            }
            // an answer in a base against a decimal gold: its value
            if a.base.is_none() {
                if let (Some(x), Some(y)) = (decimal_value(a), value_in_base(b)) {
                    if x == y {
                        return Ok("number in a base equals the decimal value");
                    }
                }
            }
            return Err("different numbers in a base");
        }
        _ => {}
    }
    match (g, p) {
        (Expr::Percent(a), Expr::Percent(b)) => return eq(a, b, d).map(|_| "same percentage"),
        (Expr::Percent(a), x) | (x, Expr::Percent(a)) => {
            if eq(a, x, d).is_ok() {
                return Ok("percent sign dropped");
            }
            let frac = Expr::Div(
                a.clone(),
                Box::new(Expr::Num(super::parse::Num {
                    text: "100".into(),
                    base: None,
                })),
            );
            return eq(&frac, x, d).map(|_| "percentage as a fraction");
        }
        _ => {}
    }
    match (infinity_sign(g), infinity_sign(p)) {
        (Some(a), Some(b)) => {
            return (a == b)
                .then_some("same infinity")
                .ok_or("different infinities")
        }
        (Some(_), None) | (None, Some(_)) => return Err("infinity against a number"),
        _ => {}
    }
    let mut names = Vec::new();
    vars(g, &mut names);
    vars(p, &mut names);
    if names.is_empty() {
        return constant_eq(g, p);
    }
    let complex = holomorphic(g) && holomorphic(p);
    let mut agree = 0;
    for (k, cx) in (0..REAL_POINTS)
        .map(|k| (k, false))
        .chain((0..COMPLEX_POINTS).map(|k| (k, true)))
    {
        if cx && !complex {
            break;
        }
        let at = |n: &str| point(&names, n, k, cx);
        match (eval(g, &at), eval(p, &at)) {
            (Some(a), Some(b)) => {
                if !close(a, b) {
                    return Err("values differ at a sample point");
                }
                agree += 1;
            }
            (None, None) => {}
            _ => return Err("defined at different sample points"),
        }
    }
    if agree >= 3 {
        Ok("equal at all sample points")
    } else {
        Err("no value at enough sample points")
    }
}

const SCIENTIFIC_ROUNDED: &str = "a gold in scientific notation is the value rounded";

/// Whether `g` is a decimal written in scientific notation (`4.6e-24`, `2.7778e-6`: how a
/// physics or chemistry key writes a measured value) with at least two significant digits, and
/// `v` rounded to that many significant digits is `d`, its value: such a key is rounded (policy
/// rule 10), so an answer that states the value more precisely (`4.57 \times 10^{-24}`,
/// `\frac{1}{360000}`) is right. Plain decimals keep the stricter reading of
/// [`super::numeric::decimal_matches`] (`0.33` does not stand for 1/3).
fn scientific_gold_rounds(g: &Expr, d: f64, v: f64) -> bool {
    let Some(t) = decimal_literal(g).filter(|t| t.contains(['e', 'E'])) else {
        return false;
    };
    let digits = significant_digits(t);
    digits >= 2 && super::numeric::rounds_to_digits(d, digits, v)
}

fn constant_eq(g: &Expr, p: &Expr) -> Verdict {
    let one_decimal = decimal_literal(g).is_some() != decimal_literal(p).is_some();
    if let (Some(a), Some(b)) = (exact(g), exact(p)) {
        if a == b {
            return Ok("same exact value");
        }
        if scientific_gold_rounds(g, a.to_f64(), b.to_f64()) {
            return Ok(SCIENTIFIC_ROUNDED);
        }
        // a gold printed at double precision (a float's repr: 15 or more significant digits,
        // `186253.57700000002`) stands for the double it prints: an answer whose value is that
        // double up to its rounding (`186253.577`) is right (the gold is rounded, rule 2)
        if decimal_literal(g).is_some_and(|t| significant_digits(t) >= FLOAT_PRINT_DIGITS)
            && float_rounding_apart(a.to_f64(), b.to_f64())
        {
            return Ok("the gold is a float print of the answer's value");
        }
        if !one_decimal {
            // two decimals printed at double precision are one value when they differ in
            // f64's rounding only (`0.4166666666666666` and `0.4166666666666667`)
            if let (Some(x), Some(y)) = (decimal_literal(g), decimal_literal(p)) {
                if significant_digits(x).min(significant_digits(y)) >= FLOAT_PRINT_DIGITS
                    && float_rounding_apart(a.to_f64(), b.to_f64())
                {
                    return Ok("decimals equal to double precision");
                }
            }
            return Err("different exact values");
        }
        // a decimal against an exact rational: only the rounding rule can make them equal, and
        // only for a rounded gold: an answer that rounds an exact gold is an approximation
        // (`43.3077` for 563/13, the float print `0.0833333333333333` for 1/12)
        return match decimal_literal(g) {
            Some(t) => decimal_matches(a.to_f64(), significant_digits(t), b.to_f64())
                .then_some("decimal is the exact value rounded")
                .ok_or("different exact values"),
            None => Err("a rounded decimal of an exact value"),
        };
    }
    let none = |_: &str| None;
    let (Some(a), Some(b)) = (eval(g, &none), eval(p, &none)) else {
        return Err("no numeric value");
    };
    let big = a.norm().max(b.norm()) >= F64_EXACT;
    if big {
        // f64 cannot tell integers apart here, and one side has no exact value
        return Err("too large to compare without exact values");
    }
    if same_constant(a, b) {
        return Ok("same value");
    }
    if a.im == 0.0 && b.im == 0.0 && scientific_gold_rounds(g, a.re, b.re) {
        return Ok(SCIENTIFIC_ROUNDED);
    }
    let dec = |x: &Expr, other: &Expr, xv: C, ov: C| -> bool {
        match decimal_literal(x) {
            Some(t) if !plain_literal(other) && xv.im == 0.0 && ov.im.abs() < 1e-12 => {
                decimal_matches(xv.re, significant_digits(t), ov.re)
            }
            _ => false,
        }
    };
    if dec(g, p, a, b) {
        return Ok("decimal is the exact value rounded");
    }
    if decimal_literal(p).is_some() && decimal_literal(g).is_none() {
        return Err("a rounded decimal of an exact value");
    }
    Err("different values")
}
