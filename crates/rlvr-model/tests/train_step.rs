//! The memory-bounded training step (`Decoder::loss_and_grads`) and the graph-free forward
//! (`Decoder::response_logprobs_no_grad`) against autograd through the reference decoder
//! (tests/common/reference.rs): both model paths (CPU fused ops, and the device-generic path
//! with the chunked `generic/attention.rs` attention), with and without activation checkpointing, GQA,
//! Qwen3 q/k norms, right and key padding, f64 finite differences, bf16.

mod common;

use candle_core::{DType, Device, Tensor, Var};
use common::*;
use rlvr_model::{
    init_random, Decoder, DecoderConfig, ResponseLogProbs, TokenBatch, TrainForwardOptions,
};

const TEMP: f64 = 0.8;

/// `sum(lp * w) + 0.3 * sum(entropy)`, the loss every comparison uses.
fn loss_of(out: &ResponseLogProbs, w: &Tensor) -> candle_core::Result<Tensor> {
    let ent = out.entropy.as_ref().expect("entropy requested");
    out.logprobs
        .broadcast_mul(&w.to_dtype(out.logprobs.dtype())?)?
        .sum_all()?
        + (ent * 0.3)?.sum_all()?
}

fn weights_for(batch: &TokenBatch) -> Tensor {
    let r = batch.max_response_len();
    let w: Vec<f32> = (0..batch.len() * r)
        .map(|i| ((i * 5 % 7) as f32 - 3.0) / 3.0)
        .collect();
    Tensor::from_vec(w, (batch.len(), r), &Device::Cpu).unwrap()
}

type Grads = Vec<(String, Vec<f64>)>;

fn collect(varmap: &candle_nn::VarMap, get: impl Fn(&Var) -> Option<Tensor>) -> Grads {
    let data = varmap.data().lock().unwrap();
    let mut g: Grads = data
        .iter()
        .map(|(n, v)| {
            let t = get(v).unwrap_or_else(|| panic!("{n}: no gradient"));
            (
                n.clone(),
                t.to_dtype(DType::F64)
                    .unwrap()
                    .flatten_all()
                    .unwrap()
                    .to_vec1::<f64>()
                    .unwrap(),
            )
        })
        .collect();
    g.sort_by(|a, b| a.0.cmp(&b.0));
    g
}

/// (log-probs, entropies, gradients) from `loss_and_grads`.
fn walk(
    model: &Decoder,
    varmap: &candle_nn::VarMap,
    batch: &TokenBatch,
    ckpt: bool,
) -> (Vec<f64>, Vec<f64>, Grads, f64) {
    let w = weights_for(batch);
    let opts = TrainForwardOptions {
        temperature: TEMP,
        with_entropy: true,
        gradient_checkpointing: ckpt,
    };
    let step = model
        .loss_and_grads::<rlvr_model::Error, _>(batch, &opts, |out| Ok(loss_of(out, &w)?))
        .unwrap();
    assert!(
        !step.out.logprobs.track_op(),
        "returned log-probs are detached"
    );
    // the weights' gradients and nothing else (no gradient of an intermediate tensor is
    // kept for the whole step)
    assert_eq!(
        step.grads.get_ids().count(),
        varmap.all_vars().len(),
        "one gradient per weight"
    );
    let flat = |t: &Tensor| {
        t.to_dtype(DType::F64)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f64>()
            .unwrap()
    };
    (
        flat(&step.out.logprobs),
        flat(step.out.entropy.as_ref().unwrap()),
        collect(varmap, |v| step.grads.get(v.as_tensor()).cloned()),
        step.loss,
    )
}

/// The same from autograd through the reference decoder (plain ops: `[T, T]` scores,
/// host-built mask, unchunked softmax and vocabulary).
fn autograd(
    model: &Decoder,
    varmap: &candle_nn::VarMap,
    batch: &TokenBatch,
) -> (Vec<f64>, Vec<f64>, Grads, f64) {
    let w = weights_for(batch);
    let out = Reference::new(model.config(), varmap).response_logprobs(batch, TEMP);
    let loss = loss_of(&out, &w).unwrap();
    let grads = loss.backward().unwrap();
    let flat = |t: &Tensor| {
        t.to_dtype(DType::F64)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f64>()
            .unwrap()
    };
    (
        flat(&out.logprobs),
        flat(out.entropy.as_ref().unwrap()),
        collect(varmap, |v| grads.get(v.as_tensor()).cloned()),
        loss.to_dtype(DType::F64).unwrap().to_scalar().unwrap(),
    )
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn max_abs(a: &[f64]) -> f64 {
    a.iter().map(|x| x.abs()).fold(0.0, f64::max)
}

/// Entry-wise difference relative to the tensor's largest gradient, for every tensor.
fn assert_grads_close(a: &Grads, b: &Grads, rel: f64, what: &str) {
    assert_eq!(a.len(), b.len());
    for ((name, x), (_, y)) in a.iter().zip(b) {
        let scale = max_abs(y).max(1e-6);
        let d = max_diff(x, y) / scale;
        assert!(
            d < rel,
            "{what}: {name} differs by {d} (relative to {scale})"
        );
    }
}

/// A batch with one row that is not right padding (a pad key inside its prompt), so the
/// key-padding mask is in use.
fn holed_batch(vocab: u32) -> TokenBatch {
    let mut rows: Vec<(Vec<u32>, Vec<u32>, usize)> = Vec::new();
    // (ids, mask, response_start): row 0 has a pad at position 1 inside the prompt
    let ids0: Vec<u32> = vec![5, 0, 9, 11, 3, 7, 2, 8];
    let mask0 = vec![1, 0, 1, 1, 1, 1, 1, 1];
    let ids1: Vec<u32> = vec![4, 6, 1, 12, 0, 0, 0, 0];
    let mask1 = vec![1, 1, 1, 1, 0, 0, 0, 0];
    rows.push((ids0, mask0, 3));
    rows.push((ids1, mask1, 2));
    let ids: Vec<Vec<u32>> = rows
        .iter()
        .map(|r| r.0.iter().map(|&x| x % vocab).collect())
        .collect();
    let mask: Vec<Vec<u32>> = rows.iter().map(|r| r.1.clone()).collect();
    TokenBatch {
        input_ids: Tensor::new(ids, &Device::Cpu).unwrap(),
        attention_mask: Tensor::new(mask, &Device::Cpu).unwrap(),
        response_start: vec![3, 2],
        response_len: vec![5, 2],
        packing: None,
    }
}

/// The walk equals the reference's autograd on both paths, with and without checkpointing, with the
/// attention and the vocabulary split into many chunks (3 query rows, 3 logit rows), for
/// Qwen2 (biases, tied head) and Qwen3 (q/k norms, untied), GQA (4 heads on 2 kv heads), a
/// right-padded batch and a batch with a padding key inside a prompt.
#[test]
fn walk_matches_autograd_on_both_paths() {
    for arch in ["qwen2", "qwen3"] {
        let cfg = small_config(arch, 40);
        for generic in [false, true] {
            let (mut model, varmap) = peaky_model(&cfg, 3, DType::F32);
            model.set_force_generic(generic);
            model.set_attention_chunk_rows(3);
            model.set_logits_chunk_elems(3 * 40);
            for (bname, b) in [("right-padded", batch(40)), ("key-padded", holed_batch(40))] {
                let (lp_r, ent_r, g_r, loss_r) = autograd(&model, &varmap, &b);
                for ckpt in [false, true] {
                    let what = format!("{arch} generic={generic} ckpt={ckpt} {bname}");
                    let (lp, ent, g, loss) = walk(&model, &varmap, &b, ckpt);
                    assert!(max_diff(&lp, &lp_r) < 1e-5, "{what}: log-probs");
                    assert!(max_diff(&ent, &ent_r) < 1e-5, "{what}: entropies");
                    assert!(
                        (loss - loss_r).abs() < 1e-4 * loss_r.abs().max(1.0),
                        "{what}"
                    );
                    assert_grads_close(&g, &g_r, 1e-4, &what);
                }
            }
        }
    }
}

/// Activation checkpointing changes no gradient: f32, relative 1e-5, on both paths.
#[test]
fn checkpointing_gives_the_same_gradients() {
    for generic in [false, true] {
        let cfg = small_config("qwen3", 50);
        let (mut model, varmap) = peaky_model(&cfg, 5, DType::F32);
        model.set_force_generic(generic);
        model.set_attention_chunk_rows(4);
        let b = batch(50);
        let (lp0, _, g0, _) = walk(&model, &varmap, &b, false);
        let (lp1, _, g1, _) = walk(&model, &varmap, &b, true);
        assert_eq!(lp0, lp1);
        assert_grads_close(&g1, &g0, 1e-5, &format!("generic={generic}"));
        // and the gradients are not trivially zero
        assert!(g0.iter().all(|(_, g)| max_abs(g) > 0.0));
    }
}

/// On the device-generic path in f64, the walk's gradient (checkpointed, chunked attention
/// with 2 query rows) matches central differences of its own loss for three entries of every
/// tensor, key padding included.
#[test]
fn generic_walk_matches_finite_differences_in_f64() {
    for arch in ["qwen2", "qwen3"] {
        let cfg = small_config(arch, 30);
        let (mut model, varmap) = peaky_model(&cfg, 2, DType::F64);
        model.set_force_generic(true);
        model.set_attention_chunk_rows(2);
        let b = holed_batch(30);
        let (_, _, grads, _) = walk(&model, &varmap, &b, true);
        let loss = |m: &Decoder| -> f64 {
            let w = weights_for(&b);
            let out = m.response_logprobs_no_grad(&b, true, TEMP).unwrap();
            loss_of(&out, &w).unwrap().to_scalar::<f64>().unwrap()
        };
        assert_matches_central_differences(
            &varmap,
            |name, _| {
                let (gname, g) = grads.iter().find(|(n, _)| n == name).unwrap();
                assert_eq!(gname, name);
                g.clone()
            },
            || loss(&model),
            arch,
        );
    }
}

/// The same on the CPU fused path (the hand-written decoder-layer backward of `cpu/layer.rs`:
/// RMSNorm backward with the residual fused in, SwiGLU, attention, q/k norms, concatenated
/// projections and their biases), with and without checkpointing, key padding included.
#[test]
fn fused_walk_matches_finite_differences_in_f64() {
    for arch in ["qwen2", "qwen3"] {
        let cfg = small_config(arch, 30);
        let (model, varmap) = peaky_model(&cfg, 2, DType::F64);
        let b = holed_batch(30);
        for ckpt in [false, true] {
            let (_, _, grads, _) = walk(&model, &varmap, &b, ckpt);
            let loss = |m: &Decoder| -> f64 {
                let w = weights_for(&b);
                let out = m.response_logprobs_no_grad(&b, true, TEMP).unwrap();
                loss_of(&out, &w).unwrap().to_scalar::<f64>().unwrap()
            };
            assert_matches_central_differences(
                &varmap,
                |name, _| {
                    let (gname, g) = grads.iter().find(|(n, _)| n == name).unwrap();
                    assert_eq!(gname, name);
                    g.clone()
                },
                || loss(&model),
                &format!("{arch} ckpt={ckpt}"),
            );
        }
    }
}

/// The fused CPU kernels split rows into fixed blocks (not per thread) and sum per-block
/// partials in block order: with a built-in crate's products (matrixmultiply or gemm) the
/// walk's values and gradients are bit-identical on 1 and 3 threads. OpenBLAS's products change in the last bits with the
/// thread count (`cpu/matmul.rs`), so when a BLAS is loaded the walk is only checked to
/// repeat itself bit for bit on each count.
#[test]
fn fused_walk_does_not_depend_on_the_thread_count() {
    let cfg = small_config("qwen2", 40);
    let (model, varmap) = peaky_model(&cfg, 3, DType::F32);
    // 12 x 20 = 240 rows: several blocks of rows per kernel
    let pairs: Vec<(Vec<u32>, Vec<u32>)> = (0..12u32)
        .map(|r| {
            let p = (0..5).map(|i| (r * 3 + i * 7 + 1) % 40).collect();
            let resp = (0..15).map(|i| (r * 11 + i * 5 + 2) % 40).collect();
            (p, resp)
        })
        .collect();
    let b = TokenBatch::new(&pairs, 0, &Device::Cpu).unwrap();
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| walk(&model, &varmap, &b, false))
    };
    let (lp1, ent1, g1, loss1) = run(1);
    let (lp3, ent3, g3, loss3) = if rlvr_model::matmul::backend().is_blas() {
        assert_eq!(run(3), run(3));
        run(1)
    } else {
        run(3)
    };
    assert_eq!(lp1, lp3);
    assert_eq!(ent1, ent3);
    assert_eq!(loss1, loss3);
    assert_eq!(g1, g3);
}

/// A loss of the log-probs alone (no entropy term, entropies computed or not): the fused
/// vocabulary backward's `g_ent`-free branch against the reference's autograd, both paths.
#[test]
fn walk_without_an_entropy_term_matches_autograd() {
    let cfg = small_config("qwen2", 40);
    for generic in [false, true] {
        let (mut model, varmap) = peaky_model(&cfg, 3, DType::F32);
        model.set_force_generic(generic);
        model.set_logits_chunk_elems(5 * 40);
        let b = holed_batch(40);
        let w = weights_for(&b);
        let lp_loss = |out: &ResponseLogProbs| -> candle_core::Result<Tensor> {
            out.logprobs
                .broadcast_mul(&w.to_dtype(out.logprobs.dtype())?)?
                .sum_all()
        };
        let out = Reference::new(&cfg, &varmap).response_logprobs(&b, TEMP);
        let grads = lp_loss(&out).unwrap().backward().unwrap();
        let g_r = collect(&varmap, |v| grads.get(v.as_tensor()).cloned());
        for with_entropy in [false, true] {
            let opts = TrainForwardOptions {
                temperature: TEMP,
                with_entropy,
                gradient_checkpointing: false,
            };
            let step = model
                .loss_and_grads::<rlvr_model::Error, _>(&b, &opts, |o| Ok(lp_loss(o)?))
                .unwrap();
            let g = collect(&varmap, |v| step.grads.get(v.as_tensor()).cloned());
            assert_grads_close(
                &g,
                &g_r,
                1e-4,
                &format!("generic={generic} with_entropy={with_entropy}"),
            );
        }
    }
}

/// The graph-free forward gives the reference's values and tracks nothing.
#[test]
fn no_grad_forward_matches_and_builds_no_graph() {
    for generic in [false, true] {
        let cfg = small_config("qwen2", 40);
        let (mut model, varmap) = peaky_model(&cfg, 4, DType::F32);
        model.set_force_generic(generic);
        let reference = Reference::new(&cfg, &varmap);
        for b in [batch(40), holed_batch(40)] {
            let a = reference.response_logprobs(&b, TEMP);
            let n = model.response_logprobs_no_grad(&b, true, TEMP).unwrap();
            assert!(a.logprobs.track_op(), "the reference is tracked");
            assert!(!n.logprobs.track_op() && !n.entropy.as_ref().unwrap().track_op());
            let f = |t: &Tensor| t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
            assert!(max_abs_diff(&f(&a.logprobs), &f(&n.logprobs)) < 1e-5);
            assert!(max_abs_diff(&f(&a.entropy.unwrap()), &f(&n.entropy.unwrap())) < 1e-5);
            assert!(model
                .response_logprobs_no_grad(&b, false, TEMP)
                .unwrap()
                .entropy
                .is_none());
        }
    }
}

/// bf16 weights run on the device-generic path (scores, softmax and log-softmax upcast to
/// f32) and agree with an f32 model holding the same (bf16-rounded) weights, to bf16
/// precision. Tolerances, with `e = 2^-8` the spacing of bf16 numbers relative to their size
/// (8 significant bits): every matmul output and stored activation of the bf16 walk is
/// rounded to bf16, a relative error of up to `e / 2` each, a few per layer over 2 layers, so
/// log-probs may differ by a few `e` relative to their scale (here `max |log p|` is about 10,
/// logits reach tens): the bound is `4 e max |log p|` (measured: 0.105 against a bound of
/// 0.16); each gradient tensor within `16 e` = 6% relative (L2; measured at most 3.4%) and
/// the whole gradient's cosine above 0.999 (measured 0.99986). A wrong cast or a dropped
/// term would miss these by orders of magnitude.
#[test]
fn bf16_runs_on_the_generic_path() {
    let cfg = small_config("qwen3", 40);
    let (_, v) = peaky_model(&cfg, 6, DType::F32);
    let rounded = |dtype: DType| {
        let vm = candle_nn::VarMap::new();
        {
            let src = v.data().lock().unwrap();
            let mut d = vm.data().lock().unwrap();
            for (n, var) in src.iter() {
                let t = var
                    .as_tensor()
                    .to_dtype(DType::BF16)
                    .unwrap()
                    .to_dtype(dtype)
                    .unwrap();
                d.insert(n.clone(), Var::from_tensor(&t).unwrap());
            }
        }
        let mut m = Decoder::new(
            &cfg,
            candle_nn::VarBuilder::from_varmap(&vm, dtype, &Device::Cpu),
        )
        .unwrap();
        m.set_attention_chunk_rows(3);
        m.set_force_generic(true);
        (m, vm)
    };
    let (m32, v32) = rounded(DType::F32);
    let (m16, v16) = rounded(DType::BF16);
    let b = batch(40);
    let (lp32, _, g32, _) = walk(&m32, &v32, &b, true);
    let (lp16, _, g16, _) = walk(&m16, &v16, &b, true);
    let e = 2f64.powi(-8);
    let (d, scale) = (max_diff(&lp16, &lp32), max_abs(&lp32));
    assert!(
        d < 4.0 * e * scale,
        "log-probs differ by {d} (scale {scale})"
    );
    let dot: f64 = g32
        .iter()
        .zip(&g16)
        .map(|((_, a), (_, b))| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>())
        .sum();
    let n2 = |g: &Grads| {
        g.iter()
            .flat_map(|(_, v)| v)
            .map(|x| x * x)
            .sum::<f64>()
            .sqrt()
    };
    let cos = dot / (n2(&g32) * n2(&g16));
    assert!(cos > 0.999, "cosine {cos}");
    for ((name, a), (_, b)) in g32.iter().zip(&g16) {
        let diff: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
        let rel = diff.sqrt() / a.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!(
            rel < 16.0 * e,
            "{name}: bf16 gradient off by {rel} relative"
        );
    }
}

/// The testbed's shape and the warm start's loss (token-mean cross-entropy): hidden 128,
/// 4 layers, 4 heads of 32, MLP 384, 32 rows with prompts of 8-40 and responses of 4-96
/// tokens, an unscaled random init and the model's default chunk sizes. The CPU fused walk
/// and the generic walk each match the reference's autograd.
#[test]
fn walk_matches_autograd_at_the_testbed_shape() {
    let vocab = 60u32;
    let mut cfg = DecoderConfig::tiny(vocab as usize);
    cfg.num_key_value_heads = 4;
    cfg.head_dim = 32;
    let pairs: Vec<(Vec<u32>, Vec<u32>)> = (0..32u32)
        .map(|r| {
            let p = (0..8 + (r * 7) % 33)
                .map(|i| (r * 3 + i * 7 + 1) % vocab)
                .collect();
            let n = 4 + (r * 29) % 93;
            let resp = (0..n).map(|i| (r * 11 + i * 5 + 2) % vocab).collect();
            (p, resp)
        })
        .collect();
    let b = TokenBatch::new(&pairs, 0, &Device::Cpu).unwrap();
    let mask = b.response_mask().unwrap();
    let n = mask.sum_all().unwrap().to_scalar::<f32>().unwrap() as f64;
    let ce = |out: &ResponseLogProbs| -> candle_core::Result<Tensor> {
        out.logprobs.broadcast_mul(&mask)?.sum_all()? * (-1.0 / n)
    };
    for generic in [false, true] {
        let (_, varmap) = init_random(&cfg, 11, DType::F32, &Device::Cpu).unwrap();
        let mut model = Decoder::new(
            &cfg,
            candle_nn::VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu),
        )
        .unwrap();
        model.set_force_generic(generic);
        let out = Reference::new(&cfg, &varmap).response_logprobs(&b, 1.0);
        let loss_r = ce(&out).unwrap();
        let grads = loss_r.backward().unwrap();
        let g_r = collect(&varmap, |v| grads.get(v.as_tensor()).cloned());
        let step = model
            .loss_and_grads::<rlvr_model::Error, _>(&b, &TrainForwardOptions::default(), |o| {
                Ok(ce(o)?)
            })
            .unwrap();
        let g = collect(&varmap, |v| step.grads.get(v.as_tensor()).cloned());
        let loss_r = loss_r.to_scalar::<f32>().unwrap() as f64;
        assert!(
            (step.loss - loss_r).abs() < 1e-5 * loss_r,
            "generic={generic}: loss {} vs {loss_r}",
            step.loss
        );
        assert_grads_close(&g, &g_r, 1e-3, &format!("testbed shape, generic={generic}"));
    }
}

/// Mixed lengths for packing: one sequence as long as the row (12 tokens), empty responses,
/// one-token prompts, and lengths that fill rows exactly and not.
fn packing_pairs(vocab: u32) -> Vec<(Vec<u32>, Vec<u32>)> {
    let ids = |n: usize, k: u32| {
        (0..n as u32)
            .map(|i| (i * 11 + k * 17 + 5) % vocab)
            .collect::<Vec<_>>()
    };
    [
        (3, 5),
        (4, 8),
        (6, 2),
        (1, 7),
        (4, 0),
        (2, 1),
        (1, 1),
        (5, 0),
        (2, 3),
    ]
    .iter()
    .enumerate()
    .map(|(k, &(p, r))| (ids(p, k as u32), ids(r, k as u32 + 50)))
    .collect()
}

/// A packed batch (several sequences per row, per-sequence causal attention, positions that
/// restart) gives the log-probs, entropies, loss and gradients of the right-padded batch of the
/// same pairs within 1e-5, on both paths, with and without checkpointing, for Qwen2 and Qwen3,
/// in the training walk and in the no-gradient forward, with attention and vocabulary chunks
/// that cut across sequences.
#[test]
fn packed_batches_match_padded_ones() {
    let vocab = 60;
    let pairs = packing_pairs(vocab);
    let padded = TokenBatch::new(&pairs, 0, &Device::Cpu).unwrap();
    let packed = TokenBatch::packed(&pairs, 0, &Device::Cpu).unwrap();
    // the layout really packs: 9 sequences of 3..12 tokens in 5 rows of 12
    assert_eq!(packed.input_ids.dims(), [5, 12]);
    assert_eq!(padded.computed_tokens(), 108);
    for arch in ["qwen2", "qwen3"] {
        let cfg = small_config(arch, vocab as usize);
        for generic in [false, true] {
            let (mut model, varmap) = every_weight_random(&cfg, 11, DType::F32);
            model.set_force_generic(generic);
            model.set_attention_chunk_rows(5);
            model.set_logits_chunk_elems(7 * vocab as usize);
            let (lp_r, ent_r, g_r, loss_r) = walk(&model, &varmap, &padded, false);
            for ckpt in [false, true] {
                let what = format!("{arch} generic={generic} ckpt={ckpt}");
                let (lp, ent, g, loss) = walk(&model, &varmap, &packed, ckpt);
                assert!(max_diff(&lp, &lp_r) < 1e-5, "{what}: log-probs");
                assert!(max_diff(&ent, &ent_r) < 1e-5, "{what}: entropies");
                assert!(
                    (loss - loss_r).abs() < 1e-5 * loss_r.abs().max(1.0),
                    "{what}"
                );
                assert_grads_close(&g, &g_r, 1e-5, &what);
            }
            let no_grad = |b: &TokenBatch| {
                let out = model.response_logprobs_no_grad(b, true, TEMP).unwrap();
                let flat = |t: &Tensor| t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                (flat(&out.logprobs), flat(out.entropy.as_ref().unwrap()))
            };
            let ((lp0, e0), (lp1, e1)) = (no_grad(&padded), no_grad(&packed));
            let what = format!("{arch} generic={generic} no-grad");
            assert!(max_abs_diff(&lp0, &lp1) < 1e-5, "{what}: log-probs");
            assert!(max_abs_diff(&e0, &e1) < 1e-5, "{what}: entropies");
            // a sequence alone gives the same numbers as inside the packed batch
            let alone = TokenBatch::new(&pairs[1..2], 0, &Device::Cpu).unwrap();
            let (lp_a, _) = no_grad(&alone);
            let r = packed.max_response_len();
            assert!(max_abs_diff(&lp_a, &lp1[r..r + 8]) < 1e-5, "{what}: alone");
        }
    }
}

/// Packing cannot leak across sequences: changing one sequence's tokens changes no other
/// sequence's log-probs in the packed batch (bit for bit on the fused path).
#[test]
fn packed_sequences_do_not_see_each_other() {
    let vocab = 60;
    let cfg = small_config("qwen2", vocab as usize);
    let (model, _) = every_weight_random(&cfg, 4, DType::F32);
    let pairs = packing_pairs(vocab);
    let lp = |pairs: &[(Vec<u32>, Vec<u32>)]| {
        let b = TokenBatch::packed(pairs, 0, &Device::Cpu).unwrap();
        let out = model.response_logprobs_no_grad(&b, false, 1.0).unwrap();
        out.logprobs.to_vec2::<f32>().unwrap()
    };
    let before = lp(&pairs);
    let mut changed = pairs.clone();
    // sequence 3 (1 + 7 tokens) shares a row with a shorter sequence
    let row_of = |i: usize| {
        let b = TokenBatch::packed(&pairs, 0, &Device::Cpu).unwrap();
        b.packing.unwrap().place[i].0
    };
    let mates: Vec<usize> = (0..pairs.len())
        .filter(|&i| i != 3 && row_of(i) == row_of(3))
        .collect();
    assert!(!mates.is_empty(), "sequence 3 must share its row");
    let (prompt, response) = &mut changed[3];
    for x in prompt.iter_mut().chain(response.iter_mut()) {
        *x = (*x + 29) % vocab;
    }
    let after = lp(&changed);
    for i in 0..pairs.len() {
        if i == 3 {
            assert_ne!(before[i], after[i], "the changed sequence changes");
        } else {
            assert_eq!(before[i], after[i], "sequence {i} (row mates {mates:?})");
        }
    }
}
