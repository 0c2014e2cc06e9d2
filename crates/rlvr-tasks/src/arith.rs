//! Arithmetic in natural language: a task family a small real model can learn from, generated
//! from its settings (no file), scored by the math checker.
//!
//! A dataset name `arith` with optional settings after a colon, comma-separated:
//!
//! | setting | values | default | meaning |
//! |---|---|---|---|
//! | `ops` | letters of `+-*` | `+*` | the operators a problem may use |
//! | `digits` | `N` or `A-B` | `1-2` | digits of each operand (1 to 4) |
//! | `terms` | `N` or `A-B` | `2` | operands in a problem (2 to 6) |
//! | `words` | `true`, `false` | `false` | word problems (a story, one sentence a step) instead of "What is ...?" |
//! | `split` | `train`, `test` | `train` | which side of the held-out split |
//! | `n` | a count | 3000 (train), 200 (test) | problems (fewer when the split has fewer distinct ones) |
//! | `seed` | an integer | 0 | the sampling seed |
//!
//! `arith:ops=+-*,digits=1-2,terms=3,split=test` is 200 held-out problems of three terms with
//! mixed operators. The split is by problem, not by sample: a problem (its operands and
//! operators) is held out when a hash of it falls in the lowest tenth, whatever the seed or
//! `n`, so no test problem ever appears in any training set of the same settings (nor in one
//! of other settings). Problems are distinct within a set.
//!
//! **Problems.** Plain: `What is 7 times 8?`, `What is 23 plus 58 minus 9?`; with more than
//! two terms and mixed operators, usual precedence (`What is 3 plus 4 times 5?` is 23).
//! Words: a story whose steps are applied in order, left to right (`Mia has 23 marbles. She
//! finds 58 more. Then she gives away 9. How many marbles does she have now?`); a `*` step
//! multiplies what there is so far (`Then the number of marbles triples.` for 3, else
//! `Then she ends up with 7 times as many.`). Subtraction never goes below zero in either form
//! (an operand is redrawn). The gold answer is the integer.
//!
//! Every problem's id is `arith-<split>-<index>`, its data source `arith`.

use std::collections::HashSet;

use rand::{Rng, RngExt, SeedableRng};

use crate::{Dataset, Problem, Prompt};

/// The settings of an arithmetic dataset (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArithSpec {
    pub ops: Vec<char>,
    pub digits: (u32, u32),
    pub terms: (usize, usize),
    pub words: bool,
    pub test: bool,
    pub n: usize,
    pub seed: u64,
}

impl Default for ArithSpec {
    fn default() -> Self {
        Self {
            ops: vec!['+', '*'],
            digits: (1, 2),
            terms: (2, 2),
            words: false,
            test: false,
            n: 3000,
            seed: 0,
        }
    }
}

/// One problem: operands and the operators between them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Expr {
    operands: Vec<u64>,
    ops: Vec<char>,
}

impl ArithSpec {
    /// The settings of dataset name `name` when it is an arithmetic one (`arith` or
    /// `arith:...`), None for any other name; a bad setting is an error naming it.
    pub fn parse(name: &str) -> Option<Result<Self, String>> {
        let rest = name.strip_prefix("arith")?;
        let settings = match rest {
            "" => "",
            r => r.strip_prefix(':')?,
        };
        Some(Self::parse_settings(settings))
    }

    fn parse_settings(settings: &str) -> Result<Self, String> {
        let mut s = ArithSpec::default();
        let mut n = None;
        for kv in settings.split(',').filter(|kv| !kv.trim().is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("arith setting {kv:?}: expected key=value"))?;
            let (k, v) = (k.trim(), v.trim());
            let range = |lo: u64, hi: u64| -> Result<(u64, u64), String> {
                let (a, b) = match v.split_once('-') {
                    Some((a, b)) => (a, b),
                    None => (v, v),
                };
                let parse = |x: &str| {
                    x.parse::<u64>()
                        .map_err(|_| format!("arith setting {k}={v}: expected N or A-B"))
                };
                let (a, b) = (parse(a)?, parse(b)?);
                if a > b || a < lo || b > hi {
                    return Err(format!(
                        "arith setting {k}={v}: expected {lo} to {hi}, low-high"
                    ));
                }
                Ok((a, b))
            };
            match k {
                "ops" => {
                    let ops: Vec<char> = v.chars().collect();
                    if ops.is_empty() || ops.iter().any(|c| !"+-*".contains(*c)) {
                        return Err(format!("arith setting ops={v}: expected letters of +-*"));
                    }
                    let mut seen = Vec::new();
                    for c in ops {
                        if !seen.contains(&c) {
                            seen.push(c);
                        }
                    }
                    s.ops = seen;
                }
                "digits" => {
                    let (a, b) = range(1, 4)?;
                    s.digits = (a as u32, b as u32);
                }
                "terms" => {
                    let (a, b) = range(2, 6)?;
                    s.terms = (a as usize, b as usize);
                }
                "words" => {
                    s.words = v
                        .parse()
                        .map_err(|_| format!("arith setting words={v}: expected true or false"))?;
                }
                "split" => {
                    s.test = match v {
                        "train" => false,
                        "test" => true,
                        _ => {
                            return Err(format!("arith setting split={v}: expected train or test"))
                        }
                    };
                }
                "n" => {
                    let count: usize = v
                        .parse()
                        .map_err(|_| format!("arith setting n={v}: expected a count"))?;
                    if count == 0 || count > 1_000_000 {
                        return Err(format!("arith setting n={v}: expected 1 to 1000000"));
                    }
                    n = Some(count);
                }
                "seed" => {
                    s.seed = v
                        .parse()
                        .map_err(|_| format!("arith setting seed={v}: expected an integer"))?;
                }
                other => {
                    return Err(format!(
                        "arith setting {other:?}: the settings are ops, digits, terms, words, \
                         split, n, seed"
                    ))
                }
            }
        }
        s.n = n.unwrap_or(if s.test { 200 } else { 3000 });
        Ok(s)
    }

    /// The dataset: up to `n` distinct problems of this split (module docs), in sampling order.
    pub fn dataset(&self, name: &str) -> Dataset {
        let mut rng = rand::rngs::StdRng::seed_from_u64(self.seed ^ 0x6172_6974_6873_706c);
        let mut seen = HashSet::new();
        let mut problems = Vec::new();
        // a split with fewer distinct problems than asked for ends when sampling stops
        // finding new ones
        let mut misses = 0usize;
        while problems.len() < self.n && misses < 20 * self.n + 10_000 {
            let e = self.sample(&mut rng);
            if held_out(&e) != self.test || !seen.insert(e.clone()) {
                misses += 1;
                continue;
            }
            let i = problems.len();
            let (text, answer) = if self.words {
                (words(&e, i), left_to_right(&e))
            } else {
                (plain(&e), with_precedence(&e))
            };
            problems.push(Problem {
                id: format!("arith-{}-{i}", if self.test { "test" } else { "train" }),
                prompt: Prompt::Text(text),
                answer: answer.to_string(),
                solution: None,
                data_source: "arith".into(),
                choices: None,
            });
        }
        Dataset {
            name: name.to_string(),
            problems,
            skipped: Vec::new(),
            duplicates: 0,
        }
    }

    fn sample<R: Rng>(&self, rng: &mut R) -> Expr {
        let terms = rng.random_range(self.terms.0..=self.terms.1);
        let (lo_d, hi_d) = self.digits;
        let operand = |rng: &mut R| {
            let d = rng.random_range(lo_d..=hi_d);
            let lo = if d == 1 { 2 } else { 10u64.pow(d - 1) };
            rng.random_range(lo..10u64.pow(d))
        };
        loop {
            let operands: Vec<u64> = (0..terms).map(|_| operand(rng)).collect();
            let ops: Vec<char> = (1..terms)
                .map(|_| self.ops[rng.random_range(0..self.ops.len())])
                .collect();
            let e = Expr { operands, ops };
            // no negative value on the way, in the order each form applies the steps
            let ok = if self.words {
                prefixes_non_negative(&e)
            } else {
                with_precedence_checked(&e).is_some()
            };
            if ok {
                return e;
            }
        }
    }
}

/// Whether a problem is held out: the lowest tenth of a fixed hash of its operands and
/// operators (FNV-1a, stable across versions and platforms).
fn held_out(e: &Expr) -> bool {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: u8| {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    for (i, x) in e.operands.iter().enumerate() {
        for b in x.to_le_bytes() {
            eat(b);
        }
        if let Some(&op) = e.ops.get(i) {
            eat(op as u8);
        }
    }
    h.is_multiple_of(10)
}

fn op_word(op: char) -> &'static str {
    match op {
        '+' => "plus",
        '-' => "minus",
        _ => "times",
    }
}

fn plain(e: &Expr) -> String {
    let mut s = format!("What is {}", e.operands[0]);
    for (op, x) in e.ops.iter().zip(&e.operands[1..]) {
        s.push_str(&format!(" {} {x}", op_word(*op)));
    }
    s.push('?');
    s
}

/// The value with `*` before `+` and `-`, or None when a subtraction goes below zero.
fn with_precedence_checked(e: &Expr) -> Option<u64> {
    // products of the runs joined by `*`, then the sums and differences left to right
    let mut terms = vec![e.operands[0]];
    let mut signs = vec!['+'];
    for (op, &x) in e.ops.iter().zip(&e.operands[1..]) {
        if *op == '*' {
            let last = terms.last_mut().expect("one term");
            *last *= x;
        } else {
            terms.push(x);
            signs.push(*op);
        }
    }
    let mut v: i128 = 0;
    for (t, s) in terms.iter().zip(signs) {
        v += if s == '-' { -(*t as i128) } else { *t as i128 };
        if v < 0 {
            return None;
        }
    }
    u64::try_from(v).ok()
}

fn with_precedence(e: &Expr) -> u64 {
    with_precedence_checked(e).expect("sampled without negative values")
}

/// Whether applying the steps left to right never goes below zero.
fn prefixes_non_negative(e: &Expr) -> bool {
    let mut v = e.operands[0] as i128;
    for (op, &x) in e.ops.iter().zip(&e.operands[1..]) {
        v = match op {
            '+' => v + x as i128,
            '-' => v - x as i128,
            _ => v * x as i128,
        };
        if v < 0 {
            return false;
        }
    }
    true
}

fn left_to_right(e: &Expr) -> u64 {
    let mut v = e.operands[0];
    for (op, &x) in e.ops.iter().zip(&e.operands[1..]) {
        v = match op {
            '+' => v + x,
            '-' => v - x,
            _ => v * x,
        };
    }
    v
}

/// (name, pronoun, thing) of the story of problem `i`.
const CAST: [(&str, &str, &str); 8] = [
    ("Mia", "She", "marbles"),
    ("Tom", "He", "apples"),
    ("Ana", "She", "stickers"),
    ("Leo", "He", "coins"),
    ("Zoe", "She", "books"),
    ("Sam", "He", "stamps"),
    ("Ivy", "She", "shells"),
    ("Ben", "He", "cards"),
];

fn words(e: &Expr, i: usize) -> String {
    let (name, pronoun, thing) = CAST[i % CAST.len()];
    let they = pronoun.to_lowercase();
    let mut s = format!("{name} has {} {thing}.", e.operands[0]);
    for (k, (op, &x)) in e.ops.iter().zip(&e.operands[1..]).enumerate() {
        let step = match (op, x) {
            ('+', _) => format!("{they} finds {x} more."),
            ('-', _) => format!("{they} gives away {x}."),
            (_, 2) => format!("the number of {thing} doubles."),
            (_, 3) => format!("the number of {thing} triples."),
            _ => format!("{they} ends up with {x} times as many."),
        };
        if k == 0 {
            let mut c = step.chars();
            let first = c.next().map(|f| f.to_uppercase().collect::<String>());
            s.push_str(&format!(" {}{}", first.unwrap_or_default(), c.as_str()));
        } else {
            s.push_str(&format!(" Then {step}"));
        }
    }
    s.push_str(&format!(" How many {thing} does {they} have now?"));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> ArithSpec {
        ArithSpec::parse(s)
            .expect("an arith name")
            .expect("valid settings")
    }

    #[test]
    fn names_and_settings() {
        assert!(ArithSpec::parse("gsm8k").is_none());
        assert!(ArithSpec::parse("arithmetic").is_none());
        assert_eq!(spec("arith"), ArithSpec::default());
        let s = spec("arith:ops=-*+-,digits=2,terms=2-4,words=true,split=test,n=50,seed=7");
        assert_eq!(s.ops, ['-', '*', '+']);
        assert_eq!(
            (s.digits, s.terms, s.words, s.test, s.n, s.seed),
            ((2, 2), (2, 4), true, true, 50, 7)
        );
        assert_eq!(spec("arith:split=test").n, 200);
        for (bad, names) in [
            ("arith:ops=/", "ops"),
            ("arith:digits=5", "digits"),
            ("arith:terms=3-2", "terms"),
            ("arith:split=dev", "split"),
            ("arith:colour=red", "colour"),
            ("arith:n=0", "n"),
            ("arith:words", "key=value"),
        ] {
            let err = ArithSpec::parse(bad).unwrap().unwrap_err();
            assert!(err.contains(names), "{bad}: {err}");
        }
    }

    /// Hand-computed values: precedence in the plain form, left to right in stories.
    #[test]
    fn values_by_hand() {
        let e = Expr {
            operands: vec![3, 4, 5],
            ops: vec!['+', '*'],
        };
        assert_eq!(plain(&e), "What is 3 plus 4 times 5?");
        assert_eq!(with_precedence(&e), 23);
        assert_eq!(left_to_right(&e), 35);
        let e = Expr {
            operands: vec![23, 58, 9],
            ops: vec!['+', '-'],
        };
        assert_eq!(with_precedence(&e), 72);
        assert_eq!(
            words(&e, 0),
            "Mia has 23 marbles. She finds 58 more. Then she gives away 9. How many marbles \
             does she have now?"
        );
        let e = Expr {
            operands: vec![5, 3, 4],
            ops: vec!['*', '-'],
        };
        assert_eq!(
            words(&e, 1),
            "Tom has 5 apples. The number of apples triples. Then he gives away 4. How many \
             apples does he have now?"
        );
        assert_eq!(left_to_right(&e), 11);
        let e = Expr {
            operands: vec![2, 9, 4],
            ops: vec!['-', '*'],
        };
        // 2 - 36 < 0: never sampled
        assert_eq!(with_precedence_checked(&e), None);
    }

    #[test]
    fn splits_are_disjoint_distinct_and_reproducible() {
        for words in [false, true] {
            let base = format!("arith:ops=+-*,digits=1-2,terms=2-3,words={words}");
            let train = spec(&format!("{base},n=3000")).dataset("t");
            let test = spec(&format!("{base},split=test")).dataset("h");
            assert_eq!((train.len(), test.len()), (3000, 200));
            let texts = |d: &Dataset| -> HashSet<String> {
                d.problems
                    .iter()
                    .map(|p| p.prompt.text().to_string())
                    .collect()
            };
            let (a, b) = (texts(&train), texts(&test));
            assert_eq!(a.len(), 3000, "distinct");
            assert!(a.is_disjoint(&b), "a held-out problem in training");
            // another seed draws other training problems, never a held-out one
            let other = spec(&format!("{base},seed=9")).dataset("t");
            assert!(texts(&other).is_disjoint(&b));
            assert_eq!(
                spec(&format!("{base},n=3000")).dataset("t").problems,
                train.problems
            );
            for p in train.problems.iter().chain(&test.problems) {
                assert!(p.answer.parse::<u64>().is_ok(), "{p:?}");
            }
        }
    }

    /// A split smaller than asked for ends with every distinct problem it has (one-digit
    /// products: 64 pairs of 2..=9, about a tenth held out).
    #[test]
    fn a_small_space_yields_what_it_has() {
        let test = spec("arith:ops=*,digits=1,split=test").dataset("h");
        let train = spec("arith:ops=*,digits=1").dataset("t");
        assert_eq!(test.len() + train.len(), 64);
        assert!(!test.is_empty() && test.len() < 20, "{}", test.len());
    }

    /// The checker scores a right answer in the model's own words right and a wrong one wrong.
    #[test]
    fn the_math_checker_scores_it() {
        let d = spec("arith:n=5").dataset("t");
        for p in &d.problems {
            let right = format!("Let me compute. The answer is {}.", p.answer);
            assert!(crate::math::verify(&p.answer, &right).correct, "{right}");
            let wrong = format!("The answer is {}.", p.answer.parse::<u64>().unwrap() + 1);
            assert!(!crate::math::verify(&p.answer, &wrong).correct, "{wrong}");
        }
    }
}
