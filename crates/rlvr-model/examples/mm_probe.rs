use std::time::Instant;
fn mm(
    m: usize,
    n: usize,
    k: usize,
    d: &mut [f32],
    ds: usize,
    a: &[f32],
    w: &[f32],
    par: gemm::Parallelism,
) {
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            d.as_mut_ptr(),
            1,
            ds as isize,
            false,
            a.as_ptr(),
            1,
            k as isize,
            w.as_ptr(),
            k as isize,
            1,
            1.0f32,
            1.0f32,
            false,
            false,
            false,
            par,
        )
    }
}
fn main() {
    for &(m, k, n) in &[
        (64usize, 256usize, 1408usize),
        (64, 512, 2816),
        (64, 256, 512),
        (64, 512, 4096),
        (64, 1408, 512),
    ] {
        let a = vec![0.5f32; m * k];
        let w = vec![0.25f32; n * k];
        let mut d = vec![0f32; m * n];
        let reps = 300;
        for mode in 0..3 {
            let t = Instant::now();
            for _ in 0..reps {
                match mode {
                    0 => mm(m, n, k, &mut d, n, &a, &w, gemm::Parallelism::None),
                    1 => mm(m, n, k, &mut d, n, &a, &w, gemm::Parallelism::Rayon(2)),
                    _ => {
                        let h = n / 2;
                        let (w0, w1) = w.split_at(h * k);
                        let dp = d.as_mut_ptr() as usize;
                        rayon::join(
                            || unsafe {
                                gemm::gemm(
                                    m,
                                    h,
                                    k,
                                    dp as *mut f32,
                                    1,
                                    n as isize,
                                    false,
                                    a.as_ptr(),
                                    1,
                                    k as isize,
                                    w0.as_ptr(),
                                    k as isize,
                                    1,
                                    1.0f32,
                                    1.0f32,
                                    false,
                                    false,
                                    false,
                                    gemm::Parallelism::None,
                                )
                            },
                            || unsafe {
                                gemm::gemm(
                                    m,
                                    n - h,
                                    k,
                                    (dp as *mut f32).add(h),
                                    1,
                                    n as isize,
                                    false,
                                    a.as_ptr(),
                                    1,
                                    k as isize,
                                    w1.as_ptr(),
                                    k as isize,
                                    1,
                                    1.0f32,
                                    1.0f32,
                                    false,
                                    false,
                                    false,
                                    gemm::Parallelism::None,
                                )
                            },
                        );
                    }
                }
            }
            let s = t.elapsed().as_secs_f64() / reps as f64;
            println!(
                "{m}x{k}x{n} mode {mode}: {:.1} us, {:.1} GFLOP/s",
                s * 1e6,
                2.0 * (m * n * k) as f64 / s / 1e9
            );
        }
    }
}
