//! `config.json` of decoder-only checkpoints: Qwen2 / Qwen2.5, Qwen3, Llama (2, 3, SmolLM2).
//!
//! Both layouts transformers writes are read: version 4 (top-level `rope_theta`, `rope_scaling`,
//! `torch_dtype`) and version 5 (`rope_parameters`, `dtype`). Keys this crate does not use are
//! kept in [`DecoderConfig::extra`] and written back by [`DecoderConfig::to_json`], so a loaded and
//! saved checkpoint keeps its metadata.

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
pub use crate::rope::RopeScaling;

/// The model families this crate implements; they differ only in small switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Architecture {
    /// `Qwen2ForCausalLM` (Qwen2, Qwen2.5, Qwen2.5-Math): q/k/v projections carry biases.
    Qwen2,
    /// `Qwen3ForCausalLM`: per-head RMSNorm on queries and keys, no biases by default.
    Qwen3,
    /// `LlamaForCausalLM` (Llama 2, Llama 3 with its rope scaling, SmolLM2), no biases.
    Llama,
}

impl Architecture {
    /// The class name transformers writes in `architectures`.
    pub fn as_str(self) -> &'static str {
        match self {
            Architecture::Qwen2 => "Qwen2ForCausalLM",
            Architecture::Qwen3 => "Qwen3ForCausalLM",
            Architecture::Llama => "LlamaForCausalLM",
        }
    }

    /// The `model_type` transformers writes.
    pub fn model_type(self) -> &'static str {
        match self {
            Architecture::Qwen2 => "qwen2",
            Architecture::Qwen3 => "qwen3",
            Architecture::Llama => "llama",
        }
    }
}

/// A normalized model configuration. Build it with [`DecoderConfig::from_json`] /
/// [`DecoderConfig::from_file`] (or serde), or with [`DecoderConfig::tiny`] for tests.
#[derive(Debug, Clone, PartialEq)]
pub struct DecoderConfig {
    pub architecture: Architecture,
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub num_key_value_heads: usize,
    /// Per-head dimension (`head_dim`; defaults to hidden_size / num_attention_heads, or 128
    /// for Qwen3 as in transformers).
    pub head_dim: usize,
    pub max_position_embeddings: usize,
    pub rms_norm_eps: f64,
    pub rope_theta: f64,
    /// How RoPE's frequencies are scaled (`rope_type` and its keys); [`RopeScaling::Default`]
    /// for none.
    pub rope_scaling: RopeScaling,
    pub tie_word_embeddings: bool,
    /// Biases on the q/k/v projections (always true for Qwen2, `attention_bias` otherwise).
    pub attention_bias: bool,
    /// Per-head RMSNorm of queries and keys before RoPE (Qwen3).
    pub qk_norm: bool,
    pub bos_token_id: Option<u32>,
    pub eos_token_ids: Vec<u32>,
    pub pad_token_id: Option<u32>,
    /// The checkpoint's declared dtype (`torch_dtype` or `dtype`), e.g. "bfloat16".
    pub dtype: Option<String>,
    /// Every other key of config.json, written back unchanged on save.
    pub extra: Map<String, Value>,
}

/// The largest size [`DecoderConfig::validate`] accepts for any one dimension (vocabulary,
/// hidden, MLP, layers, heads, head dimension, positions): 2^24, far above any released model.
pub const MAX_DIM: usize = 1 << 24;

/// The most parameters [`DecoderConfig::validate`] accepts: 2^42 (about 4.4 trillion), an upper
/// bound that keeps every shape product of a valid configuration inside `usize`.
pub const MAX_PARAMETERS: usize = 1 << 42;

const KNOWN_KEYS: &[&str] = &[
    "architectures",
    "model_type",
    "vocab_size",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "max_position_embeddings",
    "rms_norm_eps",
    "rope_theta",
    "rope_scaling",
    "rope_parameters",
    "tie_word_embeddings",
    "attention_bias",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "torch_dtype",
    "dtype",
    "hidden_act",
    "use_sliding_window",
    "mlp_bias",
];

impl DecoderConfig {
    /// A small Qwen2-shaped model (about 0.8M parameters plus `vocab_size * 128` for the tied
    /// embedding): hidden 128, 4 layers, 4 heads / 2 key-value heads, MLP 384, context 1024.
    /// Used by the CPU testbed and tests; it saves and loads like any Hugging Face checkpoint.
    pub fn tiny(vocab_size: usize) -> Self {
        Self::qwen2(vocab_size, 128, 4, 4, 2, 384)
    }

    /// The shape of TRL's `bench-tiny` reference model (its `make_models.py`): vocab 512, hidden
    /// 256, 4 layers, 4 / 2 heads, MLP 704, tied embeddings (3,084,544 parameters).
    pub fn bench_tiny() -> Self {
        Self::qwen2(512, 256, 4, 4, 2, 704)
    }

    /// The shape of TRL's `bench-small` reference model (its `make_models.py`): vocab 4096, hidden
    /// 512, 8 layers, 8 / 4 heads, MLP 1408, tied embeddings (25,707,008 parameters).
    pub fn bench_small() -> Self {
        Self::qwen2(4096, 512, 8, 8, 4, 1408)
    }

    /// Qwen2.5-0.5B's shape (vocab 151,936, hidden 896, 14 / 2 heads, MLP 4864, tied) with
    /// `num_layers` layers (the real model has 24).
    pub fn qwen25_05b_shaped(num_layers: usize) -> Self {
        let mut c = Self::qwen2(151_936, 896, num_layers, 14, 2, 4864);
        c.rope_theta = 1_000_000.0;
        c.max_position_embeddings = 32_768;
        c
    }

    fn qwen2(
        vocab: usize,
        hidden: usize,
        layers: usize,
        heads: usize,
        kv: usize,
        ffn: usize,
    ) -> Self {
        DecoderConfig {
            architecture: Architecture::Qwen2,
            vocab_size: vocab,
            hidden_size: hidden,
            intermediate_size: ffn,
            num_hidden_layers: layers,
            num_attention_heads: heads,
            num_key_value_heads: kv,
            head_dim: hidden / heads,
            max_position_embeddings: 1024,
            rms_norm_eps: 1e-6,
            rope_theta: 10_000.0,
            rope_scaling: RopeScaling::Default,
            tie_word_embeddings: true,
            attention_bias: true,
            qk_norm: false,
            bos_token_id: None,
            eos_token_ids: Vec::new(),
            pad_token_id: None,
            dtype: Some("float32".into()),
            extra: Map::new(),
        }
    }

    /// Reads and validates `path` (a config.json).
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let value: Value = serde_json::from_str(&text).map_err(|e| Error::BadFile {
            path: path.into(),
            reason: format!("invalid JSON: {e}"),
        })?;
        Self::from_json(&value, path)
    }

    /// Parses a config.json value; `path` is only used in error messages.
    pub fn from_json(value: &Value, path: &Path) -> Result<Self> {
        let bad = |reason: String| Error::BadFile {
            path: path.into(),
            reason,
        };
        let unsupported = |what: String| Error::Unsupported {
            path: path.into(),
            what,
        };
        let obj = value
            .as_object()
            .ok_or_else(|| bad("config.json is not a JSON object".into()))?;
        let usize_key = |key: &str| {
            key_as(obj, path, key, "a non-negative integer", |v| {
                v.as_u64().map(|x| x as usize)
            })
        };
        let need = |key: &str| -> Result<usize> {
            usize_key(key)?.ok_or_else(|| bad(format!("key {key} is missing")))
        };
        let f64_key = |key: &str| key_as(obj, path, key, "a number", Value::as_f64);
        let bool_key = |key: &str| key_as(obj, path, key, "true or false", Value::as_bool);
        let ids_key = |key: &str| -> Result<Vec<u32>> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|v| v.as_u64().and_then(|x| u32::try_from(x).ok()))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| bad(format!("key {key}: expected token ids"))),
                Some(v) => v
                    .as_u64()
                    .and_then(|x| u32::try_from(x).ok())
                    .map(|x| vec![x])
                    .ok_or_else(|| bad(format!("key {key}: expected a token id, got {v}"))),
            }
        };

        let arch_name = match obj.get("architectures") {
            Some(Value::Array(a)) if a.len() == 1 => a[0].as_str().unwrap_or("").to_string(),
            Some(v) => {
                return Err(unsupported(format!(
                    "architectures {v} (expected exactly one)"
                )))
            }
            None => match obj.get("model_type").and_then(Value::as_str) {
                Some("qwen2") => "Qwen2ForCausalLM".into(),
                Some("qwen3") => "Qwen3ForCausalLM".into(),
                Some("llama") => "LlamaForCausalLM".into(),
                other => {
                    return Err(unsupported(format!(
                        "model_type {other:?} with no architectures"
                    )))
                }
            },
        };
        let architecture = match arch_name.as_str() {
            "Qwen2ForCausalLM" => Architecture::Qwen2,
            "Qwen3ForCausalLM" => Architecture::Qwen3,
            "LlamaForCausalLM" => Architecture::Llama,
            other => {
                return Err(unsupported(format!(
                    "architecture {other:?} (supported: Qwen2ForCausalLM, Qwen3ForCausalLM, LlamaForCausalLM)"
                )))
            }
        };
        if let Some(act) = obj.get("hidden_act").and_then(Value::as_str) {
            if act != "silu" {
                return Err(unsupported(format!("hidden_act {act:?} (only \"silu\")")));
            }
        }
        if bool_key("use_sliding_window")? == Some(true) {
            return Err(unsupported("use_sliding_window = true".into()));
        }
        if bool_key("mlp_bias")? == Some(true) {
            return Err(unsupported("mlp_bias = true".into()));
        }

        // RoPE: transformers 5 nests it in rope_parameters, transformers 4 has rope_theta and an
        // optional rope_scaling. The default, linear and Llama 3 frequencies are implemented
        // (crate::rope), on every dimension of a head (transformers reads
        // `partial_rotary_factor` at the top level or in them).
        let full_rotary = |key: &str, v: Option<&Value>| match v {
            None | Some(Value::Null) => Ok(()),
            Some(f) if f.as_f64() == Some(1.0) => Ok(()),
            Some(f) => Err(unsupported(format!(
                "{key} {f} (RoPE on every dimension only: 1.0)"
            ))),
        };
        full_rotary("partial_rotary_factor", obj.get("partial_rotary_factor"))?;
        let mut rope_theta = f64_key("rope_theta")?;
        let mut rope_scaling = None;
        for key in ["rope_parameters", "rope_scaling"] {
            match obj.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::Object(p)) => {
                    full_rotary(
                        &format!("{key}.partial_rotary_factor"),
                        p.get("partial_rotary_factor"),
                    )?;
                    if let Some(t) = p.get("rope_theta") {
                        rope_theta = Some(t.as_f64().ok_or_else(|| {
                            bad(format!("key {key}.rope_theta: expected a number"))
                        })?);
                    }
                    let scaling = rope_scaling_of(key, p, path)?;
                    // transformers 5 prefers rope_parameters; both present and different is
                    // a file that means two things
                    match rope_scaling {
                        Some(first) if first != scaling => {
                            return Err(bad(format!(
                                "key {key}: {} disagrees with rope_parameters' {}",
                                scaling.rope_type(),
                                RopeScaling::rope_type(&first)
                            )))
                        }
                        _ => rope_scaling = Some(scaling),
                    }
                }
                Some(v) => return Err(bad(format!("key {key}: expected an object, got {v}"))),
            }
        }

        let hidden_size = need("hidden_size")?;
        let num_attention_heads = need("num_attention_heads")?;
        if num_attention_heads == 0 {
            return Err(bad(
                "key num_attention_heads: must be positive, got 0".into()
            ));
        }
        let num_key_value_heads = usize_key("num_key_value_heads")?.unwrap_or(num_attention_heads);
        let head_dim = match usize_key("head_dim")? {
            Some(d) => d,
            None if architecture == Architecture::Qwen3 => 128,
            None => {
                // transformers' default `hidden_size // num_attention_heads` drops a remainder
                if !hidden_size.is_multiple_of(num_attention_heads) {
                    return Err(bad(format!(
                        "key hidden_size: {hidden_size} is not a multiple of \
                         num_attention_heads {num_attention_heads} (and no head_dim is given)"
                    )));
                }
                hidden_size / num_attention_heads
            }
        };
        let dtype = obj
            .get("dtype")
            .or_else(|| obj.get("torch_dtype"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let extra = obj
            .iter()
            .filter(|(k, _)| !KNOWN_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let first_id = |key: &str| -> Result<Option<u32>> { Ok(ids_key(key)?.first().copied()) };
        let config = DecoderConfig {
            architecture,
            vocab_size: need("vocab_size")?,
            hidden_size,
            intermediate_size: need("intermediate_size")?,
            num_hidden_layers: need("num_hidden_layers")?,
            num_attention_heads,
            num_key_value_heads,
            head_dim,
            max_position_embeddings: usize_key("max_position_embeddings")?.unwrap_or(32_768),
            rms_norm_eps: f64_key("rms_norm_eps")?.unwrap_or(1e-6),
            rope_theta: rope_theta.unwrap_or(10_000.0),
            rope_scaling: rope_scaling.unwrap_or(RopeScaling::Default),
            tie_word_embeddings: bool_key("tie_word_embeddings")?.unwrap_or(false),
            attention_bias: match architecture {
                Architecture::Qwen2 => true,
                _ => bool_key("attention_bias")?.unwrap_or(false),
            },
            qk_norm: architecture == Architecture::Qwen3,
            bos_token_id: first_id("bos_token_id")?,
            eos_token_ids: ids_key("eos_token_id")?,
            pad_token_id: first_id("pad_token_id")?,
            dtype,
            extra,
        };
        config.validate(path)?;
        Ok(config)
    }

    /// Checks that the sizes describe a model the kernels can run, so that a bad config.json
    /// (or a configuration built in code, as the testbed does) is an error naming the key
    /// instead of a panic or a hang later:
    ///
    /// - `vocab_size`, `hidden_size`, `intermediate_size`, `num_hidden_layers`,
    ///   `num_attention_heads`, `num_key_value_heads`, `max_position_embeddings` are positive;
    /// - `num_key_value_heads` divides `num_attention_heads` (grouped-query attention);
    /// - `head_dim` is positive and even (RoPE rotates pairs of dimensions);
    /// - `rope_theta` and `rms_norm_eps` are finite and positive; a rope scaling's `factor` is
    ///   finite and at least 1, Llama 3's `low_freq_factor` positive, its `high_freq_factor`
    ///   larger, its `original_max_position_embeddings` positive;
    /// - `qk_norm` is set exactly for Qwen3 and `attention_bias` for every Qwen2: the switches
    ///   config.json can express, so that a saved configuration loads back the same;
    /// - every size is at most [`MAX_DIM`] and the parameter count (an untied `lm_head`
    ///   counted) at most [`MAX_PARAMETERS`], so that no shape computation overflows.
    ///
    /// (Parsing also checks that token ids fit in `u32`.)
    ///
    /// `path` names the file in the error (any label for a configuration built in code).
    /// [`DecoderConfig::from_json`] and [`DecoderConfig::from_file`] call it; [`crate::Decoder::new`]
    /// calls it too.
    pub fn validate(&self, path: &Path) -> Result<()> {
        let bad = |key: &str, reason: String| {
            Err(Error::BadFile {
                path: path.into(),
                reason: format!("key {key}: {reason}"),
            })
        };
        let sizes = [
            ("vocab_size", self.vocab_size),
            ("hidden_size", self.hidden_size),
            ("intermediate_size", self.intermediate_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("num_key_value_heads", self.num_key_value_heads),
            ("head_dim", self.head_dim),
            ("max_position_embeddings", self.max_position_embeddings),
        ];
        for (key, v) in sizes {
            if v == 0 {
                return bad(key, "must be positive, got 0".into());
            }
            if v > MAX_DIM {
                return bad(key, format!("{v} is larger than {MAX_DIM}"));
            }
        }
        if !self
            .num_attention_heads
            .is_multiple_of(self.num_key_value_heads)
        {
            return bad(
                "num_key_value_heads",
                format!(
                    "{} does not divide num_attention_heads {}",
                    self.num_key_value_heads, self.num_attention_heads
                ),
            );
        }
        // config.json states these switches only through the architecture (transformers'
        // Qwen2 always has q/k/v biases, Qwen3 always q/k norms, the others never), so a
        // configuration built in code that breaks the rule would save as another model
        if self.qk_norm != (self.architecture == Architecture::Qwen3) {
            return bad(
                "qk_norm",
                format!(
                    "{} with qk_norm = {}: only Qwen3ForCausalLM has (and always has) q/k norms",
                    self.architecture.as_str(),
                    self.qk_norm
                ),
            );
        }
        if self.architecture == Architecture::Qwen2 && !self.attention_bias {
            return bad(
                "attention_bias",
                "Qwen2ForCausalLM always has q/k/v biases (attention_bias = false is not \
                 expressible in its config.json)"
                    .into(),
            );
        }
        if !self.head_dim.is_multiple_of(2) {
            return bad(
                "head_dim",
                format!("{} must be even (RoPE rotates pairs)", self.head_dim),
            );
        }
        for (key, v) in [
            ("rope_theta", self.rope_theta),
            ("rms_norm_eps", self.rms_norm_eps),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return bad(key, format!("must be a finite positive number, got {v}"));
            }
        }
        if let Some(factor) = self.rope_scaling.factor() {
            if !(factor.is_finite() && factor >= 1.0) {
                return bad(
                    "rope_parameters.factor",
                    format!("must be a finite number of at least 1, got {factor}"),
                );
            }
        }
        if let RopeScaling::Llama3 {
            low_freq_factor,
            high_freq_factor,
            original_max_position_embeddings,
            ..
        } = self.rope_scaling
        {
            if !(low_freq_factor.is_finite() && low_freq_factor > 0.0) {
                return bad(
                    "rope_parameters.low_freq_factor",
                    format!("must be a finite positive number, got {low_freq_factor}"),
                );
            }
            if !(high_freq_factor.is_finite() && high_freq_factor > low_freq_factor) {
                return bad(
                    "rope_parameters.high_freq_factor",
                    format!(
                        "must be finite and larger than low_freq_factor {low_freq_factor}, \
                         got {high_freq_factor}"
                    ),
                );
            }
            if original_max_position_embeddings == 0 || original_max_position_embeddings > MAX_DIM {
                return bad(
                    "rope_parameters.original_max_position_embeddings",
                    format!(
                        "must be a positive integer up to {MAX_DIM}, got \
                         {original_max_position_embeddings}"
                    ),
                );
            }
        }
        match self.checked_num_parameters(true) {
            Some(n) if n <= MAX_PARAMETERS => {}
            _ => {
                return bad(
                    "hidden_size",
                    format!(
                        "the sizes imply more than {MAX_PARAMETERS} parameters (vocab_size {}, \
                         hidden_size {}, intermediate_size {}, num_hidden_layers {})",
                        self.vocab_size,
                        self.hidden_size,
                        self.intermediate_size,
                        self.num_hidden_layers
                    ),
                )
            }
        }
        Ok(())
    }

    /// The parameter count with an untied `lm_head` counted when `lm_head`, or None when it
    /// overflows `usize`: the embedding, `num_hidden_layers` times [`layer_shapes`], the final
    /// norm.
    fn checked_num_parameters(&self, lm_head: bool) -> Option<usize> {
        let size = |s: &[usize]| s.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        let layer = layer_shapes(self)
            .iter()
            .try_fold(0usize, |n, (_, s)| n.checked_add(size(s)?))?;
        let embed = size(&[self.vocab_size, self.hidden_size])?;
        layer
            .checked_mul(self.num_hidden_layers)?
            .checked_add(embed.checked_mul(1 + usize::from(lm_head))?)?
            .checked_add(self.hidden_size)
    }

    /// config.json as both transformers 4 and 5 read it: `rope_theta` and `torch_dtype` at the
    /// top level and `rope_parameters` / `dtype` as well; unknown keys from [`Self::extra`].
    pub fn to_json(&self) -> Value {
        let mut m = self.extra.clone();
        let known = serde_json::json!({
            "architectures": [self.architecture.as_str()],
            "model_type": self.architecture.model_type(),
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "head_dim": self.head_dim,
            "max_position_embeddings": self.max_position_embeddings,
            "rms_norm_eps": self.rms_norm_eps,
            "rope_theta": self.rope_theta,
            "tie_word_embeddings": self.tie_word_embeddings,
            "hidden_act": "silu",
        });
        if let Value::Object(known) = known {
            m.extend(known);
        }
        let mut put = |k: &str, v: Value| {
            m.insert(k.to_string(), v);
        };
        let mut rope = self.rope_scaling.to_json();
        if self.rope_scaling != RopeScaling::Default {
            // transformers 4 reads the scaling from rope_scaling, 5 from rope_parameters
            put("rope_scaling", Value::Object(rope.clone()));
        }
        rope.insert("rope_theta".into(), self.rope_theta.into());
        put("rope_parameters", Value::Object(rope));
        if self.architecture == Architecture::Qwen2 {
            put("use_sliding_window", false.into());
        } else {
            put("attention_bias", self.attention_bias.into());
        }
        if let Some(id) = self.bos_token_id {
            put("bos_token_id", id.into());
        }
        match self.eos_token_ids.as_slice() {
            [] => {}
            [one] => put("eos_token_id", (*one).into()),
            many => put("eos_token_id", many.to_vec().into()),
        }
        if let Some(id) = self.pad_token_id {
            put("pad_token_id", id.into());
        }
        if let Some(d) = &self.dtype {
            put("torch_dtype", d.clone().into());
            put("dtype", d.clone().into());
        }
        Value::Object(m)
    }

    /// Number of parameters (the tied embedding counted once; `usize::MAX` for sizes that
    /// overflow it, which [`Self::validate`] refuses).
    pub fn num_parameters(&self) -> usize {
        self.checked_num_parameters(!self.tie_word_embeddings)
            .unwrap_or(usize::MAX)
    }
}

/// The tensors of one decoder layer: name under `model.layers.{i}.` and shape.
fn layer_shapes(cfg: &DecoderConfig) -> Vec<(&'static str, Vec<usize>)> {
    let (h, f, hd) = (cfg.hidden_size, cfg.intermediate_size, cfg.head_dim);
    let (qd, kvd) = (
        cfg.num_attention_heads.saturating_mul(hd),
        cfg.num_key_value_heads.saturating_mul(hd),
    );
    let mut out = vec![
        ("input_layernorm.weight", vec![h]),
        ("self_attn.q_proj.weight", vec![qd, h]),
        ("self_attn.k_proj.weight", vec![kvd, h]),
        ("self_attn.v_proj.weight", vec![kvd, h]),
    ];
    if cfg.attention_bias {
        out.push(("self_attn.q_proj.bias", vec![qd]));
        out.push(("self_attn.k_proj.bias", vec![kvd]));
        out.push(("self_attn.v_proj.bias", vec![kvd]));
    }
    out.push(("self_attn.o_proj.weight", vec![h, qd]));
    if cfg.qk_norm {
        out.push(("self_attn.q_norm.weight", vec![hd]));
        out.push(("self_attn.k_norm.weight", vec![hd]));
    }
    out.extend([
        ("post_attention_layernorm.weight", vec![h]),
        ("mlp.gate_proj.weight", vec![f, h]),
        ("mlp.up_proj.weight", vec![f, h]),
        ("mlp.down_proj.weight", vec![h, f]),
    ]);
    out
}

/// The Hugging Face tensor names and shapes `cfg` implies, in a stable order. `lm_head.weight`
/// is absent when the embeddings are tied.
pub fn param_shapes(cfg: &DecoderConfig) -> Vec<(String, Vec<usize>)> {
    let (h, v) = (cfg.hidden_size, cfg.vocab_size);
    let layer = layer_shapes(cfg);
    let mut out = vec![("model.embed_tokens.weight".to_string(), vec![v, h])];
    for i in 0..cfg.num_hidden_layers {
        out.extend(
            layer
                .iter()
                .map(|(name, s)| (format!("model.layers.{i}.{name}"), s.clone())),
        );
    }
    out.push(("model.norm.weight".to_string(), vec![h]));
    if !cfg.tie_word_embeddings {
        out.push(("lm_head.weight".to_string(), vec![v, h]));
    }
    out
}

impl<'de> serde::Deserialize<'de> for DecoderConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        DecoderConfig::from_json(&v, Path::new("config.json")).map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for DecoderConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

/// The scaling `rope_parameters` or `rope_scaling` (`key`, the object `p`) describes: its
/// `rope_type` (or transformers 4's `type`) with the keys that kind needs, each an error naming
/// `key.name` when missing or not a number. Ranges are checked by [`DecoderConfig::validate`].
fn rope_scaling_of(key: &str, p: &Map<String, Value>, path: &Path) -> Result<RopeScaling> {
    let kind = match p.get("rope_type").or_else(|| p.get("type")) {
        None | Some(Value::Null) => None,
        Some(Value::String(k)) => Some(k.as_str()),
        Some(v) => {
            return Err(Error::BadFile {
                path: path.into(),
                reason: format!("key {key}.rope_type: expected a name, got {v}"),
            })
        }
    };
    let number = |name: &str| -> Result<f64> {
        match p.get(name) {
            None | Some(Value::Null) => Err(Error::BadFile {
                path: path.into(),
                reason: format!("key {key}.{name} is missing (rope_type {kind:?} needs it)"),
            }),
            Some(v) => v.as_f64().ok_or_else(|| Error::BadFile {
                path: path.into(),
                reason: format!("key {key}.{name}: expected a number, got {v}"),
            }),
        }
    };
    match kind {
        None | Some("default") => Ok(RopeScaling::Default),
        Some("linear") => Ok(RopeScaling::Linear {
            factor: number("factor")?,
        }),
        Some("llama3") => {
            let name = "original_max_position_embeddings";
            let original = number(name)?;
            if !(original.fract() == 0.0 && original >= 1.0 && original <= MAX_DIM as f64) {
                return Err(Error::BadFile {
                    path: path.into(),
                    reason: format!(
                        "key {key}.{name}: expected a positive integer up to {MAX_DIM}, got {original}"
                    ),
                });
            }
            Ok(RopeScaling::Llama3 {
                factor: number("factor")?,
                low_freq_factor: number("low_freq_factor")?,
                high_freq_factor: number("high_freq_factor")?,
                original_max_position_embeddings: original as usize,
            })
        }
        Some(other) => Err(Error::Unsupported {
            path: path.into(),
            what: format!(
                "{key}.rope_type {other:?} (implemented: \"default\", \"linear\", \"llama3\"; \
                 the length-dependent kinds are not)"
            ),
        }),
    }
}

/// `obj[key]` as `read` takes it: `None` when absent or null, else an error naming the key and
/// what was `expected` when `read` refuses the value.
fn key_as<T>(
    obj: &Map<String, Value>,
    path: &Path,
    key: &str,
    expected: &str,
    read: fn(&Value) -> Option<T>,
) -> Result<Option<T>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => read(v).map(Some).ok_or_else(|| Error::BadFile {
            path: path.into(),
            reason: format!("key {key}: expected {expected}, got {v}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: Value) -> Result<DecoderConfig> {
        DecoderConfig::from_json(&v, Path::new("x/config.json"))
    }

    #[test]
    fn transformers4_and_5_layouts_agree() {
        let base = serde_json::json!({
            "architectures": ["Qwen3ForCausalLM"], "vocab_size": 100, "hidden_size": 32,
            "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
            "num_key_value_heads": 2, "head_dim": 16, "eos_token_id": [1, 2]});
        let mut v4 = base.clone();
        v4["rope_theta"] = 5e5.into();
        v4["torch_dtype"] = "bfloat16".into();
        let mut v5 = base;
        v5["rope_parameters"] = serde_json::json!({"rope_type": "default", "rope_theta": 5e5});
        v5["dtype"] = "bfloat16".into();
        let (a, b) = (parse(v4).unwrap(), parse(v5).unwrap());
        assert_eq!(a, b);
        assert_eq!(a.rope_theta, 5e5);
        assert!(a.qk_norm && !a.attention_bias);
        assert_eq!(a.eos_token_ids, [1, 2]);
        assert_eq!(a.dtype.as_deref(), Some("bfloat16"));
        // to_json -> from_json is the identity
        assert_eq!(parse(a.to_json()).unwrap(), a);
    }

    #[test]
    fn unsupported_architecture_is_named() {
        let v = serde_json::json!({"architectures": ["MistralForCausalLM"], "vocab_size": 1});
        let err = parse(v).unwrap_err().to_string();
        assert!(
            err.contains("x/config.json") && err.contains("MistralForCausalLM"),
            "{err}"
        );
        let v = serde_json::json!({"architectures": ["LlamaForCausalLM"], "vocab_size": 1,
            "hidden_size": 8, "intermediate_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
            "rope_scaling": {"rope_type": "llama3", "factor": 8.0}});
        let err = parse(v).unwrap_err().to_string();
        assert!(err.contains("llama3"), "{err}");
    }

    #[test]
    fn missing_key_is_named() {
        let v = serde_json::json!({"architectures": ["Qwen2ForCausalLM"], "vocab_size": 1});
        let err = parse(v).unwrap_err().to_string();
        assert!(err.contains("hidden_size"), "{err}");
    }

    /// Every size, ratio and float the kernels rely on is checked, and the error names the file
    /// and the key (these configurations used to load and panic later in a kernel).
    #[test]
    fn degenerate_sizes_are_errors_naming_the_key() {
        let base = serde_json::json!({
            "architectures": ["Qwen2ForCausalLM"], "vocab_size": 100, "hidden_size": 32,
            "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
            "num_key_value_heads": 2});
        assert!(parse(base.clone()).is_ok());
        let cases: &[(&str, Value, &str)] = &[
            ("hidden_size", 0.into(), "hidden_size"),
            ("intermediate_size", 0.into(), "intermediate_size"),
            ("vocab_size", 0.into(), "vocab_size"),
            ("num_hidden_layers", 0.into(), "num_hidden_layers"),
            ("num_attention_heads", 0.into(), "num_attention_heads"),
            ("num_key_value_heads", 0.into(), "num_key_value_heads"),
            ("num_key_value_heads", 3.into(), "num_key_value_heads"),
            ("hidden_size", 30.into(), "hidden_size"),
            ("head_dim", 0.into(), "head_dim"),
            ("head_dim", 7.into(), "head_dim"),
            (
                "max_position_embeddings",
                0.into(),
                "max_position_embeddings",
            ),
            ("rope_theta", 0.0.into(), "rope_theta"),
            ("rope_theta", (-1.0).into(), "rope_theta"),
            ("rms_norm_eps", 0.0.into(), "rms_norm_eps"),
            ("rms_norm_eps", (-1e-6).into(), "rms_norm_eps"),
            ("hidden_size", (1u64 << 40).into(), "hidden_size"),
            ("vocab_size", (1u64 << 23).into(), "hidden_size"),
            ("eos_token_id", (1u64 << 33).into(), "eos_token_id"),
        ];
        for (key, value, named) in cases {
            let mut v = base.clone();
            v[*key] = value.clone();
            if *key == "vocab_size" && value.as_u64() == Some(1 << 23) {
                // each size is fine alone; together they pass the parameter bound
                v["hidden_size"] = (1u64 << 22).into();
                v["num_attention_heads"] = 2.into();
            }
            let err = parse(v)
                .expect_err(&format!("{key} = {value} must be rejected"))
                .to_string();
            assert!(
                err.contains("x/config.json") && err.contains(named),
                "{key} = {value}: {err}"
            );
        }
        let mut v = base;
        v["rope_parameters"] = serde_json::json!({"rope_type": "default", "rope_theta": -5.0});
        let err = parse(v).unwrap_err().to_string();
        assert!(err.contains("rope_theta"), "{err}");
    }

    /// A configuration built in code (the testbed's) is checked by the model constructor too.
    #[test]
    fn configs_built_in_code_are_validated_before_any_kernel() {
        let mut c = DecoderConfig::tiny(50);
        c.hidden_size = 0;
        c.head_dim = 0;
        let err = crate::init_random(&c, 0, candle_core::DType::F32, &candle_core::Device::Cpu)
            .err()
            .expect("hidden_size 0 must be rejected")
            .to_string();
        assert!(
            err.contains("hidden_size") || err.contains("head_dim"),
            "{err}"
        );
        let mut c = DecoderConfig::tiny(50);
        c.intermediate_size = 0;
        let err = crate::init_random(&c, 0, candle_core::DType::F32, &candle_core::Device::Cpu)
            .err()
            .expect("intermediate_size 0 must be rejected")
            .to_string();
        assert!(err.contains("model config: key intermediate_size"), "{err}");
    }

    #[test]
    fn bench_shapes_have_the_reference_harness_parameter_counts() {
        // the TRL reference harness's README: bench-tiny 3,084,544 and bench-small 25,707,008
        assert_eq!(DecoderConfig::bench_tiny().num_parameters(), 3_084_544);
        assert_eq!(DecoderConfig::bench_small().num_parameters(), 25_707_008);
    }

    #[test]
    fn tiny_round_trips_through_json() {
        let c = DecoderConfig::tiny(97);
        assert_eq!(parse(c.to_json()).unwrap(), c);
        let s = serde_json::to_string(&c).unwrap();
        let back: DecoderConfig = serde_json::from_str(&s).unwrap();
        assert_eq!(back, c);
    }
}
