//! Where a model's weights live and in which dtype, as named in configs and on the command line:
//! [`WeightDtype`] (`f32`, `bf16`, `f16`) and [`DeviceSpec`] (`cpu`, `cuda`, `cuda:N`). Each is
//! parsed once, here; every other crate holds the enum.

use std::fmt;
use std::str::FromStr;

use candle_core::{DType, Device};
use serde::{Deserialize, Serialize};

/// The dtype of a model's parameters. Optimizer moments are f32 whatever this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WeightDtype {
    #[default]
    #[serde(alias = "float32")]
    F32,
    #[serde(alias = "bfloat16")]
    Bf16,
    #[serde(alias = "float16")]
    F16,
}

impl WeightDtype {
    /// The names accepted, in the form configs write.
    pub const NAMES: [&'static str; 3] = ["f32", "bf16", "f16"];

    /// The short name: `f32`, `bf16` or `f16`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::Bf16 => "bf16",
            Self::F16 => "f16",
        }
    }

    /// The name torch and Hugging Face configs use: `float32`, `bfloat16`, `float16`.
    pub fn torch_name(self) -> &'static str {
        match self {
            Self::F32 => "float32",
            Self::Bf16 => "bfloat16",
            Self::F16 => "float16",
        }
    }

    /// candle's dtype.
    pub fn candle(self) -> DType {
        match self {
            Self::F32 => DType::F32,
            Self::Bf16 => DType::BF16,
            Self::F16 => DType::F16,
        }
    }

    /// Bytes of one parameter.
    pub fn bytes(self) -> usize {
        match self {
            Self::F32 => 4,
            Self::Bf16 | Self::F16 => 2,
        }
    }
}

impl fmt::Display for WeightDtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for WeightDtype {
    type Err = String;

    /// `f32`/`float32`, `bf16`/`bfloat16`, `f16`/`float16`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "f32" | "float32" => Ok(Self::F32),
            "bf16" | "bfloat16" => Ok(Self::Bf16),
            "f16" | "float16" => Ok(Self::F16),
            other => Err(format!("`{other}`: expected f32, bf16 or f16")),
        }
    }
}

/// A device by name: `cpu`, `cuda` (ordinal 0) or `cuda:N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum DeviceSpec {
    #[default]
    Cpu,
    Cuda(usize),
}

impl DeviceSpec {
    /// Opens the device. A CUDA device needs a build with the `cuda` feature (`cargo build
    /// --release --features cuda`, with the CUDA toolkit installed); without it the error says
    /// so.
    pub fn open(self) -> Result<Device, String> {
        match self {
            Self::Cpu => Ok(Device::Cpu),
            Self::Cuda(ordinal) => {
                if !candle_core::utils::cuda_is_available() {
                    return Err(format!(
                        "`{self}`: this rlvr was built without CUDA; rebuild it with \
                         `cargo build --release --features cuda` (needs the CUDA toolkit), or \
                         use cpu"
                    ));
                }
                Device::new_cuda(ordinal).map_err(|e| format!("`{self}`: {e}"))
            }
        }
    }

    /// True for the CPU.
    pub fn is_cpu(self) -> bool {
        self == Self::Cpu
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cpu => f.write_str("cpu"),
            Self::Cuda(0) => f.write_str("cuda"),
            Self::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

impl FromStr for DeviceSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "cpu" => Ok(Self::Cpu),
            "cuda" => Ok(Self::Cuda(0)),
            other => other
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(Self::Cuda)
                .ok_or_else(|| format!("`{other}`: expected cpu, cuda or cuda:N")),
        }
    }
}

impl TryFrom<String> for DeviceSpec {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<DeviceSpec> for String {
    fn from(d: DeviceSpec) -> String {
        d.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_names_are_explained() {
        for name in WeightDtype::NAMES {
            let d: WeightDtype = name.parse().unwrap();
            assert_eq!(d.as_str(), name);
            assert_eq!(d.torch_name().parse::<WeightDtype>().unwrap(), d);
        }
        assert_eq!(WeightDtype::Bf16.candle(), DType::BF16);
        assert_eq!(WeightDtype::F16.bytes(), 2);
        let err = "fp8".parse::<WeightDtype>().unwrap_err();
        assert!(err.contains("fp8") && err.contains("bf16"), "{err}");
        for (name, want) in [
            ("cpu", DeviceSpec::Cpu),
            ("cuda", DeviceSpec::Cuda(0)),
            ("cuda:3", DeviceSpec::Cuda(3)),
        ] {
            let d: DeviceSpec = name.parse().unwrap();
            assert_eq!(d, want);
            assert_eq!(d.to_string(), name);
        }
        for bad in ["gpu", "cuda:", "cuda:x", "cuda:-1", ""] {
            let err = bad.parse::<DeviceSpec>().unwrap_err();
            assert!(err.contains("cuda:N"), "{bad}: {err}");
        }
        assert!(DeviceSpec::Cpu.open().unwrap().is_cpu());
        #[cfg(not(feature = "cuda"))]
        assert!(DeviceSpec::Cuda(0)
            .open()
            .unwrap_err()
            .contains("without CUDA"));
    }
}
