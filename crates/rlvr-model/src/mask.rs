//! The attention mask of every forward path: which keys a query sees.
//!
//! Key `j` is **visible** to the query at position `i` (positions of one row, or of one
//! sequence's cache) when
//! ```text
//! j == i                                   (a query always sees itself: no row is empty)
//! or  j < i  and  key j is real            (causal; padding keys are never seen)
//!            and  seg(j) == seg(i)         (packed rows: only keys of the query's own sequence)
//! ```
//! [`visible`] is that rule for one query and key. The CPU training kernel
//! (`cpu/kernels.rs`) and the CPU decode step (`cpu/decode.rs`) call it; the device-generic path
//! (`generic/attention.rs`) builds the same rule as tensors from `arange` comparisons for a
//! chunk of queries at a time, and its test checks that tensor against [`visible`] on every
//! query and key of random padded and packed batches.
//!
//! A sliding window (Mistral's `sliding_window`, refused by `DecoderConfig` today) would be
//! one more condition here, `i - j < window`, and its tensor form in `generic/attention.rs`.

/// Whether the query at position `i` sees the key at position `j` (module docs): `key_real`
/// is false for a padding key, `same_sequence` false when the key belongs to another sequence
/// of a packed row.
#[inline(always)]
pub fn visible(i: usize, j: usize, key_real: bool, same_sequence: bool) -> bool {
    j == i || (j < i && key_real && same_sequence)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_sees_itself_and_earlier_real_keys_of_its_sequence() {
        // itself, whatever the flags (a padding query still has a non-empty row)
        assert!(visible(3, 3, false, false));
        // earlier, real, same sequence
        assert!(visible(3, 0, true, true));
        // never a later key
        assert!(!visible(3, 4, true, true));
        // never a padding key or another sequence's key
        assert!(!visible(3, 1, false, true));
        assert!(!visible(3, 1, true, false));
    }
}
