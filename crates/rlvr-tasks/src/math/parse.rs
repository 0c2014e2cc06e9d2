//! The expression tree of an answer and its recursive-descent parser.
//!
//! # Grammar
//!
//! Over the tokens of [`super::lex`] (lowest precedence first; `*` repeats, `?` optional):
//!
//! ```text
//! answer   := list EOF
//! list     := rel ( (',' | ';' | 'and' | 'or') rel )*            several answers: List
//! rel      := ratio ( relop ratio )*          relop: = ≠ < > ≤ ≥ ≈ ∈ ∉   (a chain: Rel)
//! ratio    := setexpr ( ':' setexpr )*                            a:b: Ratio
//! setexpr  := sum ( ('\cup' | '\cap' | '\setminus') sum )*
//! sum      := sign? term ( ('+' | '-' | '\pm' | '\mp') term )*
//! term     := unary ( ('*' | '/' | '\cdot' | '\times' | '\div')? unary )*
//!                                            no operator: implicit product `2x`, `3\sqrt2`
//! unary    := ('-' | '+' | '\pm' | '\mp') unary | postfix
//! postfix  := power ( '!' | '%' | '\%' | '^\circ' | '°' | 'percent' )*
//! power    := primary ( '^' exponent )?      right associative; `^\circ` is degrees
//! exponent := '{' list '}' | '-'? primary    (`x^23` is x^23: a digit run is one number)
//! primary  := number ('_' base)? | letters | word+ | constant | function
//!           | '\frac' arg arg | '\binom' arg arg | '\sqrt' ('[' list ']')? arg
//!           | '(' list (')' | ']') | '[' list (']' | ')') | '\{' list? '\}' | '{' list '}'
//!           | '|' sum '|' | '\begin{pmatrix|bmatrix|array|..}' cells '\end{..}'
//!           | '\begin{cases}' rows '\end{cases}'   (a list of its rows; piecewise: not parsed)
//! arg      := '{' list '}' | one digit | one letter | one command (`\frac12`, `\sqrt3`)
//! function := name ('^' exponent)? ('_' arg)? ( '(' list ')' | '{' list '}' | fnarg )
//! fnarg    := power power*    (an implicit product up to the next operator or function:
//!                              `\sin 2x` = sin(2x), `\sin x \cos x` = sin(x)·cos(x))
//! ```
//!
//! Decisions (each made once, here):
//! - a run of letters in math is a product of one-letter variables (`xy` = x·y), except
//!   function names (`sin`, `sqrt`, `ln`, ...), `pi`, `inf`, `and`/`or`, unit names
//!   ([`UNITS`]) and runs of three or more letters, which are words
//!   (`odd`, `yuan`); `e` is Euler's number, `i` the imaginary unit;
//! - `(a, b)` / `[a, b)` with two or more items are tuples or intervals (bracket kinds kept);
//!   one item in brackets is a group; `\{..\}` is a set; `{a, b}` (plain braces holding a
//!   comma list) is a brace list (compared like the bare list `a, b`, but in order against
//!   a tuple);
//! - `N_{b}` / `N_b` after a number is a base subscript; after a letter it is part of the
//!   variable's name (`x_1`, `a_{n+1}`);
//! - `\log x` is the natural logarithm (as in sympy); `\log_b x` has base b; `\lg` is base 10;
//! - `\sin^2 x` = (sin x)^2; `\sin^{-1} x` = arcsin x;
//! - a word after a factor that reads `percent`, `pct` or `percentage` is a percent sign.
//!
//! Bounds: at most [`super::lex::MAX_TOKENS`] tokens, nesting depth [`MAX_DEPTH`], and
//! [`MAX_NODES`] tree nodes; past them the parse fails (and the answer is compared as text).

use std::fmt;

pub use super::lex::RelOp;
use super::lex::Tok;

/// Unit names of two letters that the parser reads as words (longer names are words anyway).
pub const UNITS: &[&str] = &[
    "cm", "mm", "km", "ft", "in", "kg", "mg", "ml", "hr", "lb", "mi",
];

/// Deepest nesting the parser follows.
pub const MAX_DEPTH: usize = 48;
/// Most nodes of one tree.
pub const MAX_NODES: usize = 5_000;

/// A known function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Sin,
    Cos,
    Tan,
    Sec,
    Csc,
    Cot,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Ln,
    /// log with the base as first argument
    LogB,
    Exp,
    Sqrt,
    /// n-th root: (n, x)
    Root,
    Abs,
    Floor,
    Ceil,
    Binom,
    Factorial,
}

impl Func {
    fn name(self) -> &'static str {
        match self {
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Tan => "tan",
            Func::Sec => "sec",
            Func::Csc => "csc",
            Func::Cot => "cot",
            Func::Asin => "asin",
            Func::Acos => "acos",
            Func::Atan => "atan",
            Func::Sinh => "sinh",
            Func::Cosh => "cosh",
            Func::Tanh => "tanh",
            Func::Ln => "ln",
            Func::LogB => "log",
            Func::Exp => "exp",
            Func::Sqrt => "sqrt",
            Func::Root => "root",
            Func::Abs => "abs",
            Func::Floor => "floor",
            Func::Ceil => "ceil",
            Func::Binom => "binom",
            Func::Factorial => "factorial",
        }
    }

    /// Functions of one argument named by a command or a letter run.
    fn by_name(s: &str) -> Option<Func> {
        Some(match s {
            "sin" => Func::Sin,
            "cos" => Func::Cos,
            "tan" | "tg" => Func::Tan,
            "sec" => Func::Sec,
            "csc" | "cosec" => Func::Csc,
            "cot" | "ctg" => Func::Cot,
            "arcsin" | "asin" => Func::Asin,
            "arccos" | "acos" => Func::Acos,
            "arctan" | "atan" | "arctg" => Func::Atan,
            "sinh" => Func::Sinh,
            "cosh" => Func::Cosh,
            "tanh" => Func::Tanh,
            "ln" | "log" | "lg" => Func::Ln, // log/lg become LogB in the parser
            "exp" => Func::Exp,
            "sqrt" => Func::Sqrt,
            "abs" => Func::Abs,
            "floor" => Func::Floor,
            "ceil" => Func::Ceil,
            _ => return None,
        })
    }
}

/// A number as written (separators removed), with an optional base subscript.
#[derive(Debug, Clone, PartialEq)]
pub struct Num {
    pub text: String,
    pub base: Option<String>,
}

impl Num {
    /// Written with a decimal point or an exponent.
    pub fn is_decimal(&self) -> bool {
        self.text.contains(['.', 'e', 'E'])
    }
}

/// A named constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Const {
    Pi,
    E,
    I,
    Inf,
}

/// Set operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOp {
    Union,
    Inter,
    Minus,
}

/// The parsed answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(Num),
    Var(String),
    /// text (one or more words, as written)
    Word(String),
    Const(Const),
    Neg(Box<Expr>),
    Add(Vec<Expr>),
    Mul(Vec<Expr>),
    Div(Box<Expr>, Box<Expr>),
    Pow(Box<Expr>, Box<Expr>),
    Func(Func, Vec<Expr>),
    /// an unknown command with its arguments (`\overline{AB}`, `\angle`)
    Apply(String, Vec<Expr>),
    /// `a ± b` (`a` absent for a leading `±b`); true for `∓`
    PlusMinus(Option<Box<Expr>>, Box<Expr>, bool),
    Percent(Box<Expr>),
    Degrees(Box<Expr>),
    /// `(a, b)`, `[a, b)`, ...: the opening and closing bracket
    Tuple(char, char, Vec<Expr>),
    Set(Vec<Expr>),
    /// `{a, b}` with plain braces
    Braces(Vec<Expr>),
    Matrix(Vec<Vec<Expr>>),
    /// a chain `a op b op c ...`: members and operators
    Rel(Vec<Expr>, Vec<RelOp>),
    SetOp(SetOp, Vec<Expr>),
    /// several answers
    List(Vec<Expr>),
    Ratio(Vec<Expr>),
    Ellipsis,
    EmptySet,
}

impl Expr {
    /// The direct subexpressions, in reading order (none for a leaf: a number, a variable, a
    /// word, a constant, `...`, the empty set).
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Neg(x) | Expr::Percent(x) | Expr::Degrees(x) => vec![x],
            Expr::Div(a, b) | Expr::Pow(a, b) => vec![a, b],
            Expr::PlusMinus(a, b, _) => a.iter().map(|a| &**a).chain([&**b]).collect(),
            Expr::Add(xs)
            | Expr::Mul(xs)
            | Expr::Func(_, xs)
            | Expr::Apply(_, xs)
            | Expr::Tuple(_, _, xs)
            | Expr::Set(xs)
            | Expr::Braces(xs)
            | Expr::Rel(xs, _)
            | Expr::SetOp(_, xs)
            | Expr::List(xs)
            | Expr::Ratio(xs) => xs.iter().collect(),
            Expr::Matrix(rows) => rows.iter().flatten().collect(),
            Expr::Num(_)
            | Expr::Var(_)
            | Expr::Word(_)
            | Expr::Const(_)
            | Expr::Ellipsis
            | Expr::EmptySet => Vec::new(),
        }
    }
}

/// Parses prepared answer text into a tree; Err says where it stopped.
pub fn parse(text: &str) -> Result<Expr, String> {
    let toks = super::lex::lex(text).ok_or("too long or unbalanced \\text")?;
    if toks.is_empty() {
        return Err("empty".into());
    }
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
        nodes: 0,
        abs: 0,
    };
    let e = p.list()?;
    if p.pos < p.toks.len() {
        return Err(format!("unexpected {:?}", p.toks[p.pos]));
    }
    Ok(e)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
    nodes: usize,
    /// open `|` of absolute values
    abs: usize,
}

type PResult = Result<Expr, String>;

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k)
    }

    fn eat_sym(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Sym(c)) {
            self.pos += 1;
            return true;
        }
        false
    }

    fn is_cmd(&self, name: &str) -> bool {
        matches!(self.peek(), Some(Tok::Cmd(n)) if n == name)
    }

    fn node(&mut self, e: Expr) -> PResult {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err("too many nodes".into());
        }
        Ok(e)
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("nested too deep".into());
        }
        Ok(())
    }

    fn list(&mut self) -> PResult {
        self.enter()?;
        let mut items = vec![self.rel()?];
        while let Some(Tok::Sym(',' | ';') | Tok::Conn) = self.peek() {
            self.pos += 1;
            // "1, 2, and 3": a connector right after a comma
            while matches!(self.peek(), Some(Tok::Conn)) {
                self.pos += 1;
            }
            if self.at_list_end() {
                break; // trailing separator
            }
            items.push(self.rel()?);
        }
        self.depth -= 1;
        if items.len() == 1 {
            return Ok(items.pop().expect("one item"));
        }
        self.node(Expr::List(items))
    }

    fn at_list_end(&self) -> bool {
        matches!(
            self.peek(),
            None | Some(Tok::Sym(')'))
                | Some(Tok::Sym(']'))
                | Some(Tok::Sym('}'))
                | Some(Tok::SetClose)
        )
    }

    fn rel(&mut self) -> PResult {
        let first = self.ratio()?;
        let mut members = vec![first];
        let mut ops = Vec::new();
        while let Some(Tok::Rel(op)) = self.peek() {
            let op = *op;
            self.pos += 1;
            ops.push(op);
            members.push(self.ratio()?);
        }
        if ops.is_empty() {
            return Ok(members.pop().expect("one member"));
        }
        self.node(Expr::Rel(members, ops))
    }

    fn ratio(&mut self) -> PResult {
        let first = self.setexpr()?;
        if self.peek() != Some(&Tok::Sym(':')) {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_sym(':') {
            items.push(self.setexpr()?);
        }
        self.node(Expr::Ratio(items))
    }

    fn setexpr(&mut self) -> PResult {
        let first = self.sum()?;
        let op_of = |t: Option<&Tok>| match t {
            Some(Tok::Cmd(n)) if n == "cup" => Some(SetOp::Union),
            Some(Tok::Cmd(n)) if n == "cap" => Some(SetOp::Inter),
            Some(Tok::Cmd(n)) if n == "setminus" => Some(SetOp::Minus),
            Some(Tok::Sym('U')) => Some(SetOp::Union),
            _ => None,
        };
        let Some(op) = op_of(self.peek()) else {
            return Ok(first);
        };
        let mut items = vec![first];
        while op_of(self.peek()) == Some(op) {
            self.pos += 1;
            items.push(self.sum()?);
        }
        if op_of(self.peek()).is_some() {
            return Err("mixed set operations".into());
        }
        self.node(Expr::SetOp(op, items))
    }

    fn sum(&mut self) -> PResult {
        self.enter()?;
        let mut terms: Vec<Expr> = Vec::new();
        // a leading sign belongs to the first term (unary)
        let mut acc = self.term()?;
        loop {
            match self.peek() {
                Some(Tok::Sym('+')) => {
                    self.pos += 1;
                    terms.push(acc);
                    acc = self.term()?;
                }
                Some(Tok::Sym('-')) => {
                    self.pos += 1;
                    terms.push(acc);
                    let t = self.term()?;
                    acc = self.node(Expr::Neg(Box::new(t)))?;
                }
                Some(Tok::Cmd(n)) if n == "pm" || n == "mp" => {
                    let minus_plus = n == "mp";
                    self.pos += 1;
                    let t = self.term()?;
                    terms.push(acc);
                    let left = if terms.len() == 1 {
                        terms.pop().expect("one")
                    } else {
                        Expr::Add(std::mem::take(&mut terms))
                    };
                    acc = self.node(Expr::PlusMinus(
                        Some(Box::new(left)),
                        Box::new(t),
                        minus_plus,
                    ))?;
                }
                _ => break,
            }
        }
        self.depth -= 1;
        if terms.is_empty() {
            return Ok(acc);
        }
        terms.push(acc);
        self.node(Expr::Add(terms))
    }

    /// Whether the next token can start an implicit factor.
    fn starts_factor(&self) -> bool {
        match self.peek() {
            Some(Tok::Num(_)) | Some(Tok::Letters(_)) | Some(Tok::Word(_)) => true,
            Some(Tok::SetOpen) | Some(Tok::Begin(_)) => true,
            Some(Tok::Sym(c)) => match c {
                '(' | '[' | '{' => true,
                '|' => self.abs == 0,
                _ => false,
            },
            Some(Tok::Cmd(n)) => !matches!(
                n.as_str(),
                "pm" | "mp"
                    | "cup"
                    | "cap"
                    | "setminus"
                    | "circ"
                    | "mid"
                    | "pmod"
                    | "bmod"
                    | "mod"
                    | "rfloor"
                    | "rceil"
            ),
            _ => false,
        }
    }

    fn is_function_start(&self) -> bool {
        match self.peek() {
            Some(Tok::Cmd(n)) => Func::by_name(n).is_some() && n != "sqrt",
            Some(Tok::Letters(l)) => Func::by_name(l).is_some(),
            _ => false,
        }
    }

    fn term(&mut self) -> PResult {
        self.enter()?;
        let mut acc = self.unary()?;
        let mut factors: Vec<Expr> = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::Sym('*')) => {
                    self.pos += 1;
                    factors.push(acc);
                    acc = self.unary()?;
                }
                Some(Tok::Sym('/')) => {
                    self.pos += 1;
                    let d = self.unary()?;
                    let n = if factors.is_empty() {
                        acc
                    } else {
                        factors.push(acc);
                        Expr::Mul(std::mem::take(&mut factors))
                    };
                    acc = self.node(Expr::Div(Box::new(n), Box::new(d)))?;
                }
                _ if self.starts_factor() => {
                    if factors.is_empty() {
                        if let Some(m) = self.mixed_number(&acc) {
                            acc = self.node(m)?;
                            continue;
                        }
                    }
                    factors.push(acc);
                    acc = self.postfix()?;
                }
                _ => break,
            }
        }
        self.depth -= 1;
        if factors.is_empty() {
            return Ok(acc);
        }
        factors.push(acc);
        self.node(Expr::Mul(factors))
    }

    /// A mixed number: an integer literal followed by a proper fraction of integer literals
    /// (`2\frac{1}{2}`, `2\frac12`, `1 1/2`) is their sum (`-1\frac12` = -1.5). Consumes
    /// the fraction's tokens when it matches.
    fn mixed_number(&mut self, acc: &Expr) -> Option<Expr> {
        let (neg, whole) = match acc {
            Expr::Num(n) => (false, n),
            Expr::Neg(x) => match &**x {
                Expr::Num(n) => (true, n),
                _ => return None,
            },
            _ => return None,
        };
        if whole.base.is_some() || !whole.text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let int = |t: Option<&Tok>| match t {
            Some(Tok::Num(n)) if n.bytes().all(|b| b.is_ascii_digit()) => Some(n.clone()),
            _ => None,
        };
        let t = |k: usize| self.peek_at(k);
        let (num, den, len) = if matches!(t(0), Some(Tok::Cmd(c)) if c == "frac") {
            if t(1) == Some(&Tok::Sym('{'))
                && t(3) == Some(&Tok::Sym('}'))
                && t(4) == Some(&Tok::Sym('{'))
                && t(6) == Some(&Tok::Sym('}'))
            {
                (int(t(2))?, int(t(5))?, 7)
            } else if let Some(two) = int(t(1)).filter(|n| n.len() == 2) {
                (two[..1].to_string(), two[1..].to_string(), 2)
            } else {
                return None;
            }
        } else if t(1) == Some(&Tok::Sym('/')) {
            (int(t(0))?, int(t(2))?, 3)
        } else {
            return None;
        };
        let (n, d) = (num.parse::<u64>().ok()?, den.parse::<u64>().ok()?);
        if n == 0 || n >= d {
            return None;
        }
        self.pos += len;
        let lit = |text: String| Expr::Num(Num { text, base: None });
        let sum = Expr::Add(vec![
            Expr::Num(whole.clone()),
            Expr::Div(Box::new(lit(num)), Box::new(lit(den))),
        ]);
        Some(if neg { Expr::Neg(Box::new(sum)) } else { sum })
    }

    fn unary(&mut self) -> PResult {
        self.enter()?;
        let e = match self.peek() {
            Some(Tok::Sym('-')) => {
                self.pos += 1;
                let x = self.unary()?;
                self.node(Expr::Neg(Box::new(x)))
            }
            Some(Tok::Sym('+')) => {
                self.pos += 1;
                self.unary()
            }
            Some(Tok::Cmd(n)) if n == "pm" || n == "mp" => {
                let mp = n == "mp";
                self.pos += 1;
                let x = self.unary()?;
                self.node(Expr::PlusMinus(None, Box::new(x), mp))
            }
            _ => self.postfix(),
        };
        self.depth -= 1;
        e
    }

    fn postfix(&mut self) -> PResult {
        let mut e = self.power()?;
        loop {
            match self.peek() {
                Some(Tok::Sym('!')) => {
                    self.pos += 1;
                    e = self.node(Expr::Func(Func::Factorial, vec![e]))?;
                }
                Some(Tok::Sym('%')) => {
                    self.pos += 1;
                    e = self.node(Expr::Percent(Box::new(e)))?;
                }
                Some(Tok::Cmd(n)) if n == "circ" => {
                    self.pos += 1;
                    e = self.node(Expr::Degrees(Box::new(e)))?;
                }
                Some(Tok::Letters(w)) | Some(Tok::Word(w))
                    if matches!(
                        w.to_ascii_lowercase().as_str(),
                        "percent" | "pct" | "percentage"
                    ) =>
                {
                    self.pos += 1;
                    e = self.node(Expr::Percent(Box::new(e)))?;
                }
                _ => return Ok(e),
            }
        }
    }

    fn power(&mut self) -> PResult {
        self.enter()?;
        let base = self.primary()?;
        let e = self.exponent_of(base);
        self.depth -= 1;
        e
    }

    /// `base ^ exponent` (and `base^\circ`), repeated right-associatively.
    fn exponent_of(&mut self, base: Expr) -> PResult {
        if !self.eat_sym('^') {
            return Ok(base);
        }
        // degrees: ^\circ, ^{\circ}
        if self.is_cmd("circ") {
            self.pos += 1;
            return self.node(Expr::Degrees(Box::new(base)));
        }
        if self.peek() == Some(&Tok::Sym('{'))
            && matches!(self.peek_at(1), Some(Tok::Cmd(n)) if n == "circ")
            && self.peek_at(2) == Some(&Tok::Sym('}'))
        {
            self.pos += 3;
            return self.node(Expr::Degrees(Box::new(base)));
        }
        let exp = self.exponent()?;
        self.node(Expr::Pow(Box::new(base), Box::new(exp)))
    }

    fn exponent(&mut self) -> PResult {
        self.enter()?;
        let e = if self.eat_sym('{') {
            let e = self.list()?;
            if !self.eat_sym('}') {
                return Err("unclosed exponent".into());
            }
            e
        } else if self.eat_sym('-') {
            let x = self.exponent()?;
            self.node(Expr::Neg(Box::new(x)))?
        } else {
            let b = self.primary()?;
            self.exponent_of(b)?
        };
        self.depth -= 1;
        Ok(e)
    }

    /// A one-token argument (`\frac12`): splits a digit or letter run.
    fn arg(&mut self) -> PResult {
        self.enter()?;
        let e = match self.peek().cloned() {
            Some(Tok::Sym('{')) => {
                self.pos += 1;
                let e = self.list()?;
                if !self.eat_sym('}') {
                    return Err("unclosed argument".into());
                }
                e
            }
            Some(Tok::Num(n)) if n.len() > 1 && n.bytes().all(|b| b.is_ascii_digit()) => {
                self.toks[self.pos] = Tok::Num(n[1..].to_string());
                self.node(Expr::Num(Num {
                    text: n[..1].to_string(),
                    base: None,
                }))?
            }
            Some(Tok::Letters(l)) if l.len() > 1 => {
                self.toks[self.pos] = Tok::Letters(l[1..].to_string());
                letter(&l[..1])
            }
            Some(Tok::Sym('-')) => {
                self.pos += 1;
                let x = self.arg()?;
                self.node(Expr::Neg(Box::new(x)))?
            }
            _ => self.primary()?,
        };
        self.depth -= 1;
        Ok(e)
    }

    fn primary(&mut self) -> PResult {
        self.enter()?;
        let Some(t) = self.peek().cloned() else {
            return Err("unexpected end".into());
        };
        self.pos += 1;
        let e = match t {
            Tok::Num(text) => {
                let mut n = Num { text, base: None };
                if self.eat_sym('_') {
                    n.base = Some(self.subscript_text()?);
                }
                self.node(Expr::Num(n))?
            }
            Tok::Letters(l) => self.letters(l)?,
            Tok::Word(w) => {
                let mut words = vec![w];
                while let Some(Tok::Word(w)) = self.peek() {
                    if matches!(
                        w.to_ascii_lowercase().as_str(),
                        "percent" | "pct" | "percentage"
                    ) {
                        break;
                    }
                    words.push(w.clone());
                    self.pos += 1;
                }
                self.node(Expr::Word(words.join(" ")))?
            }
            Tok::Sym('(') => self.bracketed('(')?,
            Tok::Sym('[') => self.bracketed('[')?,
            Tok::Sym('{') => {
                if self.eat_sym('}') {
                    return Err("empty group".into());
                }
                let e = self.list()?;
                if !self.eat_sym('}') {
                    return Err("unclosed {".into());
                }
                match e {
                    Expr::List(items) => self.node(Expr::Braces(items))?,
                    e => e,
                }
            }
            Tok::SetOpen => {
                if self.peek() == Some(&Tok::SetClose) {
                    self.pos += 1;
                    return self.node(Expr::EmptySet);
                }
                let e = self.list()?;
                if self.peek() != Some(&Tok::SetClose) {
                    return Err("unclosed \\{".into());
                }
                self.pos += 1;
                match e {
                    Expr::List(items) => self.node(Expr::Set(items))?,
                    e => self.node(Expr::Set(vec![e]))?,
                }
            }
            Tok::Sym('|') => {
                self.abs += 1;
                let e = self.sum()?;
                self.abs -= 1;
                if !self.eat_sym('|') {
                    return Err("unclosed |".into());
                }
                self.node(Expr::Func(Func::Abs, vec![e]))?
            }
            Tok::Begin(env) => self.matrix(&env)?,
            Tok::Cmd(name) => self.command(&name)?,
            t => return Err(format!("unexpected {t:?}")),
        };
        self.depth -= 1;
        Ok(e)
    }

    /// `_ {..}` or `_x` as text (a variable name or a base).
    fn subscript_text(&mut self) -> Result<String, String> {
        let start = self.pos;
        let sub = self.arg()?;
        let _ = start;
        Ok(sub.to_string())
    }

    fn letters(&mut self, l: String) -> PResult {
        let lower = l.to_ascii_lowercase();
        if let Some(f) = Func::by_name(&l) {
            return self.function(f, &l);
        }
        match lower.as_str() {
            "pi" => return self.node(Expr::Const(Const::Pi)),
            "inf" | "infty" | "infinity" => return self.node(Expr::Const(Const::Inf)),
            _ => {}
        }
        if l.len() >= 3 || (l.len() == 2 && UNITS.contains(&lower.as_str())) {
            return self.node(Expr::Word(l));
        }
        // one letter (a longer run is re-read one letter at a time)
        if l.len() > 1 {
            self.pos -= 1;
            self.toks[self.pos] = Tok::Letters(l[1..].to_string());
            self.toks.insert(self.pos, Tok::Letters(l[..1].to_string()));
            if self.toks.len() > super::lex::MAX_TOKENS * 2 {
                return Err("too many tokens".into());
            }
            self.pos += 1;
        }
        let name = &l[..1];
        let mut v = letter(name);
        if let Expr::Var(n) = &mut v {
            if self.eat_sym('_') {
                n.push('_');
                n.push_str(&self.subscript_text()?);
            }
            while self.eat_sym('\'') {
                n.push('\'');
            }
        }
        self.node(v)
    }

    fn bracketed(&mut self, open: char) -> PResult {
        let e = self.list()?;
        let close = match self.peek() {
            Some(Tok::Sym(c @ (')' | ']'))) => *c,
            _ => return Err(format!("unclosed {open}")),
        };
        self.pos += 1;
        match e {
            Expr::List(items) => self.node(Expr::Tuple(open, close, items)),
            e if (open, close) == ('(', ')') || (open, close) == ('[', ']') => Ok(e),
            _ => Err("mismatched brackets around one item".into()),
        }
    }

    fn matrix(&mut self, env: &str) -> PResult {
        if env == "cases" {
            return self.cases();
        }
        if !matches!(
            env,
            "pmatrix"
                | "bmatrix"
                | "Bmatrix"
                | "vmatrix"
                | "Vmatrix"
                | "matrix"
                | "smallmatrix"
                | "array"
        ) {
            return Err(format!("environment {env}"));
        }
        let mut rows: Vec<Vec<Expr>> = Vec::new();
        let mut row: Vec<Expr> = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::End(e)) if e == env => {
                    self.pos += 1;
                    break;
                }
                Some(Tok::Row) => {
                    self.pos += 1;
                    if !row.is_empty() {
                        rows.push(std::mem::take(&mut row));
                    }
                }
                None => return Err(format!("unclosed {env}")),
                _ => {
                    row.push(self.setexpr()?);
                    if self.peek() == Some(&Tok::Amp) {
                        self.pos += 1;
                    }
                }
            }
        }
        if !row.is_empty() {
            rows.push(row);
        }
        if rows.is_empty() || rows.iter().any(|r| r.len() != rows[0].len()) {
            return Err("ragged matrix".into());
        }
        self.node(Expr::Matrix(rows))
    }

    /// `\begin{cases} x = 1 \\ y = 2 \end{cases}`: a system's solution, one value or
    /// relation a row, read as the list of its rows (`x = 1, y = 2`). Rows with a condition
    /// after `&` are a piecewise definition, which is not parsed (compared as text).
    fn cases(&mut self) -> PResult {
        let mut items = Vec::new();
        let mut cells_in_row = 0;
        loop {
            match self.peek() {
                Some(Tok::End(e)) if e == "cases" => {
                    self.pos += 1;
                    break;
                }
                Some(Tok::Row) => {
                    self.pos += 1;
                    cells_in_row = 0;
                }
                Some(Tok::Amp) => return Err("piecewise cases".into()),
                None => return Err("unclosed cases".into()),
                _ => {
                    if cells_in_row > 0 {
                        return Err("piecewise cases".into());
                    }
                    items.push(self.rel()?);
                    cells_in_row += 1;
                }
            }
        }
        match items.len() {
            0 => Err("empty cases".into()),
            1 => Ok(items.remove(0)),
            _ => self.node(Expr::List(items)),
        }
    }

    fn command(&mut self, name: &str) -> PResult {
        if let Some(f) = Func::by_name(name) {
            if f == Func::Sqrt {
                if self.eat_sym('[') {
                    let n = self.list()?;
                    if !self.eat_sym(']') {
                        return Err("unclosed root index".into());
                    }
                    let x = self.arg()?;
                    return self.node(Expr::Func(Func::Root, vec![n, x]));
                }
                let x = self.arg()?;
                return self.node(Expr::Func(Func::Sqrt, vec![x]));
            }
            return self.function(f, name);
        }
        match name {
            "frac" => {
                let n = self.arg()?;
                let d = self.arg()?;
                self.node(Expr::Div(Box::new(n), Box::new(d)))
            }
            "binom" => {
                let n = self.arg()?;
                let k = self.arg()?;
                self.node(Expr::Func(Func::Binom, vec![n, k]))
            }
            "pi" => self.node(Expr::Const(Const::Pi)),
            "infty" | "infin" => self.node(Expr::Const(Const::Inf)),
            "emptyset" => self.node(Expr::EmptySet),
            "dots" => self.node(Expr::Ellipsis),
            "circ" => Err("stray degree sign".into()),
            "mathbbR" => self.node(Expr::Var("ℝ".into())),
            "mid" | "pmod" | "bmod" | "mod" => Err(format!("\\{name}")),
            "floor" | "lfloor" => {
                let x = self.sum()?;
                if !(self.is_cmd("rfloor")) {
                    return Err("unclosed floor".into());
                }
                self.pos += 1;
                self.node(Expr::Func(Func::Floor, vec![x]))
            }
            "lceil" => {
                let x = self.sum()?;
                if !(self.is_cmd("rceil")) {
                    return Err("unclosed ceil".into());
                }
                self.pos += 1;
                self.node(Expr::Func(Func::Ceil, vec![x]))
            }
            _ => {
                // an unknown command: a symbol, with its braced arguments
                let mut args = Vec::new();
                while self.peek() == Some(&Tok::Sym('{')) && args.len() < 4 {
                    args.push(self.arg()?);
                }
                let mut e = if args.is_empty() {
                    Expr::Var(name.to_string())
                } else {
                    Expr::Apply(name.to_string(), args)
                };
                if let Expr::Var(n) = &mut e {
                    if self.eat_sym('_') {
                        n.push('_');
                        n.push_str(&self.subscript_text()?);
                    }
                }
                self.node(e)
            }
        }
    }

    /// A function: optional power and log base, then its argument.
    fn function(&mut self, f: Func, name: &str) -> PResult {
        let mut power = None;
        let mut base = None;
        for _ in 0..2 {
            if self.eat_sym('^') {
                power = Some(self.exponent()?);
            } else if self.eat_sym('_') {
                base = Some(self.arg()?);
            }
        }
        let arg = if matches!(self.peek(), Some(Tok::Sym('(' | '{' | '['))) {
            self.primary()?
        } else {
            // implicit product up to the next operator or function
            let mut factors = vec![self.power()?];
            while self.starts_factor() && !self.is_function_start() && factors.len() < 64 {
                if matches!(self.peek(), Some(Tok::Sym('(' | '['))) {
                    break; // `\sin x (1+x)`: the bracket is another factor
                }
                factors.push(self.power()?);
            }
            if factors.len() == 1 {
                factors.pop().expect("one")
            } else {
                self.node(Expr::Mul(factors))?
            }
        };
        let inverse =
            matches!(&power, Some(Expr::Neg(x)) if matches!(&**x, Expr::Num(n) if n.text == "1"));
        let (f, power) = if inverse {
            let inv = match f {
                Func::Sin => Func::Asin,
                Func::Cos => Func::Acos,
                Func::Tan => Func::Atan,
                _ => return Err("inverse of this function".into()),
            };
            (inv, None)
        } else {
            (f, power)
        };
        let call = match (f, name) {
            (Func::Ln, "log") | (Func::Ln, "lg") => {
                let b = base.unwrap_or(if name == "lg" {
                    Expr::Num(Num {
                        text: "10".into(),
                        base: None,
                    })
                } else {
                    Expr::Const(Const::E)
                });
                if b == Expr::Const(Const::E) {
                    Expr::Func(Func::Ln, vec![arg])
                } else {
                    Expr::Func(Func::LogB, vec![b, arg])
                }
            }
            _ => {
                if base.is_some() {
                    return Err("subscript on a function".into());
                }
                Expr::Func(f, vec![arg])
            }
        };
        let call = self.node(call)?;
        match power {
            Some(p) => self.node(Expr::Pow(Box::new(call), Box::new(p))),
            None => Ok(call),
        }
    }
}

/// One letter as a tree: `e` and `i` are constants, others variables.
fn letter(l: &str) -> Expr {
    match l {
        "e" => Expr::Const(Const::E),
        "i" => Expr::Const(Const::I),
        _ => Expr::Var(l.to_string()),
    }
}

impl fmt::Display for Expr {
    /// A prefix form: `(add (mul 2 x) 3)`, `(tuple "(]" 1 2)`, `(eq x 3)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn seq(f: &mut fmt::Formatter<'_>, head: &str, items: &[Expr]) -> fmt::Result {
            write!(f, "({head}")?;
            for x in items {
                write!(f, " {x}")?;
            }
            write!(f, ")")
        }
        match self {
            Expr::Num(n) => match &n.base {
                Some(b) => write!(f, "{}_{b}", n.text),
                None => write!(f, "{}", n.text),
            },
            Expr::Var(v) => write!(f, "{v}"),
            Expr::Word(w) => write!(f, "{w:?}"),
            Expr::Const(c) => write!(
                f,
                "{}",
                match c {
                    Const::Pi => "π",
                    Const::E => "e",
                    Const::I => "i",
                    Const::Inf => "∞",
                }
            ),
            Expr::Neg(x) => write!(f, "(neg {x})"),
            Expr::Add(v) => seq(f, "add", v),
            Expr::Mul(v) => seq(f, "mul", v),
            Expr::Div(a, b) => write!(f, "(div {a} {b})"),
            Expr::Pow(a, b) => write!(f, "(pow {a} {b})"),
            Expr::Func(g, v) => seq(f, g.name(), v),
            Expr::Apply(n, v) => seq(f, &format!("\\{n}"), v),
            Expr::PlusMinus(a, b, mp) => {
                let op = if *mp { "mp" } else { "pm" };
                match a {
                    Some(a) => write!(f, "({op} {a} {b})"),
                    None => write!(f, "({op} {b})"),
                }
            }
            Expr::Percent(x) => write!(f, "(percent {x})"),
            Expr::Degrees(x) => write!(f, "(degrees {x})"),
            Expr::Tuple(o, c, v) => seq(f, &format!("tuple\"{o}{c}\""), v),
            Expr::Set(v) => seq(f, "set", v),
            Expr::Braces(v) => seq(f, "braces", v),
            Expr::Matrix(rows) => {
                write!(f, "(matrix")?;
                for r in rows {
                    write!(f, " ")?;
                    seq(f, "row", r)?;
                }
                write!(f, ")")
            }
            Expr::Rel(members, ops) => {
                write!(f, "(rel {}", members[0])?;
                for (op, m) in ops.iter().zip(&members[1..]) {
                    write!(f, " {} {m}", op.sym())?;
                }
                write!(f, ")")
            }
            Expr::SetOp(op, v) => seq(
                f,
                match op {
                    SetOp::Union => "union",
                    SetOp::Inter => "intersect",
                    SetOp::Minus => "setminus",
                },
                v,
            ),
            Expr::List(v) => seq(f, "list", v),
            Expr::Ratio(v) => seq(f, "ratio", v),
            Expr::Ellipsis => write!(f, "..."),
            Expr::EmptySet => write!(f, "∅"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> String {
        match parse(&crate::math::normalize::prepare(s)) {
            Ok(e) => e.to_string(),
            Err(e) => format!("ERR {e}"),
        }
    }

    #[test]
    fn arithmetic_precedence() {
        assert_eq!(p("1+2*3"), "(add 1 (mul 2 3))");
        assert_eq!(p("2x^2-3"), "(add (mul 2 (pow x 2)) (neg 3))");
        assert_eq!(p("-x^2"), "(neg (pow x 2))");
        assert_eq!(p("2^3^2"), "(pow 2 (pow 3 2))");
        assert_eq!(p("a/b/c"), "(div (div a b) c)");
        assert_eq!(p("\\frac12"), "(div 1 2)");
        assert_eq!(p("\\dfrac{x+1}{2}"), "(div (add x 1) 2)");
        assert_eq!(p("2\\sqrt3"), "(mul 2 (sqrt 3))");
        assert_eq!(p("\\sqrt[3]{8}"), "(root 3 8)");
        assert_eq!(p("3!"), "(factorial 3)");
        assert_eq!(p("2\\frac{1}{2}"), "(add 2 (div 1 2))");
        assert_eq!(p("1 1/2"), "(add 1 (div 1 2))");
        assert_eq!(p("2\\frac{\\sqrt3}{2}"), "(mul 2 (div (sqrt 3) 2))");
    }

    #[test]
    fn functions_and_constants() {
        assert_eq!(p("\\sin 2x"), "(sin (mul 2 x))");
        assert_eq!(p("\\sin x \\cos x"), "(mul (sin x) (cos x))");
        assert_eq!(p("\\sin^2 x"), "(pow (sin x) 2)");
        assert_eq!(p("\\sin^{-1}(x)"), "(asin x)");
        assert_eq!(p("\\log_2 8"), "(log 2 8)");
        assert_eq!(p("e^{i\\pi}"), "(pow e (mul i π))");
        assert_eq!(p("90^\\circ"), "(degrees 90)");
        assert_eq!(p("90^{\\circ}"), "(degrees 90)");
        assert_eq!(p("|x-1|"), "(abs (add x (neg 1)))");
        assert_eq!(p("2|x|"), "(mul 2 (abs x))");
    }

    #[test]
    fn structures() {
        assert_eq!(p("(1, 2]"), "(tuple\"(]\" 1 2)");
        assert_eq!(p("\\{1,2\\}"), "(set 1 2)");
        assert_eq!(p("{1,2}"), "(braces 1 2)");
        assert_eq!(p("1, 2 and 3"), "(list 1 2 3)");
        assert_eq!(p("x \\geq 5"), "(rel x ≥ 5)");
        assert_eq!(p("0<f(x)<1"), "(rel 0 < (mul f x) < 1)");
        assert_eq!(p("V_1:V_2=11:21"), "(rel (ratio V_1 V_2) = (ratio 11 21))");
        assert_eq!(
            p("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}"),
            "(matrix (row 1 2) (row 3 4))"
        );
        assert_eq!(
            p("\\left[\\begin{array}{cc}1 & 2\\\\3 & 4\\end{array}\\right]"),
            "(matrix (row 1 2) (row 3 4))"
        );
        assert_eq!(
            p("(-\\infty, 3] \\cup (5, \\infty)"),
            "(union (tuple\"(]\" (neg ∞) 3) (tuple\"()\" 5 ∞))"
        );
        assert_eq!(p("4210_{7}"), "4210_7");
        assert_eq!(p("1 \\pm \\sqrt{19}"), "(pm 1 (sqrt 19))");
        assert_eq!(p("10\\text{ cm}^2"), "(mul 10 (pow \"cm\" 2))");
        assert_eq!(p("28 percent"), "(percent 28)");
        assert_eq!(p("\\text{Evelyn}"), "\"Evelyn\"");
        assert_eq!(p("\\lfloor m / 2\\rfloor"), "(floor (div m 2))");
        assert_eq!(p("1 - \\frac{1}{\\mathrm{e}}"), "(add 1 (neg (div 1 e)))");
        // set-builder notation of one variable with an inequality is its condition
        // (normalize::set_builder_condition); any other is not parsed
        assert_eq!(p("\\{x \\mid x > 0\\}"), p("x > 0"));
        assert!(p("\\{3k \\mid k \\in \\mathbb{Z}\\}").starts_with("ERR"));
        assert!(p("(1, 2").starts_with("ERR"));
    }
}
