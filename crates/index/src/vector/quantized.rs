//! Int8 copies of unit vectors, for a first pass of exact search that rules rows out.
//!
//! A vector x is stored as codes c (round(x / s), in -127..=127) with s = max |x_i| / 127, so
//! x = x̂ + e with x̂ = s·c. For a query q and a row r,
//! q·r − q̂·r̂ = q̂·e_r + e_q·r̂ + e_q·e_r, so by Cauchy-Schwarz
//! |q·r − q̂·r̂| ≤ |q̂||e_r| + |e_q||r̂| + |e_q||e_r|: a bound from four numbers kept per vector.
//! q̂·r̂ = s_q·s_r·(c_q·c_r), and c_q·c_r is an integer sum, exact on every vector unit. A row
//! whose upper bound is below the k-th best lower bound cannot be in the top k; the rest are
//! rescored with the exact dot product, so results are those of scoring every row exactly.

/// Added to every bound: covers the rounding of the f32 dot product that exact scores come from
/// (at most n·2⁻²⁴·|q||r| ≈ 2.3e-5 at 384 dimensions; larger vectors get a proportional slack)
/// and of the f64 arithmetic here.
fn slack(dim: usize) -> f64 {
    1e-4_f64.max(dim as f64 * 2.0 * f64::from(f32::EPSILON))
}

/// The int8 codes of a vector and what the bound needs.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Code {
    pub codes: Vec<i8>,
    /// s: the value of one code step.
    pub scale: f64,
    /// |x̂|.
    pub norm: f64,
    /// |x − x̂|.
    pub error: f64,
}

pub(super) fn quantize(v: &[f32]) -> Code {
    let max = v.iter().fold(0f64, |m, x| m.max(f64::from(x.abs())));
    if max == 0.0 {
        return Code {
            codes: vec![0; v.len()],
            scale: 0.0,
            norm: 0.0,
            error: 0.0,
        };
    }
    let scale = max / 127.0;
    let codes: Vec<i8> = v
        .iter()
        .map(|x| (f64::from(*x) / scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    let (mut norm, mut error) = (0f64, 0f64);
    for (x, c) in v.iter().zip(&codes) {
        let approx = f64::from(*c) * scale;
        norm += approx * approx;
        error += (f64::from(*x) - approx).powi(2);
    }
    Code {
        codes,
        scale,
        norm: norm.sqrt(),
        error: error.sqrt(),
    }
}

/// Lower and upper bounds of the exact score of `q` and a row from their codes and c_q·c_r.
#[inline]
pub(super) fn bounds(
    q: &Code,
    row_scale: f64,
    row_norm: f64,
    row_error: f64,
    int_dot: i32,
    dim: usize,
) -> (f64, f64) {
    let approx = q.scale * row_scale * f64::from(int_dot);
    let width = q.norm * row_error + q.error * row_norm + q.error * row_error + slack(dim);
    (approx - width, approx + width)
}

#[inline(always)]
fn idot_body(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum()
}

#[inline(always)]
fn idot4_body(q: [&[i8]; 4], row: &[i8]) -> [i32; 4] {
    q.map(|x| idot_body(x, row))
}

#[cfg(target_arch = "x86_64")]
mod wide {
    use std::arch::x86_64::*;

    /// 64 codes per step with AVX-512 VNNI's `vpdpbusd` (u8 x i8, four products into each i32
    /// lane). The query's codes are shifted by 128 to be unsigned, and 128 x the row's code sum
    /// is taken off again: Σ (c_q + 128)·c_r − 128·Σ c_r = Σ c_q·c_r, exactly.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) fn idot4_vnni(q: [&[i8]; 4], row: &[i8], row_sum: i32) -> [i32; 4] {
        let n = row.len();
        let whole = n / 64 * 64;
        let mut acc = [_mm512_setzero_si512(); 4];
        let shift = _mm512_set1_epi8(-128);
        let mut at = 0;
        while at < whole {
            // SAFETY: at + 64 <= whole <= n, the length of the row and of every query.
            unsafe {
                let r = _mm512_loadu_si512(row.as_ptr().add(at).cast());
                for (a, x) in acc.iter_mut().zip(q) {
                    // c + 128 as u8 is c with its top bit flipped.
                    let u = _mm512_xor_si512(_mm512_loadu_si512(x.as_ptr().add(at).cast()), shift);
                    *a = _mm512_dpbusd_epi32(*a, u, r);
                }
            }
            at += 64;
        }
        // No closures here: a closure does not inherit the function's target features, so the
        // reductions in it would not be inlined.
        let mut out = [0i32; 4];
        for j in 0..4 {
            out[j] = _mm512_reduce_add_epi32(acc[j]) - 128 * row_sum
                + super::idot_body(&q[j][whole..n], &row[whole..]);
        }
        out
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn idot4_avx2(q: [&[i8]; 4], row: &[i8]) -> [i32; 4] {
        super::idot4_body(q, row)
    }
}

/// The sum of a row's codes over its whole blocks of 64 (what [`idot4`] takes back off).
pub(super) fn block_sum(row: &[i8]) -> i32 {
    row[..row.len() / 64 * 64]
        .iter()
        .map(|c| i32::from(*c))
        .sum()
}

/// c_q·c_r for four queries and one row: an exact integer sum, whichever unit computes it.
/// `row_sum` is the row's [`block_sum`].
pub(super) fn idot4(q: [&[i8]; 4], row: &[i8], row_sum: i32) -> [i32; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::atomic::{AtomicU8, Ordering};
        static LEVEL: AtomicU8 = AtomicU8::new(0);
        let mut level = LEVEL.load(Ordering::Relaxed);
        if level == 0 {
            level = if std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vnni")
            {
                3
            } else if std::arch::is_x86_feature_detected!("avx2") {
                2
            } else {
                1
            };
            LEVEL.store(level, Ordering::Relaxed);
        }
        match level {
            // SAFETY: the features each function is compiled for were detected on this CPU.
            3 => return unsafe { wide::idot4_vnni(q, row, row_sum) },
            2 => return unsafe { wide::idot4_avx2(q, row) },
            _ => {}
        }
    }
    let _ = row_sum;
    idot4_body(q, row)
}

pub(super) fn idot(a: &[i8], b: &[i8]) -> i32 {
    idot4([a, a, a, a], b, block_sum(b))[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The bound holds: the exact dot product of two unit vectors lies between the bounds
        /// their codes give.
        #[test]
        fn bounds_hold(
            a in proptest::collection::vec(-1.0f32..1.0, 1..100),
            b in proptest::collection::vec(-1.0f32..1.0, 100),
        ) {
            let unit = |v: &[f32]| {
                let n = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
                v.iter().map(|x| if n > 0.0 { (f64::from(*x) / n) as f32 } else { 0.0 }).collect::<Vec<f32>>()
            };
            let (x, y) = (unit(&a), unit(&b[..a.len()]));
            let (cx, cy) = (quantize(&x), quantize(&y));
            let i = idot(&cx.codes, &cy.codes);
            prop_assert_eq!(i, idot_body(&cx.codes, &cy.codes));
            let q = [&cx.codes[..], &cy.codes[..], &cx.codes[..], &cy.codes[..]];
            prop_assert_eq!(idot4(q, &cy.codes, block_sum(&cy.codes)), idot4_body(q, &cy.codes));
            let (lo, hi) = bounds(&cx, cy.scale, cy.norm, cy.error, i, x.len());
            let exact = super::super::dot(&x, &y);
            prop_assert!(f64::from(exact) >= lo && f64::from(exact) <= hi, "{lo} {exact} {hi}");
            prop_assert!(hi - lo < 0.2, "a useful bound: {}", hi - lo);
        }
    }
}
