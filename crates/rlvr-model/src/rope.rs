//! Rotary position embedding (RoPE): the inverse frequencies a checkpoint's config describes,
//! with their scaling, and the cos / sin tables every forward path reads.
//!
//! Computed once per model from [`crate::DecoderConfig`] ([`inv_freq`]) and in the order and
//! precision transformers uses (`modeling_rope_utils.py`), so that a checkpoint's angles are
//! transformers' angles bit for bit.

/// How RoPE's frequencies are scaled: transformers' `rope_type` in `rope_parameters` (version 5)
/// or `rope_scaling` (version 4). The kinds that change the frequencies with the sequence length
/// (`dynamic`, `yarn`, `longrope`) are refused when config.json is read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RopeScaling {
    /// `default`: `inv_freq_i = 1 / theta^(2i / d)` for `i < d / 2` (`d` the head dimension).
    Default,
    /// `linear`: the default frequencies divided by `factor` (positions interpolated).
    Linear {
        /// `factor`, at least 1.
        factor: f64,
    },
    /// `llama3` (Llama 3.1, 3.2, 3.3): with `L` = `original_max_position_embeddings`, each
    /// default frequency `f` of wavelength `λ = 2π / f` is
    /// - kept when `λ < L / high_freq_factor`,
    /// - divided by `factor` when `λ > L / low_freq_factor`,
    /// - otherwise `(1 - s) f / factor + s f` with `s = (L / λ - low_freq_factor) /
    ///   (high_freq_factor - low_freq_factor)`.
    Llama3 {
        /// `factor`, at least 1.
        factor: f64,
        /// `low_freq_factor`.
        low_freq_factor: f64,
        /// `high_freq_factor`, larger than `low_freq_factor`.
        high_freq_factor: f64,
        /// `original_max_position_embeddings` (`L`).
        original_max_position_embeddings: usize,
    },
}

impl RopeScaling {
    /// The `rope_type` name transformers uses.
    pub fn rope_type(&self) -> &'static str {
        match self {
            RopeScaling::Default => "default",
            RopeScaling::Linear { .. } => "linear",
            RopeScaling::Llama3 { .. } => "llama3",
        }
    }

    /// The factor the frequencies are divided by (at most), None for the default.
    pub fn factor(&self) -> Option<f64> {
        match *self {
            RopeScaling::Default => None,
            RopeScaling::Linear { factor } | RopeScaling::Llama3 { factor, .. } => Some(factor),
        }
    }

    /// Its keys as transformers writes them in `rope_parameters` (without `rope_theta`).
    pub fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("rope_type".into(), self.rope_type().into());
        match *self {
            RopeScaling::Default => {}
            RopeScaling::Linear { factor } => {
                m.insert("factor".into(), factor.into());
            }
            RopeScaling::Llama3 {
                factor,
                low_freq_factor,
                high_freq_factor,
                original_max_position_embeddings,
            } => {
                m.insert("factor".into(), factor.into());
                m.insert("low_freq_factor".into(), low_freq_factor.into());
                m.insert("high_freq_factor".into(), high_freq_factor.into());
                m.insert(
                    "original_max_position_embeddings".into(),
                    original_max_position_embeddings.into(),
                );
            }
        }
        m
    }
}

/// The inverse frequencies of one head, `d / 2` of them (`d = head_dim`, even):
/// `f_i = 1 / theta^(2i / d)`, then scaled as [`RopeScaling`] says.
///
/// Arithmetic in f32 in transformers' order: the exponent `(2i as f32) / d`, the power of `theta`
/// taken in f32, the wavelength `2π / f` in f32, and the Python-float bounds (`L / factor`)
/// rounded to f32 where torch compares them with f32 tensors.
pub fn inv_freq(theta: f64, head_dim: usize, scaling: &RopeScaling) -> Vec<f32> {
    let d = head_dim as f32;
    let base = theta as f32;
    let default = (0..head_dim / 2).map(|i| 1.0 / base.powf((2 * i) as f32 / d));
    match *scaling {
        RopeScaling::Default => default.collect(),
        RopeScaling::Linear { factor } => default.map(|f| f / factor as f32).collect(),
        RopeScaling::Llama3 {
            factor,
            low_freq_factor,
            high_freq_factor,
            original_max_position_embeddings,
        } => {
            let old = original_max_position_embeddings as f64;
            let low_wavelen = (old / low_freq_factor) as f32;
            let high_wavelen = (old / high_freq_factor) as f32;
            let (factor, low, high) = (
                factor as f32,
                low_freq_factor as f32,
                high_freq_factor as f32,
            );
            default
                .map(|f| {
                    let wavelen = (2.0 * std::f64::consts::PI) as f32 / f;
                    let scaled = if wavelen > low_wavelen { f / factor } else { f };
                    if wavelen < high_wavelen || wavelen > low_wavelen {
                        return scaled;
                    }
                    let smooth = (old as f32 / wavelen - low) / (high - low);
                    (1.0 - smooth) * scaled / factor + smooth * scaled
                })
                .collect()
        }
    }
}

/// RoPE tables `[positions, head_dim]` in the rotate-half layout: each half of a row holds
/// `p * inv_freq[i]`'s cos or sin, the angle and its cos / sin taken in f32 (as transformers
/// does), widened to f64 for the CPU kernels. Every device path's tables come from here.
pub(crate) fn cos_sin(inv_freq: &[f32], positions: &[u32]) -> (Vec<f64>, Vec<f64>) {
    let n = positions.len() * 2 * inv_freq.len();
    let (mut cos, mut sin) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for &p in positions {
        for _half in 0..2 {
            for &f in inv_freq {
                let a = p as f32 * f;
                cos.push(a.cos() as f64);
                sin.push(a.sin() as f64);
            }
        }
    }
    (cos, sin)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Llama 3.2-1B's settings (theta 500,000, head 64, factor 32, low 1, high 4, L 8192),
    /// computed by hand from the formula for three frequencies, one in each branch.
    #[test]
    fn llama3_branches_by_hand() {
        let s = RopeScaling::Llama3 {
            factor: 32.0,
            low_freq_factor: 1.0,
            high_freq_factor: 4.0,
            original_max_position_embeddings: 8192,
        };
        let plain = inv_freq(500_000.0, 64, &RopeScaling::Default);
        let scaled = inv_freq(500_000.0, 64, &s);
        assert_eq!(plain.len(), 32);
        let wavelen = |f: f32| 2.0 * std::f64::consts::PI / f as f64;
        let mut seen = [false; 3];
        for (&f, &g) in plain.iter().zip(&scaled) {
            let w = wavelen(f);
            let f = f as f64;
            let want = if w < 2048.0 {
                seen[0] = true;
                f
            } else if w > 8192.0 {
                seen[2] = true;
                f / 32.0
            } else {
                seen[1] = true;
                let s = (8192.0 / w - 1.0) / 3.0;
                (1.0 - s) * f / 32.0 + s * f
            };
            assert!(
                ((g as f64) - want).abs() <= 1e-6 * want,
                "wavelength {w}: {g} against {want}"
            );
        }
        assert_eq!(seen, [true; 3], "every branch is met");
    }

    #[test]
    fn linear_divides_every_frequency() {
        let plain = inv_freq(10_000.0, 16, &RopeScaling::Default);
        let lin = inv_freq(10_000.0, 16, &RopeScaling::Linear { factor: 4.0 });
        for (f, g) in plain.iter().zip(&lin) {
            assert_eq!(*g, f / 4.0);
        }
        assert_eq!(plain[0], 1.0);
        assert!((plain[1] - 10_000f32.powf(-0.125)).abs() < 1e-7);
    }
}
