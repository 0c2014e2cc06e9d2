//! [`GradAccum`]: gradients summed over micro-batches, with their sums of squares for
//! global-norm clipping.

use candle_core::{DType, Tensor, Var};

use super::{chunks, flat_view, fused_cpu, Params};

/// Gradients summed over micro-batches, one f32 tensor per parameter (None: no gradient yet).
///
/// The sums are written in place, chunk by chunk: adding a gradient holds it (in its own
/// dtype) and one f32 chunk, never a second f32 copy of the parameter. Element by element the
/// arithmetic is the plain `acc + f32(g)`, so the sums are bit-identical to out-of-place ones.
///
/// On the host, the pass that writes a sum also takes its sum of squares (in f64, in a fixed
/// order: the value [`Self::global_norm`] would compute) while each piece is in cache, so that
/// clipping does not read the gradients again ([`AdamW::clip_and_step`](super::AdamW::clip_and_step)). The accumulators
/// are private for that reason: a tensor handed out by [`Self::get`] is for reading; writing
/// into it in place (`slice_set`, an in-place op) would leave the recorded sum stale.
pub struct GradAccum {
    pub(super) grads: Vec<Option<Tensor>>,
    /// `squares[i]`: the sum of squares of `grads[i]`, recorded by the host pass that last
    /// wrote it; None where unknown (a device, a gradient set from outside, a scaled one).
    pub(super) squares: Vec<Option<f64>>,
}

impl GradAccum {
    pub fn new(params: &Params) -> Self {
        Self {
            grads: vec![None; params.len()],
            squares: vec![None; params.len()],
        }
    }

    /// The summed gradient of parameter `i` (None: none yet). For reading only (type docs).
    pub fn get(&self, i: usize) -> Option<&Tensor> {
        self.grads[i].as_ref()
    }

    /// Replaces the summed gradient of parameter `i` (with `g` itself, not a copy).
    pub fn set(&mut self, i: usize, g: Option<Tensor>) {
        self.grads[i] = g;
        self.squares[i] = None;
    }

    /// Adds the gradients of one backward pass, or of one piece of it
    /// ([`rlvr_model::Decoder::loss_and_grads_into`]'s sink): every parameter found in `store`.
    pub fn add(
        &mut self,
        params: &Params,
        store: &candle_core::backprop::GradStore,
    ) -> candle_core::Result<()> {
        for (i, var) in params.vars.iter().enumerate() {
            if let Some(g) = store.get(var.as_tensor()) {
                self.add_one(i, var, g)?;
            }
        }
        Ok(())
    }

    /// Adds `g`, a gradient of parameter `i` (`var`), to its sum.
    pub fn add_one(&mut self, i: usize, var: &Var, g: &Tensor) -> candle_core::Result<()> {
        let g = g.detach().flatten_all()?;
        if g.elem_count() != var.elem_count() {
            return Err(candle_core::Error::Msg(format!(
                "optimizer: a gradient of {} elements for a parameter of {}",
                g.elem_count(),
                var.elem_count()
            )));
        }
        // the host passes read f32, bf16 and f16; anything else (an f64 model's gradient) is
        // rounded to the accumulator's f32 first
        let g = match g.dtype() {
            DType::F32 | DType::BF16 | DType::F16 => g,
            _ => g.to_dtype(DType::F32)?,
        };
        let slot = &mut self.grads[i];
        self.squares[i] = None;
        let host = g.device().is_cpu() && g.is_contiguous();
        if host {
            // one pass in place (fused_cpu.rs), the sum of squares taken on the way; the
            // first piece is copied as it is (its own f32 copy, -0.0 kept), the
            // accumulator's one allocation
            self.squares[i] = Some(match slot {
                None => {
                    let (acc, squares) = fused_cpu::copy_with_sum_of_squares(&g)?;
                    *slot = Some(acc.reshape(var.shape())?);
                    squares
                }
                Some(acc) if acc.is_contiguous() && acc.device().is_cpu() => {
                    fused_cpu::add_in_place(acc, &g)?
                }
                Some(_) => {
                    return Err(candle_core::Error::Msg(
                        "optimizer: a gradient accumulator is not contiguous on the host".into(),
                    ))
                }
            });
            return Ok(());
        }
        if slot.is_none() {
            *slot = Some(Tensor::zeros(var.shape(), DType::F32, var.device())?);
            let acc = flat_view(slot.as_ref().expect("just set"), "a gradient")?;
            for (o, l) in chunks(g.elem_count()) {
                acc.slice_set(&g.narrow(0, o, l)?.to_dtype(DType::F32)?, 0, o)?;
            }
        } else {
            let acc = flat_view(slot.as_ref().expect("checked"), "a gradient")?;
            for (o, l) in chunks(g.elem_count()) {
                let sum = (acc.narrow(0, o, l)? + g.narrow(0, o, l)?.to_dtype(DType::F32)?)?;
                acc.slice_set(&sum, 0, o)?;
            }
        }
        Ok(())
    }

    /// The sum of squares of gradient `i`: the recorded one, else computed
    /// ([`sum_of_squares`]; the same value).
    pub(super) fn squares_of(&self, i: usize, g: &Tensor) -> candle_core::Result<f64> {
        match self.squares[i] {
            Some(s) => Ok(s),
            None => sum_of_squares(g),
        }
    }

    /// Deep copies of the gradients (the accumulator is updated in place).
    pub fn copies(&self) -> candle_core::Result<Vec<Option<Tensor>>> {
        self.grads
            .iter()
            .map(|g| g.as_ref().map(Tensor::copy).transpose())
            .collect()
    }

    /// The global L2 norm of all gradients (NaN or inf when any entry is). On the host the
    /// squares are summed in f64 in one pass (fused_cpu.rs); on a device, per tensor in f32.
    pub fn global_norm(&self) -> candle_core::Result<f64> {
        let mut sq = 0f64;
        for (i, g) in self.grads.iter().enumerate() {
            if let Some(g) = g {
                sq += self.squares_of(i, g)?;
            }
        }
        Ok(sq.sqrt())
    }

    /// Scales all gradients so the global norm is at most `max_norm` (0 = no clipping), in
    /// place. Returns the norm before clipping. ([`AdamW::clip_and_step`](super::AdamW::clip_and_step) folds the scale
    /// into the update instead on the host.)
    pub fn clip(&mut self, max_norm: f64) -> candle_core::Result<f64> {
        let norm = self.global_norm()?;
        if let Some(scale) = clip_scale(norm, max_norm) {
            self.scale_where(scale, &|_| true)?;
        }
        Ok(norm)
    }

    /// `g *= scale` in place for the gradients `take` selects, as candle's `affine(scale, 0)`
    /// rounds it.
    pub(super) fn scale_where(
        &mut self,
        scale: f64,
        take: &dyn Fn(usize) -> bool,
    ) -> candle_core::Result<()> {
        for (i, g) in self.grads.iter().enumerate() {
            let Some(g) = g.as_ref().filter(|_| take(i)) else {
                continue;
            };
            self.squares[i] = None;
            if g.device().is_cpu() && g.is_contiguous() && g.dtype() == DType::F32 {
                fused_cpu::scale_in_place(g, scale)?;
                continue;
            }
            let g = flat_view(g, "a gradient")?;
            for (o, l) in chunks(g.elem_count()) {
                g.slice_set(&g.narrow(0, o, l)?.affine(scale, 0.0)?, 0, o)?;
            }
        }
        Ok(())
    }
}

/// The sum of squares of one gradient: on the host in f64 in one pass (fused_cpu.rs), on a
/// device in f32.
pub(super) fn sum_of_squares(g: &Tensor) -> candle_core::Result<f64> {
    if g.device().is_cpu() && g.is_contiguous() && g.dtype() == DType::F32 {
        fused_cpu::sum_of_squares(g)
    } else {
        Ok(g.sqr()?.sum_all()?.to_scalar::<f32>()? as f64)
    }
}

/// The factor global-norm clipping multiplies the gradients by, torch's
/// `max_norm / (norm + 1e-6)` when the (finite) norm exceeds `max_norm > 0`; None otherwise.
pub(super) fn clip_scale(norm: f64, max_norm: f64) -> Option<f64> {
    (max_norm > 0.0 && norm.is_finite() && norm > max_norm).then(|| max_norm / (norm + 1e-6))
}
