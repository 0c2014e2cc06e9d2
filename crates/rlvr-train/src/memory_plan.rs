//! The memory plan of one device: what `rlvr train --dry-run` prints, from the model's shape
//! and the config alone (no weights, no device).
//!
//! Notation: `P` parameters, `b` bytes per element of the compute dtype (`model.dtype`: 4 for
//! f32, 2 for bf16 / f16), `u = 4` (f32: norms, attention scores, log-softmax and everything
//! the optimizer holds), `L` layers, `h` hidden size, `qd = heads * head_dim`,
//! `kvd = kv_heads * head_dim`, `f` MLP size, `V` vocabulary, `N` padded tokens of one
//! micro-batch, `T` tokens of one sequence (`max_prompt_length + max_response_length`).
//!
//! Persistent (whole run):
//! - weights `P b`; master weights `P u` when `b != u` (none for f32, `optim.rs`);
//! - optimizer state `2 P u` (AdamW `m`, `v`);
//! - the KL reference model `P b` when `use_kl_loss`.
//!
//! Training (one micro-batch's forward and backward, `rlvr_model`'s training walk):
//! - gradients `P u` (the f32 accumulator) `+ b P_piece`: the walk hands its gradients out
//!   piece by piece (`Decoder::loss_and_grads_into`: the head, the final norm, each layer, the
//!   embedding) and each piece is added to the accumulator in place, chunk by chunk
//!   (`optim.rs`), so only the largest piece is alive in the weights' dtype:
//!   `P_piece = max(P_layer, V h)` (`P_layer` the parameters of one decoder layer), or with
//!   tied embeddings `max(P_layer + V h, 3 V h)` (the head's piece is held until the
//!   embedding's and summed with it);
//! - activations. One decoder layer on the device-generic path stores per token
//!   `A = b (h + 2h + 2h + 4f + qd + 2 kvd (1 + bias) + qd (1 + bias) + (qd + 2 kvd) +
//!   4 (qd + kvd) + 2 qd) + 2 n(h) + [qk_norm] n(hd) (heads + kv_heads) + u heads`:
//!   its input, the two residual adds and the o/down projections, the MLP's gate, SiLU, up and
//!   product, the q/k/v projections (and biases), their head-major copies, RoPE (rotation,
//!   two products, sum) of q and k, the attention output and its token-major copy, the two
//!   RMSNorms (`n(d) = 3 u d` in f32; `(3 u + 2 b) d` otherwise: the f32 upcast, square,
//!   quotient, the cast back and the weight product) and the attention's row log-sum-exp
//!   (attention is `flash.rs`: no `T x T` tensor is stored). The backward of one layer needs
//!   a working set `W = N (3 b f + 2 u h) + 6 u heads min(c, T) N` (the largest intermediate
//!   gradients, the upstream and input gradients, and six f32 score tiles of `c` query rows
//!   against at most `T` keys; `c` = 256, the model's attention chunk).
//!   - without checkpointing every layer keeps its graph: `N (L A) + W`;
//!   - with checkpointing (`model.gradient_checkpointing`) only layer inputs are kept and one
//!     layer is recomputed in the backward: `N (L b h + A) + W`;
//!   - the final norm's output and the hidden-state gradient: `N (b h + n(h) + u h)`, in both.
//! - the logits chunk and the head gradient: `rows = min(N, max(1, C / V))` rows of `V`
//!   logits (`C` = 2^25, the model's chunk), at most three f32 copies alive (logits, log-probs
//!   or exponentials, probabilities or their gradient) while the f32 head gradient `[V, h]`
//!   accumulates, then one copy (the logits' gradient) while that accumulator, one chunk's
//!   product and their sum are alive: `max(3 u rows V + u V h, u rows V + 3 u V h)`. The
//!   vocabulary pass runs between the layers' forward and their backward: beside it only the
//!   stored activations are alive (`N L A` + the final norm's, or `N L b h` + the final
//!   norm's with checkpointing), not a layer's working set or recomputed layer, and of the
//!   gradients only the accumulator `P u`: the walk hands out its first piece (the head's)
//!   after the pass, its f32 accumulation being part of the logits chunk. So a micro-batch
//!   needs `max(gradients + activations, P u + stored + logits chunk)`.
//! - the optimizer step (after the backward, activations freed): the f32 gradients `P u` and
//!   its temporaries `max(u P_max, 6 u min(C, P_max))`: the squares of the largest parameter's gradient
//!   for the global norm, or six f32 chunks of `C` = `optim::STEP_CHUNK_ELEMS` elements (the
//!   clipping, and the AdamW update, run in place chunk by chunk).
//!
//! Optimizer offload (`model.optimizer_offload`): the moments and an f32 master of every
//! parameter (`P u`, f32 models too) are on the host, not the device; the step's chunks
//! travel between them.
//!
//! Host (not on the device): with more than one optimizer step per rollout (`ppo_epochs` x
//! mini-batches > 1) the update keeps a rollback copy of the weights and the optimizer state
//! on the host, `P b + 2 P u + master` (`grpo.rs`), restored on a non-finite step.
//!
//! Rollout: the KV cache of one generation call at full length,
//! `S (T) L 2 kvd b` for `S = min(generation_batch_size, train_batch_size) * num_generations`
//! sequences, plus their
//! sampling logits `S V u 2` (the larger of rollout and evaluation generation is planned).
//!
//! Peaks: training the larger of `weights + master + optimizer + reference + max(gradients +
//! activations, P u + stored activations + logits chunk)` and `weights + master + optimizer +
//! reference + P u + step temporaries`;
//! rollout `weights + master + optimizer + reference + KV cache`; the device's peak is
//! the larger. It fits when that is at most `model.device_memory_gib` GiB.

use rlvr_model::DecoderConfig;

use crate::config::TrainConfig;

/// Bytes of one f32.
const U: f64 = 4.0;

/// Elements of one logits chunk of the training walk (the model's default).
pub const LOGITS_CHUNK_ELEMS: usize = 1 << 25;

/// Query rows per chunk of the device-generic attention (the model's default).
pub const ATTN_CHUNK_ROWS: usize = 256;

/// What the plan depends on besides the model's shape.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanInputs {
    /// Bytes per element of the compute dtype.
    pub dtype_bytes: usize,
    /// Padded tokens of one training micro-batch, `N`.
    pub micro_tokens: usize,
    /// Tokens of one sequence, `T`.
    pub seq_tokens: usize,
    /// Sequences of one generation call at full length `gen_tokens`.
    pub gen_seqs: usize,
    pub gen_tokens: usize,
    /// A frozen KL reference model is held.
    pub reference: bool,
    pub logits_chunk_elems: usize,
    pub attn_chunk_rows: usize,
    /// More than one optimizer step per rollout: a rollback copy is kept on the host.
    pub rollback: bool,
    /// `model.optimizer_offload`: the optimizer state and master weights are on the host.
    pub offload: bool,
}

impl PlanInputs {
    /// From a config: `N` is `ppo_max_token_len_per_gpu` with `use_dynamic_bsz` (or one
    /// sequence if longer), else `ppo_micro_batch_size * T`, and never more than a whole
    /// mini-batch at full length (`ppo_mini_batch_size * num_generations * T`: a micro-batch
    /// is a piece of one); the generation call is the larger of the rollout's
    /// (`min(generation_batch_size, train_batch_size) * num_generations` sequences of `T`
    /// tokens: a round samples `train_batch_size` prompts, in calls of at most
    /// `generation_batch_size`) and the evaluation's (`eval.batch_size * eval.k` of
    /// `max_prompt_length + eval.max_response_length`).
    pub fn from_config(cfg: &TrainConfig) -> Self {
        let a = &cfg.algorithm;
        let t = cfg.data.max_prompt_length + cfg.rollout.max_response_length;
        let g = cfg.rollout.num_generations;
        let mini_batch = a.ppo_mini_batch_size.max(1) * g * t;
        let n = if a.use_dynamic_bsz {
            a.ppo_max_token_len_per_gpu.min(mini_batch).max(t)
        } else {
            (a.ppo_micro_batch_size * t).min(mini_batch)
        };
        let call = cfg
            .rollout
            .generation_batch_size
            .min(cfg.trainer.train_batch_size);
        let rollout = (call * g, t);
        let eval = (
            cfg.eval.batch_size * cfg.eval.k,
            cfg.data.max_prompt_length + cfg.eval_max_tokens(),
        );
        let (gen_seqs, gen_tokens) = if eval.0 * eval.1 > rollout.0 * rollout.1 {
            eval
        } else {
            rollout
        };
        Self {
            dtype_bytes: cfg.model.dtype.bytes(),
            micro_tokens: n,
            seq_tokens: t,
            gen_seqs,
            gen_tokens,
            reference: a.use_kl_loss,
            logits_chunk_elems: LOGITS_CHUNK_ELEMS,
            attn_chunk_rows: ATTN_CHUNK_ROWS,
            rollback: a.ppo_epochs
                * cfg
                    .trainer
                    .train_batch_size
                    .div_ceil(a.ppo_mini_batch_size.max(1))
                > 1,
            offload: cfg.model.optimizer_offload,
        }
    }
}

/// The plan, every entry in bytes (formulas in the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryPlan {
    pub params: usize,
    pub inputs: PlanInputs,
    pub weights: f64,
    pub master: f64,
    pub optimizer: f64,
    pub reference: f64,
    pub gradients: f64,
    /// Activations of one micro-batch without / with activation checkpointing.
    pub activations: f64,
    pub activations_checkpointed: f64,
    /// The part of each alive during the vocabulary pass (no layer working set).
    pub stored_activations: f64,
    pub stored_activations_checkpointed: f64,
    /// Per token per layer, stored (`A`), for the report.
    pub layer_bytes_per_token: f64,
    pub logits_chunk: f64,
    /// The optimizer step's temporaries, `max(u P_max, 6 u min(C, P_max))`.
    pub optimizer_step: f64,
    pub kv_cache: f64,
    /// Host memory of the update's rollback copy (0 without one).
    pub host_rollback: f64,
}

impl MemoryPlan {
    /// Optimizer state and master weights held on the device (0 when offloaded).
    pub fn device_optimizer(&self) -> f64 {
        if self.inputs.offload {
            0.0
        } else {
            self.master + self.optimizer
        }
    }

    /// Host memory: the offloaded optimizer state and masters, and the rollback copy.
    pub fn host(&self) -> f64 {
        self.master + self.optimizer - self.device_optimizer() + self.host_rollback
    }
}

/// `n(d)` of the module docs: bytes per token of one RMSNorm over `d` values.
fn norm_bytes(d: f64, b: f64) -> f64 {
    if b == U {
        3.0 * U * d
    } else {
        (3.0 * U + 2.0 * b) * d
    }
}

impl MemoryPlan {
    pub fn new(c: &DecoderConfig, i: &PlanInputs) -> Self {
        let p = c.num_parameters();
        let pf = p as f64;
        let b = i.dtype_bytes as f64;
        let (h, f, v) = (
            c.hidden_size as f64,
            c.intermediate_size as f64,
            c.vocab_size as f64,
        );
        let l = c.num_hidden_layers as f64;
        let (nh, nkv, hd) = (
            c.num_attention_heads as f64,
            c.num_key_value_heads as f64,
            c.head_dim as f64,
        );
        let (qd, kvd) = (nh * hd, nkv * hd);
        let bias = if c.attention_bias { 1.0 } else { 0.0 };
        let n = i.micro_tokens as f64;
        let t = i.seq_tokens as f64;
        let a = b * (h + 2.0 * h + 2.0 * h + 4.0 * f)
            + b * (qd * (1.0 + bias) + 2.0 * kvd * (1.0 + bias))
            + b * (qd + 2.0 * kvd)
            + b * 4.0 * (qd + kvd)
            + b * 2.0 * qd
            + 2.0 * norm_bytes(h, b)
            + if c.qk_norm {
                norm_bytes(hd, b) * (nh + nkv)
            } else {
                0.0
            }
            + U * nh;
        let chunk = (i.attn_chunk_rows as f64).min(t);
        let work = n * (3.0 * b * f + 2.0 * U * h) + 6.0 * U * nh * chunk * n;
        let head = n * (b * h + norm_bytes(h, b) + U * h);
        let rows = (i.logits_chunk_elems as f64 / v).floor().max(1.0).min(n);
        let shapes = rlvr_model::param_shapes(c);
        let numel = |s: &Vec<usize>| s.iter().product::<usize>() as f64;
        let p_max = shapes.iter().map(|(_, s)| numel(s)).fold(0.0, f64::max);
        let p_layer: f64 = shapes
            .iter()
            .filter(|(n, _)| n.starts_with("model.layers.0."))
            .map(|(_, s)| numel(s))
            .sum();
        let vh = v * h;
        let p_piece = if c.tie_word_embeddings {
            (p_layer + vh).max(3.0 * vh)
        } else {
            p_layer.max(vh)
        };
        let master = if b == U && !i.offload { 0.0 } else { pf * U };
        Self {
            params: p,
            inputs: i.clone(),
            weights: pf * b,
            master,
            optimizer: 2.0 * pf * U,
            reference: if i.reference { pf * b } else { 0.0 },
            gradients: pf * U + b * p_piece,
            activations: n * l * a + work + head,
            activations_checkpointed: n * (l * b * h + a) + work + head,
            stored_activations: n * l * a + head,
            stored_activations_checkpointed: n * l * b * h + head,
            layer_bytes_per_token: a,
            logits_chunk: (3.0 * U * rows * v + U * v * h).max(U * rows * v + 3.0 * U * v * h),
            optimizer_step: (U * p_max)
                .max(6.0 * U * p_max.min(crate::optim::STEP_CHUNK_ELEMS as f64)),
            kv_cache: i.gen_seqs as f64 * (i.gen_tokens as f64 * l * 2.0 * kvd * b + v * U * 2.0),
            host_rollback: if i.rollback {
                pf * b + 2.0 * pf * U + master
            } else {
                0.0
            },
        }
    }

    /// Held on the device for the whole run.
    pub fn persistent(&self) -> f64 {
        self.weights + self.device_optimizer() + self.reference
    }

    /// Peak of a training micro-batch.
    pub fn train_peak(&self, checkpointing: bool) -> f64 {
        let (act, stored) = if checkpointing {
            (
                self.activations_checkpointed,
                self.stored_activations_checkpointed,
            )
        } else {
            (self.activations, self.stored_activations)
        };
        // the largest gradient piece is not alive during the vocabulary pass (module docs)
        let micro = self.persistent()
            + (self.gradients + act).max(self.params as f64 * U + stored + self.logits_chunk);
        let step = self.persistent() + self.params as f64 * U + self.optimizer_step;
        micro.max(step)
    }

    /// Peak of a generation call.
    pub fn rollout_peak(&self) -> f64 {
        self.persistent() + self.kv_cache
    }

    /// Bytes the sampler's KV cache may use on a device of `device_gib` GiB: what the
    /// persistent state leaves, `device_gib * 2^30 - (weights + master + optimizer +
    /// reference)`, or `None` when that is not positive. The rollout's sampling logits
    /// (`V u 2` per row, under 0.2% of a row's KV cache at the recipes' shapes) are left out.
    pub fn kv_cache_budget(&self, device_gib: f64) -> Option<f64> {
        let left = device_gib * GIB - self.persistent();
        (left > 0.0).then_some(left)
    }

    /// The device's peak.
    pub fn peak(&self, checkpointing: bool) -> f64 {
        self.train_peak(checkpointing).max(self.rollout_peak())
    }

    /// The plan as printed by `--dry-run`; `device_gib` = `model.device_memory_gib` (0: no
    /// verdict).
    pub fn render(&self, checkpointing: bool, device_gib: f64) -> String {
        let g = |x: f64| x / GIB;
        let i = &self.inputs;
        let dt = if i.dtype_bytes == 4 { "f32" } else { "16-bit" };
        let on = |c: bool| if c { "on" } else { "off" };
        let mut s = format!(
            "memory plan per device ({:.3}B parameters, {dt} compute, micro-batch of {} padded tokens, sequences of {} tokens; generation call of {} sequences x {} tokens):\n",
            self.params as f64 / 1e9,
            i.micro_tokens,
            i.seq_tokens,
            i.gen_seqs,
            i.gen_tokens
        );
        let mut row = |name: &str, x: f64| s += &format!("  {name:<52} {:>9.2} GiB\n", g(x));
        row("weights", self.weights);
        let host = if i.offload { ", on the host" } else { "" };
        row(&format!("master weights (f32){host}"), self.master);
        row(
            "gradients (f32 accumulator + largest piece)",
            self.gradients,
        );
        row(
            &format!("optimizer state (AdamW m, v in f32){host}"),
            self.optimizer,
        );
        if i.reference {
            row("KL reference model", self.reference);
        }
        row("activations, checkpointing off", self.activations);
        row(
            "activations, checkpointing on",
            self.activations_checkpointed,
        );
        row("logits chunk + f32 head gradient", self.logits_chunk);
        row("optimizer step temporaries (in place)", self.optimizer_step);
        row(
            "KV cache of the generation call at full length",
            self.kv_cache,
        );
        row(
            &format!("peak: training (checkpointing {})", on(checkpointing)),
            self.train_peak(checkpointing),
        );
        row(
            &format!("peak: training (checkpointing {})", on(!checkpointing)),
            self.train_peak(!checkpointing),
        );
        row("peak: rollout", self.rollout_peak());
        if self.host_rollback > 0.0 {
            row(
                "host memory: rollback copy (several optimizer steps)",
                self.host_rollback,
            );
        }
        if self.host() > 0.0 {
            row("host memory: total", self.host());
        }
        let peak = self.peak(checkpointing);
        if device_gib > 0.0 {
            let verdict = if g(peak) <= device_gib {
                "fits"
            } else {
                "does NOT fit"
            };
            s += &format!(
                "  {verdict} model.device_memory_gib = {device_gib} (peak {:.1} GiB with checkpointing {})\n",
                g(peak),
                on(checkpointing)
            );
        } else {
            s += &format!(
                "  peak {:.1} GiB with checkpointing {}; set model.device_memory_gib to check the fit\n",
                g(peak),
                on(checkpointing)
            );
        }
        s
    }
}

/// The KV-cache budget the sampler gets in a run of `cfg` with a model of shape `qc` on
/// `device`: `None` (the sampler's own default, `rlvr_model::kv_cache_budget`) on the CPU or
/// when `model.device_memory_gib` is 0, else [`MemoryPlan::kv_cache_budget`] of that size, so
/// that a generation call is cut into batches whose KV cache fits beside the weights, the
/// optimizer state and the reference model. An error when those alone exceed the device.
pub fn sampler_kv_budget(
    cfg: &TrainConfig,
    qc: &DecoderConfig,
    device: &candle_core::Device,
) -> Result<Option<usize>, crate::config::ConfigError> {
    if device.is_cpu() {
        return Ok(None);
    }
    device_kv_budget(cfg, qc)
}

/// [`sampler_kv_budget`] on a device other than the CPU.
fn device_kv_budget(
    cfg: &TrainConfig,
    qc: &DecoderConfig,
) -> Result<Option<usize>, crate::config::ConfigError> {
    let gib = cfg.model.device_memory_gib;
    if gib <= 0.0 {
        return Ok(None);
    }
    let plan = MemoryPlan::new(qc, &PlanInputs::from_config(cfg));
    match plan.kv_cache_budget(gib) {
        Some(bytes) => Ok(Some(bytes as usize)),
        None => Err(crate::config::ConfigError::Invalid {
            key: "model.device_memory_gib".into(),
            message: format!(
                "the weights, optimizer state and reference model alone take {:.1} GiB, more \
                 than the {gib} GiB given (see `rlvr train --dry-run`; \
                 model.optimizer_offload = true moves the optimizer state to the host)",
                plan.persistent() / GIB
            ),
        }),
    }
}

/// Bytes per GiB.
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The published shapes of the models the shipped recipes name (their config.json), for a
/// plan without the weights at hand. None for other models.
pub fn known_shape(path: &str) -> Option<DecoderConfig> {
    let json = match path.trim_end_matches('/') {
        "Qwen/Qwen3-1.7B-Base" | "Qwen/Qwen3-1.7B" => serde_json::json!({
            "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
            "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144,
            "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8,
            "head_dim": 128, "max_position_embeddings": 32768, "rms_norm_eps": 1e-6,
            "rope_theta": 1000000.0, "tie_word_embeddings": true, "attention_bias": false
        }),
        "Qwen/Qwen2.5-Math-7B" => serde_json::json!({
            "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
            "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944,
            "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
            "max_position_embeddings": 4096, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
            "tie_word_embeddings": false
        }),
        _ => return None,
    };
    DecoderConfig::from_json(&json, std::path::Path::new("built-in shape")).ok()
}

/// The `--dry-run` memory plan of `cfg` for a model of shape `qc` ([`MemoryPlan`]).
pub fn memory_plan_text(cfg: &TrainConfig, qc: &DecoderConfig) -> String {
    let plan = MemoryPlan::new(qc, &PlanInputs::from_config(cfg));
    plan.render(gradient_checkpointing(cfg), cfg.model.device_memory_gib)
        .trim_end()
        .to_string()
}

/// Whether the run recomputes decoder layers in the backward.
fn gradient_checkpointing(cfg: &TrainConfig) -> bool {
    cfg.model.gradient_checkpointing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(b: usize, n: usize, t: usize) -> PlanInputs {
        PlanInputs {
            dtype_bytes: b,
            micro_tokens: n,
            seq_tokens: t,
            gen_seqs: 2,
            gen_tokens: 10,
            reference: false,
            logits_chunk_elems: 1000,
            attn_chunk_rows: 4,
            rollback: false,
            offload: false,
        }
    }

    /// A 1-layer model small enough to count by hand: vocab 10, hidden 4, 2 heads of 2 (1 kv
    /// head), MLP 6, tied, biases (Qwen2), no qk norm.
    fn tiny() -> DecoderConfig {
        let mut c = DecoderConfig::tiny(10);
        c.hidden_size = 4;
        c.num_hidden_layers = 1;
        c.num_attention_heads = 2;
        c.num_key_value_heads = 1;
        c.head_dim = 2;
        c.intermediate_size = 6;
        c.tie_word_embeddings = true;
        c
    }

    #[test]
    fn the_sampler_budget_follows_device_memory_gib() {
        let qc = known_shape("Qwen/Qwen3-1.7B").unwrap();
        let mut cfg = TrainConfig::default();
        assert_eq!(
            device_kv_budget(&cfg, &qc).unwrap(),
            None,
            "0: no budget given"
        );
        cfg.model.device_memory_gib = 141.0;
        let plan = MemoryPlan::new(&qc, &PlanInputs::from_config(&cfg));
        let bytes = device_kv_budget(&cfg, &qc).unwrap().unwrap();
        assert_eq!(bytes, (141.0 * GIB - plan.persistent()) as usize);
        assert_eq!(
            sampler_kv_budget(&cfg, &qc, &candle_core::Device::Cpu).unwrap(),
            None,
            "the CPU keeps the sampler's default"
        );
        cfg.model.device_memory_gib = 1.0;
        let err = device_kv_budget(&cfg, &qc).unwrap_err().to_string();
        assert!(
            err.contains("model.device_memory_gib") && err.contains("GiB"),
            "{err}"
        );
    }

    #[test]
    fn kv_cache_budget_is_what_the_persistent_state_leaves() {
        let p = MemoryPlan::new(
            &known_shape("Qwen/Qwen3-1.7B").unwrap(),
            &PlanInputs::from_config(&TrainConfig::default()),
        );
        let left = p.kv_cache_budget(80.0).unwrap();
        assert_eq!(
            left,
            80.0 * GIB - (p.weights + p.device_optimizer() + p.reference)
        );
        assert!(p.kv_cache_budget(p.persistent() / GIB * 0.999).is_none());
    }

    #[test]
    fn hand_computed_tiny_model_f32() {
        let c = tiny();
        // embed 40; layer: norms 4+4, q 4x4+4, k 2x4+2, v 2x4+2, o 4x4, gate/up/down 3x24;
        // final norm 4 -> 40 + 8 + 20 + 10 + 10 + 16 + 72 + 4 = 180
        assert_eq!(c.num_parameters(), 180);
        let p = MemoryPlan::new(&c, &inputs(4, 8, 8));
        assert_eq!(p.weights, 720.0);
        assert_eq!(p.master, 0.0, "f32: no master copy");
        assert_eq!(p.optimizer, 1440.0);
        // gradients: the f32 accumulator 720 and the largest piece in f32: a layer has
        // 8 + 20 + 10 + 10 + 16 + 72 = 136 parameters, the tied head and embedding 40 each:
        // max(136 + 40, 3 * 40) = 176 -> 720 + 4 * 176
        assert_eq!(p.gradients, 1424.0);
        // A with b = u = 4, h = 4, f = 6, qd = 4, kvd = 2, bias:
        // 4 (4 + 8 + 8 + 24) = 176; 4 (4*2 + 2*2*2) = 64; 4 (4 + 4) = 32; 4*4*(4+2) = 96;
        // 4*2*4 = 32; 2 n(4) = 2*48 = 96; u heads = 8 -> 504
        assert_eq!(p.layer_bytes_per_token, 504.0);
        // W = 8 (3*4*6 + 2*4*4) + 6*4*2*min(4, 8)*8 = 8*104 + 1536 = 2368
        // head = 8 (16 + 48 + 16) = 640
        assert_eq!(p.activations, 8.0 * 504.0 + 2368.0 + 640.0);
        assert_eq!(
            p.activations_checkpointed,
            8.0 * (16.0 + 504.0) + 2368.0 + 640.0
        );
        // rows = min(N = 8, 1000 / 10 = 100) = 8; V h = 40:
        // max(3*4*8*10 + 4*40, 4*8*10 + 3*4*40) = max(1120, 800)
        assert_eq!(p.logits_chunk, 1120.0);
        // 2 seqs x (10 tokens x 1 layer x 2 x 2 x 4 + 10 x 4 x 2)
        assert_eq!(p.kv_cache, 2.0 * (160.0 + 80.0));
        assert_eq!(p.persistent(), 2160.0);
        // largest parameter: the 40-element embedding -> 6 * 4 * 40
        assert_eq!(p.optimizer_step, 960.0);
        // stored during the vocabulary pass: 8 * 504 + 640 = 4672; + 1120 < 7040
        assert_eq!(p.stored_activations, 4672.0);
        assert_eq!(p.train_peak(false), 2160.0 + 1424.0 + 7040.0);
        // checkpointed: 8 * 16 + 640 = 768 stored; 768 + 1120 < 8 * 520 + 3008 = 7168
        assert_eq!(p.stored_activations_checkpointed, 768.0);
        assert_eq!(p.train_peak(true), 2160.0 + 1424.0 + 7168.0);
        // a logits chunk larger than the layers' activations: during the vocabulary pass only
        // the f32 accumulator (720) of the gradients is alive, not the largest piece (704):
        // 2160 + max(1424 + 7168, 720 + 768 + 10000) = 2160 + 11488
        let mut q = p.clone();
        q.logits_chunk = 10000.0;
        assert_eq!(q.train_peak(true), 2160.0 + 11488.0);
        assert_eq!(q.train_peak(false), 2160.0 + 720.0 + 4672.0 + 10000.0);
        assert_eq!(p.host_rollback, 0.0);
        // with a one-row budget the logits chunk is one row and the head gradient dominates:
        // max(3*4*10 + 160, 4*10 + 3*4*40) = max(280, 520)
        assert_eq!(MemoryPlan::new(&c, &inputs(4, 1, 1)).logits_chunk, 520.0);
        assert_eq!(p.rollout_peak(), 2160.0 + 480.0);
    }

    #[test]
    fn bf16_adds_the_master_and_shrinks_the_rest() {
        let c = tiny();
        let p = MemoryPlan::new(&c, &inputs(2, 8, 8));
        assert_eq!(p.weights, 360.0);
        assert_eq!(p.master, 720.0);
        assert_eq!(p.optimizer, 1440.0);
        assert_eq!(p.gradients, 720.0 + 2.0 * 176.0);
        // a rollback copy on the host: bf16 weights, f32 moments and master
        let q = MemoryPlan::new(
            &c,
            &PlanInputs {
                rollback: true,
                ..inputs(2, 8, 8)
            },
        );
        assert_eq!(q.host_rollback, 360.0 + 1440.0 + 720.0);
        assert_eq!(q.peak(true), p.peak(true), "not on the device");
        assert_eq!(q.host(), q.host_rollback);
        // offloaded: master and moments leave the device for the host
        let o = MemoryPlan::new(
            &c,
            &PlanInputs {
                offload: true,
                ..inputs(2, 8, 8)
            },
        );
        assert_eq!(o.persistent(), 360.0);
        assert_eq!(o.host(), 720.0 + 1440.0);
        assert_eq!(
            o.train_peak(true),
            p.train_peak(true) - 720.0 - 1440.0,
            "the device saves exactly the master and the moments"
        );
        // f32 offloaded: every parameter gets a host master
        let o32 = MemoryPlan::new(
            &c,
            &PlanInputs {
                offload: true,
                ..inputs(4, 8, 8)
            },
        );
        assert_eq!((o32.persistent(), o32.host()), (720.0, 720.0 + 1440.0));
        // norms cost (3*4 + 2*2) d in bf16: 2 n(4) = 128; the rest of A halves: 504 - 96 - 8
        // = 400 -> 200; A = 200 + 128 + 8 = 336
        assert_eq!(p.layer_bytes_per_token, 336.0);
    }

    #[test]
    fn checkpointing_grows_slower_with_layers_and_everything_is_linear_in_tokens() {
        let mut c = tiny();
        c.num_hidden_layers = 8;
        let a = MemoryPlan::new(&c, &inputs(2, 1000, 1000));
        let b = MemoryPlan::new(&c, &inputs(2, 2000, 2000));
        assert!(a.activations_checkpointed < a.activations / 3.0);
        // T >= chunk: attention tiles are O(N c), so doubling N doubles the activations
        assert!((b.activations / a.activations - 2.0).abs() < 1e-12);
        assert!((b.activations_checkpointed / a.activations_checkpointed - 2.0).abs() < 1e-12);
    }

    #[test]
    fn config_inputs_by_count_and_by_tokens() {
        let mut cfg = TrainConfig::default();
        cfg.data.max_prompt_length = 100;
        cfg.rollout.max_response_length = 400;
        cfg.algorithm.ppo_micro_batch_size = 3;
        let i = PlanInputs::from_config(&cfg);
        assert_eq!((i.micro_tokens, i.seq_tokens), (1500, 500));
        cfg.algorithm.use_dynamic_bsz = true;
        cfg.algorithm.ppo_max_token_len_per_gpu = 4000;
        assert_eq!(PlanInputs::from_config(&cfg).micro_tokens, 4000);
        cfg.algorithm.ppo_max_token_len_per_gpu = 300;
        assert_eq!(
            PlanInputs::from_config(&cfg).micro_tokens,
            500,
            "one sequence"
        );
        // generation: a round's 16 prompts x 8 = 128 sequences of 500 (calls of up to 64
        // prompts) against eval 64 x 4 = 256 of 100 + 400
        assert_eq!((i.gen_seqs, i.gen_tokens), (256, 500));
        cfg.eval.k = 1;
        assert_eq!(PlanInputs::from_config(&cfg).gen_seqs, 128);
        cfg.trainer.train_batch_size = 256;
        assert_eq!(
            PlanInputs::from_config(&cfg).gen_seqs,
            512,
            "calls of 64 x 8"
        );
        assert_eq!(i.dtype_bytes, 4);
    }

    #[test]
    fn a_micro_batch_is_at_most_a_whole_mini_batch() {
        let mut cfg = TrainConfig::default();
        cfg.data.max_prompt_length = 100;
        cfg.rollout.max_response_length = 400;
        cfg.rollout.num_generations = 8;
        cfg.algorithm.ppo_mini_batch_size = 2; // 16 sequences of 500 tokens
        cfg.algorithm.ppo_micro_batch_size = 128;
        assert_eq!(PlanInputs::from_config(&cfg).micro_tokens, 16 * 500);
        cfg.algorithm.ppo_micro_batch_size = 5;
        assert_eq!(PlanInputs::from_config(&cfg).micro_tokens, 5 * 500);
        cfg.algorithm.use_dynamic_bsz = true;
        cfg.algorithm.ppo_max_token_len_per_gpu = 100_000;
        assert_eq!(PlanInputs::from_config(&cfg).micro_tokens, 16 * 500);
        cfg.algorithm.ppo_max_token_len_per_gpu = 3000;
        assert_eq!(PlanInputs::from_config(&cfg).micro_tokens, 3000);
    }

    #[test]
    fn known_shapes_have_the_published_sizes() {
        let q3 = known_shape("Qwen/Qwen3-1.7B-Base").unwrap();
        // 1.72B with tied embeddings (1.41B without the embedding)
        assert_eq!(q3.num_parameters(), 1_720_574_976);
        let q7 = known_shape("Qwen/Qwen2.5-Math-7B").unwrap();
        assert_eq!(q7.num_parameters(), 7_615_616_512);
        assert!(known_shape("someone/else").is_none());
    }

    #[test]
    fn render_says_whether_it_fits() {
        let p = MemoryPlan::new(&tiny(), &inputs(2, 8, 8));
        let text = p.render(true, 1.0);
        assert!(text.contains("fits model.device_memory_gib = 1"), "{text}");
        assert!(text.contains("master weights"), "{text}");
        let text = p.render(true, 1e-7);
        assert!(text.contains("does NOT fit"), "{text}");
        assert!(p.render(false, 0.0).contains("set model.device_memory_gib"));
    }
}
