//! The testbed's tokenizer: a small BPE trained with the `tokenizers` crate
//! ([`train_tokenizer`]) on generated text ([`testbed_tokenizer`]).

use std::collections::HashSet;

use rand::rngs::StdRng;
use rand::SeedableRng;
use tokenizers::models::bpe::{BpeTrainerBuilder, BPE};
use tokenizers::models::TrainerWrapper;
use tokenizers::pre_tokenizers::split::{Split as SplitPre, SplitPattern};
use tokenizers::{AddedToken, SplitDelimiterBehavior, Tokenizer};

use super::problems::{prompt_text, sample_terms, Split, TestbedConfig};
use super::regime::OnFailedStep;
use super::slip::{ErrorKind, Style};
use super::solutions::{
    write_rechecked_solution, write_solution, write_step_checked_solution, write_verified_solution,
    RECHECK_PASSES,
};

/// End-of-sequence token of the testbed tokenizer.
pub const EOS: &str = "<|endoftext|>";
/// Padding token of the testbed tokenizer.
pub const PAD: &str = "<|pad|>";

/// Trains the testbed's BPE tokenizer on `texts` with the `tokenizers` crate: at most
/// `vocab_size` tokens, digits and spaces kept as single-character tokens (words may merge),
/// `<|endoftext|>` (id 0) and `<|pad|>` (id 1) as special tokens, a fusing decoder so that
/// decode(encode(s)) = s.
pub fn train_tokenizer<I, S>(texts: I, vocab_size: usize) -> Result<Tokenizer, String>
where
    I: Iterator<Item = S> + Send,
    S: AsRef<str> + Send,
{
    let specials = vec![AddedToken::from(EOS, true), AddedToken::from(PAD, true)];
    // Every printable ASCII character is in the alphabet, so no input character is unknown.
    let alphabet: HashSet<char> = (' '..='~').collect();
    let mut trainer = TrainerWrapper::BpeTrainer(
        BpeTrainerBuilder::new()
            .vocab_size(vocab_size)
            .min_frequency(2)
            .show_progress(false)
            .special_tokens(specials.clone())
            .initial_alphabet(alphabet)
            .build(),
    );
    let mut tok = Tokenizer::new(BPE::default());
    let split = SplitPre::new(
        SplitPattern::Regex(r"[0-9]|\s|[A-Za-z]+|[^0-9A-Za-z\s]".into()),
        SplitDelimiterBehavior::Isolated,
        false,
    )
    .map_err(|e| format!("tokenizer pre-tokenizer: {e}"))?;
    tok.with_pre_tokenizer(Some(split));
    tok.with_decoder(Some(tokenizers::decoders::fuse::Fuse::new()));
    tok.train(&mut trainer, texts)
        .map_err(|e| format!("training the testbed tokenizer: {e}"))?;
    tok.add_special_tokens(specials)
        .map_err(|e| format!("adding special tokens: {e}"))?;
    Ok(tok)
}

/// The testbed tokenizer for `cfg`: trained on prompts and solutions of both styles (concise and
/// checked solutions for the checked regimes), deterministic in `cfg.seed`, 128 tokens at most.
pub fn testbed_tokenizer(cfg: &TestbedConfig) -> Result<Tokenizer, String> {
    let mut rng = StdRng::seed_from_u64(cfg.seed ^ 0x746f_6b65);
    let mut texts = Vec::new();
    let kind = cfg.regime.error_model().kind;
    for i in 0..2000 {
        let terms = sample_terms(cfg, Split::Train, &mut rng);
        let solution = if i % 2 == 0 {
            write_solution(&terms, Style::Concise, None).0
        } else if kind == ErrorKind::Recheck {
            write_rechecked_solution(&terms, [None; RECHECK_PASSES]).0
        } else if kind == ErrorKind::CheckStep {
            // the stop word too
            write_step_checked_solution(&terms, Some((i % (terms.len() - 1), 1))).0
        } else if kind == ErrorKind::Verified {
            // both verdicts: one step slips at its first attempt
            let slipped = i % (terms.len() - 1);
            let mut first = true;
            write_verified_solution(&terms, OnFailedStep::Retry, 2, |step| {
                let slip = step == slipped && first;
                first &= !slip;
                slip.then_some(1)
            })
            .0
        } else {
            write_solution(&terms, Style::Verbose, None).0
        };
        texts.push(format!("{}{solution}", prompt_text(&terms)));
    }
    train_tokenizer(texts.into_iter(), 128)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_round_trips_and_keeps_digits_single() {
        let cfg = TestbedConfig::default();
        let tok = testbed_tokenizer(&cfg).unwrap();
        assert!(tok.get_vocab_size(true) <= 128);
        assert_eq!(tok.token_to_id(EOS), Some(0));
        assert_eq!(tok.token_to_id(PAD), Some(1));
        let text = "Add: 17 9 5 = Step by step. 17+9=26, so 26. Answer: 31";
        let enc = tok.encode(text, false).unwrap();
        assert_eq!(tok.decode(enc.get_ids(), false).unwrap(), text);
        // digits are never merged
        for t in enc.get_tokens() {
            assert!(
                !(t.len() > 1 && t.chars().any(|c| c.is_ascii_digit())),
                "merged digit token {t:?}"
            );
        }
        // through tokenizer.json and back
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        tok.save(&path, false).unwrap();
        let back = Tokenizer::from_file(&path).unwrap();
        assert_eq!(back.encode(text, false).unwrap().get_ids(), enc.get_ids());
        // special token decodes away with skip_special_tokens
        let mut ids = enc.get_ids().to_vec();
        ids.push(0);
        assert_eq!(back.decode(&ids, true).unwrap(), text);
    }
}
