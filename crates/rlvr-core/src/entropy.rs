//! The entropy of a next-token distribution, for the entropy bonus.
//!
//! ```text
//! p_j = softmax(z)_j,   H = -Σ_j p_j log p_j,   ∂H/∂z_j = -p_j (log p_j + H)
//! ```
//!
//! The bonus enters the per-token loss as `l_t -= entropy_coeff · H_t`. Its derivative is with
//! respect to the logits row `z` (entropy is a function of the whole distribution, not of the
//! sampled token's log-prob).

/// `(H, ∂H/∂z)` of the distribution `softmax(logits)`. Computed stably (max subtracted).
/// An empty row gives `(0, [])`.
pub fn entropy(logits: &[f64]) -> (f64, Vec<f64>) {
    if logits.is_empty() {
        return (0.0, Vec::new());
    }
    let max = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let log_z = max + logits.iter().map(|z| (z - max).exp()).sum::<f64>().ln();
    let logp: Vec<f64> = logits.iter().map(|z| z - log_z).collect();
    let h: f64 = -logp.iter().map(|lp| lp.exp() * lp).sum::<f64>();
    let grad = logp.iter().map(|lp| -lp.exp() * (lp + h)).collect();
    (h, grad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn uniform_is_log_v() {
        let (h, g) = entropy(&[0.3; 8]);
        assert!((h - 8f64.ln()).abs() < 1e-12);
        assert!(
            g.iter().all(|x| x.abs() < 1e-12),
            "uniform is a maximum: {g:?}"
        );
    }

    #[test]
    fn peaked_is_near_zero() {
        assert!(entropy(&[100.0, 0.0, 0.0]).0 < 1e-40);
    }

    proptest! {
        #[test]
        fn gradient_matches_finite_difference(z in prop::collection::vec(-5.0f64..5.0, 1..12), j in 0usize..12) {
            let j = j % z.len();
            let (_, g) = entropy(&z);
            let h = 1e-6;
            let (mut up, mut down) = (z.clone(), z.clone());
            up[j] += h;
            down[j] -= h;
            let num = (entropy(&up).0 - entropy(&down).0) / (2.0 * h);
            prop_assert!((num - g[j]).abs() < 1e-7, "fd {num} vs {}", g[j]);
        }
    }
}
