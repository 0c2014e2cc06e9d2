//! The reference decoder the model's forward and backward are checked against: the
//! transformers computation written out in plain candle ops, differentiated by autograd.
//!
//! It reads the weights of a [`candle_nn::VarMap`] by their Hugging Face names, so gradients
//! of its outputs are keyed by the same variables as the model's. Per layer, with RMSNorm
//! `w * x / sqrt(mean(x^2) + eps)` computed in f32 (f64 for an f64 model), rotate-half RoPE,
//! grouped-query attention with transformers' `repeat_kv` order, scores and softmax in f32,
//! and SwiGLU: `h = x + o_proj(attn(rms(x)))`, `y = h + down(silu(gate(rms(h))) * up(rms(h)))`.
//! Key `j` is visible to query `i` when `j == i`, or `j < i` and `j` is not a padding key.
//! Nothing is chunked or fused: it keeps `[B, heads, T, T]` scores and `[B, T, vocab]`
//! logits, which is fine at test sizes.

use candle_core::{DType, Device, Tensor, D};
use rlvr_model::{DecoderConfig, ResponseLogProbs, TokenBatch};

/// The dtype of norms, scores and log-softmax: f64 for an f64 model, else f32.
fn upcast(dtype: DType) -> DType {
    if dtype == DType::F64 {
        DType::F64
    } else {
        DType::F32
    }
}

/// Softmax over the last dimension, the subtracted max detached (it cancels).
fn softmax(xs: &Tensor) -> Tensor {
    let max = xs.max_keepdim(D::Minus1).unwrap().detach();
    let e = xs.broadcast_sub(&max).unwrap().exp().unwrap();
    e.broadcast_div(&e.sum_keepdim(D::Minus1).unwrap()).unwrap()
}

/// Log-softmax over the last dimension (max detached).
fn log_softmax(xs: &Tensor) -> Tensor {
    let max = xs.max_keepdim(D::Minus1).unwrap().detach();
    let shifted = xs.broadcast_sub(&max).unwrap();
    let lse = shifted
        .exp()
        .unwrap()
        .sum_keepdim(D::Minus1)
        .unwrap()
        .log()
        .unwrap();
    shifted.broadcast_sub(&lse).unwrap()
}

/// The plain autograd decoder over the variables of a `VarMap`.
pub struct Reference {
    cfg: DecoderConfig,
    weights: std::collections::HashMap<String, Tensor>,
    dtype: DType,
    device: Device,
}

impl Reference {
    /// The decoder of `cfg` over `varmap`'s variables (attached: autograd reaches them).
    pub fn new(cfg: &DecoderConfig, varmap: &candle_nn::VarMap) -> Self {
        let data = varmap.data().lock().unwrap();
        let weights: std::collections::HashMap<String, Tensor> = data
            .iter()
            .map(|(n, v)| (n.clone(), v.as_tensor().clone()))
            .collect();
        let embed = &weights["model.embed_tokens.weight"];
        Self {
            cfg: cfg.clone(),
            dtype: embed.dtype(),
            device: embed.device().clone(),
            weights,
        }
    }

    fn w(&self, name: &str) -> &Tensor {
        self.weights
            .get(name)
            .unwrap_or_else(|| panic!("reference: no weight {name}"))
    }

    /// `x W^T + b` over the last dimension of `[B, T, in]`.
    fn linear(&self, x: &Tensor, name: &str) -> Tensor {
        let y = x.broadcast_matmul(&self.w(&format!("{name}.weight")).t().unwrap());
        let y = y.unwrap();
        match self.weights.get(&format!("{name}.bias")) {
            Some(b) => y.broadcast_add(b).unwrap(),
            None => y,
        }
    }

    fn rms_norm(&self, x: &Tensor, weight: &str) -> Tensor {
        let x32 = x.to_dtype(upcast(self.dtype)).unwrap();
        let ms = x32.sqr().unwrap().mean_keepdim(D::Minus1).unwrap();
        let normed = x32
            .broadcast_div(&(ms + self.cfg.rms_norm_eps).unwrap().sqrt().unwrap())
            .unwrap()
            .to_dtype(self.dtype)
            .unwrap();
        normed.broadcast_mul(self.w(weight)).unwrap()
    }

    /// `x cos + rotate_half(x) sin` on `[B, heads, T, hd]`, positions `0..T`.
    fn rope(&self, x: &Tensor) -> Tensor {
        let (_, _, t, hd) = x.dims4().unwrap();
        let half = hd / 2;
        let (mut cos, mut sin) = (Vec::new(), Vec::new());
        for p in 0..t {
            for _ in 0..2 {
                for i in 0..half {
                    let f = reference_inv_freq(&self.cfg, i, hd);
                    let a = p as f32 * f;
                    cos.push(a.cos());
                    sin.push(a.sin());
                }
            }
        }
        let table = |v: Vec<f32>| {
            Tensor::from_vec(v, (1, 1, t, hd), &self.device)
                .unwrap()
                .to_dtype(self.dtype)
                .unwrap()
        };
        let (cos, sin) = (table(cos), table(sin));
        let x1 = x.narrow(3, 0, half).unwrap();
        let x2 = x.narrow(3, half, half).unwrap();
        let rotated = Tensor::cat(&[&x2.neg().unwrap(), &x1], 3).unwrap();
        (x.broadcast_mul(&cos).unwrap() + rotated.broadcast_mul(&sin).unwrap()).unwrap()
    }

    /// Additive mask `[B, 1, T, T]` in the upcast dtype from `[B, T]` key flags.
    fn mask(&self, key_ok: &[Vec<bool>]) -> Tensor {
        let (b, t) = (key_ok.len(), key_ok[0].len());
        let mut m = vec![0f32; b * t * t];
        for (r, ok) in key_ok.iter().enumerate() {
            for i in 0..t {
                for j in 0..t {
                    if !(j == i || (j < i && ok[j])) {
                        m[(r * t + i) * t + j] = -1e9;
                    }
                }
            }
        }
        Tensor::from_vec(m, (b, 1, t, t), &self.device)
            .unwrap()
            .to_dtype(upcast(self.dtype))
            .unwrap()
    }

    /// Final hidden states `[B, T, H]`; `attention_mask` `[B, T]` (1 token, 0 padding),
    /// positions `0..T` in every row.
    pub fn hidden_states(&self, input_ids: &Tensor, attention_mask: &Tensor) -> Tensor {
        let cfg = &self.cfg;
        let (b, t) = input_ids.dims2().unwrap();
        let (nh, kvh, hd) = (
            cfg.num_attention_heads,
            cfg.num_key_value_heads,
            cfg.head_dim,
        );
        let key_ok: Vec<Vec<bool>> = attention_mask
            .to_dtype(DType::U32)
            .unwrap()
            .to_vec2::<u32>()
            .unwrap()
            .iter()
            .map(|r| r.iter().map(|&x| x != 0).collect())
            .collect();
        let mask = self.mask(&key_ok);
        let mut xs = self
            .w("model.embed_tokens.weight")
            .embedding(&input_ids.flatten_all().unwrap())
            .unwrap()
            .reshape((b, t, cfg.hidden_size))
            .unwrap();
        let heads = |x: Tensor, n: usize| {
            x.reshape((b, t, n, hd))
                .unwrap()
                .transpose(1, 2)
                .unwrap()
                .contiguous()
                .unwrap()
        };
        for li in 0..cfg.num_hidden_layers {
            let p = format!("model.layers.{li}");
            let x = self.rms_norm(&xs, &format!("{p}.input_layernorm.weight"));
            let a = format!("{p}.self_attn");
            let mut q = heads(self.linear(&x, &format!("{a}.q_proj")), nh);
            let mut k = heads(self.linear(&x, &format!("{a}.k_proj")), kvh);
            let v = heads(self.linear(&x, &format!("{a}.v_proj")), kvh);
            if cfg.qk_norm {
                q = self.rms_norm(&q, &format!("{a}.q_norm.weight"));
                k = self.rms_norm(&k, &format!("{a}.k_norm.weight"));
            }
            let (q, k) = (self.rope(&q), self.rope(&k));
            // repeat_kv: query head h reads kv head h / (heads / kv_heads)
            let repeat = |x: &Tensor| {
                let g = nh / kvh;
                Tensor::cat(&vec![x; g], 2)
                    .unwrap()
                    .reshape((b, kvh * g, t, hd))
                    .unwrap()
            };
            let (k, v) = (repeat(&k), repeat(&v));
            let scores = (q.matmul(&k.t().unwrap()).unwrap() / (hd as f64).sqrt())
                .unwrap()
                .to_dtype(upcast(self.dtype))
                .unwrap()
                .broadcast_add(&mask)
                .unwrap();
            let probs = softmax(&scores).to_dtype(self.dtype).unwrap();
            let attn = probs
                .matmul(&v)
                .unwrap()
                .transpose(1, 2)
                .unwrap()
                .reshape((b, t, nh * hd))
                .unwrap();
            xs = (xs + self.linear(&attn, &format!("{a}.o_proj"))).unwrap();
            let x = self.rms_norm(&xs, &format!("{p}.post_attention_layernorm.weight"));
            let m = format!("{p}.mlp");
            let gate = self.linear(&x, &format!("{m}.gate_proj")).silu().unwrap();
            let up = self.linear(&x, &format!("{m}.up_proj"));
            let down = self.linear(&(gate * up).unwrap(), &format!("{m}.down_proj"));
            xs = (xs + down).unwrap();
        }
        self.rms_norm(&xs, "model.norm.weight")
    }

    /// Logits `[B, T, vocab]` of every position.
    pub fn logits(&self, input_ids: &Tensor, attention_mask: &Tensor) -> Tensor {
        let head = if self.cfg.tie_word_embeddings {
            "model.embed_tokens.weight"
        } else {
            "lm_head.weight"
        };
        self.hidden_states(input_ids, attention_mask)
            .broadcast_matmul(&self.w(head).t().unwrap())
            .unwrap()
    }

    /// Log-probs and entropies `[B, R]` (0 at padding) of the response tokens of `batch` under
    /// `softmax(logits / temperature)`, differentiable with respect to every weight.
    pub fn response_logprobs(&self, batch: &TokenBatch, temperature: f64) -> ResponseLogProbs {
        let (b, t) = batch.input_ids.dims2().unwrap();
        let r = batch.max_response_len();
        let up = upcast(self.dtype);
        let logits = self.logits(&batch.input_ids, &batch.attention_mask);
        let v = logits.dim(2).unwrap();
        let logp = log_softmax(
            &(logits.reshape((b * t, v)).unwrap().to_dtype(up).unwrap() / temperature).unwrap(),
        );
        let ent = (logp.exp().unwrap() * &logp)
            .unwrap()
            .sum(1)
            .unwrap()
            .neg()
            .unwrap();
        let ids = batch.input_ids.to_vec2::<u32>().unwrap();
        let (mut rows, mut flat, mut valid) = (Vec::new(), Vec::new(), Vec::new());
        for (i, row) in ids.iter().enumerate() {
            let (start, len) = (batch.response_start[i], batch.response_len[i]);
            for k in 0..r {
                let ok = k < len;
                let pos = if ok { i * t + start - 1 + k } else { 0 };
                rows.push(pos as u32);
                flat.push((pos * v) as u32 + if ok { row[start + k] } else { 0 });
                valid.push(if ok { 1f32 } else { 0f32 });
            }
        }
        let n = rows.len();
        let valid = Tensor::from_vec(valid, (b, r), &self.device)
            .unwrap()
            .to_dtype(up)
            .unwrap();
        let lp = logp
            .flatten_all()
            .unwrap()
            .index_select(&Tensor::from_vec(flat, n, &self.device).unwrap(), 0)
            .unwrap()
            .reshape((b, r))
            .unwrap();
        let ent = ent
            .index_select(&Tensor::from_vec(rows, n, &self.device).unwrap(), 0)
            .unwrap()
            .reshape((b, r))
            .unwrap();
        ResponseLogProbs {
            logprobs: (lp * &valid).unwrap(),
            entropy: Some((ent * &valid).unwrap()),
        }
    }
}

/// The `i`-th RoPE inverse frequency of a head of `hd` dimensions, written from the formulas of
/// transformers' `modeling_rope_utils.py` in f64 (the product computes it in f32, in torch's
/// order, in `rlvr_model::rope`).
fn reference_inv_freq(cfg: &rlvr_model::DecoderConfig, i: usize, hd: usize) -> f32 {
    use rlvr_model::RopeScaling;
    let f = 1.0 / cfg.rope_theta.powf((2 * i) as f64 / hd as f64);
    let f = match cfg.rope_scaling {
        RopeScaling::Default => f,
        RopeScaling::Linear { factor } => f / factor,
        RopeScaling::Llama3 {
            factor,
            low_freq_factor: low,
            high_freq_factor: high,
            original_max_position_embeddings: old,
        } => {
            let old = old as f64;
            let wavelen = 2.0 * std::f64::consts::PI / f;
            if wavelen < old / high {
                f
            } else if wavelen > old / low {
                f / factor
            } else {
                let s = (old / wavelen - low) / (high - low);
                (1.0 - s) * f / factor + s * f
            }
        }
    };
    f as f32
}
