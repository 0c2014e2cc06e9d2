//! Log-probs and entropies of target tokens over a large vocabulary in bounded memory.
//!
//! `target_logprobs(h, W, targets, T)` returns `[N, 2]`: column 0 is
//! `log softmax(h W^T / T)[target]`, column 1 the entropy of `softmax(h W^T / T)`. The
//! forward runs chunk by chunk without a graph, and the backward (a candle custom op)
//! recomputes each chunk's logits, so neither pass ever holds more than one
//! `[chunk, vocab]` block: the full `N x vocab` logits are never stored for autograd.
//!
//! Gradients, per row with upstream `(g_lp, g_ent)` and `p = softmax(z)`, `z = h W^T / T`:
//! `dL/dz_j = g_lp (1[j = target] - p_j) - g_ent p_j (log p_j + H)`, then
//! `dL/dh = (dL/dz / T) W` and `dL/dW = (dL/dz / T)^T h`.

use candle_core::{CpuStorage, CustomOp2, DType, Layout, Shape, Tensor, D};

use crate::error::Result;
use crate::matmul::matmul;

/// `[N, 2]` (log-prob of target, entropy) for `h` `[N, H]`, `w` `[V, H]`, `targets` `[N, 1]`
/// u32, computed in `dtype` (f32 or f64) by chunks of `chunk` rows, with no graph.
fn chunked(
    h: &Tensor,
    w: &Tensor,
    targets: &Tensor,
    temperature: f64,
    chunk: usize,
    dtype: DType,
) -> Result<Tensor> {
    let n = h.dim(0)?;
    let wt = w.t()?;
    let mut parts = Vec::new();
    let mut start = 0;
    while start < n {
        let len = chunk.min(n - start);
        let z = (matmul(&h.narrow(0, start, len)?, &wt)?.to_dtype(dtype)? / temperature)?;
        let logp = candle_nn::ops::log_softmax(&z, D::Minus1)?;
        let lp = logp.gather(&targets.narrow(0, start, len)?, 1)?;
        let ent = (logp.exp()? * &logp)?.sum_keepdim(1)?.neg()?;
        parts.push(Tensor::cat(&[&lp, &ent], 1)?);
        start += len;
    }
    Ok(Tensor::cat(&parts, 0)?)
}

struct TargetLogProbs {
    targets: Tensor,
    temperature: f64,
    chunk: usize,
    dtype: DType,
    /// The forward result, computed before the op is applied (the op only attaches the backward).
    out: Tensor,
}

impl CustomOp2 for TargetLogProbs {
    fn name(&self) -> &'static str {
        "target-logprobs"
    }

    fn cpu_fwd(
        &self,
        _: &CpuStorage,
        _: &Layout,
        _: &CpuStorage,
        _: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let flat = self.out.flatten_all()?;
        let storage = match self.dtype {
            DType::F64 => CpuStorage::F64(flat.to_vec1::<f64>()?),
            _ => CpuStorage::F32(flat.to_dtype(DType::F32)?.to_vec1::<f32>()?),
        };
        Ok((storage, self.out.shape().clone()))
    }

    fn bwd(
        &self,
        h: &Tensor,
        w: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        let (h, w) = (h.detach(), w.detach());
        let grad = grad.to_dtype(self.dtype)?;
        let n = h.dim(0)?;
        let wt = w.t()?;
        let mut dh = Vec::new();
        let mut dw = Tensor::zeros(w.shape(), self.dtype, w.device())?;
        let mut start = 0;
        while start < n {
            let len = self.chunk.min(n - start);
            let hc = h.narrow(0, start, len)?;
            let g_lp = grad.narrow(0, start, len)?.narrow(1, 0, 1)?;
            let g_ent = grad.narrow(0, start, len)?.narrow(1, 1, 1)?;
            let z = (matmul(&hc, &wt)?.to_dtype(self.dtype)? / self.temperature)?;
            let logp = candle_nn::ops::log_softmax(&z, D::Minus1)?;
            let p = logp.exp()?;
            let ent = (&p * &logp)?.sum_keepdim(1)?.neg()?;
            // dz = -p * (g_lp + g_ent * (log p + H)), plus g_lp at the target
            let coef = logp
                .broadcast_add(&ent)?
                .broadcast_mul(&g_ent)?
                .broadcast_add(&g_lp)?;
            let dz = (p * coef)?.neg()?;
            let dz = dz.scatter_add(
                &self.targets.narrow(0, start, len)?.contiguous()?,
                &g_lp.contiguous()?,
                1,
            )?;
            let dz = (dz / self.temperature)?;
            let dzw = dz.to_dtype(w.dtype())?;
            dh.push(matmul(&dzw, &w)?);
            dw = (dw + matmul(&dz.t()?, &hc.to_dtype(self.dtype)?)?)?;
            start += len;
        }
        Ok((Some(Tensor::cat(&dh, 0)?), Some(dw.to_dtype(w.dtype())?)))
    }
}

/// `[N, 2]` (log-prob of each target under `softmax(h w^T / temperature)`, entropy), with a
/// backward to `h` and `w` that recomputes the logits chunk by chunk. CPU only.
pub(crate) fn target_logprobs(
    h: &Tensor,
    w: &Tensor,
    targets: &Tensor,
    temperature: f64,
    chunk: usize,
    dtype: DType,
) -> Result<Tensor> {
    let out = chunked(&h.detach(), &w.detach(), targets, temperature, chunk, dtype)?;
    let op = TargetLogProbs {
        targets: targets.clone(),
        temperature,
        chunk,
        dtype,
        out,
    };
    Ok(h.apply_op2(w, op)?)
}

/// Softmax over the last dimension: candle's fused forward, with the backward written out,
/// `dx = p * (g - sum(g * p))`, so gradients flow (candle's own fused softmax has none) and
/// autograd keeps only `p`.
struct SoftmaxWithGrad {
    /// The forward result, computed before the op is applied.
    out: Tensor,
}

impl candle_core::CustomOp1 for SoftmaxWithGrad {
    fn name(&self) -> &'static str {
        "softmax-last-dim-with-grad"
    }

    fn cpu_fwd(&self, _: &CpuStorage, _: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let flat = self.out.flatten_all()?;
        let storage = match self.out.dtype() {
            DType::F64 => CpuStorage::F64(flat.to_vec1::<f64>()?),
            DType::F32 => CpuStorage::F32(flat.to_vec1::<f32>()?),
            other => candle_core::bail!("softmax-last-dim-with-grad: unsupported dtype {other:?}"),
        };
        Ok((storage, self.out.shape().clone()))
    }

    fn bwd(
        &self,
        _arg: &Tensor,
        res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<Option<Tensor>> {
        let p = res.detach();
        let dot = (grad * &p)?.sum_keepdim(D::Minus1)?;
        Ok(Some((grad.broadcast_sub(&dot)? * p)?))
    }
}

/// Differentiable softmax over the last dimension of an f32 or f64 CPU tensor.
pub(crate) fn softmax_with_grad(xs: &Tensor) -> Result<Tensor> {
    let out = candle_nn::ops::softmax_last_dim(&xs.detach())?;
    Ok(xs.apply_op1(SoftmaxWithGrad { out })?)
}
