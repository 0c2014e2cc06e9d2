//! rlvr's optimizer step against torch's own: the gradients of `fixtures/torch_adamw/` replayed
//! through `AdamW::clip_and_step` give, step after step, the weights torch computed from them
//! with `clip_grad_norm_` and `AdamW(fused=True)` (what TRL's trainer runs by default), within
//! 1e-6. The fixture and the script that made it: `python/tests/torch_adamw_fixture.py`; the
//! Python suite checks that the committed file is what the installed torch computes.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor, Var};
use candle_nn::VarMap;
use rlvr_train::optim::{AdamW, AdamWParams, GradAccum, Params};

const FIXTURE: &str = "tests/fixtures/torch_adamw/steps.safetensors";

/// The fixture's tensors and its `hyper` metadata (the optimizer's settings, JSON).
fn fixture() -> (HashMap<String, Tensor>, serde_json::Value, usize) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).expect("fixture header");
    let meta = meta.metadata().as_ref().expect("fixture metadata");
    let hyper: serde_json::Value = serde_json::from_str(&meta["hyper"]).expect("hyper");
    let steps: usize = meta["steps"].parse().expect("steps");
    let tensors = candle_core::safetensors::load(&path, &Device::Cpu).expect("fixture tensors");
    (tensors, hyper, steps)
}

fn f64_of(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("fixture: no {key}"))
}

fn values(t: &Tensor) -> Vec<f32> {
    t.flatten_all().unwrap().to_vec1::<f32>().unwrap()
}

#[test]
fn adamw_with_clipping_tracks_torchs_weights_within_1e_6_over_every_step() {
    let (t, hyper, steps) = fixture();
    let hp = AdamWParams {
        beta1: f64_of(&hyper, "beta1"),
        beta2: f64_of(&hyper, "beta2"),
        eps: f64_of(&hyper, "eps"),
        weight_decay: f64_of(&hyper, "weight_decay"),
    };
    let max_norm = f64_of(&hyper, "max_grad_norm");
    for fused in [true, false] {
        let varmap = VarMap::new();
        {
            let mut d = varmap.data().lock().unwrap();
            for (name, init) in t
                .iter()
                .filter_map(|(k, v)| Some((k.strip_prefix("init/")?, v)))
            {
                d.insert(name.to_string(), Var::from_tensor(init).unwrap());
            }
        }
        let params = Params::from_varmap(&varmap);
        assert_eq!(params.len(), 3, "the fixture's three parameters");
        let mut opt = AdamW::new(&params, hp).unwrap();
        opt.fused_host = fused;
        let mut worst = (0f64, 0, String::new());
        for step in 0..steps {
            let lr = t[&format!("step{step}/lr")]
                .to_dtype(DType::F64)
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1::<f64>()
                .unwrap()[0];
            let mut acc = GradAccum::new(&params);
            for (i, (var, name)) in params.vars.iter().zip(&params.names).enumerate() {
                // as a training step sums them (the sums of squares recorded on the way)
                acc.add_one(i, var, &t[&format!("step{step}/grad/{name}")])
                    .unwrap();
            }
            let out = opt.clip_and_step(&params, &mut acc, max_norm, lr).unwrap();
            assert_eq!(out.skipped, None, "step {step}");
            for (var, name) in params.vars.iter().zip(&params.names) {
                let ours = values(var.as_tensor());
                let torchs = values(&t[&format!("step{step}/param/{name}")]);
                for (&a, &b) in ours.iter().zip(&torchs) {
                    // absolute for weights up to 1, relative above (an f32 of 3.5 has an ulp
                    // of 2.4e-7)
                    let err = (a as f64 - b as f64).abs() / (b as f64).abs().max(1.0);
                    if err > worst.0 {
                        worst = (err, step, name.clone());
                    }
                }
            }
        }
        let (err, step, name) = worst;
        eprintln!("fused {fused}: worst difference from torch {err:e} ({name}, step {step})");
        assert!(
            err < 1e-6,
            "fused {fused}: {name} off torch's AdamW by {err:e} at step {step}"
        );
        // and the comparison can tell: the weights moved by far more than the tolerance
        let moved = params
            .vars
            .iter()
            .zip(&params.names)
            .map(|(var, name)| {
                let (now, init) = (values(var.as_tensor()), values(&t[&format!("init/{name}")]));
                now.iter()
                    .zip(&init)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0f32, f32::max)
            })
            .fold(0f32, f32::max);
        assert!(moved > 1e-3, "the weights moved by only {moved}");
    }
}
