//! The decoder's weights ([`Decoder`], built from Hugging Face tensor names), the
//! choice of device path they run on.
//!
//! Each device path has one forward, used by training, scoring and sampling alike: on the CPU
//! in f32 / f64 the fused kernels of `cpu/` (the training step's layer, and the buffer decode
//! of `cpu/decode.rs` for sampling in f32); everywhere else the tensor-op layer of `generic/`
//! (the training step's, and the KV-cached sampling forward built from it). The training step is
//! `training.rs`. Every path is checked against the plain autograd decoder of the tests and
//! against transformers' values. Weight names are the Hugging Face tensor names (see
//! [`crate::config::param_shapes`]).

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;

use crate::config::DecoderConfig;
use crate::cpu::matmul::matmul;
use crate::error::Result;

/// Upper bound on the elements of one `[rows, vocab]` logits chunk in the training forward.
const LOGITS_CHUNK_ELEMS: usize = 1 << 25;

/// Query positions per chunk of the device-generic attention (`generic/attention.rs`): a chunk's scores
/// are `[B, heads, ATTN_CHUNK_ROWS, <= T]`.
const ATTN_CHUNK_ROWS: usize = 256;

/// The dtype for norms, attention scores and log-softmax: f32, or f64 for an f64 model.
pub(crate) fn upcast(dtype: DType) -> DType {
    if dtype == DType::F64 {
        DType::F64
    } else {
        DType::F32
    }
}

/// Terms per block of [`row_sums_f64`]'s first stage.
const ROW_SUM_BLOCK: usize = 64;

/// Row sums `[rows, 1]` in f64 of `x` `[rows, n]` (any float dtype, any device), accumulated
/// so that a vocabulary-wide sum keeps f32 precision: blocks of at most 64 consecutive terms
/// (the largest divisor of `n` up to 64) summed in `x`'s dtype, then the block sums in f64, so
/// the error is below 64 eps relative whatever the terms. (candle's CPU row sum is 32 running
/// f32 sums of ~4,700 terms each for a 151,936-token row, whose bound is ~100 times that when
/// the terms are alike; on other devices its order is candle's kernel's.) The first stage keeps
/// `x`'s dtype, so no f64 copy of `x` is made (a `[rows, n / 64]` one; `n` without a divisor
/// above 1 falls back to summing all of `x` in f64).
pub(crate) fn row_sums_f64(x: &Tensor) -> Result<Tensor> {
    let (rows, n) = x.dims2()?;
    let block = (1..=ROW_SUM_BLOCK.min(n))
        .rev()
        .find(|d| n % d == 0)
        .unwrap_or(1);
    let partial = if block > 1 {
        x.reshape((rows, n / block, block))?.sum(2)?
    } else {
        x.clone()
    };
    Ok(partial.to_dtype(DType::F64)?.sum_keepdim(1)?)
}

/// The `[d, d]` matrix `R` with `x R = cat(-x2, x1)`.
fn rotate_half_matrix(d: usize, dtype: DType, device: &Device) -> Result<Tensor> {
    let h = d / 2;
    let mut m = vec![0f32; d * d];
    for j in 0..h {
        m[(j + h) * d + j] = -1.0; // out[j] = -x[j + h]
        m[j * d + j + h] = 1.0; // out[j + h] = x[j]
    }
    Ok(Tensor::from_vec(m, (d, d), device)?.to_dtype(dtype)?)
}

/// `x W^T + b` over the last dimension. The leading dimensions are flattened into one matmul
/// (candle's `Linear` broadcasts the weight over the batch instead, whose backward materializes
/// one weight-sized gradient per batch row).
pub(crate) struct Linear {
    pub(crate) weight: Tensor,
    pub(crate) weight_t: Tensor,
    pub(crate) bias: Option<Tensor>,
}

impl Linear {
    pub(crate) fn new(weight: Tensor, bias: Option<Tensor>) -> Result<Self> {
        Ok(Self {
            weight_t: weight.t()?,
            weight,
            bias,
        })
    }

    pub(crate) fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let dims = x.dims();
        let (rows, inner) = (
            dims[..dims.len() - 1].iter().product::<usize>(),
            dims[dims.len() - 1],
        );
        let y = matmul(&x.reshape((rows, inner))?, &self.weight_t)?;
        let y = match &self.bias {
            Some(b) => y.broadcast_add(b)?,
            None => y,
        };
        let mut out_dims = dims.to_vec();
        *out_dims.last_mut().expect("x has a last dimension") = self.weight_t.dim(1)?;
        Ok(y.reshape(out_dims)?)
    }
}

pub(crate) struct Attention {
    pub(crate) q_proj: Linear,
    pub(crate) k_proj: Linear,
    pub(crate) v_proj: Linear,
    pub(crate) o_proj: Linear,
    pub(crate) q_norm: Option<Tensor>,
    pub(crate) k_norm: Option<Tensor>,
}

pub(crate) struct Mlp {
    pub(crate) gate_proj: Linear,
    pub(crate) up_proj: Linear,
    pub(crate) down_proj: Linear,
}

pub(crate) struct Layer {
    pub(crate) input_layernorm: Tensor,
    pub(crate) self_attn: Attention,
    pub(crate) post_attention_layernorm: Tensor,
    pub(crate) mlp: Mlp,
}

impl Layer {
    /// The layer's weights.
    pub(crate) fn weights(&self) -> Vec<&Tensor> {
        let (a, m) = (&self.self_attn, &self.mlp);
        let mut w = vec![&self.input_layernorm, &self.post_attention_layernorm];
        for lin in [
            &a.q_proj,
            &a.k_proj,
            &a.v_proj,
            &a.o_proj,
            &m.gate_proj,
            &m.up_proj,
            &m.down_proj,
        ] {
            w.push(&lin.weight);
            w.extend(lin.bias.as_ref());
        }
        w.extend(a.q_norm.as_ref());
        w.extend(a.k_norm.as_ref());
        w
    }
}

fn detach_linear(l: &Linear) -> Result<Linear> {
    Linear::new(l.weight.detach(), l.bias.as_ref().map(Tensor::detach))
}

/// A decoder-only causal language model: one implementation of the Qwen2 / Qwen2.5, Qwen3 and
/// Llama architectures ([`crate::Architecture`]), driven by its [`crate::DecoderConfig`].
pub struct Decoder {
    pub(crate) cfg: DecoderConfig,
    pub(crate) embed_tokens: Tensor,
    pub(crate) layers: Vec<Layer>,
    pub(crate) norm: Tensor,
    pub(crate) lm_head: Tensor,
    pub(crate) inv_freq: Vec<f32>,
    pub(crate) rot: Tensor,
    pub(crate) logits_chunk_elems: usize,
    /// Query rows per chunk of the device-generic attention (`generic/attention.rs`).
    pub(crate) attn_chunk_rows: usize,
    /// Run the device-generic training path on the CPU too (tests, measurements).
    pub(crate) force_generic: bool,
    pub(crate) dtype: DType,
    pub(crate) device: Device,
}

impl Decoder {
    /// Builds the model from `vb`, reading tensors under their Hugging Face names. With a
    /// `VarBuilder` over a `VarMap`, the model's tensors are the map's variables (trainable).
    /// A configuration that [`DecoderConfig::validate`] rejects is an error (labelled
    /// `model config`), never a panic in a kernel.
    pub fn new(cfg: &DecoderConfig, vb: VarBuilder) -> Result<Self> {
        cfg.validate(std::path::Path::new("model config"))?;
        let get = |name: &str, shape: &[usize]| -> Result<Tensor> { Ok(vb.get(shape, name)?) };
        let (h, v, f, hd) = (
            cfg.hidden_size,
            cfg.vocab_size,
            cfg.intermediate_size,
            cfg.head_dim,
        );
        let (qd, kvd) = (cfg.num_attention_heads * hd, cfg.num_key_value_heads * hd);
        let linear = |name: &str, out_dim: usize, in_dim: usize, bias: bool| -> Result<Linear> {
            let w = get(&format!("{name}.weight"), &[out_dim, in_dim])?;
            Linear::new(
                w,
                bias.then(|| get(&format!("{name}.bias"), &[out_dim]))
                    .transpose()?,
            )
        };
        let qk_norm = |name: &str| cfg.qk_norm.then(|| get(name, &[hd])).transpose();
        let embed_tokens = get("model.embed_tokens.weight", &[v, h])?;
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for i in 0..cfg.num_hidden_layers {
            let p = format!("model.layers.{i}");
            let a = format!("{p}.self_attn");
            let self_attn = Attention {
                q_proj: linear(&format!("{a}.q_proj"), qd, h, cfg.attention_bias)?,
                k_proj: linear(&format!("{a}.k_proj"), kvd, h, cfg.attention_bias)?,
                v_proj: linear(&format!("{a}.v_proj"), kvd, h, cfg.attention_bias)?,
                o_proj: linear(&format!("{a}.o_proj"), h, qd, false)?,
                q_norm: qk_norm(&format!("{a}.q_norm.weight"))?,
                k_norm: qk_norm(&format!("{a}.k_norm.weight"))?,
            };
            let m = format!("{p}.mlp");
            layers.push(Layer {
                input_layernorm: get(&format!("{p}.input_layernorm.weight"), &[h])?,
                self_attn,
                post_attention_layernorm: get(
                    &format!("{p}.post_attention_layernorm.weight"),
                    &[h],
                )?,
                mlp: Mlp {
                    gate_proj: linear(&format!("{m}.gate_proj"), f, h, false)?,
                    up_proj: linear(&format!("{m}.up_proj"), f, h, false)?,
                    down_proj: linear(&format!("{m}.down_proj"), h, f, false)?,
                },
            });
        }
        let norm = get("model.norm.weight", &[h])?;
        let lm_head = if cfg.tie_word_embeddings {
            embed_tokens.clone()
        } else {
            get("lm_head.weight", &[v, h])?
        };
        let inv_freq = crate::rope::inv_freq(cfg.rope_theta, hd, &cfg.rope_scaling);
        let rot = rotate_half_matrix(hd, embed_tokens.dtype(), embed_tokens.device())?;
        Ok(Self {
            rot,
            logits_chunk_elems: LOGITS_CHUNK_ELEMS,
            attn_chunk_rows: ATTN_CHUNK_ROWS,
            force_generic: false,
            cfg: cfg.clone(),
            dtype: embed_tokens.dtype(),
            device: embed_tokens.device().clone(),
            embed_tokens,
            layers,
            norm,
            lm_head,
            inv_freq,
        })
    }

    /// Sets the most logits one chunk of the training forward's vocabulary projection may hold
    /// (default 2^25, 128 MiB in f32; at least one row per chunk). Smaller saves memory; larger
    /// means fewer vocabulary-sized weight-gradient accumulations in the backward.
    pub fn set_logits_chunk_elems(&mut self, elems: usize) {
        self.logits_chunk_elems = elems.max(1);
    }

    /// The configuration the model was built from.
    pub fn config(&self) -> &DecoderConfig {
        &self.cfg
    }

    /// The dtype of the weights.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The device of the weights.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// A copy of the model over the same storage with every weight detached: its forwards
    /// build no autograd graph, and it sees later in-place weight updates.
    pub(crate) fn detached(&self) -> Result<Decoder> {
        let layers = self
            .layers
            .iter()
            .map(|l| {
                let a = &l.self_attn;
                Ok(Layer {
                    input_layernorm: l.input_layernorm.detach(),
                    self_attn: Attention {
                        q_proj: detach_linear(&a.q_proj)?,
                        k_proj: detach_linear(&a.k_proj)?,
                        v_proj: detach_linear(&a.v_proj)?,
                        o_proj: detach_linear(&a.o_proj)?,
                        q_norm: a.q_norm.as_ref().map(Tensor::detach),
                        k_norm: a.k_norm.as_ref().map(Tensor::detach),
                    },
                    post_attention_layernorm: l.post_attention_layernorm.detach(),
                    mlp: Mlp {
                        gate_proj: detach_linear(&l.mlp.gate_proj)?,
                        up_proj: detach_linear(&l.mlp.up_proj)?,
                        down_proj: detach_linear(&l.mlp.down_proj)?,
                    },
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Decoder {
            cfg: self.cfg.clone(),
            embed_tokens: self.embed_tokens.detach(),
            layers,
            norm: self.norm.detach(),
            lm_head: self.lm_head.detach(),
            inv_freq: self.inv_freq.clone(),
            rot: self.rot.detach(),
            logits_chunk_elems: self.logits_chunk_elems,
            attn_chunk_rows: self.attn_chunk_rows,
            force_generic: self.force_generic,
            dtype: self.dtype,
            device: self.device.clone(),
        })
    }

    /// True when the training forward runs the fused CPU kernels of `cpu/kernels.rs` (CPU, f32 or
    /// f64, not forced onto the device-generic path).
    pub(crate) fn uses_fused(&self) -> bool {
        self.device.is_cpu() && matches!(self.dtype, DType::F32 | DType::F64) && !self.force_generic
    }

    /// True when sampling runs the plain-buffer CPU forward of `cpu/decode.rs`: a CPU model in
    /// f32 not forced onto the device-generic path.
    pub(crate) fn uses_cpu_decode(&self) -> bool {
        self.device.is_cpu() && self.dtype == DType::F32 && !self.force_generic
    }

    /// cos/sin tables `[rows, 1, T, head_dim]` ([`crate::rope::cos_sin`]) for per-row positions, in the
    /// model's dtype.
    pub(crate) fn rope_tables(&self, positions: &[Vec<u32>]) -> Result<(Tensor, Tensor)> {
        let (rows, t) = (positions.len(), positions.first().map_or(0, Vec::len));
        let (cos, sin) = crate::rope::cos_sin(&self.inv_freq, &positions.concat());
        let table = |v: Vec<f64>| -> Result<Tensor> {
            let v: Vec<f32> = v.into_iter().map(|x| x as f32).collect();
            let shape = (rows, 1, t, self.cfg.head_dim);
            Ok(Tensor::from_vec(v, shape, &self.device)?.to_dtype(self.dtype)?)
        };
        Ok((table(cos)?, table(sin)?))
    }
}
