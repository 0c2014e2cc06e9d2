//! The lexer: an answer's text (already through [`super::normalize::prepare`]) as tokens.
//!
//! - digits with at most one `.` (and `.5`), with a scientific exponent `1.5e-3` / `2E5`
//!   when `e` is followed by digits: [`Tok::Num`];
//! - a run of ASCII letters: [`Tok::Letters`] (the parser splits it into variables or
//!   reads a function name, a connector or a word);
//! - `\text{..}`, `\textnormal{..}`, `\mathrm{..}`, `\mbox{..}` and friends: their content
//!   is lexed in text mode, where every run of letters is a [`Tok::Word`];
//! - `\name`: [`Tok::Cmd`] (aliases folded: `\dfrac` → `frac`, `\le` → `≤`, `\lvert` → `|`);
//!   layout commands (`\left`, `\right`, `\,`, `\quad`, `\displaystyle`, ...) are skipped;
//! - relations `= < > ≤ ≥ ≠ ≈ ∈ ∉` (also `<=`, `>=`, `!=`, `\geq`, `\lt`, ...): [`Tok::Rel`];
//! - `and`/`or` (in math or text mode): [`Tok::Conn`];
//! - `\\` row separator, `&`, `\{`, `\}`, `\begin{env}`, `\end{env}`, other characters
//!   as [`Tok::Sym`].

/// A relation symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Approx,
    In,
    NotIn,
}

impl RelOp {
    /// The relation read right to left (`<` ↔ `>`).
    pub fn flip(self) -> RelOp {
        match self {
            RelOp::Lt => RelOp::Gt,
            RelOp::Gt => RelOp::Lt,
            RelOp::Le => RelOp::Ge,
            RelOp::Ge => RelOp::Le,
            o => o,
        }
    }

    pub(super) fn sym(self) -> &'static str {
        match self {
            RelOp::Eq => "=",
            RelOp::Ne => "≠",
            RelOp::Lt => "<",
            RelOp::Le => "≤",
            RelOp::Gt => ">",
            RelOp::Ge => "≥",
            RelOp::Approx => "≈",
            RelOp::In => "∈",
            RelOp::NotIn => "∉",
        }
    }
}

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Num(String),
    Letters(String),
    Word(String),
    Cmd(String),
    Rel(RelOp),
    Conn,
    Row,
    Amp,
    SetOpen,
    SetClose,
    Begin(String),
    End(String),
    Sym(char),
}

/// Most tokens one answer may have (longer answers are not parsed).
pub const MAX_TOKENS: usize = 4_000;

/// Commands that wrap text (their argument is lexed in text mode).
const TEXT_CMDS: &[&str] = &[
    "text",
    "textnormal",
    "textrm",
    "textbf",
    "textit",
    "textsf",
    "texttt",
    "mathrm",
    "mathbf",
    "mathit",
    "mathsf",
    "mathtt",
    "mbox",
    "hbox",
    "emph",
    "mathnormal",
    "boldsymbol",
    "bm",
];

/// Commands dropped without a trace (layout and sizing).
const SKIP_CMDS: &[&str] = &[
    "left",
    "right",
    "big",
    "Big",
    "bigg",
    "Bigg",
    "bigl",
    "bigr",
    "Bigl",
    "Bigr",
    "biggl",
    "biggr",
    "displaystyle",
    "textstyle",
    "scriptstyle",
    "quad",
    "qquad",
    "boxed",
    "fbox",
    "limits",
    "nolimits",
    "middle",
    "hline",
    "medspace",
    "thinspace",
    "negthinspace",
    "phantom",
];

/// Lexes `s`; None past [`MAX_TOKENS`] or on an unbalanced `\text{`.
pub fn lex(s: &str) -> Option<Vec<Tok>> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    lex_into(&chars, false, &mut out)?;
    Some(out)
}

/// The end of the hexadecimal literal `0x...` starting at `c[i]`: `0x` or `0X`, one or more hex
/// digits, a whole word (no letter or digit right before or after it).
fn hex_literal(c: &[char], i: usize) -> Option<usize> {
    let whole_start = i == 0 || !c[i - 1].is_ascii_alphanumeric();
    if !(whole_start && c[i] == '0' && matches!(c.get(i + 1), Some('x' | 'X'))) {
        return None;
    }
    let end = (i + 2..c.len())
        .find(|&j| !c[j].is_ascii_hexdigit())
        .unwrap_or(c.len());
    let whole_end = c.get(end).is_none_or(|d| !d.is_ascii_alphanumeric());
    (end > i + 2 && whole_end).then_some(end)
}

fn lex_into(c: &[char], text: bool, out: &mut Vec<Tok>) -> Option<()> {
    let mut i = 0;
    while i < c.len() {
        if out.len() > MAX_TOKENS {
            return None;
        }
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
            continue;
        }
        // a hexadecimal literal `0x9c2` is its digits in base 16 (`9c2_{16}`), never 0 times
        // the letters `x9c2` (which compared every two literals equal)
        if let Some(end) = hex_literal(c, i) {
            let digits: String = c[i + 2..end].iter().collect();
            // the base braced, as `_{16}` (a bare `_16` subscripts the digit 1 alone)
            out.push(Tok::Num(digits.to_ascii_lowercase()));
            out.push(Tok::Sym('_'));
            out.push(Tok::Sym('{'));
            out.push(Tok::Num("16".into()));
            out.push(Tok::Sym('}'));
            i = end;
            continue;
        }
        if ch.is_ascii_digit() || (ch == '.' && c.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
            let start = i;
            while i < c.len() && c[i].is_ascii_digit() {
                i += 1;
            }
            if i < c.len() && c[i] == '.' && c.get(i + 1).is_some_and(|d| d.is_ascii_digit()) {
                i += 1;
                while i < c.len() && c[i].is_ascii_digit() {
                    i += 1;
                }
            }
            // scientific notation: e/E then optional sign then digits
            if i < c.len() && (c[i] == 'e' || c[i] == 'E') && !text {
                let mut j = i + 1;
                if j < c.len() && (c[j] == '+' || c[j] == '-') {
                    j += 1;
                }
                if j < c.len() && c[j].is_ascii_digit() {
                    while j < c.len() && c[j].is_ascii_digit() {
                        j += 1;
                    }
                    i = j;
                }
            }
            out.push(Tok::Num(c[start..i].iter().collect()));
            continue;
        }
        if ch.is_ascii_alphabetic() {
            let start = i;
            while i < c.len() && c[i].is_ascii_alphabetic() {
                i += 1;
            }
            let run: String = c[start..i].iter().collect();
            let lower = run.to_ascii_lowercase();
            if lower == "and" || lower == "or" {
                out.push(Tok::Conn);
            } else if text && run != "e" && run != "i" {
                // `\mathrm{e}`, `\mathrm{i}`: the constants; other text is words
                out.push(Tok::Word(run));
            } else {
                out.push(Tok::Letters(run));
            }
            continue;
        }
        if ch == '\\' {
            i += 1;
            let Some(&n) = c.get(i) else { break };
            if !n.is_ascii_alphabetic() {
                i += 1;
                // `\\frac` (a backslash doubled by escaping) before a known command is that
                // command; a row break directly followed by letters is rare enough
                if n == '\\' && doubled_command(&c[i..]) {
                    i -= 1;
                    continue;
                }
                match n {
                    '\\' => out.push(Tok::Row),
                    '{' => out.push(Tok::SetOpen),
                    '}' => out.push(Tok::SetClose),
                    '%' => out.push(Tok::Sym('%')),
                    '|' => out.push(Tok::Sym('|')),
                    // spacing: \, \; \: \! \  and escaped $ # &
                    ',' | ';' | ':' | '!' | ' ' | '$' | '#' => {}
                    '&' => out.push(Tok::Sym('&')),
                    _ => out.push(Tok::Sym(n)),
                }
                continue;
            }
            let start = i;
            while i < c.len() && c[i].is_ascii_alphabetic() {
                i += 1;
            }
            let name: String = c[start..i].iter().collect();
            if TEXT_CMDS.contains(&name.as_str()) {
                let (arg, end) = brace_arg(c, i)?;
                lex_into(arg, true, out)?;
                i = end;
                continue;
            }
            if name == "operatorname" {
                let (arg, end) = brace_arg(c, i)?;
                out.push(Tok::Cmd(arg.iter().filter(|c| c.is_alphabetic()).collect()));
                i = end;
                continue;
            }
            if name == "mathbb" || name == "mathcal" || name == "mathfrak" {
                let (arg, end) = brace_arg(c, i)?;
                let inner: String = arg.iter().filter(|c| !c.is_whitespace()).collect();
                out.push(Tok::Cmd(format!("{name}{inner}")));
                i = end;
                continue;
            }
            if name == "begin" || name == "end" {
                let (arg, end) = brace_arg(c, i)?;
                let env: String = arg.iter().collect::<String>().trim().to_string();
                i = end;
                if name == "begin" {
                    // array column spec {cc} / {c|c}
                    if env == "array" && c.get(i) == Some(&'{') {
                        i = brace_arg(c, i)?.1;
                    }
                    out.push(Tok::Begin(env));
                } else {
                    out.push(Tok::End(env));
                }
                continue;
            }
            if SKIP_CMDS.contains(&name.as_str()) {
                // `\left.` / `\right.` leave an invisible delimiter
                if (name == "left" || name == "right") && c.get(i) == Some(&'.') {
                    i += 1;
                }
                continue;
            }
            if name == "hspace" || name == "vspace" || name == "mathstrut" {
                if c.get(i) == Some(&'{') {
                    i = brace_arg(c, i)?.1;
                }
                continue;
            }
            // a Greek letter glued to the letters after it, in a gold that lost its spaces
            // (`\pic^{2}` is `\pi c^{2}`, `\omegat` is `\omega t`, `\lambdakT` is `\lambda kT`)
            if let Some((greek, rest)) = glued_greek(&name) {
                out.push(cmd_token(greek));
                out.push(Tok::Letters(rest.to_string()));
                continue;
            }
            out.push(cmd_token(&name));
            continue;
        }
        i += 1;
        let next = c.get(i).copied();
        let tok = match ch {
            '<' if next == Some('=') => {
                i += 1;
                Tok::Rel(RelOp::Le)
            }
            '>' if next == Some('=') => {
                i += 1;
                Tok::Rel(RelOp::Ge)
            }
            '!' if next == Some('=') => {
                i += 1;
                Tok::Rel(RelOp::Ne)
            }
            // Python's and SymPy's power (`X**7/3`, `(5 - 3*x)**(3/2)`; Markdown's bold markers
            // are gone by now: `normalize::without_emphasis`)
            '*' if next == Some('*') => {
                i += 1;
                Tok::Sym('^')
            }
            '=' if next == Some('>') => {
                i += 1;
                Tok::Sym('⇒')
            }
            '=' => Tok::Rel(RelOp::Eq),
            '<' => Tok::Rel(RelOp::Lt),
            '>' => Tok::Rel(RelOp::Gt),
            '≤' | '⩽' => Tok::Rel(RelOp::Le),
            '≥' | '⩾' => Tok::Rel(RelOp::Ge),
            '≠' => Tok::Rel(RelOp::Ne),
            '≈' => Tok::Rel(RelOp::Approx),
            '∈' => Tok::Rel(RelOp::In),
            '&' => Tok::Amp,
            '{' => Tok::Sym('{'),
            '}' => Tok::Sym('}'),
            '−' | '–' => Tok::Sym('-'),
            '×' | '·' | '⋅' => Tok::Sym('*'),
            // division sign, fraction slash (`π⁄4`), division slash
            '÷' | '⁄' | '∕' => Tok::Sym('/'),
            '±' => Tok::Cmd("pm".into()),
            'π' => Tok::Cmd("pi".into()),
            // other Greek letters as their LaTeX commands (`y(τ)` is `y(\tau)`)
            c if greek_name(c).is_some() => Tok::Cmd(greek_name(c).unwrap_or_default().into()),
            '∞' => Tok::Cmd("infty".into()),
            '√' => Tok::Cmd("sqrt".into()),
            '°' => Tok::Cmd("circ".into()),
            '∪' => Tok::Cmd("cup".into()),
            '∩' => Tok::Cmd("cap".into()),
            '’' | '′' => Tok::Sym('\''),
            '~' => continue,
            _ => Tok::Sym(ch),
        };
        out.push(tok);
    }
    Some(())
}

/// The content of the `{..}` group at `c[i]` (after spaces) and the index after it; a
/// missing group is an empty argument.
fn brace_arg(c: &[char], mut i: usize) -> Option<(&[char], usize)> {
    while i < c.len() && c[i] == ' ' {
        i += 1;
    }
    if c.get(i) != Some(&'{') {
        return Some((&c[i..i], i));
    }
    let mut depth = 0usize;
    let mut j = i;
    while j < c.len() {
        match c[j] {
            '\\' => j += 1,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&c[i + 1..j], j + 1));
                }
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// The lowercase Greek letters' names in Unicode order from `α` (`ς` as `varsigma`).
pub(crate) const GREEK_LETTERS: [&str; 25] = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "varsigma", "sigma", "tau", "upsilon",
    "phi", "chi", "psi", "omega",
];

/// A control word that is a Greek letter's name followed by 1 to 3 more letters (`pic` →
/// `("pi", "c")`, `Deltax` → `("Delta", "x")`), when it is no command in itself: not an alias
/// of [`cmd_alias`], not a letter's name, not an upright variant (`alphaup`).
fn glued_greek(name: &str) -> Option<(&'static str, &str)> {
    // the letters' names in Unicode order, then the variant and capital commands
    const MORE: [&str; 12] = [
        "varepsilon",
        "vartheta",
        "varphi",
        "Gamma",
        "Delta",
        "Theta",
        "Lambda",
        "Xi",
        "Pi",
        "Sigma",
        "Phi",
        "Omega",
    ];
    let names = || GREEK_LETTERS.iter().chain(&MORE);
    if cmd_alias(name).is_some() || names().any(|n| *n == name) || name.ends_with("up") {
        return None;
    }
    names()
        .filter(|g| name.len() > g.len() && name.len() <= g.len() + 3 && name.starts_with(*g))
        .max_by_key(|g| g.len())
        .map(|g| (*g, &name[g.len()..]))
}

/// The token of a command (aliases folded).
fn cmd_token(name: &str) -> Tok {
    cmd_alias(name).unwrap_or_else(|| Tok::Cmd(name.to_string()))
}

fn cmd_alias(name: &str) -> Option<Tok> {
    let rel = |r| Some(Tok::Rel(r));
    match name {
        "le" | "leq" | "leqslant" | "leqq" => rel(RelOp::Le),
        "ge" | "geq" | "geqslant" | "geqq" => rel(RelOp::Ge),
        "lt" => rel(RelOp::Lt),
        "gt" => rel(RelOp::Gt),
        "ne" | "neq" => rel(RelOp::Ne),
        "approx" | "simeq" | "thickapprox" => rel(RelOp::Approx),
        "in" => rel(RelOp::In),
        "notin" => rel(RelOp::NotIn),
        "dfrac" | "tfrac" | "cfrac" | "frac" => Some(Tok::Cmd("frac".into())),
        "dbinom" | "tbinom" | "binom" => Some(Tok::Cmd("binom".into())),
        "lvert" | "rvert" | "vert" => Some(Tok::Sym('|')),
        "lVert" | "rVert" | "Vert" => Some(Tok::Sym('|')),
        "lbrace" => Some(Tok::SetOpen),
        "rbrace" => Some(Tok::SetClose),
        "lbrack" => Some(Tok::Sym('[')),
        "rbrack" => Some(Tok::Sym(']')),
        "langle" => Some(Tok::Sym('(')),
        "rangle" => Some(Tok::Sym(')')),
        "colon" => Some(Tok::Sym(':')),
        "ast" | "cdot" | "times" => Some(Tok::Sym('*')),
        "div" => Some(Tok::Sym('/')),
        "prime" => Some(Tok::Sym('\'')),
        "degree" => Some(Tok::Cmd("circ".into())),
        "land" | "wedge" => Some(Tok::Conn),
        "dots" | "ldots" | "cdots" | "dotsc" | "dotsb" | "dotsm" => Some(Tok::Cmd("dots".into())),
        "varnothing" | "emptyset" => Some(Tok::Cmd("emptyset".into())),
        "varepsilon" => Some(Tok::Cmd("epsilon".into())),
        "varphi" => Some(Tok::Cmd("phi".into())),
        "vartheta" => Some(Tok::Cmd("theta".into())),
        "to" | "rightarrow" | "Rightarrow" | "implies" | "iff" | "Leftrightarrow" => {
            Some(Tok::Sym('⇒'))
        }
        "percent" => Some(Tok::Sym('%')),
        _ => None,
    }
}

/// Whether `rest` starts with one of the commands that escaped answers double (`\\left`).
fn doubled_command(rest: &[char]) -> bool {
    const CMDS: &[&str] = &[
        "frac", "dfrac", "tfrac", "left", "right", "sqrt", "le", "ge", "leq", "geq", "pi", "text",
        "boxed", "cdot", "infty", "neq", "times", "in", "cup",
    ];
    let name: String = rest
        .iter()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    CMDS.contains(&name.as_str())
}

/// The LaTeX name of a lower-case Greek letter written as itself (`τ` → `tau`); `π` is the
/// constant, lexed on its own.
fn greek_name(c: char) -> Option<&'static str> {
    let i = (c as u32).checked_sub('α' as u32)? as usize;
    GREEK_LETTERS
        .get(i)
        .copied()
        .filter(|&n| n != "pi" && n != "omicron")
}
