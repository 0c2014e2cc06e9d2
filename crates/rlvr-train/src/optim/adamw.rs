//! [`AdamW`]: the update, with f32 moments, decoupled weight decay, f32 masters of low-precision
//! parameters, optimizer offload, clipping, and its saved state (module docs of `optim`).

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor, Var};

use super::grad_accum::clip_scale;
use super::{chunks, flat_view, fused_cpu, GradAccum, Params};
use crate::config::OptimConfig;

/// What [`AdamW::clip_and_step`] did: the global gradient norm before clipping, and why the
/// update was not applied when it was not.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOutcome {
    pub grad_norm: f64,
    pub skipped: Option<String>,
}

/// [`StepOutcome::skipped`] of an update that would write a non-finite value.
pub const NON_FINITE_UPDATE: &str = "the update would make weights or optimizer moments non-finite";

/// AdamW hyper-parameters (the learning rate comes per step from [`Schedule`](super::Schedule)).
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
    pub(super) m: Vec<Tensor>,
    pub(super) v: Vec<Tensor>,
    /// f32 master weights of the parameters whose dtype is not f32 (None for f32 ones), or
    /// of every parameter when offloaded.
    pub(super) master: Vec<Option<Tensor>>,
    /// Where the moments and masters live when offloaded (the host), else None.
    pub(super) offload: Option<Device>,
    /// Whether a parameter whose state, weight and gradient are all on the host takes the
    /// fused host pass (`fused_cpu.rs`; the default) rather than the tensor-op path; both give
    /// the same bits (tests turn this off to check the other path on the CPU).
    pub fused_host: bool,
    /// Per parameter, the [`fused_cpu::Peaks`] of its moments as the last fused step wrote
    /// them (zero at the start; a restored snapshot brings its own); None once they are
    /// unknown (loaded from a file, or last updated by the tensor-op path). They let
    /// [`Self::clip_and_step`] prove an update finite without a second read of the state.
    pub(super) peaks: Vec<Option<fused_cpu::Peaks>>,
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
    /// In place, [`STEP_CHUNK_ELEMS`](super::STEP_CHUNK_ELEMS) elements at a time: the moments, the master weight and
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
