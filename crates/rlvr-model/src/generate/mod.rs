//! Batched, KV-cached, seeded sampling of `n` responses per prompt: the loop over steps
//! ([`generate()`]) around the sampling forward of the model's device path
//! ([`Decoder::forward_cached`], `forward.rs`) and the token sampler ([`sampler`]).

mod forward;
pub mod sampler;
pub mod spec;

use candle_core::Tensor;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::error::{Error, Result};
use crate::kv_cache::{DecodeWeights, KvCache};
use crate::model::Decoder;
use sampler::{sample_logits, DrawParams};

/// Sampling parameters (names as in vLLM / TRL).
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingParams {
    /// Responses per prompt (TRL's `num_generations`, GRPO's G).
    pub n: usize,
    /// Softmax temperature; 0 means greedy decoding.
    pub temperature: f64,
    /// Nucleus sampling: keep the smallest set of most likely tokens whose mass reaches `top_p`
    /// (1.0 = off). Applied after `top_k`.
    pub top_p: f64,
    /// Keep only the `k` most likely tokens (None = off).
    pub top_k: Option<usize>,
    /// At most this many new tokens per response.
    pub max_new_tokens: usize,
    /// A response ends after sampling one of these ids (the id is kept in the response).
    pub eos_token_ids: Vec<u32>,
    /// A response ends at the first token whose decoded text completes one of these strings
    /// (that token is kept). Needs a tokenizer.
    pub stop_strings: Vec<String>,
    /// Seeds the sampler; see [`generate()`] for what is reproducible.
    pub seed: u64,
}

impl Default for SamplingParams {
    fn default() -> Self {
        Self {
            n: 1,
            temperature: 1.0,
            top_p: 1.0,
            top_k: None,
            max_new_tokens: 256,
            eos_token_ids: Vec::new(),
            stop_strings: Vec::new(),
            seed: 0,
        }
    }
}

/// Why a response ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// It sampled an eos id (the last token).
    Eos,
    /// Its text completed a stop string (at the last token).
    Stop,
    /// It reached `max_new_tokens` (`truncated` is true).
    Length,
}

/// One sampled response.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// Index of its prompt in the `prompts` argument.
    pub prompt_index: usize,
    /// The response ids (ending with the eos id when it finished on eos).
    pub tokens: Vec<u32>,
    /// Per token: `log softmax(logits / T)[token]`, the log-prob under the model's
    /// temperature-T distribution before top-k / top-p truncation, as verl and TRL compute
    /// "old" log-probs (`Decoder::response_logprobs_no_grad(.., T)` recomputes it). For greedy
    /// decoding (T = 0) the temperature-1 log-prob.
    pub logprobs: Vec<f32>,
    /// True when cut off by `max_new_tokens` without eos or stop string.
    pub truncated: bool,
    pub finish_reason: FinishReason,
    /// Per token: true when the [`Environment`] wrote it, not the policy (its log-prob is 0);
    /// empty when the environment inserted nothing.
    pub inserted: Vec<bool>,
}

/// What the environment writes into a response while it is sampled: a tool's output, a
/// checker's verdict. The inserted tokens are fed to the model like sampled ones (later tokens
/// see them) and flagged in [`Generation::inserted`], so that the loss can leave them out, as
/// verl's multi-turn rollouts mask tool responses from `response_mask`.
pub trait Environment: Sync {
    /// Called after every token the policy samples (not after inserted ones), with the index of
    /// the response's prompt and the response so far; returns the tokens to insert next, in
    /// order (empty: none). An inserted eos id ends the response; inserted tokens count
    /// towards `max_new_tokens`.
    fn respond(&self, prompt_index: usize, response: &[u32]) -> Vec<u32>;
}

/// The environment of plain sampling: it never inserts anything.
pub struct NoEnvironment;

impl Environment for NoEnvironment {
    fn respond(&self, _: usize, _: &[u32]) -> Vec<u32> {
        Vec::new()
    }
}

/// Where a [`generate_observed`] call stands, passed to its observer after every decoded
/// token (one new token in every unfinished response) and once at the end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeProgress {
    /// Responses of the call: prompts x `n`.
    pub responses: usize,
    /// Responses that have ended (eos, stop string or `max_new_tokens`).
    pub finished: usize,
    /// Tokens in all responses so far (sampled and inserted).
    pub tokens: usize,
    /// The longest response so far, in tokens.
    pub longest: usize,
}

struct Row {
    prompt_index: usize,
    rng: StdRng,
    tokens: Vec<u32>,
    logprobs: Vec<f32>,
    inserted: Vec<bool>,
    /// Environment tokens still to be written, next first.
    pending: std::collections::VecDeque<u32>,
    next_pos: u32,
    finish: Option<FinishReason>,
}

/// A per-row seed from (seed, prompt, sample): SplitMix64 of the three mixed together.
fn row_seed(seed: u64, prompt: usize, sample: usize) -> u64 {
    let mut z = seed
        ^ (prompt as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (sample as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The KV-cache memory one `generate` batch may use, in bytes: `RLVR_KV_CACHE_MIB` (MiB) when
/// set, else a quarter of the host's available memory (`MemAvailable`) on the CPU and 40 GiB on
/// a GPU (about a third of an 80 GiB card once weights, activations and the optimizer are in).
pub fn kv_cache_budget(device: &candle_core::Device) -> usize {
    if let Some(mib) = std::env::var("RLVR_KV_CACHE_MIB")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return mib.max(1) << 20;
    }
    if device.is_cpu() {
        let avail_kib = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|s| {
                let l = s.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?;
                l.split_whitespace().next()?.parse::<usize>().ok()
            })
            .unwrap_or(16 << 20);
        avail_kib * 1024 / 4
    } else {
        40 << 30
    }
}

/// Samples `params.n` responses for every prompt; returns `prompts.len() * n` generations
/// grouped by prompt (prompt 0's n responses first).
///
/// Rows (one per response) decode together with one KV cache, allocated once for the longest
/// prompt plus `max_new_tokens` and written in place: prompts are left-padded and prefilled
/// once, the cache is repeated `n` times, and rows that finish are dropped from the batch on the
/// device (they cost no further compute). Each step samples on the logits' device (see
/// `generate/sampler.rs`) and copies only the sampled ids and log-probs to the host. When the KV cache of
/// all rows would exceed [`kv_cache_budget`], the rows are generated in consecutive batches
/// that fit (at least one row each).
///
/// Each response has its own RNG seeded from `(seed, prompt index, sample index)`, so a call is
/// reproducible and a response does not depend on the other prompts nor on how rows are
/// batched. `tokenizer` is needed only for `stop_strings`.
pub fn generate(
    model: &Decoder,
    tokenizer: Option<&tokenizers::Tokenizer>,
    prompts: &[Vec<u32>],
    params: &SamplingParams,
) -> Result<Vec<Generation>> {
    let budget = kv_cache_budget(model.device());
    generate_within(model, tokenizer, prompts, params, budget, &NoEnvironment)
}

/// [`generate()`] with the KV cache of each batch of rows held to `kv_cache_bytes` instead of
/// [`kv_cache_budget`], and `env` writing into the responses ([`Environment`];
/// [`NoEnvironment`] for plain sampling): rows are batched `max(1, kv_cache_bytes /
/// bytes_per_row)` at a time, `bytes_per_row` = [`KvCache::bytes_per_row`] at the longest
/// prompt plus `max_new_tokens`. The trainer passes what its memory plan leaves of
/// `model.device_memory_gib`. The responses do not depend on the budget (see [`generate()`]);
/// a response's sampled tokens depend on what `env` inserted into it, and an inserted token id
/// must be below the vocabulary size.
pub fn generate_within(
    model: &Decoder,
    tokenizer: Option<&tokenizers::Tokenizer>,
    prompts: &[Vec<u32>],
    params: &SamplingParams,
    kv_cache_bytes: usize,
    env: &dyn Environment,
) -> Result<Vec<Generation>> {
    generate_observed(
        model,
        tokenizer,
        prompts,
        params,
        kv_cache_bytes,
        env,
        &mut |_| {},
    )
}

/// [`generate_within`], calling `observe` with the [`DecodeProgress`] after every decoded
/// token and once when all responses have ended (a progress display; the responses do not
/// depend on it).
pub fn generate_observed(
    model: &Decoder,
    tokenizer: Option<&tokenizers::Tokenizer>,
    prompts: &[Vec<u32>],
    params: &SamplingParams,
    kv_cache_bytes: usize,
    env: &dyn Environment,
    observe: &mut (dyn FnMut(&DecodeProgress) + Send),
) -> Result<Vec<Generation>> {
    validate(model, tokenizer, prompts, params)?;
    if prompts.is_empty() {
        return Ok(Vec::new());
    }
    let p_max = prompts.iter().map(Vec::len).max().unwrap_or(0);
    let per_row =
        KvCache::bytes_per_row(model.config(), model.dtype(), p_max + params.max_new_tokens);
    let batch_rows = (kv_cache_bytes / per_row.max(1)).max(1);
    let rows: Vec<(usize, usize)> = (0..prompts.len())
        .flat_map(|u| (0..params.n).map(move |j| (u, j)))
        .collect();
    let mut generate_all = || -> Result<Vec<Generation>> {
        let mut out = Vec::with_capacity(rows.len());
        let mut progress = DecodeProgress {
            responses: rows.len(),
            ..Default::default()
        };
        // the CPU decode's bf16 weights, made by the first batch that needs them
        let mut weights: DecodeWeights = None;
        for chunk in rows.chunks(batch_rows) {
            out.extend(generate_rows(
                model,
                tokenizer,
                prompts,
                chunk,
                params,
                env,
                (&mut progress, &mut weights),
                observe,
            )?);
        }
        progress.finished = progress.responses;
        observe(&progress);
        Ok(out)
    };
    if model.uses_cpu_decode() {
        // The CPU decode starts several parallel sections per layer and token (each product,
        // the attention). Started from a thread outside rayon's pool, each one hands its job to
        // the pool and puts the caller to sleep until it is done; started on a worker, it runs
        // its first half in place. So the loop runs on a worker (`rayon::scope` moves it
        // there); the parts and their order are the same, and so are the results.
        rayon::scope(|_| generate_all())
    } else {
        generate_all()
    }
}

fn index_tensor(idx: &[usize], model: &Decoder) -> Result<Tensor> {
    let v: Vec<u32> = idx.iter().map(|&i| i as u32).collect();
    Ok(Tensor::from_vec(v, idx.len(), model.device())?)
}

/// [`generate()`] for the rows `(prompt index, sample index)` of `rows` (consecutive, grouped by
/// prompt), in that order; `progress` (the whole call's) is advanced and observed after every
/// decoded token, and `weights` (the whole call's bf16 decode weights) lent to this batch's
/// cache.
#[allow(clippy::too_many_arguments)]
fn generate_rows(
    model: &Decoder,
    tokenizer: Option<&tokenizers::Tokenizer>,
    prompts: &[Vec<u32>],
    rows_wanted: &[(usize, usize)],
    params: &SamplingParams,
    env: &dyn Environment,
    (progress, weights): (&mut DecodeProgress, &mut DecodeWeights),
    observe: &mut (dyn FnMut(&DecodeProgress) + Send),
) -> Result<Vec<Generation>> {
    let vocab = model.config().vocab_size as u32;
    let stop_window = params
        .stop_strings
        .iter()
        .map(String::len)
        .max()
        .unwrap_or(0)
        + 1;
    let draw = DrawParams {
        temperature: params.temperature,
        top_k: params.top_k,
        top_p: params.top_p,
    };

    // 1. prefill every distinct prompt of these rows once, left-padded to the longest
    let mut distinct: Vec<usize> = rows_wanted.iter().map(|&(u, _)| u).collect();
    distinct.dedup();
    let p_max = distinct
        .iter()
        .map(|&u| prompts[u].len())
        .max()
        .unwrap_or(0);
    let mut ids = Vec::with_capacity(distinct.len() * p_max);
    let mut positions = Vec::with_capacity(distinct.len());
    let mut key_ok = Vec::with_capacity(distinct.len());
    for &u in &distinct {
        let p = &prompts[u];
        let pad = p_max - p.len();
        ids.extend(std::iter::repeat_n(0u32, pad).chain(p.iter().copied()));
        positions.push(
            (0..p_max)
                .map(|j| j.saturating_sub(pad) as u32)
                .collect::<Vec<_>>(),
        );
        key_ok.push((0..p_max).map(|j| j >= pad).collect::<Vec<_>>());
    }
    let capacity = p_max + params.max_new_tokens;
    let slot = |u: usize| distinct.iter().position(|&d| d == u).expect("listed");
    let expand: Vec<usize> = rows_wanted.iter().map(|&(u, _)| slot(u)).collect();
    let input = Tensor::from_vec(ids, (distinct.len(), p_max), model.device())?;
    let mut cache = KvCache::with_capacity(model.config().num_hidden_layers, capacity);
    cache.bf16_weights = weights.take();
    let logits = model.forward_cached(&input, &positions, &key_ok, &mut cache)?;
    // 2. repeat each prompt's cache and logits for its rows
    cache.select_rows(&expand)?;
    let mut logits = logits.index_select(&index_tensor(&expand, model)?, 0)?;
    let mut rows: Vec<Row> = rows_wanted
        .iter()
        .map(|&(u, j)| Row {
            prompt_index: u,
            rng: StdRng::seed_from_u64(row_seed(params.seed, u, j)),
            tokens: Vec::with_capacity(params.max_new_tokens),
            logprobs: Vec::with_capacity(params.max_new_tokens),
            inserted: Vec::with_capacity(params.max_new_tokens),
            pending: Default::default(),
            next_pos: prompts[u].len() as u32,
            finish: None,
        })
        .collect();
    // indices into `rows` of the rows still in the batch, in batch order
    let mut active: Vec<usize> = (0..rows.len()).collect();

    // 3. decode
    while !active.is_empty() && params.max_new_tokens > 0 {
        let greedy = draw.temperature == 0.0;
        let uniforms: Vec<f64> = active
            .iter()
            .map(|&ri| if greedy { 0.0 } else { rows[ri].rng.random() })
            .collect();
        let (toks, lps) = sample_logits(&logits, &uniforms, &draw)?;
        for (bi, &ri) in active.iter().enumerate() {
            let row = &mut rows[ri];
            // an environment token when one is pending (the sample drawn here goes unused)
            let forced = row.pending.pop_front();
            let tok = forced.unwrap_or(toks[bi]);
            row.tokens.push(tok);
            row.inserted.push(forced.is_some());
            row.logprobs
                .push(if forced.is_some() { 0.0 } else { lps[bi] });
            if forced.is_none() {
                let reply = env.respond(row.prompt_index, &row.tokens);
                if let Some(&bad) = reply.iter().find(|&&t| t >= vocab) {
                    return Err(Error::InvalidArgument(format!(
                        "the environment inserted token id {bad} >= vocab_size {vocab}"
                    )));
                }
                row.pending.extend(reply);
            }
            if params.eos_token_ids.contains(&tok) {
                row.finish = Some(FinishReason::Eos);
            } else if !params.stop_strings.is_empty() {
                let tok_r = tokenizer.expect("validated: stop strings need a tokenizer");
                let from = row.tokens.len().saturating_sub(stop_window);
                let text = tok_r
                    .decode(&row.tokens[from..], false)
                    .map_err(|e| Error::Tokenizer(e.to_string()))?;
                if params
                    .stop_strings
                    .iter()
                    .any(|s| text.contains(s.as_str()))
                {
                    row.finish = Some(FinishReason::Stop);
                }
            }
            if row.finish.is_none() && row.tokens.len() >= params.max_new_tokens {
                row.finish = Some(FinishReason::Length);
            }
        }
        let keep: Vec<usize> = (0..active.len())
            .filter(|&bi| rows[active[bi]].finish.is_none())
            .collect();
        // every active row took one token this step, so they all have the same length
        progress.tokens += active.len();
        progress.finished += active.len() - keep.len();
        progress.longest = progress.longest.max(rows[active[0]].tokens.len());
        observe(progress);
        if keep.is_empty() {
            break;
        }
        if keep.len() < active.len() {
            cache.select_rows(&keep)?;
            active = keep.iter().map(|&b| active[b]).collect();
        }
        let next: Vec<u32> = active
            .iter()
            .map(|&ri| *rows[ri].tokens.last().expect("sampled"))
            .collect();
        let pos: Vec<Vec<u32>> = active
            .iter()
            .map(|&ri| {
                rows[ri].next_pos += 1;
                vec![rows[ri].next_pos - 1]
            })
            .collect();
        let input = Tensor::from_vec(next, (active.len(), 1), model.device())?;
        logits = model.forward_cached(&input, &pos, &vec![vec![true]; active.len()], &mut cache)?;
    }
    *weights = cache.bf16_weights.take();

    Ok(rows
        .into_iter()
        .map(|r| {
            let finish = r.finish.unwrap_or(FinishReason::Length);
            Generation {
                prompt_index: r.prompt_index,
                tokens: r.tokens,
                logprobs: r.logprobs,
                truncated: finish == FinishReason::Length,
                finish_reason: finish,
                inserted: if r.inserted.contains(&true) {
                    r.inserted
                } else {
                    Vec::new()
                },
            }
        })
        .collect())
}

fn validate(
    model: &Decoder,
    tokenizer: Option<&tokenizers::Tokenizer>,
    prompts: &[Vec<u32>],
    params: &SamplingParams,
) -> Result<()> {
    let bad = |m: String| Err(Error::InvalidArgument(m));
    if params.n == 0 {
        return bad("n must be at least 1".into());
    }
    if let Err(e) = spec::check(params.temperature, params.top_p, params.top_k) {
        let name = match e.setting {
            spec::SamplingSetting::Temperature => "temperature",
            spec::SamplingSetting::TopP => "top_p",
            spec::SamplingSetting::TopK => "top_k",
            spec::SamplingSetting::MaxNewTokens => "max_new_tokens",
            spec::SamplingSetting::StopStrings => "stop_strings",
        };
        return bad(format!("{name} {e}"));
    }
    if !params.stop_strings.is_empty() && tokenizer.is_none() {
        return bad("stop_strings need a tokenizer".into());
    }
    let vocab = model.config().vocab_size as u32;
    for (i, p) in prompts.iter().enumerate() {
        if p.is_empty() {
            return bad(format!("prompt {i} is empty"));
        }
        if let Some(&t) = p.iter().find(|&&t| t >= vocab) {
            return bad(format!("prompt {i} has token id {t} >= vocab_size {vocab}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_seeds_differ() {
        let s: std::collections::HashSet<u64> = (0..10)
            .flat_map(|u| (0..10).map(move |j| row_seed(42, u, j)))
            .collect();
        assert_eq!(s.len(), 100);
    }
}
