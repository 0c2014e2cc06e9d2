//! One operand of a matrix product ([`Operand`]): shared by the product's dispatcher
//! ([`super::matmul`]) and its few-row kernel ([`super::skinny`]).

/// One operand of [`sgemm`](super::matmul::sgemm): the matrix `op(x)`, where `x` is stored row-major in `data`
/// with its rows `ld` elements apart (BLAS's leading dimension), and `op(x)` is `x`, or `x^T`
/// when `trans`.
#[derive(Clone, Copy, Debug)]
pub struct Operand<'a> {
    pub data: &'a [f32],
    pub ld: usize,
    pub trans: bool,
}

impl<'a> Operand<'a> {
    /// `(row stride, column stride)` of `op(x)`: element `(i, l)` sits at
    /// `i * row + l * col` in `data`.
    pub fn strides(&self) -> (isize, isize) {
        if self.trans {
            (1, self.ld as isize)
        } else {
            (self.ld as isize, 1)
        }
    }

    /// `op(x) = x`, stored in rows of `ld`.
    pub fn plain(data: &'a [f32], ld: usize) -> Self {
        Operand {
            data,
            ld,
            trans: false,
        }
    }

    /// `op(x) = x^T`, with `x` stored in rows of `ld`.
    pub fn transposed(data: &'a [f32], ld: usize) -> Self {
        Operand {
            data,
            ld,
            trans: true,
        }
    }

    /// `(rows, columns)` of the stored `x` when `op(x)` is `[r, c]`.
    pub(crate) fn stored(&self, r: usize, c: usize) -> (usize, usize) {
        if self.trans {
            (c, r)
        } else {
            (r, c)
        }
    }
}
