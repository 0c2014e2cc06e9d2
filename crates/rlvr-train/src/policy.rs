//! What the loop trains: the [`Policy`], a model with its variables in a fixed order and its
//! tokenizer.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::{VarBuilder, VarMap};
use rlvr_model::{ChatTokenizer, Decoder, DecoderConfig, LoadedModel, TokenBatch};

use crate::optim::Params;
use crate::TrainError;

/// The model being trained, with its variables in a fixed order.
pub struct Policy {
    pub model: Decoder,
    pub varmap: VarMap,
    pub params: Params,
    pub config: DecoderConfig,
    pub tokenizer: ChatTokenizer,
    pub device: Device,
    pub dtype: DType,
}

impl Policy {
    /// Wraps a checkpoint loaded by `rlvr_model::load_model`.
    pub fn from_loaded(loaded: LoadedModel, dtype: DType, device: Device) -> Self {
        let params = Params::from_varmap(&loaded.varmap);
        Self {
            model: loaded.model,
            varmap: loaded.varmap,
            params,
            config: loaded.config,
            tokenizer: loaded.tokenizer,
            device,
            dtype,
        }
    }

    /// Loads a directory in Hugging Face layout (or a hub id from the local cache).
    pub fn load(path: &str, dtype: DType, device: &Device) -> Result<Self, TrainError> {
        let loaded = rlvr_model::load_model(path, dtype, device)?;
        Ok(Self::from_loaded(loaded, dtype, device.clone()))
    }

    /// Saves the model in Hugging Face layout.
    pub fn save(&self, dir: &Path) -> Result<(), TrainError> {
        rlvr_model::save_model(dir, &self.varmap, &self.config, &self.tokenizer)?;
        Ok(())
    }

    /// A frozen copy of the current weights (the KL reference).
    pub fn frozen_copy(&self) -> Result<Decoder, TrainError> {
        let tensors: std::collections::HashMap<String, Tensor> = self
            .params
            .names
            .iter()
            .zip(&self.params.vars)
            .map(|(n, v)| Ok((n.clone(), v.as_tensor().detach().copy()?)))
            .collect::<Result<_, candle_core::Error>>()?;
        let vb = VarBuilder::from_tensors(tensors, self.dtype, &self.device);
        Ok(Decoder::new(&self.config, vb)?)
    }

    /// The padding id for training batches.
    pub fn pad_id(&self) -> u32 {
        self.tokenizer.pad_id()
    }

    /// Response tokens -> text (special tokens dropped), for the verifier.
    pub fn decode(&self, ids: &[u32]) -> Result<String, TrainError> {
        Ok(self.tokenizer.decode(ids, true)?)
    }

    /// Builds a training batch: packed (several sequences per row, `model.use_remove_padding`)
    /// or right-padded. Both give the same log-probs and gradients.
    pub fn batch(
        &self,
        pairs: &[(Vec<u32>, Vec<u32>)],
        packed: bool,
    ) -> Result<TokenBatch, TrainError> {
        Ok(if packed {
            TokenBatch::packed(pairs, self.pad_id(), &self.device)?
        } else {
            TokenBatch::new(pairs, self.pad_id(), &self.device)?
        })
    }
}
