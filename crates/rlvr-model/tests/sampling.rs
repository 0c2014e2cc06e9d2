//! The sampler: grouping, reproducibility, stopping rules, and its log-probs against the
//! training forward.

mod common;

use candle_core::{DType, Device};
use common::*;
use rlvr_model::{
    generate, generate_observed, generate_within, load_model, DecodeProgress, Environment,
    FinishReason, Generation, KvCache, LoadedModel, NoEnvironment, SamplingParams, TokenBatch,
};

fn model() -> LoadedModel {
    load_model(
        fixture("qwen2-tiny").to_str().unwrap(),
        DType::F32,
        &Device::Cpu,
    )
    .unwrap()
}

fn prompts(m: &LoadedModel) -> Vec<Vec<u32>> {
    ["Compute 12+34=", "Add: 7 9 5 =", "The"]
        .iter()
        .map(|p| m.tokenizer.encode(p, false).unwrap())
        .collect()
}

fn params(n: usize, seed: u64) -> SamplingParams {
    SamplingParams {
        n,
        temperature: 1.0,
        max_new_tokens: 12,
        seed,
        ..Default::default()
    }
}

#[test]
fn returns_n_per_prompt_grouped_and_reproducible() {
    let m = model();
    let ps = prompts(&m);
    let a = generate(&m.model, None, &ps, &params(4, 1)).unwrap();
    assert_eq!(a.len(), 12);
    for (i, g) in a.iter().enumerate() {
        assert_eq!(g.prompt_index, i / 4);
        assert_eq!(g.tokens.len(), g.logprobs.len());
        assert!(g.truncated && g.tokens.len() == 12 && g.finish_reason == FinishReason::Length);
        assert!(g.logprobs.iter().all(|&l| l <= 0.0 && l.is_finite()));
    }
    assert_eq!(
        generate(&m.model, None, &ps, &params(4, 1)).unwrap(),
        a,
        "same seed, same output"
    );
    assert_ne!(
        generate(&m.model, None, &ps, &params(4, 2)).unwrap(),
        a,
        "another seed differs"
    );
    // a prompt's samples do not depend on the prompts after it (nor on their padding)
    let fewer = generate(&m.model, None, &ps[..2], &params(4, 1)).unwrap();
    let tokens = |g: &[Generation]| g.iter().map(|g| g.tokens.clone()).collect::<Vec<_>>();
    assert_eq!(tokens(&fewer), tokens(&a[..8]));
}

/// A KV-cache budget only cuts the rows into batches: one row per batch, three rows per batch
/// and all twelve at once give the same tokens (log-probs within 1e-5).
#[test]
fn kv_cache_budget_batches_rows_without_changing_them() {
    let m = model();
    let ps = prompts(&m);
    let p = params(4, 3);
    let longest = ps.iter().map(Vec::len).max().unwrap() + p.max_new_tokens;
    let row = KvCache::bytes_per_row(m.model.config(), m.model.dtype(), longest);
    let all = generate_within(&m.model, None, &ps, &p, usize::MAX, &NoEnvironment).unwrap();
    assert_eq!(all.len(), 12);
    for budget in [1, 3 * row, 3 * row + row / 2] {
        let cut = generate_within(&m.model, None, &ps, &p, budget, &NoEnvironment).unwrap();
        assert_eq!(cut.len(), all.len());
        for (a, b) in all.iter().zip(&cut) {
            assert_eq!(
                (a.prompt_index, &a.tokens),
                (b.prompt_index, &b.tokens),
                "budget {budget}"
            );
            let d = max_abs_diff(&a.logprobs, &b.logprobs);
            assert!(d < 1e-5, "budget {budget}: log-probs differ by {d}");
        }
    }
}

/// The observer sees the call advance one decoded token at a time, over every batch of rows:
/// tokens grow by the responses still running, finished responses never go back, and the
/// last report gives the responses' total tokens and longest length. Observing changes
/// nothing sampled.
#[test]
fn decode_progress_counts_every_token_of_the_call() {
    let m = model();
    let ps = prompts(&m);
    let p = SamplingParams {
        eos_token_ids: vec![5, 9, 11, 13, 17],
        ..params(4, 7)
    };
    let longest = ps.iter().map(Vec::len).max().unwrap() + p.max_new_tokens;
    let row = KvCache::bytes_per_row(m.model.config(), m.model.dtype(), longest);
    let plain = generate_within(&m.model, None, &ps, &p, usize::MAX, &NoEnvironment).unwrap();
    for budget in [usize::MAX, 5 * row] {
        let mut seen: Vec<DecodeProgress> = Vec::new();
        let gens = generate_observed(&m.model, None, &ps, &p, budget, &NoEnvironment, &mut |d| {
            seen.push(*d)
        })
        .unwrap();
        let tokens = |g: &[Generation]| g.iter().map(|g| g.tokens.clone()).collect::<Vec<_>>();
        assert_eq!(tokens(&gens), tokens(&plain), "budget {budget}");
        let last = *seen.last().unwrap();
        assert_eq!(
            last,
            DecodeProgress {
                responses: 12,
                finished: 12,
                tokens: gens.iter().map(|g| g.tokens.len()).sum(),
                longest: gens.iter().map(|g| g.tokens.len()).max().unwrap(),
            },
            "budget {budget}"
        );
        assert!(
            gens.iter().any(|g| g.tokens.len() < p.max_new_tokens),
            "some end early"
        );
        for w in seen.windows(2) {
            assert!(w[1].tokens >= w[0].tokens && w[1].finished >= w[0].finished);
            assert!(w[1].longest >= w[0].longest && w[1].finished <= 12);
        }
        // one report per decoded token of each batch, plus the final one
        assert!(seen.len() > p.max_new_tokens, "{} reports", seen.len());
    }
}

/// Sampling log-probs equal the training forward's at the same temperature (within 1e-4),
/// across left-padded prompts of different lengths and rows that stop early.
#[test]
fn sampling_logprobs_match_training_forward() {
    let m = model();
    let ps = prompts(&m);
    for (t, top_p, top_k) in [(1.0, 1.0, None), (0.7, 0.9, Some(20)), (0.0, 1.0, None)] {
        let p = SamplingParams {
            n: 3,
            temperature: t,
            top_p,
            top_k,
            max_new_tokens: 10,
            eos_token_ids: vec![5, 9, 11],
            seed: 3,
            ..Default::default()
        };
        let gens = generate(&m.model, None, &ps, &p).unwrap();
        let pairs: Vec<_> = gens
            .iter()
            .map(|g| (ps[g.prompt_index].clone(), g.tokens.clone()))
            .collect();
        let batch = TokenBatch::new(&pairs, 0, &Device::Cpu).unwrap();
        let lp = m
            .model
            .response_logprobs_no_grad(&batch, false, if t == 0.0 { 1.0 } else { t })
            .unwrap();
        let lp = lp.logprobs.to_vec2::<f32>().unwrap();
        for (i, g) in gens.iter().enumerate() {
            let d = max_abs_diff(&lp[i][..g.tokens.len()], &g.logprobs);
            assert!(d < 1e-4, "T={t}: row {i} differs by {d}");
            if g.finish_reason == FinishReason::Eos {
                assert!(p.eos_token_ids.contains(g.tokens.last().unwrap()) && !g.truncated);
            }
        }
    }
}

#[test]
fn greedy_is_deterministic_and_equals_top_k_1() {
    let m = model();
    let ps = prompts(&m);
    let greedy = SamplingParams {
        temperature: 0.0,
        n: 2,
        max_new_tokens: 8,
        ..Default::default()
    };
    let a = generate(&m.model, None, &ps, &greedy).unwrap();
    assert_eq!(a[0].tokens, a[1].tokens);
    let k1 = SamplingParams {
        temperature: 1.0,
        top_k: Some(1),
        seed: 9,
        ..greedy.clone()
    };
    let b = generate(&m.model, None, &ps, &k1).unwrap();
    let tokens = |g: &[Generation]| g.iter().map(|g| g.tokens.clone()).collect::<Vec<_>>();
    assert_eq!(tokens(&a), tokens(&b));
}

#[test]
fn stops_at_eos_and_stop_strings() {
    let m = model();
    let ps = prompts(&m);
    // every id but one is eos: each response is exactly one token unless it drew that one id
    let all_eos: Vec<u32> = (1..272).collect();
    let p = SamplingParams {
        n: 4,
        max_new_tokens: 6,
        eos_token_ids: all_eos,
        ..Default::default()
    };
    for g in generate(&m.model, None, &ps, &p).unwrap() {
        assert!(
            g.finish_reason == FinishReason::Eos || g.tokens[0] == 0,
            "{g:?}"
        );
        assert!(!g.truncated || g.tokens.iter().all(|&t| t == 0));
    }
    // stop strings: a single character that is very likely to appear
    let p = SamplingParams {
        n: 4,
        max_new_tokens: 40,
        stop_strings: vec!["1".into(), "e".into()],
        ..Default::default()
    };
    assert!(
        generate(&m.model, None, &ps, &p).is_err(),
        "stop strings need a tokenizer"
    );
    let gens = generate(&m.model, Some(&m.tokenizer.tokenizer), &ps, &p).unwrap();
    let mut stopped = 0;
    for g in gens {
        let text = m.tokenizer.decode(&g.tokens, false).unwrap();
        if g.finish_reason == FinishReason::Stop {
            stopped += 1;
            let before = m
                .tokenizer
                .decode(&g.tokens[..g.tokens.len() - 1], false)
                .unwrap();
            assert!(text.contains('1') || text.contains('e'), "{text:?}");
            assert!(
                !before.contains('1') && !before.contains('e'),
                "stopped late: {before:?}"
            );
        } else {
            assert!(
                !text.contains('1') && !text.contains('e'),
                "missed a stop string: {text:?}"
            );
        }
    }
    assert!(stopped > 0);
}

#[test]
fn rejects_bad_parameters() {
    let m = model();
    let ps = prompts(&m);
    for p in [
        SamplingParams {
            n: 0,
            ..Default::default()
        },
        SamplingParams {
            top_p: 0.0,
            ..Default::default()
        },
        SamplingParams {
            top_k: Some(0),
            ..Default::default()
        },
        SamplingParams {
            temperature: -1.0,
            ..Default::default()
        },
    ] {
        assert!(generate(&m.model, None, &ps, &p).is_err(), "{p:?}");
    }
    assert!(generate(&m.model, None, &[vec![]], &SamplingParams::default()).is_err());
    assert!(generate(&m.model, None, &[vec![100_000]], &SamplingParams::default()).is_err());
}

/// The plain-buffer CPU decode (`cpu/decode.rs`, every CPU f32 model) against the tensor path
/// (`forward_cached`, forced with `set_force_generic`) on the same weights: Qwen2 (biases,
/// tied head) and Qwen3 (q/k norms, untied head, head_dim 12), prompts of three lengths (left
/// padding), and eos ids that end rows early (rows dropped from the batch mid-decode). Same
/// tokens, log-probs within 1e-4.
#[test]
fn cpu_decode_equals_tensor_path() {
    for arch in ["qwen2", "qwen3"] {
        let cfg = small_config(arch, 64);
        let (fast, varmap) = peaky_model(&cfg, 11, DType::F32);
        let mut slow = rlvr_model::Decoder::new(
            &cfg,
            candle_nn::VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu),
        )
        .unwrap();
        slow.set_force_generic(true);
        let prompts = vec![vec![3u32, 17, 29, 4, 8], vec![9], vec![22, 5, 61]];
        for (temperature, eos) in [(1.0, vec![]), (0.8, vec![7, 13, 40]), (0.0, vec![2])] {
            let p = SamplingParams {
                n: 4,
                temperature,
                max_new_tokens: 16,
                eos_token_ids: eos.clone(),
                seed: 5,
                ..Default::default()
            };
            let a = generate(&fast, None, &prompts, &p).unwrap();
            let b = generate(&slow, None, &prompts, &p).unwrap();
            let ended_early = a.iter().filter(|g| g.tokens.len() < 16).count();
            for (i, (x, y)) in a.iter().zip(&b).enumerate() {
                assert_eq!(x.tokens, y.tokens, "{arch} T={temperature}: row {i}");
                assert_eq!(x.finish_reason, y.finish_reason);
                let d = max_abs_diff(&x.logprobs, &y.logprobs);
                assert!(
                    d < 1e-4,
                    "{arch} T={temperature}: row {i} log-probs differ by {d}"
                );
            }
            if !eos.is_empty() && temperature > 0.0 {
                assert!(
                    ended_early > 0,
                    "{arch}: no row ended early, rows never dropped"
                );
            }
        }
    }
}

/// An environment that writes `[reply..]` after every sampled token of prompt 0 whose id is
/// even, and `[eos]` after the `end_after`-th sampled token of prompt 1.
struct Scripted {
    reply: Vec<u32>,
    eos: u32,
    end_after: usize,
}

impl Environment for Scripted {
    fn respond(&self, prompt_index: usize, response: &[u32]) -> Vec<u32> {
        match prompt_index {
            0 if response.last().is_some_and(|t| t % 2 == 0) => self.reply.clone(),
            1 if response.len() == self.end_after => vec![self.eos],
            _ => Vec::new(),
        }
    }
}

#[test]
fn environment_tokens_are_fed_to_the_model_and_flagged() {
    let m = model();
    let ps = prompts(&m);
    let mut p = SamplingParams {
        temperature: 0.0,
        max_new_tokens: 16,
        ..params(2, 3)
    };
    // an end-of-sequence id the model never picks here, so that only the environment ends
    let plain = generate(&m.model, None, &ps, &p).unwrap();
    let eos = (7..)
        .find(|t| plain.iter().all(|g| !g.tokens.contains(t)))
        .unwrap();
    p.eos_token_ids = vec![eos];
    let env = Scripted {
        reply: vec![5, 6],
        eos,
        end_after: 3,
    };
    let gens = generate_within(&m.model, None, &ps, &p, usize::MAX, &env).unwrap();
    let mut inserted_somewhere = false;
    for g in &gens {
        assert_eq!(g.tokens.len(), g.logprobs.len());
        match g.prompt_index {
            0 => {
                // every sampled even id is followed by the reply, flagged, with log-prob 0
                assert_eq!(g.inserted.len(), g.tokens.len(), "{g:?}");
                let mut k = 0;
                while k < g.tokens.len() {
                    assert!(!g.inserted[k], "{g:?} at {k}");
                    if g.tokens[k] % 2 == 0 && k + 1 < g.tokens.len() {
                        let n = (g.tokens.len() - k - 1).min(2);
                        assert_eq!(g.tokens[k + 1..k + 1 + n], [5, 6][..n], "{g:?}");
                        assert!(g.inserted[k + 1..k + 1 + n].iter().all(|&f| f));
                        assert!(g.logprobs[k + 1..k + 1 + n].iter().all(|&l| l == 0.0));
                        inserted_somewhere = true;
                        k += 1 + n;
                    } else {
                        k += 1;
                    }
                }
            }
            1 => {
                // the inserted eos ends the response, whatever the model would say
                assert_eq!(g.tokens.len(), 4, "{g:?}");
                assert_eq!(g.tokens[3], eos);
                assert_eq!(g.inserted, [false, false, false, true]);
                assert_eq!(g.finish_reason, FinishReason::Eos);
            }
            _ => assert!(g.inserted.is_empty(), "nothing inserted: {g:?}"),
        }
    }
    assert!(inserted_somewhere, "the script never fired: {gens:?}");
    // later tokens see the inserted ones: greedy decoding from the prompt plus any prefix of a
    // response (inserted tokens included) continues it exactly
    let g = &gens[0];
    for cut in 1..g.tokens.len() {
        if g.inserted[cut] {
            continue;
        }
        let mut prompt = ps[0].clone();
        prompt.extend(&g.tokens[..cut]);
        let rest = generate(
            &m.model,
            None,
            &[prompt],
            &SamplingParams {
                n: 1,
                max_new_tokens: 1,
                ..p.clone()
            },
        )
        .unwrap();
        assert_eq!(
            rest[0].tokens[0], g.tokens[cut],
            "after {cut} tokens of {g:?}"
        );
    }
    // an environment that writes an id outside the vocabulary is an error, not a panic
    let bad = Scripted {
        reply: vec![u32::MAX],
        eos,
        end_after: 3,
    };
    let err = generate_within(&m.model, None, &ps, &p, usize::MAX, &bad).unwrap_err();
    assert!(err.to_string().contains("vocab_size"), "{err}");
}
