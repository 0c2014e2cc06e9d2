use super::*;
use crate::cpu::matmul::tests::data;

/// Rounding to nearest with ties to even, by bit patterns worked out by hand: bf16 keeps 7
/// fraction bits, so between 1 and 2 its step is 2^-7.
#[test]
fn rounding_is_to_nearest_with_ties_to_even() {
    let step = 2f32.powi(-7);
    for (x, want) in [
        (1.0, 0x3f80),
        // a quarter step: down
        (1.0 + step / 4.0, 0x3f80),
        // exactly half a step above 1.0 (even): stays
        (1.0 + step / 2.0, 0x3f80),
        // half a step above 1 + 2^-7 (odd): up to 1 + 2^-6
        (1.0 + 1.5 * step, 0x3f82),
        // three quarters of a step: up
        (1.0 + 0.75 * step, 0x3f81),
        (-2.0, 0xc000),
        (0.0, 0x0000),
        (f32::INFINITY, 0x7f80),
        // the largest f32 is above bf16's largest finite by more than half a step
        (f32::MAX, 0x7f80),
    ] {
        assert_eq!(to_bf16_bits(x), want, "{x:e}");
    }
    assert!(to_bf16_value(f32::NAN).is_nan());
    assert_eq!(to_bf16_value(1.0 + step / 4.0), 1.0);
}

/// `op(x)[i][l]` of an operand stored in rows of `ld`.
fn at(x: &[f32], trans: bool, ld: usize, i: usize, l: usize) -> f32 {
    if trans {
        x[l * ld + i]
    } else {
        x[i * ld + l]
    }
}

/// The routes to test: the rounded one, every library's found, and the library
/// `RLVR_BLAS_BF16` names (a path; `.ci/run` names AOCL-BLAS's so that its calling convention
/// is tested: it must load).
fn routes() -> Vec<Route> {
    let mut v = vec![Route::Rounded("tested".into())];
    for g in find().0 {
        v.push(Route::Library(g, "tested".into()));
    }
    if let Some(named) = std::env::var(BF16_ENV).ok().filter(|n| n.contains('/')) {
        match load(&named) {
            Ok(g) => v.push(Route::Library(g, "named".into())),
            Err(e) => panic!("{BF16_ENV}={named}: {e}"),
        }
    }
    v
}

/// Every route against `beta c + sum_l bf16(a_il) bf16(b_lj)` in f64, for every transpose,
/// leading dimensions wider than the rows, `beta` 0 and not, shapes from one element to more
/// than a thread's part; within f32 summation error (the terms are exact in f32).
#[test]
fn every_route_is_the_product_of_the_rounded_operands() {
    for route in routes() {
        for &(m, n, k) in &[(1, 1, 1), (3, 5, 7), (70, 33, 130), (129, 200, 64)] {
            for (trans_a, trans_b) in [(false, false), (false, true), (true, false), (true, true)] {
                for beta in [0.0f32, 0.5] {
                    let (ar, ac) = if trans_a { (k, m) } else { (m, k) };
                    let (br, bc) = if trans_b { (n, k) } else { (k, n) };
                    let (lda, ldb, ldc) = (ac + 3, bc + 1, n + 2);
                    let a = data(ar * lda, 11);
                    let b = data(br * ldb, 12);
                    let c0 = data(m * ldc, 13);
                    let mut c = c0.clone();
                    let op = |x, ld, t| Operand {
                        data: x,
                        ld,
                        trans: t,
                    };
                    let p = Product {
                        dims: [m, n, k],
                        a: op(&a, lda, trans_a),
                        b: op(&b, ldb, trans_b),
                        beta,
                    };
                    sgemm(&route, p, &mut c, ldc);
                    for i in 0..m {
                        for j in 0..n {
                            let mut want = beta as f64 * c0[i * ldc + j] as f64;
                            let mut scale = want.abs();
                            for l in 0..k {
                                let t = to_bf16_value(at(&a, trans_a, lda, i, l)) as f64
                                    * to_bf16_value(at(&b, trans_b, ldb, l, j)) as f64;
                                want += t;
                                scale += t.abs();
                            }
                            let got = c[i * ldc + j] as f64;
                            assert!(
                                (got - want).abs() <= 1e-6 * scale.max(1e-3),
                                "{}: [{m},{n},{k}] t=({trans_a},{trans_b}) beta {beta} \
                                 ({i},{j}): {got} vs {want}",
                                route.identity()
                            );
                        }
                        // the padding between rows of c is never written
                        for j in n..ldc {
                            assert_eq!(c[i * ldc + j], c0[i * ldc + j]);
                        }
                    }
                }
            }
        }
    }
}

/// The rounding happens: operands that differ from their bf16 values below bf16's precision
/// give the product of the rounded values, not the f32 product (which the same call in f32
/// gives).
#[test]
fn bf16_products_round_what_f32_products_keep() {
    let fine = 1.0 + 2f32.powi(-10);
    let a = vec![fine; 4];
    let b = vec![fine; 4];
    for route in routes() {
        let mut c = vec![0f32; 1];
        let p = Product {
            dims: [1, 1, 4],
            a: Operand::plain(&a, 4),
            b: Operand::plain(&b, 1),
            beta: 0.0,
        };
        sgemm(&route, p, &mut c, 1);
        assert_eq!(c[0], 4.0, "{}", route.identity());
        let mut f = vec![0f32; 1];
        crate::cpu::matmul::sgemm_on(crate::cpu::matmul::backend(), p, &mut f, 1);
        assert_eq!(f[0], 4.0 * fine * fine);
    }
}

#[test]
fn a_nan_operand_gives_nan_and_empty_products_follow_beta() {
    for route in routes() {
        let mut a = data(6, 3);
        a[4] = f32::NAN;
        let b = data(6, 4);
        let mut c = vec![0f32; 4];
        let p = Product {
            dims: [2, 2, 3],
            a: Operand::plain(&a, 3),
            b: Operand::plain(&b, 2),
            beta: 0.0,
        };
        sgemm(&route, p, &mut c, 2);
        // row 1 of a holds the NaN
        assert!(c[0].is_finite() && c[1].is_finite(), "{c:?}");
        assert!(c[2].is_nan() && c[3].is_nan(), "{c:?}");
        let mut c = vec![2f32; 4];
        let p = Product {
            dims: [2, 2, 0],
            a: Operand::plain(&a, 1),
            b: Operand::plain(&b, 2),
            beta: 0.5,
        };
        sgemm(&route, p, &mut c, 2);
        assert_eq!(c, vec![1.0; 4]);
    }
}

#[test]
fn every_route_is_deterministic() {
    let (m, n, k) = (200, 150, 300);
    let a = data(m * k, 5);
    let b = data(n * k, 6);
    for route in routes() {
        let run = || {
            let mut c = vec![0f32; m * n];
            let p = Product {
                dims: [m, n, k],
                a: Operand::plain(&a, k),
                b: Operand::transposed(&b, k),
                beta: 0.0,
            };
            sgemm(&route, p, &mut c, n);
            c
        };
        let first = run();
        for _ in 0..3 {
            assert!(
                first
                    .iter()
                    .zip(run())
                    .all(|(x, y)| x.to_bits() == y.to_bits()),
                "{}",
                route.identity()
            );
        }
    }
}

#[test]
fn the_product_dtype_parses_and_refuses_other_names() {
    for (s, d) in [
        ("f32", ProductDtype::F32),
        (" BF16 ", ProductDtype::Bf16),
        ("bfloat16", ProductDtype::Bf16),
        ("float32", ProductDtype::F32),
    ] {
        assert_eq!(s.parse::<ProductDtype>().unwrap(), d, "{s}");
    }
    assert_eq!(
        "fp8".parse::<ProductDtype>().unwrap_err(),
        "unknown matrix product dtype 'fp8' (expected one of: f32, bf16)"
    );
    assert_eq!(ProductDtype::default(), ProductDtype::F32);
    assert_eq!(ProductDtype::Bf16.to_string(), "bf16");
}

/// Named routes: `rounded`, a library without the symbols, a missing one; each says why.
#[test]
fn a_named_route_says_what_runs_and_why() {
    let r = choose_route(Some(" rounded "));
    assert!(matches!(r, Route::Rounded(_)));
    assert!(r
        .describe()
        .starts_with("operands rounded to bf16, multiplied in f32 by "));
    assert!(
        r.describe().ends_with(": RLVR_BLAS_BF16=rounded"),
        "{}",
        r.describe()
    );
    let r = choose_route(Some("libc.so.6"));
    assert!(
        r.describe().ends_with(
            ": libc.so.6 has no cblas_gemm_bf16bf16f32, cblas_sbgemm or aocl_gemm_bf16bf16f32of32"
        ),
        "{}",
        r.describe()
    );
    let r = choose_route(Some("/nonexistent/libmkl_rt.so.3"));
    assert!(
        r.describe()
            .contains(": /nonexistent/libmkl_rt.so.3 could not be loaded"),
        "{}",
        r.describe()
    );
}

/// The measured default names what it found or tried, and where it found a library, both
/// rates.
#[test]
fn the_measured_route_gives_its_rates_or_what_it_tried() {
    let r = choose_route(None);
    let line = r.describe();
    let (found, tried) = find();
    if found.is_empty() {
        assert!(matches!(r, Route::Rounded(_)));
        assert!(line.contains("no bf16 GEMM found ("), "{line}");
        assert!(line.contains("libmkl_rt.so.3"), "{line}");
        assert!(!tried.is_empty());
        return;
    }
    assert!(
        line.contains("chosen by measurement (GFLOP/s on one thread: ")
            || line.contains("chosen by measurement, more than 10% ahead"),
        "{line}"
    );
    // every library found is timed beside the rounded route
    for g in &found {
        assert!(
            line.contains(&format!("{} of {} ", g.symbol, g.library)),
            "{line}"
        );
    }
    assert!(line.contains("rounded "), "{line}");
}

/// Every library route against the rounded route on products of a real model's sizes (a
/// vocabulary product's width, a down projection's depth, a weight gradient's transposed left
/// operand), split among the pool's threads by rows and by columns: the same terms, so the
/// same values up to f32 summation.
#[test]
fn library_routes_agree_with_the_rounded_route_at_model_sizes() {
    let rounded = Route::Rounded("reference".into());
    for route in routes().into_iter().skip(1) {
        for &([m, n, k], trans_a, trans_b) in &[
            ([64, 6000, 576], false, true),
            ([700, 576, 1536], false, false),
            ([576, 1536, 700], true, false),
            ([3, 4000, 576], false, true),
        ] {
            let a = data(m * k, 21);
            let b = data(k * n, 22);
            let (lda, ldb) = (if trans_a { m } else { k }, if trans_b { k } else { n });
            let p = Product {
                dims: [m, n, k],
                a: Operand {
                    data: &a,
                    ld: lda,
                    trans: trans_a,
                },
                b: Operand {
                    data: &b,
                    ld: ldb,
                    trans: trans_b,
                },
                beta: 0.0,
            };
            let (mut want, mut got) = (vec![0f32; m * n], vec![0f32; m * n]);
            sgemm(&rounded, p, &mut want, n);
            sgemm(&route, p, &mut got, n);
            let worst = want
                .iter()
                .zip(&got)
                .map(|(w, g)| (w - g).abs() / (1.0 + w.abs()))
                .fold(0f32, f32::max);
            assert!(
                worst <= 1e-4,
                "{}: [{m},{n},{k}] t=({trans_a},{trans_b}): worst {worst:e}",
                route.identity()
            );
        }
    }
}
