//! [`Params`]: the trainable parameters of a model, in a fixed order.

use candle_core::{DType, Tensor, Var};
use candle_nn::VarMap;

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
