//! The table of named presets ([`PRESETS`]): each one's local copy, pinned hub copy
//! ([`HubSource`], [`HubLayout`]) and fields.

use super::records::{AnswerSource, AnswerType, FieldMap};
use super::DataError;

/// A named dataset: its local copy in a data directory and its hub copy.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    pub name: &'static str,
    /// Path of the local copy relative to the data directory.
    pub file: &'static str,
    /// Records the local file holds in the copy SOURCES.md describes (None: not in that copy).
    pub records: Option<usize>,
    /// Whether records carry a worked solution whose final answer the verifier can check.
    pub has_worked_solution: bool,
    /// Where the local copy's file comes from.
    pub source: &'static str,
    /// The pinned hub copy, read when the data directory lacks [`Preset::file`] (None: only a
    /// local copy exists; docs/data.md says why).
    pub hub: Option<HubSource>,
    /// Keep only the first row of each (prompt text, answer) pair, from either copy.
    pub dedup: bool,
    /// The local copy's fields (LiveCodeBench presets: unused, their local copy is read in the
    /// hub layout).
    fields: fn() -> FieldMap,
}

impl Preset {
    pub fn fields(&self) -> FieldMap {
        (self.fields)()
    }
}

/// A pinned copy of a preset on the Hugging Face hub (a dataset repository).
#[derive(Debug, Clone, Copy)]
pub struct HubSource {
    /// `owner/name` of the dataset repository.
    pub repo: &'static str,
    /// The revision the files are fetched at (a commit sha, or a branch name where docs/data.md
    /// says no sha is known).
    pub revision: &'static str,
    /// Paths inside the repository, read in this order and concatenated.
    pub files: &'static [&'static str],
    /// Problems the preset yields from this copy (after [`Preset::dedup`] and skipped rows),
    /// as docs/data.md lists them.
    pub rows: usize,
    /// How the files' rows become problems.
    pub layout: HubLayout,
}

/// How the rows of a hub copy become problems.
#[derive(Debug, Clone, Copy)]
pub enum HubLayout {
    /// Records with these fields (format by extension, as [`load_file`](super::load_file) reads
    /// them).
    Fields(fn() -> FieldMap),
    /// verl's parquet layout whose single user message is DAPO's prompt wrapper
    /// ([`DAPO_PREFIX`] + problem + [`DAPO_SUFFIX`]); the wrapper is removed, so the problem is
    /// bare as in the local copy and `prompt_template = "dapo"` puts the same wrapper back.
    /// A row without the exact wrapper is an error naming the row.
    DapoWrapped,
    /// LiveCodeBench's code-generation rows ([`crate::livecodebench`]).
    LiveCodeBench,
}

/// The text before the problem in DAPO-Math-17k's hub prompts (the start of
/// [`PromptTemplate::Dapo`](crate::PromptTemplate::Dapo)).
pub const DAPO_PREFIX: &str = "Solve the following math problem step by step. The last line of \
     your response should be of the form Answer: $Answer (without quotes) where $Answer is the \
     answer to the problem.\n\n";
/// The text after the problem in DAPO-Math-17k's hub prompts.
pub const DAPO_SUFFIX: &str = "\n\nRemember to put your answer on its own line after \"Answer:\".";

pub(super) fn fm(
    prompt: &str,
    answer: AnswerSource,
    solution: Option<&str>,
    id: Option<&str>,
) -> FieldMap {
    FieldMap {
        prompt: prompt.into(),
        answer,
        solution: solution.map(Into::into),
        id: id.map(Into::into),
        data_source: None,
        context: None,
        choices: Vec::new(),
    }
}

/// [`FieldMap::problem_answer`] with `answer` a string (AIME 2024, `"033"`).
fn problem_answer_text() -> FieldMap {
    FieldMap {
        answer: typed("answer", AnswerType::Text),
        ..FieldMap::problem_answer()
    }
}

/// The answer column `p` of a preset, of type `t` (docs/data.md lists each).
fn typed(p: &str, t: AnswerType) -> AnswerSource {
    AnswerSource::Typed(p.into(), t)
}

/// GSM8K's fields, in both copies: the answer after the solution's last `####`.
fn gsm8k_fields() -> FieldMap {
    fm(
        "question",
        AnswerSource::AfterHashes("answer".into()),
        Some("answer"),
        None,
    )
}

/// Minerva-MATH's fields, in both copies: the answer is the solution's last `\boxed{...}`.
fn minerva_math_fields() -> FieldMap {
    fm(
        "problem",
        AnswerSource::LastBoxedIn("solution".into()),
        Some("solution"),
        Some("idx"),
    )
}

/// OlympiadBench's fields, in both copies: a list of final answers, and a context put before
/// the question when there is one.
fn olympiadbench_fields() -> FieldMap {
    FieldMap {
        context: Some("context".into()),
        ..fm(
            "question",
            typed("final_answer", AnswerType::TextList),
            Some("solution"),
            Some("id"),
        )
    }
}

/// The presets [`load_preset`](super::load_preset) knows. `matharena_aime25` is read from
/// MathArena's layout (`answers.csv` + `problems/<id>.tex` for AIME 2025 I and II).
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "math500",
        file: "math500/test.jsonl",
        records: Some(500),
        has_worked_solution: true,
        source: "github hkust-nlp/simpleRL-reason examples/simplelr_math_eval/data/math500/test.jsonl (the PRM800K MATH-500 split)",
        hub: Some(HubSource {
            repo: "HuggingFaceH4/MATH-500",
            revision: "ff5b20257d8185524591543f8ff5993951537bb8",
            files: &["test.jsonl"],
            rows: 500,
            layout: HubLayout::Fields(|| fm("problem", typed("answer", AnswerType::Text), Some("solution"), Some("unique_id"))),
        }),
        dedup: false,
        fields: || fm("problem", typed("answer", AnswerType::Text), Some("solution"), Some("unique_id")),
    },
    Preset {
        name: "aime24",
        file: "aime24/test.jsonl",
        records: Some(30),
        has_worked_solution: true,
        source: "github QwenLM/Qwen2.5-Math evaluation/data/aime24/test.jsonl",
        hub: Some(HubSource {
            repo: "HuggingFaceH4/aime_2024",
            revision: "2fe88a2f1091d5048c0f36abc874fb997b3dd99a",
            files: &["data/train-00000-of-00001.parquet"],
            rows: 30,
            layout: HubLayout::Fields(problem_answer_text),
        }),
        dedup: false,
        fields: problem_answer_text,
    },
    Preset {
        name: "aime24_polaris",
        file: "aime24/aime24.parquet",
        records: Some(30),
        has_worked_solution: false,
        source: "github ChenxinAn-fdu/POLARIS evaluation/benchmarks/aime24.parquet",
        hub: None,
        dedup: false,
        fields: FieldMap::verl,
    },
    Preset {
        name: "aime24_dapo",
        file: "aime24/aime-2024.parquet",
        records: Some(960),
        has_worked_solution: false,
        source: "github BytedTsinghua-SIA/DAPO eval/aime-2024.parquet",
        hub: None,
        dedup: false,
        fields: FieldMap::verl,
    },
    Preset {
        name: "aime25",
        file: "aime25/train.jsonl",
        records: Some(30),
        has_worked_solution: false,
        source: "github Geraldxm/math-vault source/aime_2025/train.jsonl (MathArena/aime_2025)",
        hub: Some(HubSource {
            repo: "MathArena/aime_2025",
            revision: "c94da77eb22bbd6439e62a323bec18493a421302",
            files: &["data/train-00000-of-00001.parquet"],
            rows: 30,
            layout: HubLayout::Fields(|| fm("problem", typed("answer", AnswerType::Integer), None, Some("problem_idx"))),
        }),
        dedup: false,
        fields: || fm("problem", typed("answer", AnswerType::Integer), None, Some("problem_idx")),
    },
    Preset {
        name: "aime25_polaris",
        file: "aime25/aime25.parquet",
        records: Some(30),
        has_worked_solution: false,
        source: "github ChenxinAn-fdu/POLARIS evaluation/benchmarks/aime25.parquet",
        hub: None,
        dedup: false,
        fields: FieldMap::verl,
    },
    Preset {
        name: "matharena_aime25",
        file: "aime25/matharena",
        records: Some(30),
        has_worked_solution: false,
        source: "github eth-sri/matharena data/aime/aime_2025_{I,II}/ (answers.csv, problems/*.tex)",
        hub: None,
        dedup: false,
        fields: || fm("problem", AnswerSource::Field("answer".into()), None, Some("id")),
    },
    Preset {
        name: "amc23",
        file: "amc23/test.jsonl",
        records: Some(40),
        has_worked_solution: false,
        source: "github QwenLM/Qwen2.5-Math evaluation/data/amc23/test.jsonl",
        hub: Some(HubSource {
            repo: "math-ai/amc23",
            revision: "80815d37005feb82cd7f8fbc6901d5d3eff43057",
            files: &["test-00000-of-00001.parquet"],
            rows: 40,
            layout: HubLayout::Fields(|| fm("question", typed("answer", AnswerType::Number), None, Some("id"))),
        }),
        dedup: false,
        fields: || fm("problem", typed("answer", AnswerType::Number), None, Some("id")),
    },
    Preset {
        name: "minerva_math",
        file: "minerva_math/test.jsonl",
        records: Some(272),
        has_worked_solution: true,
        source: "github QwenLM/Qwen2.5-Math evaluation/data/minerva_math/test.jsonl",
        hub: Some(HubSource {
            repo: "knoveleng/Minerva-Math",
            revision: "93d86e1f779d84c7393587c2cdbf6c7511591f95",
            files: &["data/train-00000-of-00001.parquet"],
            rows: 272,
            layout: HubLayout::Fields(minerva_math_fields),
        }),
        dedup: false,
        fields: minerva_math_fields,
    },
    Preset {
        name: "olympiadbench",
        file: "olympiadbench/test.jsonl",
        records: Some(675),
        has_worked_solution: false,
        source: "github QwenLM/Qwen2.5-Math evaluation/data/olympiadbench/test.jsonl",
        hub: Some(HubSource {
            repo: "Hothan/OlympiadBench",
            revision: "91184b52131e7fc9455fef848035173aea8cc01a",
            files: &["OlympiadBench/OE_TO_maths_en_COMP/OE_TO_maths_en_COMP.parquet"],
            rows: 674,
            layout: HubLayout::Fields(olympiadbench_fields),
        }),
        dedup: false,
        fields: olympiadbench_fields,
    },
    Preset {
        name: "gsm8k",
        file: "gsm8k/test.jsonl",
        records: Some(1319),
        has_worked_solution: true,
        source: "github openai/grade-school-math grade_school_math/data/test.jsonl",
        hub: Some(HubSource {
            repo: "openai/gsm8k",
            revision: "740312add88f781978c0658806c59bc2815b9866",
            files: &["main/test-00000-of-00001.parquet"],
            rows: 1319,
            layout: HubLayout::Fields(gsm8k_fields),
        }),
        dedup: false,
        fields: gsm8k_fields,
    },
    Preset {
        name: "gsm8k_train",
        file: "gsm8k/train.jsonl",
        records: Some(7473),
        has_worked_solution: true,
        source: "github openai/grade-school-math grade_school_math/data/train.jsonl",
        hub: Some(HubSource {
            repo: "openai/gsm8k",
            revision: "740312add88f781978c0658806c59bc2815b9866",
            files: &["main/train-00000-of-00001.parquet"],
            rows: 7473,
            layout: HubLayout::Fields(gsm8k_fields),
        }),
        dedup: false,
        fields: gsm8k_fields,
    },
    Preset {
        name: "math_train",
        file: "math_train/math.json",
        records: Some(7474),
        has_worked_solution: false,
        source: "github agentica-project/rllm rllm/data/train/math/math.json",
        hub: Some(HubSource {
            repo: "EleutherAI/hendrycks_math",
            revision: "21a5633873b6a120296cce3e2df9d5550074f4a3",
            files: &["algebra/train-00000-of-00001.parquet", "counting_and_probability/train-00000-of-00001.parquet", "geometry/train-00000-of-00001.parquet", "intermediate_algebra/train-00000-of-00001.parquet", "number_theory/train-00000-of-00001.parquet", "prealgebra/train-00000-of-00001.parquet", "precalculus/train-00000-of-00001.parquet"],
            rows: 7500,
            layout: HubLayout::Fields(|| {
                fm(
                    "problem",
                    AnswerSource::LastBoxedOrSkip("solution".into()),
                    Some("solution"),
                    None,
                )
            }),
        }),
        dedup: false,
        fields: || fm("problem", typed("answer", AnswerType::Text), None, None),
    },
    Preset {
        name: "dapo_math_17k",
        file: "dapo_math_17k/dapo_math_17k.parquet",
        records: Some(17917),
        has_worked_solution: false,
        source: "github MasterVito/SvS data/dapo_math_17k.parquet (one copy of DAPO-Math-17k)",
        hub: Some(HubSource {
            repo: "BytedTsinghua-SIA/DAPO-Math-17k",
            revision: "65877096c24ffa7abc4e4fa5edb95cf3413a5674",
            files: &["data/dapo-math-17k.parquet"],
            rows: 17200,
            layout: HubLayout::DapoWrapped,
        }),
        dedup: true,
        fields: FieldMap::verl,
    },
    Preset {
        name: "deepscaler_aime",
        file: "deepscaler_components/aime.json",
        records: Some(975),
        has_worked_solution: true,
        source: "github agentica-project/rllm rllm/data/train/math/aime.json",
        hub: None,
        dedup: false,
        fields: || fm("problem", typed("answer", AnswerType::Text), Some("solution"), None),
    },
    Preset {
        name: "polaris",
        file: "polaris/polaris-data-53K.parquet",
        records: None,
        has_worked_solution: false,
        source: "github ChenxinAn-fdu/POLARIS parquet/stage1/polaris-data-53K.parquet (verl layout)",
        hub: Some(HubSource {
            repo: "POLARIS-Project/Polaris-Dataset-53K",
            revision: "main",
            files: &["polaris-data-53K.jsonl"],
            rows: 53291,
            layout: HubLayout::Fields(|| fm("problem", typed("answer", AnswerType::Text), None, None)),
        }),
        dedup: false,
        fields: FieldMap::verl,
    },
    Preset {
        name: "deepscaler",
        file: "deepscaler/deepscaler.json",
        records: None,
        has_worked_solution: false,
        source: "hub agentica-org/DeepScaleR-Preview-Dataset deepscaler.json (the same layout)",
        hub: Some(HubSource {
            repo: "agentica-org/DeepScaleR-Preview-Dataset",
            revision: "b6ae8c60f5c1f2b594e2140b91c49c9ad0949e29",
            files: &["deepscaler.json"],
            rows: 40315,
            layout: HubLayout::Fields(|| fm("problem", typed("answer", AnswerType::Text), Some("solution"), None)),
        }),
        dedup: false,
        fields: || fm("problem", typed("answer", AnswerType::Text), Some("solution"), None),
    },
    Preset {
        name: "livecodebench",
        file: "livecodebench",
        records: None,
        has_worked_solution: false,
        source: "hub livecodebench/code_generation_lite: a folder holding its test.jsonl ... test6.jsonl",
        hub: Some(HubSource {
            repo: "livecodebench/code_generation_lite",
            revision: "0fe84c3912ea0c4d4a78037083943e8f0c4dd505",
            files: &[
                "test.jsonl",
                "test2.jsonl",
                "test3.jsonl",
                "test4.jsonl",
                "test5.jsonl",
                "test6.jsonl",
            ],
            rows: 1055,
            layout: HubLayout::LiveCodeBench,
        }),
        dedup: false,
        // unused: the local copy is a folder of the hub's files, read in the hub layout
        fields: || fm("question_content", AnswerSource::Json("private_test_cases".into()), None, None),
    },
    Preset {
        name: "livecodebench_v6",
        file: "livecodebench",
        records: None,
        has_worked_solution: false,
        source: "hub livecodebench/code_generation_lite: a folder holding its test6.jsonl",
        hub: Some(HubSource {
            repo: "livecodebench/code_generation_lite",
            revision: "0fe84c3912ea0c4d4a78037083943e8f0c4dd505",
            files: &["test6.jsonl"],
            rows: 175,
            layout: HubLayout::LiveCodeBench,
        }),
        dedup: false,
        // unused: the local copy is a folder of the hub's files, read in the hub layout
        fields: || fm("question_content", AnswerSource::Json("private_test_cases".into()), None, None),
    },
    Preset {
        name: "codeforces",
        file: "code/codeforces.json",
        records: Some(408),
        has_worked_solution: false,
        source: "github agentica-project/rllm rllm/data/test/code/codeforces.json",
        hub: None,
        dedup: false,
        fields: || fm("problem", AnswerSource::Json("tests".into()), None, None),
    },
    Preset {
        name: "leetcode",
        file: "code/leetcode.json",
        records: Some(200),
        has_worked_solution: false,
        source: "github agentica-project/rllm rllm/data/test/code/leetcode.json",
        hub: None,
        dedup: false,
        fields: || {
            fm(
                "problem",
                AnswerSource::Json("tests".into()),
                Some("solutions"),
                None,
            )
        },
    },
];

/// Finds a preset by name.
pub fn preset(name: &str) -> Result<&'static Preset, DataError> {
    PRESETS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| DataError::UnknownPreset {
            name: name.to_string(),
            known: PRESETS
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The pinned hub copy of preset `name` (None: an unknown name, or a preset with a local
/// copy only).
pub fn hub_source(name: &str) -> Option<&'static HubSource> {
    PRESETS
        .iter()
        .find(|p| p.name == name)
        .and_then(|p| p.hub.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::load_hub_files;

    /// The wrapper stripped from DAPO-Math-17k's hub prompts is exactly what the `dapo`
    /// template puts around a problem.
    #[test]
    fn dapo_wrapper_is_the_dapo_template() {
        let problem = "Find $x$ if $2x = 4$.";
        assert_eq!(
            crate::PromptTemplate::Dapo.render(problem),
            format!("{DAPO_PREFIX}{problem}{DAPO_SUFFIX}")
        );
    }

    #[test]
    fn every_hub_source_is_pinned_and_has_files() {
        for p in PRESETS {
            let Some(h) = &p.hub else { continue };
            assert!(h.repo.split('/').count() == 2, "{}", p.name);
            assert!(!h.files.is_empty() && h.rows > 0, "{}", p.name);
            let sha = h.revision.len() == 40 && h.revision.chars().all(|c| c.is_ascii_hexdigit());
            // only Polaris-53K has no known commit (docs/data.md)
            assert!(
                sha || (p.name == "polaris" && h.revision == "main"),
                "{}",
                p.name
            );
        }
        assert!(load_hub_files("aime24_polaris", &[]).is_err());
    }
}
