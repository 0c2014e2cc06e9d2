//! AdamW with f32 moments and decoupled weight decay, gradient accumulation over micro-batches,
//! global-norm clipping, and the learning-rate schedule.
//!
//! Our own rather than candle-nn's: its `AdamW` keeps moments in the parameter dtype and has
//! no way to save or restore its state, and exact resume needs both.
//!
//! Mixed precision: when the model computes in bf16 or f16, the optimizer keeps an f32 master
//! copy of every such parameter. Gradients are accumulated in f32 ([`GradAccum`]), the update
//! is applied to the master, and the master is cast to the compute dtype once per step
//! (`w_compute = round(w_master)`). An update smaller than half a bf16 step (2^-8 |w|: about
//! 6e-5 at |w| = 0.02, far above a typical lr of 1e-6) would round away if applied to the bf16
//! weight in place; on the master it accumulates until the rounded value moves. An f32 model
//! has no master copy (the parameter is its own master).
//!
//! Optimizer offload (`model.optimizer_offload`, verl's `fsdp_config.optimizer_offload`,
//! DeepSpeed's ZeRO-Offload): the moments and an f32 master of every parameter (f32 ones too)
//! live on the host; each step copies the f32 gradients there a chunk at a time, updates
//! there, and copies the new weights back cast to the compute dtype. The device then holds
//! only the weights and the gradient accumulator. Same arithmetic element by element, so on
//! one device the result is bit-identical to the step without offload; the saved state is
//! the same file either way (an f32 parameter's master equals the parameter and is not saved).

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor, Var};
use candle_nn::VarMap;

use crate::config::{LrScheduler, OptimConfig};

mod fused_cpu;

/// The trainable parameters of a model, in a fixed order (sorted by name).
#[derive(Clone)]
pub struct Params {
    pub names: Vec<String>,
    pub vars: Vec<Var>,
}

impl Params {
    /// All variables of a `VarMap`, sorted by name.
    pub fn from_varmap(varmap: &VarMap) -> Self {
        let data = varmap.data().lock().expect("varmap lock");
        let mut pairs: Vec<(String, Var)> =
            data.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let (names, vars) = pairs.into_iter().unzip();
        Self { names, vars }
    }

    pub fn len(&self) -> usize {
        self.vars.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    /// Total number of scalars.
    pub fn numel(&self) -> usize {
        self.vars.iter().map(|v| v.elem_count()).sum()
    }

    /// The name of the first parameter holding a NaN or an infinity, if any (one device
    /// synchronization per parameter; `0 * x` sums to 0 iff every `x` is finite).
    pub fn first_non_finite(&self) -> candle_core::Result<Option<&str>> {
        for (name, v) in self.names.iter().zip(&self.vars) {
            let t = v.as_tensor().to_dtype(DType::F32)?;
            let z = t.affine(0.0, 0.0)?.sum_all()?.to_scalar::<f32>()?;
            if z != 0.0 {
                return Ok(Some(name));
            }
        }
        Ok(None)
    }

    /// Copies of all parameters as f32 (for comparisons in tests and for the reference model).
    pub fn snapshot(&self) -> candle_core::Result<Vec<Tensor>> {
        self.vars
            .iter()
            .map(|v| v.as_tensor().detach().to_dtype(DType::F32))
            .collect()
    }
}

/// Elements per chunk of the optimizer's in-place arithmetic ([`GradAccum::add`],
/// [`GradAccum::clip`], [`AdamW::step`]): the temporaries of a step are a few chunks, not a
/// copy of the largest parameter (the 545M-element embedding of a 7B model).
pub const STEP_CHUNK_ELEMS: usize = 1 << 22;

/// `(offset, len)` of the chunks of `n` elements.
fn chunks(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n)
        .step_by(STEP_CHUNK_ELEMS)
        .map(move |o| (o, STEP_CHUNK_ELEMS.min(n - o)))
}

/// A flat view of `t` over the same storage, for in-place writes (`slice_set`).
fn flat_view(t: &Tensor, what: &str) -> candle_core::Result<Tensor> {
    if !t.is_contiguous() {
        return Err(candle_core::Error::Msg(format!(
            "optimizer: {what} is not contiguous, cannot update it in place"
        )));
    }
    t.flatten_all()
}

/// Gradients summed over micro-batches, one f32 tensor per parameter (None: no gradient yet).
///
/// The sums are written in place, chunk by chunk: adding a gradient holds it (in its own
/// dtype) and one f32 chunk, never a second f32 copy of the parameter. Element by element the
/// arithmetic is the plain `acc + f32(g)`, so the sums are bit-identical to out-of-place ones.
///
/// On the host, the pass that writes a sum also takes its sum of squares (in f64, in a fixed
/// order: the value [`Self::global_norm`] would compute) while each piece is in cache, so that
/// clipping does not read the gradients again ([`AdamW::clip_and_step`]). The accumulators
/// are private for that reason: a tensor handed out by [`Self::get`] is for reading; writing
/// into it in place (`slice_set`, an in-place op) would leave the recorded sum stale.
pub struct GradAccum {
    grads: Vec<Option<Tensor>>,
    /// `squares[i]`: the sum of squares of `grads[i]`, recorded by the host pass that last
    /// wrote it; None where unknown (a device, a gradient set from outside, a scaled one).
    squares: Vec<Option<f64>>,
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
    fn squares_of(&self, i: usize, g: &Tensor) -> candle_core::Result<f64> {
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
    /// place. Returns the norm before clipping. ([`AdamW::clip_and_step`] folds the scale
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
    fn scale_where(&mut self, scale: f64, take: &dyn Fn(usize) -> bool) -> candle_core::Result<()> {
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
fn sum_of_squares(g: &Tensor) -> candle_core::Result<f64> {
    if g.device().is_cpu() && g.is_contiguous() && g.dtype() == DType::F32 {
        fused_cpu::sum_of_squares(g)
    } else {
        Ok(g.sqr()?.sum_all()?.to_scalar::<f32>()? as f64)
    }
}

/// The factor global-norm clipping multiplies the gradients by, torch's
/// `max_norm / (norm + 1e-6)` when the (finite) norm exceeds `max_norm > 0`; None otherwise.
fn clip_scale(norm: f64, max_norm: f64) -> Option<f64> {
    (max_norm > 0.0 && norm.is_finite() && norm > max_norm).then(|| max_norm / (norm + 1e-6))
}

/// What [`AdamW::clip_and_step`] did: the global gradient norm before clipping, and why the
/// update was not applied when it was not.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOutcome {
    pub grad_norm: f64,
    pub skipped: Option<String>,
}

/// [`StepOutcome::skipped`] of an update that would write a non-finite value.
pub const NON_FINITE_UPDATE: &str = "the update would make weights or optimizer moments non-finite";

/// AdamW hyper-parameters (the learning rate comes per step from [`Schedule`]).
#[derive(Debug, Clone, Copy)]
pub struct AdamWParams {
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
}

impl From<&OptimConfig> for AdamWParams {
    fn from(c: &OptimConfig) -> Self {
        Self {
            beta1: c.beta1,
            beta2: c.beta2,
            eps: c.eps,
            weight_decay: c.weight_decay,
        }
    }
}

/// AdamW (Loshchilov & Hutter): `m = b1 m + (1-b1) g`, `v = b2 v + (1-b2) g^2`,
/// `p -= lr (m/(1-b1^t) / (sqrt(v/(1-b2^t)) + eps) + wd p)` (computed as
/// `(p - p (lr wd)) - lr u`, so no f32 rounding of `1 - lr wd` biases every step). Moments are f32 whatever the
/// parameter dtype; weight decay applies to parameters of rank >= 2 only (matrices, not norm
/// weights or biases). `p` is the f32 master weight of a bf16/f16 parameter (module docs).
///
/// The state is updated in place: a copy to go back to is [`AdamW::snapshot`].
pub struct AdamW {
    pub hp: AdamWParams,
    /// Optimizer steps taken (t).
    pub t: u64,
    m: Vec<Tensor>,
    v: Vec<Tensor>,
    /// f32 master weights of the parameters whose dtype is not f32 (None for f32 ones), or
    /// of every parameter when offloaded.
    master: Vec<Option<Tensor>>,
    /// Where the moments and masters live when offloaded (the host), else None.
    offload: Option<Device>,
    /// Whether a parameter whose state, weight and gradient are all on the host takes the
    /// fused host pass (`fused_cpu.rs`; the default) rather than the tensor-op path; both give
    /// the same bits (tests turn this off to check the other path on the CPU).
    pub fused_host: bool,
    /// Per parameter, the [`fused_cpu::Peaks`] of its moments as the last fused step wrote
    /// them (zero at the start; a restored snapshot brings its own); None once they are
    /// unknown (loaded from a file, or last updated by the tensor-op path). They let
    /// [`Self::clip_and_step`] prove an update finite without a second read of the state.
    peaks: Vec<Option<fused_cpu::Peaks>>,
}

/// `x` as the f32 that a tensor op rounds it to. The moments decay by the f32 betas, so the
/// bias corrections `1 - b^t` are taken of the same f32 betas: with f64 ones the corrected
/// `v` drifts from its normaliser by ~1e-5 relative after 200 steps at `b2 = 0.999` (torch's
/// f32 AdamW has that drift; the float64 test below bounds ours).
pub(crate) fn f32_rounded(x: f64) -> f64 {
    x as f32 as f64
}

/// A copy of `t` on `device` with its own storage.
pub fn deep_copy(t: &Tensor, device: &Device) -> candle_core::Result<Tensor> {
    if t.device().same_device(device) {
        t.copy()
    } else {
        t.to_device(device)
    }
}

/// Overwrites `dst` with the values of `src` (same shape, any device), chunk by chunk.
pub fn copy_into(dst: &Tensor, src: &Tensor) -> candle_core::Result<()> {
    if dst.shape() != src.shape() {
        return Err(candle_core::Error::Msg(format!(
            "copy_into: shape {:?} against {:?}",
            dst.shape(),
            src.shape()
        )));
    }
    let d = flat_view(dst, "a restored tensor")?;
    let s = src.flatten_all()?;
    for (o, l) in chunks(s.elem_count()) {
        let c = s
            .narrow(0, o, l)?
            .to_device(dst.device())?
            .to_dtype(dst.dtype())?;
        d.slice_set(&c.contiguous()?, 0, o)?;
    }
    Ok(())
}

/// The f32 master copy of a parameter, or None when it is f32 already.
fn master_of(var: &Var) -> candle_core::Result<Option<Tensor>> {
    if var.dtype() == DType::F32 {
        return Ok(None);
    }
    Ok(Some(var.as_tensor().detach().to_dtype(DType::F32)?))
}

impl AdamW {
    /// Zero moments; master weights (for non-f32 parameters) start as the parameters' values.
    pub fn new(params: &Params, hp: AdamWParams) -> candle_core::Result<Self> {
        Self::with_offload(params, hp, false)
    }

    /// [`Self::new`], with the state on the host when `offload` (module docs).
    pub fn with_offload(
        params: &Params,
        hp: AdamWParams,
        offload: bool,
    ) -> candle_core::Result<Self> {
        let host = offload.then_some(Device::Cpu);
        let state_dev = |var: &Var| host.clone().unwrap_or_else(|| var.device().clone());
        let zeros = |var: &Var| Tensor::zeros(var.shape(), DType::F32, &state_dev(var));
        let master = |var: &Var| match &host {
            Some(h) => deep_copy(&var.as_tensor().to_dtype(DType::F32)?, h).map(Some),
            None => master_of(var),
        };
        Ok(Self {
            hp,
            t: 0,
            m: params.vars.iter().map(zeros).collect::<Result<_, _>>()?,
            v: params.vars.iter().map(zeros).collect::<Result<_, _>>()?,
            master: params.vars.iter().map(master).collect::<Result<_, _>>()?,
            offload: host,
            fused_host: true,
            peaks: vec![Some(fused_cpu::Peaks::ZERO); params.len()],
        })
    }

    /// Whether the state lives on the host.
    pub fn offloaded(&self) -> bool {
        self.offload.is_some()
    }

    /// The f32 master weight of parameter `i` (None: the parameter is f32 and is its own).
    pub fn master(&self, i: usize) -> Option<&Tensor> {
        self.master[i].as_ref()
    }

    /// Whether [`Self::step`] with these gradients and `lr` would leave every updated
    /// parameter, master weight and moment finite. Computes the update exactly as `step`
    /// does, chunk by chunk, without writing anything, so a caller can refuse an update that
    /// would poison the weights (an overflowing moment, a huge learning rate) and keep the
    /// state as it was. One device synchronization per call.
    pub fn step_stays_finite(
        &self,
        params: &Params,
        grads: &GradAccum,
        lr: f64,
    ) -> candle_core::Result<bool> {
        let fused = self.fused_params(params, grads);
        for (i, var) in params.vars.iter().enumerate() {
            if !fused[i] {
                continue;
            }
            let g = grads.grads[i].as_ref().expect("fused only with a gradient");
            let s = self.scalars(var, lr, self.t + 1);
            let (m, v, w) = (&self.m[i], &self.v[i], var.as_tensor());
            if !fused_cpu::adamw_stays_finite(&s, 1.0, m, v, w, self.master[i].as_ref(), g)? {
                return Ok(false);
            }
        }
        self.tensor_path_stays_finite(params, grads, lr, &|i| !fused[i])
    }

    /// [`Self::step_stays_finite`] for the parameters `take` selects, by the tensor-op path.
    fn tensor_path_stays_finite(
        &self,
        params: &Params,
        grads: &GradAccum,
        lr: f64,
        take: &dyn Fn(usize) -> bool,
    ) -> candle_core::Result<bool> {
        let mut sums = Vec::new();
        let state = (&self.m[..], &self.v[..], &self.master[..]);
        Self::updates(
            self.hp,
            state,
            params,
            grads,
            lr,
            self.t + 1,
            take,
            |_, _, var, mc, vc, p| {
                // 0 * x is 0 for a finite x and NaN for an infinite or NaN one; the sum of zeros
                // stays exactly 0, so the total is 0 iff every element is finite; the weight
                // as stored (a master rounded to bf16 or f16 can overflow where f32 does not)
                let zero = |x: &Tensor| x.affine(0.0, 0.0)?.sum_all();
                let stored = p.to_dtype(var.dtype())?.to_dtype(DType::F32)?;
                sums.push((((zero(mc)? + zero(vc)?)? + zero(p)?)? + zero(&stored)?)?);
                Ok(())
            },
        )?;
        if sums.is_empty() {
            return Ok(true);
        }
        let total = Tensor::stack(&sums, 0)?
            .to_device(&Device::Cpu)?
            .sum_all()?
            .to_scalar::<f32>()?;
        Ok(total == 0.0)
    }

    /// One update with learning rate `lr`. Parameters without a gradient are left untouched
    /// (their moments too).
    ///
    /// In place, [`STEP_CHUNK_ELEMS`] elements at a time: the moments, the master weight and
    /// the parameter are overwritten chunk by chunk, so the step's temporaries are a few
    /// chunks whatever the size of the parameter. Element by element the arithmetic is the
    /// formula above in f32, in the same order as a whole-tensor evaluation, so the result is
    /// bit-identical to it (tested against an out-of-place reference).
    pub fn step(&mut self, params: &Params, grads: &GradAccum, lr: f64) -> candle_core::Result<()> {
        let fused = self.fused_params(params, grads);
        self.apply(params, grads, &fused, 1.0, lr)
    }

    /// Global-norm clipping at `max_norm` (0: none), then the update, applied only when
    /// everything it writes stays finite: what a training step runs once its gradients are
    /// summed. The same bits as [`GradAccum::clip`], then [`Self::step_stays_finite`], then
    /// [`Self::step`]; on the host (the fused pass) with fewer passes over memory:
    ///
    /// 1. one pass reads each weight (or master) for its largest entry; the gradients' sums
    ///    of squares were recorded as [`GradAccum`] wrote them (where one is not, a gradient
    ///    set from outside, the same pass reads the gradient for it);
    /// 2. the clip scale `k` is not written into the gradients but applied as the update
    ///    reads them (`g * k + 0`, what scaling in place stores);
    /// 3. the update is proven finite from bounds instead of a second pass: the moments'
    ///    peaks that the last fused step recorded, the weight's peak from pass 1, and the
    ///    clipped gradient's `|g| <= norm * k`, carried through the formula
    ///    (`fused_cpu::AdamScalars::stays_finite_within`); only when the proof fails (a huge
    ///    learning rate, weights near the f32 limit, a state just loaded) does the exact
    ///    element-by-element check run;
    /// 4. one pass writes the moments and the weight, recording the moments' new peaks.
    ///
    /// So the host reads 4 bytes per parameter, then reads 16 and writes 12 (f32 weights),
    /// where clipping in place and a separate check cost 4 + 8 + 16 + 28 (torch's
    /// `clip_grad_norm_` and fused AdamW: 4 + 8 + 28). On a device (or on
    /// the tensor-op path) the gradients are scaled in place and checked as before: after the
    /// call the gradients are spent (scaled on one path, not on the other).
    ///
    /// A non-finite norm or an update that would leave a non-finite weight or moment leaves
    /// the weights, the state and `t` as they were, and says so in `skipped`.
    pub fn clip_and_step(
        &mut self,
        params: &Params,
        grads: &mut GradAccum,
        max_norm: f64,
        lr: f64,
    ) -> candle_core::Result<StepOutcome> {
        // the whole step on one of the pool's threads: its two passes over each of the ~10 L
        // tensors are parallel loops, and a loop started from outside the pool pays a hand-off
        // to the pool and back each time
        rayon::scope(|_| self.clip_and_step_in_pool(params, grads, max_norm, lr))
    }

    fn clip_and_step_in_pool(
        &mut self,
        params: &Params,
        grads: &mut GradAccum,
        max_norm: f64,
        lr: f64,
    ) -> candle_core::Result<StepOutcome> {
        let fused = self.fused_params(params, grads);
        let mut sq = 0f64;
        let mut p_peaks = vec![f32::INFINITY; params.len()];
        for (i, g) in grads.grads.iter().enumerate() {
            let Some(g) = g else { continue };
            sq += if fused[i] {
                let p = self.master[i]
                    .as_ref()
                    .unwrap_or(params.vars[i].as_tensor());
                // the sum of squares recorded by the accumulation (then only the weight is
                // read here), else taken in the same pass as the weight's peak
                let (sum, p_peak) = match grads.squares[i] {
                    Some(sum) => (sum, fused_cpu::peak(p)?),
                    None => fused_cpu::sum_of_squares_and_peak(g, p)?,
                };
                p_peaks[i] = p_peak;
                sum
            } else {
                grads.squares_of(i, g)?
            };
        }
        let grad_norm = sq.sqrt();
        let skip = |why: String| {
            Ok(StepOutcome {
                grad_norm,
                skipped: Some(why),
            })
        };
        if !grad_norm.is_finite() {
            return skip(format!("non-finite gradient norm ({grad_norm})"));
        }
        let scale = clip_scale(grad_norm, max_norm);
        if let Some(scale) = scale {
            grads.scale_where(scale, &|i| !fused[i])?;
        }
        let scale = scale.unwrap_or(1.0);
        let k = scale as f32;
        // |g k| <= norm k: the clipped norm bounds every clipped entry (the f32 rounding of
        // `g * k` is inside the bound's factor 2)
        let g_peak = grad_norm * scale;
        for (i, var) in params.vars.iter().enumerate() {
            if !fused[i] {
                continue;
            }
            let s = self.scalars(var, lr, self.t + 1);
            let p_limit = f32::from_bits(fused_cpu::overflow_bits(var.dtype()));
            let bounded = |pk| s.stays_finite_within(pk, p_peaks[i], g_peak, p_limit);
            if self.peaks[i].is_some_and(bounded) {
                continue;
            }
            let g = grads.grads[i].as_ref().expect("fused only with a gradient");
            let (m, v, w) = (&self.m[i], &self.v[i], var.as_tensor());
            if !fused_cpu::adamw_stays_finite(&s, k, m, v, w, self.master[i].as_ref(), g)? {
                return skip(NON_FINITE_UPDATE.to_string());
            }
        }
        if !self.tensor_path_stays_finite(params, grads, lr, &|i| !fused[i])? {
            return skip(NON_FINITE_UPDATE.to_string());
        }
        self.apply(params, grads, &fused, k, lr)?;
        Ok(StepOutcome {
            grad_norm,
            skipped: None,
        })
    }

    /// The update, on gradients scaled by `k` where `fused` (the others as they are).
    fn apply(
        &mut self,
        params: &Params,
        grads: &GradAccum,
        fused: &[bool],
        k: f32,
        lr: f64,
    ) -> candle_core::Result<()> {
        self.t += 1;
        for (i, var) in params.vars.iter().enumerate() {
            if grads.grads[i].is_none() {
                continue;
            }
            if !fused[i] {
                self.peaks[i] = None;
                continue;
            }
            let g = grads.grads[i].as_ref().expect("fused only with a gradient");
            let s = self.scalars(var, lr, self.t);
            let (m, v, w) = (&self.m[i], &self.v[i], var.as_tensor());
            self.peaks[i] = Some(fused_cpu::adamw_step(
                &s,
                k,
                m,
                v,
                w,
                self.master[i].as_ref(),
                g,
            )?);
        }
        let (t, m_all, v_all, master_all) = (self.t, &self.m[..], &self.v[..], &self.master[..]);
        Self::updates(
            self.hp,
            (m_all, v_all, master_all),
            params,
            grads,
            lr,
            t,
            &|i| !fused[i],
            |i, o, var, mc, vc, p| {
                let name = &params.names[i];
                flat_view(&m_all[i], name)?.slice_set(mc, 0, o)?;
                flat_view(&v_all[i], name)?.slice_set(vc, 0, o)?;
                let w = flat_view(var.as_tensor(), name)?;
                match &master_all[i] {
                    Some(master) => {
                        // the one cast per step: f32 master -> compute dtype (and, offloaded,
                        // back to the device)
                        let cast = p.to_dtype(var.dtype())?.to_device(var.device())?;
                        w.slice_set(&cast, 0, o)?;
                        flat_view(master, name)?.slice_set(p, 0, o)?;
                    }
                    None => w.slice_set(p, 0, o)?,
                }
                Ok(())
            },
        )
    }

    /// Which parameters take the fused host pass: those with a gradient whose state, weight
    /// and gradient are all on the host (`fused_cpu::applies`), when `fused_host` is on.
    fn fused_params(&self, params: &Params, grads: &GradAccum) -> Vec<bool> {
        params
            .vars
            .iter()
            .enumerate()
            .map(|(i, var)| {
                self.fused_host
                    && grads.grads[i].as_ref().is_some_and(|g| {
                        fused_cpu::applies(
                            &self.m[i],
                            &self.v[i],
                            var.as_tensor(),
                            self.master[i].as_ref(),
                            g,
                        )
                    })
            })
            .collect()
    }

    /// The f32 scalars of step `t` for `var` (decay on matrices only).
    fn scalars(&self, var: &Var, lr: f64, t: u64) -> fused_cpu::AdamScalars {
        let hp = self.hp;
        let decay = if var.rank() >= 2 {
            hp.weight_decay
        } else {
            0.0
        };
        fused_cpu::AdamScalars::new(hp.beta1, hp.beta2, hp.eps, lr, decay, t)
    }

    /// The AdamW update at step `t`, chunk by chunk: calls `f(param index, chunk offset,
    /// var, new m, new v, new weight)` for every chunk of every parameter with a gradient
    /// that `take` selects, reading (never writing) the current state.
    #[allow(clippy::too_many_arguments)]
    fn updates(
        hp: AdamWParams,
        (m_all, v_all, master_all): (&[Tensor], &[Tensor], &[Option<Tensor>]),
        params: &Params,
        grads: &GradAccum,
        lr: f64,
        t: u64,
        take: &dyn Fn(usize) -> bool,
        mut f: impl FnMut(usize, usize, &Var, &Tensor, &Tensor, &Tensor) -> candle_core::Result<()>,
    ) -> candle_core::Result<()> {
        let AdamWParams {
            beta1: b1,
            beta2: b2,
            eps,
            weight_decay: wd,
        } = hp;
        let (b1, b2) = (f32_rounded(b1), f32_rounded(b2));
        let bc1 = 1.0 - b1.powi(t as i32);
        let bc2 = 1.0 - b2.powi(t as i32);
        for (i, var) in params.vars.iter().enumerate() {
            let Some(g) = &grads.grads[i] else { continue };
            if !take(i) {
                continue;
            }
            let name = &params.names[i];
            let g = g.flatten_all()?;
            let m = flat_view(&m_all[i], name)?;
            let v = flat_view(&v_all[i], name)?;
            let w = flat_view(var.as_tensor(), name)?;
            let master = master_all[i]
                .as_ref()
                .map(|t| flat_view(t, name))
                .transpose()?;
            let decay = if var.rank() >= 2 { wd } else { 0.0 };
            let state_dev = m_all[i].device().clone();
            for (o, l) in chunks(g.elem_count()) {
                // offloaded: this chunk of the gradient goes to the host
                let g = g.narrow(0, o, l)?.to_device(&state_dev)?;
                let mc = ((m.narrow(0, o, l)? * b1)? + (&g * (1.0 - b1))?)?;
                let vc = ((v.narrow(0, o, l)? * b2)? + (g.sqr()? * (1.0 - b2))?)?;
                let p = match &master {
                    Some(master) => master.narrow(0, o, l)?,
                    None => w.narrow(0, o, l)?,
                };
                let update = ((&mc / bc1)? / ((&vc / bc2)?.sqrt()? + eps)?)?;
                // decay as `p - p (lr wd)`: `p (1 - lr wd)` would round `1 - lr wd` to f32,
                // the same relative error on every step (a drift of ~1e-6 over 200 steps)
                let p = ((&p - (&p * (lr * decay))?)? - (update * lr)?)?;
                f(i, o, var, &mc, &vc, &p)?;
            }
        }
        Ok(())
    }

    /// A deep copy of the state on `device` (the host, for the update's rollback copy: it
    /// costs no device memory). [`Self::restore`] writes it back.
    pub fn snapshot(&self, device: &Device) -> candle_core::Result<Self> {
        let copy = |t: &Tensor| deep_copy(t, device);
        Ok(Self {
            hp: self.hp,
            t: self.t,
            offload: self.offload.clone(),
            fused_host: self.fused_host,
            m: self.m.iter().map(copy).collect::<Result<_, _>>()?,
            v: self.v.iter().map(copy).collect::<Result<_, _>>()?,
            master: self
                .master
                .iter()
                .map(|w| w.as_ref().map(copy).transpose())
                .collect::<Result<_, _>>()?,
            peaks: self.peaks.clone(),
        })
    }

    /// Writes a [`Self::snapshot`] back into this state, in place, chunk by chunk (no second
    /// copy of the state on the device).
    pub fn restore(&mut self, snap: &Self) -> candle_core::Result<()> {
        let pairs = self
            .m
            .iter()
            .zip(&snap.m)
            .chain(self.v.iter().zip(&snap.v))
            .chain(
                self.master
                    .iter()
                    .zip(&snap.master)
                    .filter_map(|(a, b)| a.as_ref().zip(b.as_ref())),
            );
        for (dst, src) in pairs {
            copy_into(dst, src)?;
        }
        self.peaks.clone_from(&snap.peaks);
        self.t = snap.t;
        Ok(())
    }

    /// Saves the moments and the master weights (safetensors, exact f32: `m.<name>`,
    /// `v.<name>`, and `master.<name>` for non-f32 parameters) under `path`; `t` is kept by
    /// the caller.
    pub fn save(&self, params: &Params, path: &Path) -> candle_core::Result<()> {
        let mut map: HashMap<String, Tensor> = HashMap::new();
        for (i, name) in params.names.iter().enumerate() {
            map.insert(format!("m.{name}"), self.m[i].clone());
            map.insert(format!("v.{name}"), self.v[i].clone());
            // an f32 parameter's master (offload only) equals the parameter: not saved
            if let (Some(w), true) = (&self.master[i], params.vars[i].dtype() != DType::F32) {
                map.insert(format!("master.{name}"), w.clone());
            }
        }
        candle_core::safetensors::save(&map, path)
    }

    /// Restores the moments and master weights saved by [`AdamW::save`], and the step count.
    /// A non-f32 parameter whose master is missing (a state saved before master weights
    /// existed, or by an f32 run) starts from its current value; the master of a parameter
    /// that is now f32 is ignored (the parameter holds the weights).
    pub fn load(&mut self, params: &Params, path: &Path, t: u64) -> candle_core::Result<()> {
        let device = match &self.offload {
            Some(host) => host.clone(),
            None => params
                .vars
                .first()
                .map(|v| v.device().clone())
                .unwrap_or(candle_core::Device::Cpu),
        };
        let mut map = candle_core::safetensors::load(path, &device)?;
        for (i, name) in params.names.iter().enumerate() {
            let get = |map: &mut HashMap<String, Tensor>, k: String| {
                map.remove(&k)
                    .ok_or_else(|| candle_core::Error::Msg(format!("optimizer state lacks {k}")))
            };
            self.m[i] = get(&mut map, format!("m.{name}"))?;
            self.v[i] = get(&mut map, format!("v.{name}"))?;
            self.peaks[i] = None;
            let var = &params.vars[i];
            if self.master[i].is_some() && var.dtype() == DType::F32 {
                // offloaded f32 parameter: its master is the parameter's current value
                self.master[i] = Some(deep_copy(&var.as_tensor().to_dtype(DType::F32)?, &device)?);
            } else if self.master[i].is_some() {
                if let Some(w) = map.remove(&format!("master.{name}")) {
                    let var = &params.vars[i];
                    if w.shape() != var.shape() {
                        return Err(candle_core::Error::Msg(format!(
                            "optimizer state: master.{name} has shape {:?}, the parameter {:?}",
                            w.shape(),
                            var.shape()
                        )));
                    }
                    self.master[i] = Some(w.to_dtype(DType::F32)?);
                }
            }
        }
        self.t = t;
        Ok(())
    }
}

/// Learning rate per optimizer step: linear warmup from `lr/warmup` to `lr` over
/// `warmup` steps, then constant, or cosine down to `min_lr_ratio * lr` at `total` steps.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    pub lr: f64,
    pub warmup: usize,
    pub total: usize,
    pub kind: LrScheduler,
    pub min_lr_ratio: f64,
}

impl Schedule {
    pub fn new(c: &OptimConfig, total: usize) -> Self {
        Self {
            lr: c.lr,
            warmup: c.lr_warmup_steps,
            total,
            kind: c.lr_scheduler,
            min_lr_ratio: c.min_lr_ratio,
        }
    }

    /// The learning rate of optimizer step `step` (0-based).
    pub fn lr_at(&self, step: usize) -> f64 {
        if step < self.warmup {
            return self.lr * (step + 1) as f64 / self.warmup as f64;
        }
        match self.kind {
            LrScheduler::Constant => self.lr,
            LrScheduler::Cosine => {
                let span = self.total.saturating_sub(self.warmup).max(1) as f64;
                let progress = ((step - self.warmup) as f64 / span).min(1.0);
                let min = self.lr * self.min_lr_ratio;
                min + (self.lr - min) * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    /// AdamW with torch's defaults (betas 0.9, 0.999, eps 1e-8) and this weight decay.
    fn adam(weight_decay: f64) -> AdamWParams {
        AdamWParams {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay,
        }
    }

    fn one_param(values: &[f32]) -> (VarMap, Params) {
        one_param_as(values, DType::F32)
    }

    /// One parameter `w` holding `values` in `dtype`.
    fn one_param_as(values: &[f32], dtype: DType) -> (VarMap, Params) {
        let varmap = VarMap::new();
        let t = Tensor::new(values, &Device::Cpu)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
        varmap
            .data()
            .lock()
            .unwrap()
            .insert("w".into(), Var::from_tensor(&t).unwrap());
        let params = Params::from_varmap(&varmap);
        (varmap, params)
    }

    /// An update that would overflow is detected before anything is written; a normal one is
    /// not, and the check leaves the state bit for bit as it was.
    #[test]
    fn step_stays_finite_flags_an_overflowing_update_and_writes_nothing() {
        let (_vm, params) = one_param(&[1.0, -2.0]);
        let hp = adam(0.0);
        let mut opt = AdamW::new(&params, hp).unwrap();
        let mut acc = GradAccum::new(&params);
        acc.set(0, Some(Tensor::new(&[0.5f32, -3.0], &Device::Cpu).unwrap()));
        assert!(opt.step_stays_finite(&params, &acc, 0.01).unwrap());
        // the first Adam step moves each weight by about lr: 1e39 overflows f32
        assert!(!opt.step_stays_finite(&params, &acc, 1e39).unwrap());
        let p: Vec<f32> = params.vars[0].as_tensor().to_vec1().unwrap();
        assert_eq!(p, [1.0, -2.0]);
        assert_eq!(opt.t, 0);
        assert_eq!(params.first_non_finite().unwrap(), None);
        // eps = 0 (refused by the config) with a zero gradient: 0/0
        let mut zero = GradAccum::new(&params);
        zero.set(0, Some(Tensor::new(&[0.0f32, 1.0], &Device::Cpu).unwrap()));
        opt.hp.eps = 0.0;
        assert!(!opt.step_stays_finite(&params, &zero, 0.01).unwrap());
        // applied anyway, it is exactly the NaN the check predicted
        opt.step(&params, &zero, 0.01).unwrap();
        assert_eq!(params.first_non_finite().unwrap(), Some("w"));
    }

    #[test]
    fn adamw_matches_hand_computation() {
        // First step of Adam: update = g/|g| (bias-corrected), so p moves by lr*sign(g)
        // (up to eps); rank-1 parameters get no weight decay.
        let (_vm, params) = one_param(&[1.0, -2.0]);
        let hp = adam(0.1);
        let mut opt = AdamW::new(&params, hp).unwrap();
        let mut acc = GradAccum::new(&params);
        acc.set(0, Some(Tensor::new(&[0.5f32, -3.0], &Device::Cpu).unwrap()));
        opt.step(&params, &acc, 0.01).unwrap();
        let p: Vec<f32> = params.vars[0].as_tensor().to_vec1().unwrap();
        assert!((p[0] - 0.99).abs() < 1e-6, "{p:?}");
        assert!((p[1] + 1.99).abs() < 1e-6, "{p:?}");
        // Second step, by hand.
        acc.set(0, Some(Tensor::new(&[1.0f32, 1.0], &Device::Cpu).unwrap()));
        opt.step(&params, &acc, 0.01).unwrap();
        let p2: Vec<f32> = params.vars[0].as_tensor().to_vec1().unwrap();
        for (i, (g1, g2)) in [(0.5f64, 1.0f64), (-3.0, 1.0)].into_iter().enumerate() {
            let m = 0.9 * (0.1 * g1) + 0.1 * g2;
            let v = 0.999 * (0.001 * g1 * g1) + 0.001 * g2 * g2;
            let upd = (m / (1.0 - 0.81)) / ((v / (1.0 - 0.999f64.powi(2))).sqrt() + 1e-8);
            let want = p[i] as f64 - 0.01 * upd;
            assert!(
                (p2[i] as f64 - want).abs() < 1e-6,
                "{i}: {} vs {want}",
                p2[i]
            );
        }
    }

    /// A bf16 weight at 1.0 (bf16 spacing just above 1 is 2^-7 = 0.0078125, so half a step is
    /// 0.00390625) pushed up by Adam steps of lr = 0.001 each (a constant gradient makes the
    /// bias-corrected update g/|g| = 1 exactly, up to eps). By hand: the master weight reads
    /// 1.001, 1.002, 1.003 while the bf16 weight stays 1.0 (each update alone rounds away), and
    /// at 1.004 > 1 + 2^-8 the bf16 weight rounds up to 1.0078125. Without the master, every
    /// step would compute round(1.0 + 0.001) = 1.0 and the weight would never move.
    #[test]
    fn bf16_updates_below_half_a_step_accumulate_in_the_master() {
        let (_varmap, params) = one_param_as(&[1.0f32, 0.5], DType::BF16);
        let hp = AdamWParams {
            eps: 1e-12,
            ..adam(0.0)
        };
        let mut opt = AdamW::new(&params, hp).unwrap();
        let bf16 = |p: &Params| -> Vec<f32> {
            p.vars[0]
                .as_tensor()
                .to_dtype(DType::F32)
                .unwrap()
                .to_vec1()
                .unwrap()
        };
        for k in 1..=4 {
            let mut acc = GradAccum::new(&params);
            // f32 gradients whatever the parameter dtype; the second entry gets none (0)
            acc.set(0, Some(Tensor::new(&[-1.0f32, 0.0], &Device::Cpu).unwrap()));
            opt.step(&params, &acc, 0.001).unwrap();
            let master: Vec<f32> = opt.master(0).unwrap().to_vec1().unwrap();
            assert!(
                (master[0] as f64 - (1.0 + 0.001 * k as f64)).abs() < 1e-6,
                "step {k}: master {master:?}"
            );
            assert_eq!(master[1], 0.5, "a zero gradient leaves the master alone");
            let w = bf16(&params);
            let want = if k < 4 { 1.0 } else { 1.0078125 };
            assert_eq!(w[0], want, "step {k}: bf16 weight {w:?}, master {master:?}");
        }
        assert_eq!(
            params.vars[0].dtype(),
            DType::BF16,
            "the compute dtype is kept"
        );
        // f32 parameters have no master copy
        let (_vm, p32) = one_param(&[1.0]);
        assert!(AdamW::new(&p32, hp).unwrap().master(0).is_none());
    }

    /// The master weights are part of the saved state: a bf16 run saved and restored after
    /// 3 steps continues bit for bit (restoring from the bf16 weights alone would lose the
    /// 0.003 accumulated below the rounding step, and the weight would not move at step 4).
    #[test]
    fn bf16_state_with_master_round_trips_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let hp = AdamWParams {
            eps: 1e-12,
            ..adam(0.0)
        };
        let run = |save_at: Option<usize>| {
            let (_varmap, params) = one_param_as(&[1.0f32, -0.3], DType::BF16);
            let mut opt = AdamW::new(&params, hp).unwrap();
            for s in 0..5 {
                if Some(s) == save_at {
                    let path = dir.path().join("opt.safetensors");
                    opt.save(&params, &path).unwrap();
                    let mut fresh = AdamW::new(&params, hp).unwrap();
                    fresh.load(&params, &path, opt.t).unwrap();
                    opt = fresh;
                }
                let mut acc = GradAccum::new(&params);
                acc.set(0, Some(Tensor::new(&[-1.0f32, 1.0], &Device::Cpu).unwrap()));
                opt.step(&params, &acc, 0.001).unwrap();
            }
            params.vars[0]
                .as_tensor()
                .to_dtype(DType::F32)
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
        };
        let whole = run(None);
        assert_eq!(whole[0], 1.0078125);
        assert_eq!(whole, run(Some(3)));
    }

    /// The out-of-place AdamW this crate used before the in-place chunked step, kept as the
    /// reference: `(m, v, master_or_param)` after one step.
    #[allow(clippy::too_many_arguments)]
    fn reference_step(
        hp: AdamWParams,
        t: u64,
        m: &Tensor,
        v: &Tensor,
        p: &Tensor,
        g: &Tensor,
        lr: f64,
        rank: usize,
    ) -> (Tensor, Tensor, Tensor) {
        let (b1, b2) = (f32_rounded(hp.beta1), f32_rounded(hp.beta2));
        let bc1 = 1.0 - b1.powi(t as i32);
        let bc2 = 1.0 - b2.powi(t as i32);
        let m = ((m * b1).unwrap() + (g * (1.0 - b1)).unwrap()).unwrap();
        let v = ((v * b2).unwrap() + (g.sqr().unwrap() * (1.0 - b2)).unwrap()).unwrap();
        let update = ((&m / bc1).unwrap()
            / ((&v / bc2).unwrap().sqrt().unwrap() + hp.eps).unwrap())
        .unwrap();
        let decay = if rank >= 2 { hp.weight_decay } else { 0.0 };
        let p = ((p - (p * (lr * decay)).unwrap()).unwrap() - (update * lr).unwrap()).unwrap();
        (m, v, p)
    }

    fn bits(t: &Tensor) -> Vec<u32> {
        t.to_dtype(DType::F32)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
            .into_iter()
            .map(f32::to_bits)
            .collect()
    }

    /// Deterministic values in about [-scale, scale] with varied exponents.
    fn values(n: usize, seed: u32, scale: f32) -> Vec<f32> {
        (0..n as u32)
            .map(|i| {
                let x = (i
                    .wrapping_mul(2_654_435_761)
                    .wrapping_add(seed.wrapping_mul(97)))
                    % 20_011;
                scale * ((x as f32 / 10_005.5) - 1.0) * (1.0 + (i % 7) as f32)
            })
            .collect()
    }

    /// Over many steps, with clipping and weight decay, the optimizer's step
    /// ([`AdamW::clip_and_step`], by its fused host pass and the tensor path alike) stays
    /// within 1e-6 (absolute up to 1, relative above) of AdamW computed in float64 from the same gradients (torch's `clip_grad_norm_` then
    /// `AdamW`, written out in f64).
    #[test]
    fn many_steps_track_a_float64_adamw_within_1e_6() {
        let (rows, cols) = (300, 257); // several threaded pieces, an odd tail
        let hp = adam(0.01);
        let max_norm = 1.0;
        for fused in [true, false] {
            let w0 = values(rows * cols, 3, 0.02);
            let b0 = values(cols, 4, 0.5);
            let varmap = VarMap::new();
            {
                let mut d = varmap.data().lock().unwrap();
                let w = Tensor::from_vec(w0.clone(), (rows, cols), &Device::Cpu).unwrap();
                let b = Tensor::from_vec(b0.clone(), cols, &Device::Cpu).unwrap();
                d.insert("a.w".into(), Var::from_tensor(&w).unwrap());
                d.insert("b.bias".into(), Var::from_tensor(&b).unwrap());
            }
            let params = Params::from_varmap(&varmap);
            let mut opt = AdamW::new(&params, hp).unwrap();
            opt.fused_host = fused;
            // f64 reference state per parameter
            struct Reference {
                w: Vec<f64>,
                m: Vec<f64>,
                v: Vec<f64>,
                rank: usize,
            }
            let mut refs: Vec<Reference> = [(&w0, 2), (&b0, 1)]
                .iter()
                .map(|(w, rank)| Reference {
                    w: w.iter().map(|&x| x as f64).collect(),
                    m: vec![0.0; w.len()],
                    v: vec![0.0; w.len()],
                    rank: *rank,
                })
                .collect();
            for step in 1..=200u64 {
                let lr = 1e-3 * (1.0 + (step % 5) as f64) / 3.0;
                // large enough gradients that clipping acts on most steps
                let gs: Vec<Vec<f32>> = params
                    .vars
                    .iter()
                    .map(|v| values(v.elem_count(), 100 + step as u32, 0.01))
                    .collect();
                let mut acc = GradAccum::new(&params);
                for ((slot, g), var) in acc.grads.iter_mut().zip(&gs).zip(&params.vars) {
                    *slot = Some(Tensor::from_vec(g.clone(), var.shape(), &Device::Cpu).unwrap());
                }
                let out = opt.clip_and_step(&params, &mut acc, max_norm, lr).unwrap();
                assert_eq!(out.skipped, None);
                let norm = gs
                    .iter()
                    .flatten()
                    .map(|&g| (g as f64) * (g as f64))
                    .sum::<f64>()
                    .sqrt();
                let coef = (max_norm / (norm + 1e-6)).min(1.0);
                let bc1 = 1.0 - hp.beta1.powi(step as i32);
                let bc2 = 1.0 - hp.beta2.powi(step as i32);
                for (Reference { w, m, v, rank }, g) in refs.iter_mut().zip(&gs) {
                    let decay = if *rank >= 2 { hp.weight_decay } else { 0.0 };
                    for k in 0..w.len() {
                        let g = g[k] as f64 * coef;
                        m[k] = hp.beta1 * m[k] + (1.0 - hp.beta1) * g;
                        v[k] = hp.beta2 * v[k] + (1.0 - hp.beta2) * g * g;
                        let u = (m[k] / bc1) / ((v[k] / bc2).sqrt() + hp.eps);
                        w[k] = w[k] * (1.0 - lr * decay) - lr * u;
                    }
                }
            }
            for (var, Reference { w, .. }) in params.vars.iter().zip(&refs) {
                let got = var
                    .as_tensor()
                    .flatten_all()
                    .unwrap()
                    .to_vec1::<f32>()
                    .unwrap();
                // |a - b| <= 1e-6 max(1, |b|): absolute for weights up to 1 (an f32 weight of
                // 3.5 has an ulp of 2.4e-7, so larger ones are held relative)
                let worst = got
                    .iter()
                    .zip(w)
                    .map(|(&a, &b)| (a as f64 - b).abs() / b.abs().max(1.0))
                    .fold(0.0, f64::max);
                assert!(
                    worst < 1e-6,
                    "fused {fused}: weights off float64 AdamW by {worst:e}"
                );
            }
        }
    }

    /// The in-place chunked step against the out-of-place reference, bit for bit, over three
    /// steps, on a matrix that spans more than one chunk (f32: the parameter is its own
    /// master; bf16: the f32 master and its one cast per step), with weight decay, together
    /// with a rank-1 parameter (no decay).
    #[test]
    fn chunked_in_place_step_is_bit_identical_to_the_out_of_place_formula() {
        let rows = 3;
        let cols = STEP_CHUNK_ELEMS / 2 + 7; // 3 rows: one full chunk and a partial one
        let hp = AdamWParams {
            beta1: 0.9,
            beta2: 0.95,
            eps: 1e-8,
            weight_decay: 0.1,
        };
        for (dtype, fused) in [
            (DType::F32, true),
            (DType::BF16, true),
            (DType::F16, true),
            (DType::F32, false),
            (DType::BF16, false),
        ] {
            let varmap = VarMap::new();
            let w0 = Tensor::from_vec(values(rows * cols, 1, 0.02), (rows, cols), &Device::Cpu)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let b0 = Tensor::from_vec(values(5, 2, 1.0), 5, &Device::Cpu)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            {
                let mut d = varmap.data().lock().unwrap();
                d.insert("a.w".into(), Var::from_tensor(&w0).unwrap());
                d.insert("b.bias".into(), Var::from_tensor(&b0).unwrap());
            }
            let params = Params::from_varmap(&varmap);
            let mut opt = AdamW::new(&params, hp).unwrap();
            opt.fused_host = fused;
            // the reference state: (m, v, f32 master) per parameter
            let mut refs: Vec<(Tensor, Tensor, Tensor)> = params
                .vars
                .iter()
                .map(|v| {
                    let z = Tensor::zeros(v.shape(), DType::F32, &Device::Cpu).unwrap();
                    let p = v.as_tensor().to_dtype(DType::F32).unwrap().copy().unwrap();
                    (z.clone(), z, p)
                })
                .collect();
            for step in 1..=3u32 {
                let lr = 1e-3 * step as f64;
                let mut acc = GradAccum::new(&params);
                let gs: Vec<Tensor> = params
                    .vars
                    .iter()
                    .map(|v| {
                        Tensor::from_vec(
                            values(v.elem_count(), 10 + step, 0.5),
                            v.shape(),
                            &Device::Cpu,
                        )
                        .unwrap()
                    })
                    .collect();
                for (slot, g) in acc.grads.iter_mut().zip(&gs) {
                    *slot = Some(g.copy().unwrap());
                }
                opt.step(&params, &acc, lr).unwrap();
                for (i, var) in params.vars.iter().enumerate() {
                    let (m, v, p) = &refs[i];
                    let next = reference_step(hp, step as u64, m, v, p, &gs[i], lr, var.rank());
                    let what = format!("{dtype:?} fused {fused} {} step {step}", params.names[i]);
                    assert_eq!(bits(&opt.m[i]), bits(&next.0), "{what}: m");
                    assert_eq!(bits(&opt.v[i]), bits(&next.1), "{what}: v");
                    let want_w = next.2.to_dtype(dtype).unwrap();
                    assert_eq!(bits(var.as_tensor()), bits(&want_w), "{what}: weight");
                    if dtype != DType::F32 {
                        assert_eq!(
                            bits(opt.master(i).unwrap()),
                            bits(&next.2),
                            "{what}: master"
                        );
                    }
                    refs[i] = next;
                }
            }
        }
    }

    /// Gradients of any float dtype accumulate (an f64 one rounded to f32 first, as the
    /// accumulator holds f32), with their sums of squares recorded; a gradient whose length is
    /// not its parameter's is an error saying both.
    #[test]
    fn gradients_of_every_dtype_accumulate_and_a_wrong_length_is_an_error() {
        let varmap = VarMap::new();
        varmap
            .data()
            .lock()
            .unwrap()
            .insert("w".into(), Var::zeros(5, DType::F32, &Device::Cpu).unwrap());
        let params = Params::from_varmap(&varmap);
        let g = Tensor::new(&[0.1f64, -2.5, 1e-40, 3.0, -0.0], &Device::Cpu).unwrap();
        for dtype in [DType::F64, DType::F32, DType::BF16, DType::F16] {
            let mut acc = GradAccum::new(&params);
            let gd = g.to_dtype(dtype).unwrap();
            acc.add_one(0, &params.vars[0], &gd).unwrap();
            acc.add_one(0, &params.vars[0], &gd).unwrap();
            let once = gd.to_dtype(DType::F32).unwrap();
            let want = (&once + &once).unwrap();
            assert_eq!(bits(acc.get(0).unwrap()), bits(&want), "{dtype:?}");
            let computed = sum_of_squares(acc.get(0).unwrap()).unwrap();
            assert_eq!(acc.squares[0].map(f64::to_bits), Some(computed.to_bits()));
        }
        let mut acc = GradAccum::new(&params);
        let short = Tensor::new(&[1f32, 2.0], &Device::Cpu).unwrap();
        let err = acc
            .add_one(0, &params.vars[0], &short)
            .unwrap_err()
            .to_string();
        assert!(err.contains("2 elements") && err.contains("of 5"), "{err}");
        assert!(acc.get(0).is_none());
    }

    /// Accumulating in place, chunk by chunk, equals the out-of-place `acc + f32(g)` bit for
    /// bit (bf16 pieces cast to f32; a parameter spanning more than one chunk; -0.0 kept); a
    /// parameter absent from every piece stays `None`; clipping in place equals `affine`.
    #[test]
    fn in_place_accumulation_and_clipping_equal_the_out_of_place_ones() {
        let n = STEP_CHUNK_ELEMS + 11;
        let varmap = VarMap::new();
        let zeros = |n: usize| Tensor::zeros(n, DType::BF16, &Device::Cpu).unwrap();
        {
            let mut d = varmap.data().lock().unwrap();
            d.insert("big".into(), Var::from_tensor(&zeros(n)).unwrap());
            d.insert("none".into(), Var::from_tensor(&zeros(3)).unwrap());
        }
        let params = Params::from_varmap(&varmap);
        let mut acc = GradAccum::new(&params);
        let mut want: Option<Tensor> = None;
        for k in 0..3u32 {
            let mut v = values(n, k, 1e-3);
            v[0] = -0.0;
            let g = Tensor::new(v.as_slice(), &Device::Cpu)
                .unwrap()
                .to_dtype(DType::BF16)
                .unwrap();
            let mut store = candle_core::backprop::GradStore::default();
            store.insert(params.vars[0].as_tensor(), g.clone());
            acc.add(&params, &store).unwrap();
            let g32 = g.to_dtype(DType::F32).unwrap();
            want = Some(match want {
                None => g32,
                Some(w) => (w + g32).unwrap(),
            });
            assert_eq!(
                bits(acc.grads[0].as_ref().unwrap()),
                bits(want.as_ref().unwrap())
            );
            // the sum of squares taken on the way is the one a separate pass computes
            let recorded = acc.squares[0].expect("recorded on the host");
            let computed = sum_of_squares(acc.grads[0].as_ref().unwrap()).unwrap();
            assert_eq!(recorded.to_bits(), computed.to_bits(), "micro-batch {k}");
        }
        assert!(acc.grads[1].is_none());
        let kept = acc.copies().unwrap();
        let norm = acc.clip(1e-3).unwrap();
        assert_eq!(
            acc.squares[0], None,
            "scaled in place: the recorded sum is gone"
        );
        let w = want.unwrap();
        let scaled = w.affine(1e-3 / (norm + 1e-6), 0.0).unwrap();
        assert_eq!(bits(acc.grads[0].as_ref().unwrap()), bits(&scaled));
        assert_eq!(
            bits(kept[0].as_ref().unwrap()),
            bits(&w),
            "copies are not clipped"
        );
    }

    /// Two parameters in `dtype`: a matrix spanning several threaded pieces with an odd tail,
    /// and a bias.
    fn two_params(dtype: DType) -> (VarMap, Params) {
        let varmap = VarMap::new();
        {
            let mut d = varmap.data().lock().unwrap();
            let (rows, cols) = (5, 20_011);
            let w = Tensor::from_vec(values(rows * cols, 1, 0.02), (rows, cols), &Device::Cpu);
            let b = Tensor::from_vec(values(33, 2, 0.5), 33, &Device::Cpu);
            for (name, t) in [("a.w", w), ("b.bias", b)] {
                let t = t.unwrap().to_dtype(dtype).unwrap();
                d.insert(name.into(), Var::from_tensor(&t).unwrap());
            }
        }
        let params = Params::from_varmap(&varmap);
        (varmap, params)
    }

    /// Two micro-batches' gradients for every parameter, set as one sum computed out of place
    /// (nothing recorded) and accumulated in two adds (the sums of squares recorded).
    fn grads_set_and_accumulated(params: &Params, step: u32) -> (GradAccum, GradAccum) {
        let mut set = GradAccum::new(params);
        let mut accumulated = GradAccum::new(params);
        for (i, var) in params.vars.iter().enumerate() {
            let piece = |seed| {
                let g = values(var.elem_count(), seed, 0.3);
                Tensor::from_vec(g, var.shape(), &Device::Cpu).unwrap()
            };
            let (a, b) = (piece(50 + step), piece(90 + step));
            set.set(i, Some((&a + &b).unwrap()));
            accumulated.add_one(i, var, &a).unwrap();
            accumulated.add_one(i, var, &b).unwrap();
            assert!(accumulated.squares[i].is_some());
        }
        (set, accumulated)
    }

    /// The optimizer's state, bit for bit: weights, masters, moments, t.
    fn state_bits(opt: &AdamW, params: &Params) -> Vec<Vec<u32>> {
        let mut out = vec![vec![opt.t as u32]];
        for (i, var) in params.vars.iter().enumerate() {
            out.push(bits(var.as_tensor()));
            out.push(bits(&opt.m[i]));
            out.push(bits(&opt.v[i]));
            if let Some(master) = opt.master(i) {
                out.push(bits(master));
            }
        }
        out
    }

    /// `clip_and_step` (the norm pass, the clip scale folded into the update, the finiteness
    /// proof) writes the same bits as clipping in place, checking and stepping as three calls,
    /// and returns the same norm: f32, bf16 and f16 weights, the fused host pass and the
    /// tensor-op path, clipping that scales, that does not, and none, the gradients'
    /// sums of squares recorded by the accumulation on one side and computed on the other; the
    /// moments' peaks it records are their largest entries.
    #[test]
    fn clip_and_step_gives_the_bits_of_clipping_checking_and_stepping_apart() {
        let hp = adam(0.1);
        for dtype in [DType::F32, DType::BF16, DType::F16] {
            for fused in [true, false] {
                for max_norm in [1e-2, 1e9, 0.0] {
                    let what = format!("{dtype:?} fused {fused} max_norm {max_norm}");
                    let (_a, pa) = two_params(dtype);
                    let (_b, pb) = two_params(dtype);
                    let mut apart = AdamW::new(&pa, hp).unwrap();
                    let mut folded = AdamW::new(&pb, hp).unwrap();
                    (apart.fused_host, folded.fused_host) = (fused, fused);
                    for step in 1..=4u32 {
                        let lr = 1e-3 * f64::from(step);
                        let (mut ga, _) = grads_set_and_accumulated(&pa, step);
                        let norm = ga.clip(max_norm).unwrap();
                        assert!(apart.step_stays_finite(&pa, &ga, lr).unwrap());
                        apart.step(&pa, &ga, lr).unwrap();
                        let (_, mut gb) = grads_set_and_accumulated(&pb, step);
                        let out = folded.clip_and_step(&pb, &mut gb, max_norm, lr).unwrap();
                        assert_eq!(out.skipped, None, "{what}");
                        assert_eq!(out.grad_norm.to_bits(), norm.to_bits(), "{what}: norm");
                        assert!(
                            state_bits(&folded, &pb) == state_bits(&apart, &pa),
                            "{what}: step {step}: the states differ"
                        );
                        for i in 0..pb.len() {
                            let peak = |t: &Tensor| {
                                let v = t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                                v.iter().fold(0f32, |a, x| a.max(x.abs()))
                            };
                            let want = fused.then(|| fused_cpu::Peaks {
                                m: peak(&folded.m[i]),
                                v: peak(&folded.v[i]),
                            });
                            assert_eq!(folded.peaks[i], want, "{what}: peaks of {i}");
                        }
                    }
                }
            }
        }
    }

    /// An update that cannot be applied leaves the weights, masters, moments and `t` bit for
    /// bit as they were, and says why: a non-finite gradient; a learning rate that overflows
    /// f32; an f16 weight whose f32 master stays finite but rounds to infinity in f16 (which
    /// the f32 check alone let through); and a loaded state the optimizer did not write (a
    /// negative second moment: its peaks are unknown, so the exact check runs and sees the
    /// square root of a negative number). Both the fused host pass and the tensor-op path.
    #[test]
    fn clip_and_step_refuses_what_would_not_be_finite_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        for fused in [true, false] {
            let check = |dtype: DType,
                         w: &[f32],
                         g: &[f32],
                         lr: f64,
                         prep: &dyn Fn(&mut AdamW, &Params),
                         why: &str| {
                let (_vm, params) = one_param_as(w, dtype);
                let mut opt = AdamW::new(&params, adam(0.0)).unwrap();
                opt.fused_host = fused;
                prep(&mut opt, &params);
                let before = state_bits(&opt, &params);
                let mut acc = GradAccum::new(&params);
                acc.set(0, Some(Tensor::new(g, &Device::Cpu).unwrap()));
                let out = opt.clip_and_step(&params, &mut acc, 1.0, lr).unwrap();
                let what = format!("fused {fused} {dtype:?} {w:?} {g:?} lr {lr}");
                assert!(
                    out.skipped.as_deref().is_some_and(|s| s.contains(why)),
                    "{what}: {out:?}"
                );
                assert!(
                    state_bits(&opt, &params) == before,
                    "{what}: the state changed"
                );
            };
            let none = |_: &mut AdamW, _: &Params| {};
            let gradient = "non-finite gradient norm";
            // (weight dtype, weights, gradients, lr, why): the last, an f16 weight of 65504 (the
            // largest) moved up by 100: its master is 65604, finite in f32, infinite in f16
            type Case<'a> = (DType, [f32; 2], [f32; 2], f64, &'a str);
            let cases: [Case; 5] = [
                (DType::F32, [1.0, 2.0], [f32::NAN, 1.0], 1e-3, gradient),
                (DType::F32, [1.0, 2.0], [f32::INFINITY, 1.0], 1e-3, gradient),
                (DType::F32, [1.0, 2.0], [0.5, -3.0], 1e39, NON_FINITE_UPDATE),
                (
                    DType::BF16,
                    [1.0, 2.0],
                    [0.5, -3.0],
                    1e39,
                    NON_FINITE_UPDATE,
                ),
                (
                    DType::F16,
                    [65504.0, 1.0],
                    [-1.0, 1.0],
                    100.0,
                    NON_FINITE_UPDATE,
                ),
            ];
            for (dtype, w, g, lr, why) in cases {
                check(dtype, &w, &g, lr, &none, why);
            }
            let hostile = |opt: &mut AdamW, params: &Params| {
                let path = dir.path().join(format!("hostile-{fused}.safetensors"));
                let m = Tensor::new(&[0.0f32, 0.0], &Device::Cpu).unwrap();
                let v = Tensor::new(&[-1.0f32, 0.0], &Device::Cpu).unwrap();
                let map: HashMap<String, Tensor> =
                    [("m.w".to_string(), m), ("v.w".to_string(), v)].into();
                candle_core::safetensors::save(&map, &path).unwrap();
                opt.load(params, &path, 3).unwrap();
            };
            check(
                DType::F32,
                &[1.0, 2.0],
                &[0.0, 1.0],
                1e-3,
                &hostile,
                NON_FINITE_UPDATE,
            );
        }
        // and a normal step right after is applied
        let (_vm, params) = one_param(&[1.0, 2.0]);
        let mut opt = AdamW::new(&params, adam(0.0)).unwrap();
        let mut acc = GradAccum::new(&params);
        acc.set(0, Some(Tensor::new(&[3.0f32, 4.0], &Device::Cpu).unwrap()));
        let out = opt.clip_and_step(&params, &mut acc, 1.0, 1e-3).unwrap();
        assert_eq!(
            out,
            StepOutcome {
                grad_norm: 5.0,
                skipped: None
            }
        );
        assert_eq!(opt.t, 1);
    }

    /// A snapshot on the host restored in place gives back the state bit for bit, and the
    /// snapshot is not changed by the steps taken after it.
    #[test]
    fn snapshot_and_restore_are_exact() {
        let (_varmap, params) = one_param_as(&[0.5f32, -0.25, 0.125], DType::BF16);
        let hp = adam(0.0);
        let mut opt = AdamW::new(&params, hp).unwrap();
        let step = |opt: &mut AdamW| {
            let mut acc = GradAccum::new(&params);
            acc.set(
                0,
                Some(Tensor::new(&[1.0f32, -2.0, 0.5], &Device::Cpu).unwrap()),
            );
            opt.step(&params, &acc, 0.01).unwrap();
        };
        step(&mut opt);
        let snap = opt.snapshot(&Device::Cpu).unwrap();
        let state = |o: &AdamW| {
            (
                bits(&o.m[0]),
                bits(&o.v[0]),
                bits(o.master(0).unwrap()),
                o.t,
            )
        };
        let before = state(&opt);
        step(&mut opt);
        step(&mut opt);
        assert_ne!(state(&opt), before);
        assert_eq!(state(&snap), before, "the snapshot is a copy");
        opt.restore(&snap).unwrap();
        assert_eq!(state(&opt), before);
    }

    #[test]
    fn weight_decay_is_decoupled_and_only_on_matrices() {
        let varmap = VarMap::new();
        let t = Tensor::new(&[[2.0f32]], &Device::Cpu).unwrap();
        varmap
            .data()
            .lock()
            .unwrap()
            .insert("m".into(), Var::from_tensor(&t).unwrap());
        let params = Params::from_varmap(&varmap);
        let hp = adam(0.5);
        let mut opt = AdamW::new(&params, hp).unwrap();
        let mut acc = GradAccum::new(&params);
        acc.set(0, Some(Tensor::new(&[[0.0f32]], &Device::Cpu).unwrap()));
        opt.step(&params, &acc, 0.1).unwrap();
        let p: Vec<Vec<f32>> = params.vars[0].as_tensor().to_vec2().unwrap();
        assert!((p[0][0] - 2.0 * (1.0 - 0.05)).abs() < 1e-6, "{p:?}");
    }

    #[test]
    fn state_round_trips_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let run = |save_at: Option<usize>| {
            let (_vm, params) = one_param(&[0.3, -0.7, 1.1]);
            let hp = AdamWParams {
                beta1: 0.9,
                beta2: 0.95,
                eps: 1e-8,
                weight_decay: 0.0,
            };
            let mut opt = AdamW::new(&params, hp).unwrap();
            for s in 0..6 {
                if Some(s) == save_at {
                    let path = dir.path().join("opt.safetensors");
                    opt.save(&params, &path).unwrap();
                    let mut fresh = AdamW::new(&params, hp).unwrap();
                    fresh.load(&params, &path, opt.t).unwrap();
                    opt = fresh;
                }
                let mut acc = GradAccum::new(&params);
                let g = params.vars[0].as_tensor().sin().unwrap();
                acc.set(0, Some(g));
                opt.step(&params, &acc, 0.05).unwrap();
            }
            params.vars[0].as_tensor().to_vec1::<f32>().unwrap()
        };
        assert_eq!(run(None), run(Some(3)));
    }

    #[test]
    fn clipping_scales_to_max_norm() {
        let (_vm, params) = one_param(&[0.0, 0.0]);
        let mut acc = GradAccum::new(&params);
        acc.set(0, Some(Tensor::new(&[3.0f32, 4.0], &Device::Cpu).unwrap()));
        let norm = acc.clip(1.0).unwrap();
        assert!((norm - 5.0).abs() < 1e-6);
        assert!((acc.global_norm().unwrap() - 1.0).abs() < 1e-5);
    }

    #[test]
    fn schedule_warmup_then_cosine() {
        let s = Schedule {
            lr: 1.0,
            warmup: 4,
            total: 14,
            kind: LrScheduler::Cosine,
            min_lr_ratio: 0.1,
        };
        assert_eq!(s.lr_at(0), 0.25);
        assert_eq!(s.lr_at(3), 1.0);
        assert!((s.lr_at(4) - 1.0).abs() < 1e-12);
        assert!((s.lr_at(9) - 0.55).abs() < 1e-12);
        assert!((s.lr_at(14) - 0.1).abs() < 1e-12);
        assert!((s.lr_at(100) - 0.1).abs() < 1e-12);
        let c = Schedule {
            kind: LrScheduler::Constant,
            ..s
        };
        assert_eq!(c.lr_at(50), 1.0);
    }
}
