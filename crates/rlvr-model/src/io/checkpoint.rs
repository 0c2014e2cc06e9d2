//! Hugging Face checkpoint I/O: load a model directory or hub id, save in the same layout,
//! and build a seeded random model.
//!
//! Layout read and written: `config.json`, `model.safetensors` (or sharded
//! `model-*.safetensors` with `model.safetensors.index.json`, read only), `tokenizer.json`,
//! `tokenizer_config.json`, optional `generation_config.json` and `chat_template.jinja`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor, Var};
use candle_nn::{VarBuilder, VarMap};
use rand::{RngExt, SeedableRng};
use rlvr_hub::files::{index_shards, is_pickle_weight, pickle_refused};
use rlvr_hub::resolve_model_dir;
use serde_json::{Map, Value};

use crate::config::param_shapes;
use crate::config::DecoderConfig;
use crate::error::{Error, Result};
use crate::io::tokenizer::ChatTokenizer;
use crate::model::Decoder;

/// The parts of `generation_config.json` rlvr uses, plus the whole file (written back on save).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GenerationConfig {
    pub eos_token_ids: Vec<u32>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub top_k: Option<usize>,
    pub raw: Map<String, Value>,
}

impl GenerationConfig {
    fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let raw = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => {
                return Err(Error::BadFile {
                    path: path.into(),
                    reason: "not a JSON object".into(),
                })
            }
            Err(e) => {
                return Err(Error::BadFile {
                    path: path.into(),
                    reason: format!("invalid JSON: {e}"),
                })
            }
        };
        let eos_token_ids = match raw.get("eos_token_id") {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|v| v.as_u64().map(|x| x as u32))
                .collect(),
            Some(v) => v.as_u64().map(|x| vec![x as u32]).unwrap_or_default(),
            None => Vec::new(),
        };
        Ok(Self {
            eos_token_ids,
            temperature: raw.get("temperature").and_then(Value::as_f64),
            top_p: raw.get("top_p").and_then(Value::as_f64),
            top_k: raw.get("top_k").and_then(Value::as_u64).map(|x| x as usize),
            raw,
        })
    }
}

/// A loaded checkpoint: the model, its trainable variables, configuration and tokenizer.
pub struct LoadedModel {
    pub model: Decoder,
    /// Every trainable parameter, keyed by its Hugging Face tensor name (tied embeddings: one
    /// variable, `model.embed_tokens.weight`).
    pub varmap: VarMap,
    pub config: DecoderConfig,
    pub tokenizer: ChatTokenizer,
    pub generation_config: Option<GenerationConfig>,
    /// The directory the files were read from (a hub cache snapshot for hub ids).
    pub dir: PathBuf,
}

impl LoadedModel {
    /// [`save_model`] plus generation_config.json when the checkpoint had one.
    pub fn save(&self, dir: &Path) -> Result<()> {
        save_model_with(
            dir,
            &self.varmap,
            &self.config,
            &self.tokenizer,
            self.generation_config.as_ref(),
        )
    }
}

fn missing(dir: &Path, file: &str, needed: &str) -> Error {
    Error::MissingFile {
        dir: dir.into(),
        file: file.into(),
        needed: needed.into(),
    }
}

/// Loads a model directory, or a hub id (`owner/name`) from the local Hugging Face cache.
///
/// Weights are converted to `dtype` (f32 and bf16 checkpoints both load as either) and become
/// the variables of the returned [`VarMap`]. The eos ids used for generation are the union of
/// tokenizer_config.json's eos token, config.json's and generation_config.json's `eos_token_id`.
///
/// Errors name the file: a missing file, an unsupported architecture, a tensor missing from
/// the checkpoint or with a shape config.json does not imply.
pub fn load_model(dir_or_hub_id: &str, dtype: DType, device: &Device) -> Result<LoadedModel> {
    let dir = resolve_model_dir(dir_or_hub_id)?;
    let cfg_path = dir.join("config.json");
    if !cfg_path.is_file() {
        return Err(missing(&dir, "config.json", "the model configuration"));
    }
    let mut config = DecoderConfig::from_file(&cfg_path)?;
    let (tensors, weights_path) = read_weights(&dir, device)?;
    let varmap = VarMap::new();
    {
        let mut data = varmap.data().lock().expect("fresh VarMap lock");
        for (name, shape) in param_shapes(&config) {
            let t = tensors.get(&name).ok_or_else(|| Error::MissingTensor {
                path: weights_path.clone(),
                name: name.clone(),
            })?;
            if t.dims() != shape.as_slice() {
                return Err(Error::ShapeMismatch {
                    path: weights_path.clone(),
                    name,
                    expected: shape,
                    got: t.dims().to_vec(),
                });
            }
            data.insert(name, Var::from_tensor(&t.to_dtype(dtype)?)?);
        }
    }
    config.dtype = Some(dtype_name(dtype)?.to_string());
    let model = Decoder::new(&config, VarBuilder::from_varmap(&varmap, dtype, device))?;
    let mut tokenizer = ChatTokenizer::from_dir(&dir)?;
    let gen_path = dir.join("generation_config.json");
    let generation_config = if gen_path.is_file() {
        Some(GenerationConfig::from_file(&gen_path)?)
    } else {
        None
    };
    let extra_eos = config
        .eos_token_ids
        .iter()
        .chain(generation_config.iter().flat_map(|g| &g.eos_token_ids));
    for &id in extra_eos {
        if !tokenizer.eos_token_ids.contains(&id) {
            tokenizer.eos_token_ids.push(id);
        }
    }
    Ok(LoadedModel {
        model,
        varmap,
        config,
        tokenizer,
        generation_config,
        dir,
    })
}

/// Reads model.safetensors, or the shards listed by model.safetensors.index.json. Returns the
/// tensors and the path to name in errors.
fn read_weights(dir: &Path, device: &Device) -> Result<(HashMap<String, Tensor>, PathBuf)> {
    let read = |path: &Path| -> Result<HashMap<String, Tensor>> {
        candle_core::safetensors::load(path, device).map_err(|e| Error::BadFile {
            path: path.into(),
            reason: format!("cannot read safetensors: {e}"),
        })
    };
    let single = dir.join("model.safetensors");
    if single.is_file() {
        return Ok((read(&single)?, single));
    }
    let index_path = dir.join("model.safetensors.index.json");
    if !index_path.is_file() {
        if let Some(found) = pickle_weights(dir) {
            return Err(pickle_refused(&dir.to_string_lossy(), &found).into());
        }
        return Err(missing(
            dir,
            "model.safetensors",
            "the weights (or sharded model-*.safetensors with model.safetensors.index.json)",
        ));
    }
    let files = index_shards(&index_path)?;
    let mut all = HashMap::new();
    for f in &files {
        let p = dir.join(f);
        if !p.is_file() {
            return Err(missing(
                dir,
                f,
                "a weight shard listed in model.safetensors.index.json",
            ));
        }
        all.extend(read(&p)?);
    }
    Ok((all, index_path))
}

/// Weight files in PyTorch's pickle format in `dir` (sorted). Only names are looked at;
/// nothing is opened.
fn pickle_weights(dir: &Path) -> Option<Vec<String>> {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| is_pickle_weight(n))
        .collect();
    found.sort();
    (!found.is_empty()).then_some(found)
}

fn dtype_name(dtype: DType) -> Result<&'static str> {
    Ok(match dtype {
        DType::F32 => "float32",
        DType::BF16 => "bfloat16",
        DType::F16 => "float16",
        DType::F64 => "float64",
        other => {
            return Err(Error::InvalidArgument(format!(
                "unsupported weight dtype {other:?}"
            )))
        }
    })
}

/// Saves `varmap` (names = Hugging Face tensor names) in the Hugging Face layout: config.json,
/// model.safetensors (tensors in their current dtype, metadata `format: pt`), tokenizer.json and
/// tokenizer_config.json. See [`save_model_with`].
pub fn save_model(
    dir: &Path,
    varmap: &VarMap,
    config: &DecoderConfig,
    tokenizer: &ChatTokenizer,
) -> Result<()> {
    save_model_with(dir, varmap, config, tokenizer, None)
}

/// [`save_model`] with an optional generation_config.json.
///
/// Atomic-ish: a new directory is written under a temporary name and renamed into place; in an
/// existing directory every file is written to a temporary name and renamed over the old one,
/// so a crash leaves each file either old or new, never half written.
pub fn save_model_with(
    dir: &Path,
    varmap: &VarMap,
    config: &DecoderConfig,
    tokenizer: &ChatTokenizer,
    generation_config: Option<&GenerationConfig>,
) -> Result<()> {
    let tensors: Vec<(String, Tensor)> = {
        let data = varmap.data().lock().expect("VarMap lock");
        param_shapes(config)
            .into_iter()
            .map(|(name, shape)| {
                let var = data.get(&name).ok_or_else(|| {
                    Error::InvalidArgument(format!("save_model: the VarMap has no {name}"))
                })?;
                if var.dims() != shape.as_slice() {
                    return Err(Error::InvalidArgument(format!(
                        "save_model: {name} has shape {:?}, config implies {shape:?}",
                        var.dims()
                    )));
                }
                Ok((name, var.as_tensor().detach().contiguous()?))
            })
            .collect::<Result<_>>()?
    };
    let mut config = config.clone();
    if let Some((_, t)) = tensors.first() {
        config.dtype = Some(dtype_name(t.dtype())?.to_string());
    }

    let fresh = !dir.exists();
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let base = dir.file_name().and_then(|s| s.to_str()).unwrap_or("model");
    let work = if fresh {
        let tmp = parent.join(format!(".{base}.tmp-{}", std::process::id()));
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
        }
        std::fs::create_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
        tmp
    } else {
        dir.to_path_buf()
    };
    // In an existing directory each file goes to `.name.tmp` first, then is renamed.
    let target = |name: &str| {
        if fresh {
            work.join(name)
        } else {
            work.join(format!(".{name}.tmp"))
        }
    };
    let mut written = Vec::new();

    let p = target("config.json");
    let text = serde_json::to_string_pretty(&config.to_json()).expect("JSON value serializes");
    std::fs::write(&p, text).map_err(|e| Error::io(&p, e))?;
    written.push("config.json");

    let p = target("model.safetensors");
    let meta = HashMap::from([("format".to_string(), "pt".to_string())]);
    safetensors::serialize_to_file(tensors.iter().map(|(n, t)| (n.as_str(), t)), Some(meta), &p)
        .map_err(|e| Error::BadFile {
            path: p.clone(),
            reason: format!("cannot write safetensors: {e}"),
        })?;
    written.push("model.safetensors");

    // the tokenizer writes fixed names: give it its own scratch directory when not fresh
    let tok_dir = if fresh {
        work.clone()
    } else {
        work.join(format!(".tokenizer.tmp-{}", std::process::id()))
    };
    std::fs::create_dir_all(&tok_dir).map_err(|e| Error::io(&tok_dir, e))?;
    tokenizer.save(&tok_dir)?;
    if !fresh {
        for f in ["tokenizer.json", "tokenizer_config.json"] {
            let (from, to) = (tok_dir.join(f), target(f));
            std::fs::rename(&from, &to).map_err(|e| Error::io(&to, e))?;
        }
        std::fs::remove_dir_all(&tok_dir).map_err(|e| Error::io(&tok_dir, e))?;
    }
    written.extend(["tokenizer.json", "tokenizer_config.json"]);

    if let Some(g) = generation_config {
        let p = target("generation_config.json");
        let text = serde_json::to_string_pretty(&Value::Object(g.raw.clone()))
            .expect("JSON map serializes");
        std::fs::write(&p, text).map_err(|e| Error::io(&p, e))?;
        written.push("generation_config.json");
    }

    if fresh {
        std::fs::rename(&work, dir).map_err(|e| Error::io(dir, e))?;
    } else {
        for f in written {
            let (from, to) = (target(f), dir.join(f));
            std::fs::rename(&from, &to).map_err(|e| Error::io(&to, e))?;
        }
        // a chat_template.jinja would override the saved tokenizer_config.json's template
        let jinja = dir.join("chat_template.jinja");
        if jinja.is_file() {
            std::fs::remove_file(&jinja).map_err(|e| Error::io(&jinja, e))?;
        }
    }
    Ok(())
}

/// A seeded random model: weights `N(0, 0.02^2)` (transformers' `initializer_range`), norm
/// weights 1, biases 0, drawn from a ChaCha RNG seeded with `seed` in [`param_shapes`] order,
/// so the same seed gives the same weights on every machine and device.
pub fn init_random(
    config: &DecoderConfig,
    seed: u64,
    dtype: DType,
    device: &Device,
) -> Result<(Decoder, VarMap)> {
    config.validate(Path::new("model config"))?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let varmap = VarMap::new();
    {
        let mut data = varmap.data().lock().expect("fresh VarMap lock");
        for (name, shape) in param_shapes(config) {
            let n: usize = shape.iter().product();
            let values: Vec<f32> = if name.ends_with("norm.weight") {
                vec![1.0; n]
            } else if name.ends_with(".bias") {
                vec![0.0; n]
            } else {
                normal_vec(&mut rng, n, 0.02)
            };
            let t = Tensor::from_vec(values, shape, device)?.to_dtype(dtype)?;
            data.insert(name, Var::from_tensor(&t)?);
        }
    }
    let model = Decoder::new(config, VarBuilder::from_varmap(&varmap, dtype, device))?;
    Ok((model, varmap))
}

/// `n` draws of `N(0, std^2)` by Box-Muller.
fn normal_vec(rng: &mut rand::rngs::StdRng, n: usize, std: f32) -> Vec<f32> {
    let mut out = Vec::with_capacity(n + 1);
    while out.len() < n {
        let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
        let u2: f64 = rng.random::<f64>();
        let r = (-2.0 * u1.ln()).sqrt();
        let th = std::f64::consts::TAU * u2;
        out.push((r * th.cos()) as f32 * std);
        out.push((r * th.sin()) as f32 * std);
    }
    out.truncate(n);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_draws_have_the_right_moments() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let v = normal_vec(&mut rng, 100_001, 1.0);
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / v.len() as f64;
        assert!(
            mean.abs() < 0.01 && (var - 1.0).abs() < 0.02,
            "mean {mean} var {var}"
        );
    }
}
