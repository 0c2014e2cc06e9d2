//! Reused buffers for the bf16 products' operand copies.
//!
//! Every bf16 product converts both operands into contiguous copies ([`super::pack`]). Taken
//! fresh each time, a copy of a training product's size comes from the allocator as new
//! pages (or a recycled block the allocator zeroes first), which the kernel zeroes page by
//! page on first touch: a pass over the copy's memory before the conversion writes it. A
//! [`Pool`] keeps a few buffers of earlier products so that the next copy is written straight
//! into memory already mapped, and never zeroed.
//!
//! * A buffer taken ([`Pool::take`]) is handed back when its [`Pooled`] drops; buffers are
//!   never shared, so products running at the same time (and rayon's work stealing inside
//!   one) each hold their own.
//! * At most [`KEPT`] buffers stay in a pool; beyond that the smallest is freed, so the
//!   memory a pool holds is bounded by its [`KEPT`] largest recent copies.
//! * [`Pooled::fill`] writes every element before the buffer is read, so no buffer is ever
//!   initialised twice (no zeroing) and none is read before it is written.

use std::ops::Deref;
use std::sync::Mutex;

use rayon::prelude::*;

use super::super::Operand;

/// Buffers a pool keeps between products (two operands of two products in flight).
pub const KEPT: usize = 4;

/// Buffers of element type `T` kept for reuse (module docs).
pub struct Pool<T>(Mutex<Vec<Vec<T>>>);

impl<T> Pool<T> {
    /// An empty pool.
    pub const fn new() -> Self {
        Pool(Mutex::new(Vec::new()))
    }

    /// A buffer of capacity at least `len`, empty: the smallest kept one that is large
    /// enough, else a new allocation (no kept buffer grows, which would copy it).
    pub fn take(&'static self, len: usize) -> Pooled<T> {
        let kept = {
            let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
            let best = (0..kept.len())
                .filter(|&i| kept[i].capacity() >= len)
                .min_by_key(|&i| kept[i].capacity());
            best.map(|i| kept.swap_remove(i))
        };
        let mut buf = kept.unwrap_or_else(|| Vec::with_capacity(len));
        buf.clear();
        Pooled { buf, pool: self }
    }

    fn give(&self, buf: Vec<T>) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.push(buf);
        if kept.len() > KEPT {
            let smallest = (0..kept.len())
                .min_by_key(|&i| kept[i].capacity())
                .expect("the pool holds buffers");
            kept.swap_remove(smallest);
        }
    }

    /// The capacities of the kept buffers (tests).
    #[cfg(test)]
    pub fn capacities(&self) -> Vec<usize> {
        let kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().map(Vec::capacity).collect()
    }
}

/// A buffer taken from a [`Pool`], handed back on drop; reads as the slice it was filled with.
pub struct Pooled<T: 'static> {
    buf: Vec<T>,
    pool: &'static Pool<T>,
}

impl<T: Send + 'static> Pooled<T> {
    /// The operand `x`, stored `rows x cols` in rows of `x.ld`, converted element by element
    /// by `f` into this buffer (rows of `cols`, contiguous), rows in parallel on the calling
    /// rayon pool. Every element is written (each row's `cols` slots from `cols` source
    /// values; a source shorter than its shape panics on the slice, before anything is read).
    pub fn fill(
        mut self,
        x: &Operand<'_>,
        (rows, cols): (usize, usize),
        f: impl Fn(f32) -> T + Sync,
    ) -> Self {
        assert!(cols > 0, "bf16 operand copy with no columns");
        let len = rows * cols;
        self.buf.clear();
        self.buf.reserve(len);
        self.buf.spare_capacity_mut()[..len]
            .par_chunks_mut(cols)
            .enumerate()
            .with_min_len(64)
            .for_each(|(i, slots)| {
                let src = &x.data[i * x.ld..i * x.ld + cols];
                for (slot, &v) in slots.iter_mut().zip(src) {
                    slot.write(f(v));
                }
            });
        // SAFETY: the first `len` slots of the spare capacity were written above: `rows`
        // chunks of exactly `cols` slots, each zipped with a source slice of exactly `cols`
        // values (a shorter source panics on the slice), so every slot got a value.
        unsafe { self.buf.set_len(len) };
        self
    }
}

impl<T> Deref for Pooled<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.buf
    }
}

impl<T> Drop for Pooled<T> {
    fn drop(&mut self) {
        self.pool.give(std::mem::take(&mut self.buf));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static POOL: Pool<u16> = Pool::new();

    /// `rows x cols` of `base + i` in rows of `ld` (padding between rows set to a marker).
    fn source(rows: usize, cols: usize, ld: usize, base: f32) -> Vec<f32> {
        let mut v = vec![-1.0; rows * ld];
        for i in 0..rows {
            for j in 0..cols {
                v[i * ld + j] = base + (i * cols + j) as f32;
            }
        }
        v
    }

    fn copied(rows: usize, cols: usize, ld: usize, base: f32) -> Pooled<u16> {
        let data = source(rows, cols, ld, base);
        let x = Operand {
            data: &data,
            ld,
            trans: false,
        };
        POOL.take(rows * cols).fill(&x, (rows, cols), |v| v as u16)
    }

    #[test]
    fn a_copy_reads_what_was_written_and_reuses_a_kept_buffer() {
        let first = copied(300, 7, 9, 0.0);
        assert_eq!(first.len(), 2100);
        assert!(first.iter().enumerate().all(|(i, &v)| v == i as u16));
        let ptr = first.as_ptr();
        drop(first);
        // the same size again: the kept buffer, overwritten in full (nothing of the old left)
        let second = copied(300, 7, 7, 5.0);
        assert_eq!(second.as_ptr(), ptr, "the kept buffer was not reused");
        assert!(second.iter().enumerate().all(|(i, &v)| v == 5 + i as u16));
        // a smaller copy while the first is out takes a new buffer; both come back
        let third = copied(2, 3, 4, 9.0);
        assert_eq!(&third[..], &[9, 10, 11, 12, 13, 14]);
        drop((second, third));
        let caps = POOL.capacities();
        assert!(
            caps.len() <= KEPT && caps.iter().any(|&c| c >= 2100),
            "{caps:?}"
        );
    }

    #[test]
    fn the_pool_keeps_at_most_its_bound_and_drops_the_smallest() {
        static BOUNDED: Pool<u8> = Pool::new();
        let data = vec![1.0f32; 100 * (KEPT + 2)];
        let held: Vec<_> = (1..=KEPT + 2)
            .map(|n| {
                let x = Operand {
                    data: &data,
                    ld: 100,
                    trans: false,
                };
                BOUNDED.take(n * 100).fill(&x, (n, 100), |v| v as u8)
            })
            .collect();
        assert!(held.iter().all(|b| b.iter().all(|&v| v == 1)));
        drop(held);
        let mut caps = BOUNDED.capacities();
        caps.sort_unstable();
        assert_eq!(caps.len(), KEPT);
        assert!(
            caps[0] >= 300,
            "the smallest buffers should have been freed: {caps:?}"
        );
    }

    #[test]
    #[should_panic]
    fn a_source_shorter_than_its_shape_panics() {
        let data = vec![0.0f32; 10];
        let x = Operand {
            data: &data,
            ld: 5,
            trans: false,
        };
        let _ = POOL.take(15).fill(&x, (3, 5), |v| v as u16);
    }
}
