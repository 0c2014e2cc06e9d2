//! Numbers: evaluation of a tree over the complex numbers, exact rationals, tolerances.
//!
//! - [`eval`]: a tree at given variable values, in `Complex64` (principal branches: `sqrt`,
//!   `ln`, `z^w = exp(w ln z)`; integer powers are exact products; an odd root of a
//!   negative real is the real root; degrees are `x·π/180`, percent `x/100`). None when
//!   the value is undefined, not finite, or the tree holds what has no value (words, sets).
//! - [`exact`]: the exact rational value (in `i128`) of trees made of integers, decimals,
//!   `+ − × ÷`, integer powers and percent; used where `f64` cannot tell numbers apart.
//! - Tolerances: two values are [`close`] when `|a − b| ≤ 1e-9·max(|a|, |b|) + 1e-12`.
//!   A decimal literal against an exact form (a fraction, a radical, π, ...) is
//!   [`decimal_matches`] when it is the exact value correctly rounded to the decimal's own
//!   number of significant digits, and it has at least [`MIN_DECIMAL_DIGITS`] of them:
//!   `0.0833333` rounds 1/12, `2.66667` 8/3, `3.14159` π, but `0.33` does not stand for 1/3,
//!   nor `3.14` for π, `13.287` for 3840/289, `2.6667` for 8/3 (five digits: a rounded
//!   answer, not the value). The comparison uses it for a gold written so (a rounded key),
//!   never for an answer ([`super::compare`]). A decimal against another decimal, or against an exact
//!   rational with a finite decimal form, is compared exactly (`3.3e12` ≠ `3.3e12+1`).

use num_complex::Complex64 as C;

use super::parse::{Const, Expr, Func};

/// Relative tolerance between two computed values.
pub const REL_TOL: f64 = 1e-9;
/// Fewest significant digits a decimal needs to stand for an exact value.
pub const MIN_DECIMAL_DIGITS: usize = 6;

/// Whether two computed complex values agree.
pub fn close(a: C, b: C) -> bool {
    if !(a.re.is_finite() && a.im.is_finite() && b.re.is_finite() && b.im.is_finite()) {
        return false;
    }
    (a - b).norm() <= 1e-12 + REL_TOL * a.norm().max(b.norm())
}

/// Whether two constant values (no variables) agree: within [`REL_TOL`] of the larger, and
/// only an exact zero against a value within 1e-12 of it (`\sin\pi` against 0). Unlike
/// [`close`] (the sample-point comparison of expressions, where a value computed near zero
/// carries rounding noise of the terms around it), two small constants are compared relatively:
/// `10^{-40}` is not `10^{-16}`, nor `6.6 \times 10^{-34}` `10^{-34}`.
pub fn same_constant(a: C, b: C) -> bool {
    if !(a.re.is_finite() && a.im.is_finite() && b.re.is_finite() && b.im.is_finite()) {
        return false;
    }
    let d = (a - b).norm();
    if a == C::new(0.0, 0.0) || b == C::new(0.0, 0.0) {
        return d <= 1e-12;
    }
    d <= REL_TOL * a.norm().max(b.norm())
}

/// The value of `e` with variables bound by `var` (None: unbound or undefined).
pub fn eval(e: &Expr, var: &dyn Fn(&str) -> Option<C>) -> Option<C> {
    let v = match e {
        Expr::Num(n) => {
            if n.base.is_some() {
                return None;
            }
            C::new(n.text.parse::<f64>().ok()?, 0.0)
        }
        Expr::Var(name) => var(name)?,
        Expr::Const(c) => match c {
            Const::Pi => C::new(std::f64::consts::PI, 0.0),
            Const::E => C::new(std::f64::consts::E, 0.0),
            Const::I => C::new(0.0, 1.0),
            Const::Inf => return None,
        },
        Expr::Neg(x) => -eval(x, var)?,
        Expr::Add(xs) => {
            let mut s = C::new(0.0, 0.0);
            for x in xs {
                s += eval(x, var)?;
            }
            s
        }
        Expr::Mul(xs) => {
            let mut s = C::new(1.0, 0.0);
            for x in xs {
                s *= eval(x, var)?;
            }
            s
        }
        Expr::Div(a, b) => {
            let d = eval(b, var)?;
            if d.norm() == 0.0 {
                return None;
            }
            eval(a, var)? / d
        }
        Expr::Pow(a, b) => pow(eval(a, var)?, eval(b, var)?)?,
        Expr::Func(f, args) => {
            let x = eval(args.first()?, var)?;
            match f {
                Func::Sin => x.sin(),
                Func::Cos => x.cos(),
                Func::Tan => x.tan(),
                Func::Sec => x.cos().inv(),
                Func::Csc => x.sin().inv(),
                Func::Cot => x.tan().inv(),
                Func::Asin => x.asin(),
                Func::Acos => x.acos(),
                Func::Atan => x.atan(),
                Func::Sinh => x.sinh(),
                Func::Cosh => x.cosh(),
                Func::Tanh => x.tanh(),
                Func::Ln => {
                    if x.norm() == 0.0 {
                        return None;
                    }
                    x.ln()
                }
                Func::LogB => {
                    let y = eval(args.get(1)?, var)?;
                    if x.norm() == 0.0 || y.norm() == 0.0 {
                        return None;
                    }
                    y.ln() / x.ln()
                }
                Func::Exp => x.exp(),
                Func::Sqrt => x.sqrt(),
                Func::Root => {
                    let y = eval(args.get(1)?, var)?;
                    root(x, y)?
                }
                Func::Abs => C::new(x.norm(), 0.0),
                Func::Floor => C::new(real(x)?.floor(), 0.0),
                Func::Ceil => C::new(real(x)?.ceil(), 0.0),
                Func::Factorial => C::new(factorial(real(x)?)?, 0.0),
                Func::Binom => {
                    let (n, k) = (real(x)?, real(eval(args.get(1)?, var)?)?);
                    C::new(binomial(n, k)?, 0.0)
                }
            }
        }
        Expr::Percent(x) => eval(x, var)? / 100.0,
        Expr::Degrees(x) => eval(x, var)? * (std::f64::consts::PI / 180.0),
        _ => return None,
    };
    (v.re.is_finite() && v.im.is_finite()).then_some(v)
}

/// The real part of `x` when its imaginary part is negligible (f64 rounding).
pub(crate) fn real(x: C) -> Option<f64> {
    (x.im.abs() <= 1e-12 * x.re.abs().max(1.0)).then_some(x.re)
}

/// `n!`: the product `1·2·…·n` for a whole `n` from 0 to 170 (past which f64 overflows), and
/// `Γ(n + 1)` for any other real `n` where it is finite. The Gamma function gives an expression
/// with the factorial of a variable (`\pm\frac{1}{n!}`) a value at the comparison's real sample
/// points, where the variable is not whole; at whole numbers the two agree, so two expressions
/// equal at every real point are equal at every whole one.
fn factorial(n: f64) -> Option<f64> {
    if n.fract() == 0.0 {
        if !(0.0..=170.0).contains(&n) {
            return None;
        }
        return Some((1..=n as u32).map(f64::from).product());
    }
    let g = libm::tgamma(n + 1.0);
    g.is_finite().then_some(g)
}

/// `\binom{n}{k}`: the product `n(n−1)…(n−k+1)/k!` for whole `0 ≤ k` and `0 ≤ n ≤ 10⁴`, and
/// `Γ(n+1) / (Γ(k+1) Γ(n−k+1))` for other real arguments of magnitude at most 170 where the three
/// are finite (sample points of a variable; at whole numbers the same value).
fn binomial(n: f64, k: f64) -> Option<f64> {
    if n.fract() == 0.0 && k.fract() == 0.0 {
        if k < 0.0 || !(0.0..=1e4).contains(&n) {
            return None;
        }
        let mut r = 1.0;
        for j in 0..(k as u32) {
            r = r * (n - j as f64) / (j as f64 + 1.0);
        }
        return Some(r);
    }
    if n.abs() > 170.0 || k.abs() > 170.0 {
        return None;
    }
    let [a, b, c] = [n + 1.0, k + 1.0, n - k + 1.0].map(libm::tgamma);
    let r = a / (b * c);
    (a.is_finite() && b.is_finite() && c.is_finite() && r.is_finite()).then_some(r)
}

fn pow(a: C, b: C) -> Option<C> {
    if b.im == 0.0 && b.re.fract() == 0.0 && b.re.abs() <= 1024.0 {
        if a.norm() == 0.0 && b.re < 0.0 {
            return None;
        }
        return Some(a.powi(b.re as i32));
    }
    if a.norm() == 0.0 {
        return (b.re > 0.0).then_some(C::new(0.0, 0.0));
    }
    // a negative real to a rational power p/q with q odd is real: (-8)^(1/3) = -2,
    // (-8)^(2/3) = 4 (the real-number convention, as for odd roots)
    if a.im == 0.0 && a.re < 0.0 && b.im == 0.0 {
        for q in [1u32, 3, 5, 7, 9] {
            let p = b.re * f64::from(q);
            if (p - p.round()).abs() < 1e-9 {
                let mag = (-a.re).powf(b.re);
                let odd = (p.round() as i64) % 2 != 0;
                return Some(C::new(if odd { -mag } else { mag }, 0.0));
            }
        }
    }
    Some(a.powc(b))
}

fn root(n: C, x: C) -> Option<C> {
    let n = real(n)?;
    if n == 0.0 {
        return None;
    }
    if x.im == 0.0 && x.re < 0.0 && n.fract() == 0.0 && (n as i64) % 2 != 0 {
        return Some(C::new(-(-x.re).powf(1.0 / n), 0.0));
    }
    pow(x, C::new(1.0 / n, 0.0))
}

/// An exact rational `num/den` (den > 0, reduced).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rat(pub i128, pub i128);

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

impl Rat {
    /// `n/d` in lowest terms with a positive denominator (None when `d` is 0).
    pub(crate) fn new(n: i128, d: i128) -> Option<Rat> {
        if d == 0 {
            return None;
        }
        let g = gcd(n, d).max(1);
        let s = if d < 0 { -1 } else { 1 };
        Some(Rat(s * n / g, s * d / g))
    }
    fn add(self, o: Rat) -> Option<Rat> {
        Rat::new(
            self.0
                .checked_mul(o.1)?
                .checked_add(o.0.checked_mul(self.1)?)?,
            self.1.checked_mul(o.1)?,
        )
    }
    fn mul(self, o: Rat) -> Option<Rat> {
        Rat::new(self.0.checked_mul(o.0)?, self.1.checked_mul(o.1)?)
    }
    fn div(self, o: Rat) -> Option<Rat> {
        Rat::new(self.0.checked_mul(o.1)?, self.1.checked_mul(o.0)?)
    }
    /// Magnitude as f64.
    pub fn to_f64(self) -> f64 {
        self.0 as f64 / self.1 as f64
    }
}

/// The exact value of a decimal literal `123.45` / `1.5e3`.
fn literal(text: &str) -> Option<Rat> {
    let (mant, exp) = match text.find(['e', 'E']) {
        Some(p) => (&text[..p], text[p + 1..].parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > 36 {
        return None;
    }
    let n: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    let scale = exp - frac.len() as i32;
    if scale.abs() > 36 {
        return None;
    }
    let p = 10i128.checked_pow(scale.unsigned_abs())?;
    if scale >= 0 {
        Rat::new(n.checked_mul(p)?, 1)
    } else {
        Rat::new(n, p)
    }
}

/// The exact rational value of `e`, when it has one that fits in `i128`.
pub fn exact(e: &Expr) -> Option<Rat> {
    match e {
        Expr::Num(n) if n.base.is_none() => literal(&n.text),
        Expr::Neg(x) => {
            let r = exact(x)?;
            Some(Rat(r.0.checked_neg()?, r.1))
        }
        Expr::Add(xs) => xs.iter().try_fold(Rat(0, 1), |acc, x| acc.add(exact(x)?)),
        Expr::Mul(xs) => xs.iter().try_fold(Rat(1, 1), |acc, x| acc.mul(exact(x)?)),
        Expr::Div(a, b) => exact(a)?.div(exact(b)?),
        Expr::Percent(x) => exact(x)?.div(Rat(100, 1)),
        Expr::Pow(a, b) => {
            let b = exact(b)?;
            if b.1 != 1 || b.0.abs() > 256 {
                return None;
            }
            let a = exact(a)?;
            let k = b.0.unsigned_abs() as u32;
            let p = Rat::new(a.0.checked_pow(k)?, a.1.checked_pow(k)?)?;
            if b.0 < 0 {
                Rat(1, 1).div(p)
            } else {
                Some(p)
            }
        }
        _ => None,
    }
}

/// Significant digits of a decimal literal (`0.0833` has 3, `2.6667` has 5).
pub fn significant_digits(text: &str) -> usize {
    let mant = text.split(['e', 'E']).next().unwrap_or("");
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    digits.trim_start_matches('0').len()
}

/// A decimal `d` (written with `digits` significant digits) against an exact value `v`:
/// whether `d` is `v` rounded to that many significant digits (see the module docs).
pub fn decimal_matches(d: f64, digits: usize, v: f64) -> bool {
    digits >= MIN_DECIMAL_DIGITS && rounds_to_digits(d, digits, v)
}

/// Whether `v` rounded to `digits` significant digits is `d` (within half a unit of `d`'s last
/// digit, as `v`'s magnitude places it), with no floor on `digits`.
pub fn rounds_to_digits(d: f64, digits: usize, v: f64) -> bool {
    if !d.is_finite() || !v.is_finite() || v == 0.0 {
        return false;
    }
    let unit = 10f64.powf(v.abs().log10().floor() - digits as f64 + 1.0);
    within_half(d, v, unit)
}

/// Whether `v` rounded to `places` decimal places is `d`.
pub fn rounds_to_places(d: f64, places: i32, v: f64) -> bool {
    d.is_finite() && v.is_finite() && within_half(d, v, 10f64.powi(-places))
}

/// `|d - v|` at most half of `unit` (with a relative slack of 1e-9 for the binary rounding of
/// the decimal itself).
fn within_half(d: f64, v: f64, unit: f64) -> bool {
    (d - v).abs() <= 0.5 * unit * (1.0 + 1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{normalize::prepare, parse::parse};

    fn val(s: &str) -> C {
        eval(&parse(&prepare(s)).unwrap(), &|_| None).unwrap()
    }

    #[test]
    fn values() {
        assert!(close(val("i(2-i)"), C::new(1.0, 2.0)));
        assert!(close(val("\\sqrt[3]{-8}"), C::new(-2.0, 0.0)));
        assert!(close(val("\\sin(90^\\circ)"), C::new(1.0, 0.0)));
        assert!(close(val("e^{i\\pi}"), C::new(-1.0, 0.0)));
        assert!(close(val("\\log_2 8"), C::new(3.0, 0.0)));
        assert!(close(val("50\\%"), C::new(0.5, 0.0)));
        assert!(close(val("5!"), C::new(120.0, 0.0)));
        assert!(close(val("\\binom{5}{2}"), C::new(10.0, 0.0)));
        assert!(eval(&parse("1/0").unwrap(), &|_| None).is_none());
    }

    #[test]
    fn exact_values() {
        let ex = |s: &str| exact(&parse(&prepare(s)).unwrap());
        assert_eq!(ex("2^{100}"), Some(Rat(1 << 100, 1)));
        assert_eq!(ex("0.125"), Some(Rat(1, 8)));
        assert_eq!(ex("\\frac{6}{4}"), Some(Rat(3, 2)));
        assert_eq!(ex("1.5e3"), Some(Rat(1500, 1)));
        assert_eq!(ex("2^{1009}"), None);
    }

    #[test]
    fn decimal_tolerance() {
        assert!(decimal_matches(2.66667, 6, 8.0 / 3.0));
        assert!(!decimal_matches(2.6667, 5, 8.0 / 3.0));
        assert!(!decimal_matches(10.82, 4, 3.0 * 13f64.sqrt()));
        let pi = std::f64::consts::PI;
        assert!(decimal_matches("3.14159".parse().unwrap(), 6, pi));
        assert!(!decimal_matches("3.14".parse().unwrap(), 3, pi));
        assert!(!decimal_matches(0.33, 2, 1.0 / 3.0));
        assert!(!decimal_matches(2.66668, 6, 8.0 / 3.0));
        assert_eq!(significant_digits("0.0833333"), 6);
    }
}
