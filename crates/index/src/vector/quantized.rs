//! Int8 copies of unit vectors, for a first pass of exact search that rules rows out.
//!
//! A vector x is stored as codes c (round(x / s), in -127..=127) with s = max |x_i| / 127, so
//! x = x̂ + e with x̂ = s·c. For a query q and a row r,
//! q·r − q̂·r̂ = q̂·e_r + e_q·r̂ + e_q·e_r, so by Cauchy-Schwarz
//! |q·r − q̂·r̂| ≤ |q̂||e_r| + |e_q||r̂| + |e_q||e_r|: a bound from four numbers kept per vector.
//! q̂·r̂ = s_q·s_r·(c_q·c_r), and c_q·c_r is an integer sum, exact on every vector unit. A row
//! whose upper bound is below the k-th best lower bound cannot be in the top k; the rest are
//! rescored with the exact dot product, so results are those of scoring every row exactly.

use super::cpu::{Level, level};

/// Added to every bound: covers the rounding of the f32 dot product that exact scores come from
/// (at most n·2⁻²⁴·|q||r| ≈ 2.3e-5 at 384 dimensions; larger vectors get a proportional slack)
/// and of the f64 arithmetic here.
pub(super) fn slack(dim: usize) -> f64 {
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

/// The upper bound of [`bounds`] for query `j` of a [`Scan4x4`] and row `r` of its block, with
/// the same operations in the same order (the VNNI scan does them in f64 lanes).
#[inline(always)]
fn scan_upper(scan: &Scan4x4<'_>, j: usize, r: usize, int_dot: i32, slack: f64) -> f64 {
    let approx = scan.query_scales[j] * scan.row_scales[r] * f64::from(int_dot);
    let width = scan.query_norms[j] * scan.row_errors[r]
        + scan.query_errors[j] * scan.row_norms[r]
        + scan.query_errors[j] * scan.row_errors[r]
        + slack;
    approx + width
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

    /// Four lanes' sums of 4 × 4 accumulators (`acc[g][j]`: row g, query j) in one vector,
    /// lane 4g + j: pairs of accumulators are interleaved and added (4 lanes per 128-bit block
    /// become 2, then 1), then the 128-bit blocks are added across vectors.
    #[target_feature(enable = "avx512f")]
    fn reduce16(acc: &[[__m512i; 4]; 4]) -> __m512i {
        let mut x = [_mm512_setzero_si512(); 4];
        for (xg, a) in x.iter_mut().zip(acc) {
            // Per 128-bit block: [a0+a2, b0+b2, a1+a3, b1+b3].
            let ab = _mm512_add_epi32(
                _mm512_unpacklo_epi32(a[0], a[1]),
                _mm512_unpackhi_epi32(a[0], a[1]),
            );
            let cd = _mm512_add_epi32(
                _mm512_unpacklo_epi32(a[2], a[3]),
                _mm512_unpackhi_epi32(a[2], a[3]),
            );
            // Per block: [a, b, c, d], each its block's sum.
            *xg = _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
        }
        // Blocks (0+1, 2+3) of x0 and x1, then of x2 and x3; then whole sums, group g in block g.
        let y01 = _mm512_add_epi32(
            _mm512_shuffle_i32x4::<0b10_00_10_00>(x[0], x[1]),
            _mm512_shuffle_i32x4::<0b11_01_11_01>(x[0], x[1]),
        );
        let y23 = _mm512_add_epi32(
            _mm512_shuffle_i32x4::<0b10_00_10_00>(x[2], x[3]),
            _mm512_shuffle_i32x4::<0b11_01_11_01>(x[2], x[3]),
        );
        _mm512_add_epi32(
            _mm512_shuffle_i32x4::<0b10_00_10_00>(y01, y23),
            _mm512_shuffle_i32x4::<0b11_01_11_01>(y01, y23),
        )
    }

    /// Rows r0, r0 + 1 (lanes 0..4, 4..8) and r0 + 2, r0 + 3 of `v`, each over four lanes.
    ///
    /// # Safety
    /// `v` has at least r0 + 4 values.
    #[target_feature(enable = "avx512f")]
    unsafe fn per_row(v: &[f64], r0: usize) -> [__m512d; 2] {
        let spread = _mm512_setr_epi64(0, 0, 0, 0, 1, 1, 1, 1);
        // SAFETY: r0 + 4 <= v.len(), by the caller.
        unsafe {
            [
                _mm512_permutexvar_pd(
                    spread,
                    _mm512_castpd128_pd512(_mm_loadu_pd(v.as_ptr().add(r0))),
                ),
                _mm512_permutexvar_pd(
                    spread,
                    _mm512_castpd128_pd512(_mm_loadu_pd(v.as_ptr().add(r0 + 2))),
                ),
            ]
        }
    }

    /// The upper bound of [`super::bounds`] for 8 pairs, with the same operations in the same
    /// order; `q` is the queries' code steps, |q̂|, |e_q| and the slack.
    #[target_feature(enable = "avx512f")]
    fn upper(q: [__m512d; 4], ints: __m512d, rs: __m512d, rn: __m512d, re: __m512d) -> __m512d {
        let [qs, qn, qe, slack] = q;
        let approx = _mm512_mul_pd(_mm512_mul_pd(qs, rs), ints);
        let width = _mm512_add_pd(
            _mm512_add_pd(
                _mm512_add_pd(_mm512_mul_pd(qn, re), _mm512_mul_pd(qe, rn)),
                _mm512_mul_pd(qe, re),
            ),
            slack,
        );
        _mm512_add_pd(approx, width)
    }

    /// Four values twice over: lanes 0..4 and 4..8 (one per query, for two rows).
    #[target_feature(enable = "avx512f")]
    fn twice(t: &[f64; 4]) -> __m512d {
        _mm512_setr_pd(t[0], t[1], t[2], t[3], t[0], t[1], t[2], t[3])
    }

    /// [`super::scan4x4`] on AVX-512 VNNI: 4 queries × 4 rows per step of 64 codes (16
    /// `vpdpbusd`, 8 loads), the 16 sums reduced into one vector, and their upper bounds
    /// tested against the thresholds all at once in f64 (the same operations as [`bounds`]).
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) fn scan4x4_vnni(scan: &mut super::Scan4x4<'_>) -> usize {
        let dim = scan.dim;
        let n = scan.rows.len() / dim;
        let quads = n / 4;
        let shift = _mm512_set1_epi8(-128);
        let [q0, q1, q2, q3] = scan.queries;
        let qs = twice(&scan.query_scales);
        let qn = twice(&scan.query_norms);
        let qe = twice(&scan.query_errors);
        let slack = _mm512_set1_pd(super::slack(dim));
        let mut thr = twice(&scan.thresholds);
        let spread_i = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
        for quad in 0..quads {
            let r0 = quad * 4;
            let mut acc = [[_mm512_setzero_si512(); 4]; 4];
            let mut at = 0;
            // SAFETY: rows r0..r0 + 4 are in `rows` (quads = n / 4), every query has `dim`
            // codes, and at + 64 <= dim (dim is a multiple of 64).
            unsafe {
                let base = scan.rows.as_ptr().add(r0 * dim);
                while at < dim {
                    let u0 =
                        _mm512_xor_si512(_mm512_loadu_si512(q0.as_ptr().add(at).cast()), shift);
                    let u1 =
                        _mm512_xor_si512(_mm512_loadu_si512(q1.as_ptr().add(at).cast()), shift);
                    let u2 =
                        _mm512_xor_si512(_mm512_loadu_si512(q2.as_ptr().add(at).cast()), shift);
                    let u3 =
                        _mm512_xor_si512(_mm512_loadu_si512(q3.as_ptr().add(at).cast()), shift);
                    for (g, a) in acc.iter_mut().enumerate() {
                        let r = _mm512_loadu_si512(base.add(g * dim + at).cast());
                        a[0] = _mm512_dpbusd_epi32(a[0], u0, r);
                        a[1] = _mm512_dpbusd_epi32(a[1], u1, r);
                        a[2] = _mm512_dpbusd_epi32(a[2], u2, r);
                        a[3] = _mm512_dpbusd_epi32(a[3], u3, r);
                    }
                    at += 64;
                }
            }
            let sums = reduce16(&acc);
            // SAFETY: rows r0..r0 + 4 have a code sum and a scale each.
            let (ints, [rs_lo, rs_hi], [rn_lo, rn_hi], [re_lo, re_hi]) = unsafe {
                let row_sums = _mm512_permutexvar_epi32(
                    spread_i,
                    _mm512_castsi128_si512(_mm_loadu_si128(scan.row_sums.as_ptr().add(r0).cast())),
                );
                let ints = _mm512_sub_epi32(sums, _mm512_slli_epi32::<7>(row_sums));
                (
                    ints,
                    per_row(scan.row_scales, r0),
                    per_row(scan.row_norms, r0),
                    per_row(scan.row_errors, r0),
                )
            };
            let lo = _mm512_cvtepi32_pd(_mm512_castsi512_si256(ints));
            let hi = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64::<1>(ints));
            let v_lo = upper([qs, qn, qe, slack], lo, rs_lo, rn_lo, re_lo);
            let v_hi = upper([qs, qn, qe, slack], hi, rs_hi, rn_hi, re_hi);
            // Kept unless below the threshold (what the scalar test's `<` rules out).
            let keep = u16::from(_mm512_cmp_pd_mask::<_CMP_NLT_UQ>(v_lo, thr))
                | (u16::from(_mm512_cmp_pd_mask::<_CMP_NLT_UQ>(v_hi, thr)) << 8);
            if keep != 0 {
                let mut lanes = [0i32; 16];
                // SAFETY: 16 i32 lanes into 16 i32s.
                unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), ints) };
                let mut bits = keep;
                while bits != 0 {
                    let lane = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let (g, j) = (lane / 4, lane % 4);
                    scan.thresholds[j] = (scan.offer)(j, r0 + g, lanes[lane]);
                }
                thr = twice(&scan.thresholds);
            }
        }
        quads * 4
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn idot4_avx2(q: [&[i8]; 4], row: &[i8]) -> [i32; 4] {
        super::idot4_body(q, row)
    }
}

/// A first pass of four queries over a block of rows, four rows at a time ([`scan4x4`]).
pub(super) struct Scan4x4<'a> {
    pub queries: [&'a [i8]; 4],
    pub query_scales: [f64; 4],
    /// Each query's |q̂| and |e_q|.
    pub query_norms: [f64; 4],
    pub query_errors: [f64; 4],
    /// Each query's current threshold; updated from what `offer` returns.
    pub thresholds: [f64; 4],
    /// The block's rows' codes, row after row, and per row its [`block_sum`] and code step.
    pub rows: &'a [i8],
    pub row_sums: &'a [i32],
    pub row_scales: &'a [f64],
    pub row_norms: &'a [f64],
    pub row_errors: &'a [f64],
    pub dim: usize,
    /// Called for (query, row in the block, c_q·c_r) when the row's upper bound ([`bounds`])
    /// reaches the query's threshold; returns the query's new threshold.
    pub offer: &'a mut dyn FnMut(usize, usize, i32) -> f64,
}

/// Scans the whole groups of four rows of a [`Scan4x4`] and returns how many rows that is (a
/// multiple of four from the block's start; the caller scans the rest row by row, with the same
/// test). AVX-512 VNNI's kernel where the CPU has it and `dim` is a multiple of 64, else the
/// portable scan over [`idot4`].
pub(super) fn scan4x4(scan: &mut Scan4x4<'_>) -> usize {
    scan4x4_at(level(), scan)
}

/// [`scan4x4`] with the kernel of `level`, which this CPU must reach.
fn scan4x4_at(level: Level, scan: &mut Scan4x4<'_>) -> usize {
    debug_assert!(level <= self::level());
    #[cfg(target_arch = "x86_64")]
    if level == Level::Avx512Vnni && scan.dim > 0 && scan.dim.is_multiple_of(64) {
        // SAFETY: the level holds every feature the function is compiled for (`cpu`).
        return unsafe { wide::scan4x4_vnni(scan) };
    }
    scan4x4_portable(level, scan)
}

/// The portable scan: per row, c_q·c_r for the four queries ([`idot4`] at `level`), and an
/// offer for each whose upper bound is not below its query's threshold.
fn scan4x4_portable(level: Level, scan: &mut Scan4x4<'_>) -> usize {
    let dim = scan.dim;
    let Some(n) = scan.rows.len().checked_div(dim) else {
        return 0;
    };
    let slack = slack(dim);
    let scanned = n / 4 * 4;
    for r in 0..scanned {
        let row = &scan.rows[r * dim..(r + 1) * dim];
        let ints = idot4_at(level, scan.queries, row, scan.row_sums[r]);
        for (j, int) in ints.into_iter().enumerate() {
            // Kept unless below the threshold (the VNNI scan's "not less than", unordered kept).
            let upper = scan_upper(scan, j, r, int, slack);
            if upper.partial_cmp(&scan.thresholds[j]) != Some(std::cmp::Ordering::Less) {
                scan.thresholds[j] = (scan.offer)(j, r, int);
            }
        }
    }
    scanned
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
    idot4_at(level(), q, row, row_sum)
}

/// [`idot4`] with the kernel of `level`, which this CPU must reach.
#[inline(always)]
fn idot4_at(level: Level, q: [&[i8]; 4], row: &[i8], row_sum: i32) -> [i32; 4] {
    #[cfg(target_arch = "x86_64")]
    match level {
        // SAFETY: the level holds every feature each function is compiled for (`cpu`).
        Level::Avx512Vnni => return unsafe { wide::idot4_vnni(q, row, row_sum) },
        Level::Avx2 | Level::Avx512 => return unsafe { wide::idot4_avx2(q, row) },
        Level::Portable => {}
    }
    let _ = (level, row_sum);
    idot4_body(q, row)
}

pub(super) fn idot(a: &[i8], b: &[i8]) -> i32 {
    idot4([a, a, a, a], b, block_sum(b))[0]
}

#[cfg(test)]
mod tests {
    use super::super::cpu::levels_here;
    use super::*;
    use proptest::prelude::*;

    /// Codes as `quantize` makes them: -127..=127.
    fn codes(v: &[i8]) -> Vec<i8> {
        v.iter().map(|c| (*c).max(-127)).collect()
    }

    proptest! {
        /// c_q·c_r is the same exact sum on every kernel this CPU can run, the portable one
        /// always, with and without a tail after the last block of 64.
        #[test]
        fn idot4_is_exact_on_every_path(
            (rows, queries) in (0usize..300).prop_flat_map(|d| (
                proptest::collection::vec(any::<i8>(), d),
                proptest::collection::vec(proptest::collection::vec(any::<i8>(), d), 4),
            )),
        ) {
            let row = codes(&rows);
            let qs: Vec<Vec<i8>> = queries.iter().map(|q| codes(q)).collect();
            let q = [&qs[0][..], &qs[1][..], &qs[2][..], &qs[3][..]];
            let want = q.map(|x| {
                x.iter().zip(&row).map(|(a, b)| i64::from(*a) * i64::from(*b)).sum::<i64>() as i32
            });
            prop_assert_eq!(idot4_body(q, &row), want);
            prop_assert_eq!(idot4(q, &row, block_sum(&row)), want);
            for level in levels_here() {
                prop_assert_eq!(idot4_at(level, q, &row, block_sum(&row)), want, "{:?}", level);
            }
        }

        /// With no threshold, the 4 × 4 scan offers every (query, row) product of its whole
        /// groups of four rows, in its place, on every kernel this CPU can run (the VNNI one
        /// where `dim` is a multiple of 64; the portable one always).
        #[test]
        fn scan4x4_offers_every_product(
            (dim, rows, queries) in prop_oneof![Just(40usize), Just(64), Just(192)].prop_flat_map(|d| (
                Just(d),
                proptest::collection::vec(any::<i8>(), d * 4..d * 13),
                proptest::collection::vec(proptest::collection::vec(any::<i8>(), d), 4),
            )),
        ) {
            let rows = codes(&rows[..rows.len() / dim * dim]);
            let queries: Vec<Vec<i8>> = queries.iter().map(|q| codes(q)).collect();
            let n = rows.len() / dim;
            let sums: Vec<i32> = rows.chunks(dim).map(block_sum).collect();
            let ones = vec![1.0; n];
            let mut want = Vec::new();
            for r in 0..n / 4 * 4 {
                for (j, q) in queries.iter().enumerate() {
                    want.push((r, j, idot_body(q, &rows[r * dim..(r + 1) * dim])));
                }
            }
            for level in levels_here() {
                let mut seen = Vec::new();
                let mut offer = |j: usize, r: usize, int: i32| {
                    seen.push((r, j, int));
                    f64::NEG_INFINITY
                };
                let scanned = scan4x4_at(level, &mut Scan4x4 {
                    queries: [&queries[0], &queries[1], &queries[2], &queries[3]],
                    query_scales: [1.0; 4],
                    query_norms: [0.0; 4],
                    query_errors: [0.0; 4],
                    thresholds: [f64::NEG_INFINITY; 4],
                    rows: &rows,
                    row_sums: &sums,
                    row_scales: &ones,
                    row_norms: &ones,
                    row_errors: &ones,
                    dim,
                    offer: &mut offer,
                });
                prop_assert_eq!(scanned, n / 4 * 4, "{:?}", level);
                seen.sort_unstable();
                prop_assert_eq!(&seen, &want, "{:?}", level);
            }
        }

        /// With a threshold that rises as rows are offered (the k-th best lower bound, as the
        /// first pass keeps it), every kernel this CPU can run leaves as candidates exactly the
        /// rows whose upper bound reaches the k-th best lower bound of all rows.
        #[test]
        fn scan4x4_prunes_alike_on_every_path(
            (dim, rows, queries) in prop_oneof![Just(64usize), Just(128)].prop_flat_map(|d| (
                Just(d),
                proptest::collection::vec(proptest::collection::vec(-1.0f32..1.0, d), 4..24),
                proptest::collection::vec(proptest::collection::vec(-1.0f32..1.0, d), 4),
            )),
            k in 1usize..4,
        ) {
            let unit = |v: &[f32]| {
                let n = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
                v.iter().map(|x| (f64::from(*x) / n) as f32).collect::<Vec<f32>>()
            };
            let rows: Vec<Code> = rows.iter().map(|r| quantize(&unit(r))).collect();
            let queries: Vec<Code> = queries.iter().map(|q| quantize(&unit(q))).collect();
            let n = rows.len() / 4 * 4;
            let flat: Vec<i8> = rows.iter().flat_map(|r| r.codes.clone()).collect();
            let sums: Vec<i32> = rows.iter().map(|r| block_sum(&r.codes)).collect();
            let scales: Vec<f64> = rows.iter().map(|r| r.scale).collect();
            let norms: Vec<f64> = rows.iter().map(|r| r.norm).collect();
            let errors: Vec<f64> = rows.iter().map(|r| r.error).collect();
            let table: Vec<Vec<(f64, f64)>> = (0..4)
                .map(|j| {
                    (0..rows.len())
                        .map(|r| {
                            let int = idot_body(&queries[j].codes, &rows[r].codes);
                            bounds(&queries[j], scales[r], norms[r], errors[r], int, dim)
                        })
                        .collect()
                })
                .collect();
            let bound = |j: usize, r: usize| table[j][r];
            // Brute force: the k-th best lower bound over the scanned rows, and who reaches it.
            let want: Vec<Vec<usize>> = (0..4)
                .map(|j| {
                    let mut lows: Vec<f64> = (0..n).map(|r| bound(j, r).0).collect();
                    lows.sort_by(|a, b| b.total_cmp(a));
                    let kth = lows[k - 1];
                    (0..n).filter(|r| bound(j, *r).1 >= kth).collect()
                })
                .collect();
            for level in levels_here() {
                let mut lows: Vec<Vec<f64>> = vec![Vec::new(); 4];
                let mut offered: Vec<Vec<(usize, i32)>> = vec![Vec::new(); 4];
                let mut offer = |j: usize, r: usize, int: i32| {
                    offered[j].push((r, int));
                    lows[j].push(bound(j, r).0);
                    lows[j].sort_by(|a, b| b.total_cmp(a));
                    lows[j].get(k - 1).copied().unwrap_or(f64::NEG_INFINITY)
                };
                let scanned = scan4x4_at(level, &mut Scan4x4 {
                    queries: [0, 1, 2, 3].map(|j| &queries[j].codes[..]),
                    query_scales: [0, 1, 2, 3].map(|j| queries[j].scale),
                    query_norms: [0, 1, 2, 3].map(|j| queries[j].norm),
                    query_errors: [0, 1, 2, 3].map(|j| queries[j].error),
                    thresholds: [f64::NEG_INFINITY; 4],
                    rows: &flat,
                    row_sums: &sums,
                    row_scales: &scales,
                    row_norms: &norms,
                    row_errors: &errors,
                    dim,
                    offer: &mut offer,
                });
                for (j, offers) in offered.iter().enumerate() {
                    for (r, int) in offers {
                        prop_assert_eq!(*int, idot_body(&queries[j].codes, &rows[*r].codes));
                    }
                }
                prop_assert_eq!(scanned, n);
                for j in 0..4 {
                    let kth = lows[j][k - 1];
                    let mut kept: Vec<usize> = offered[j]
                        .iter()
                        .map(|(r, _)| *r)
                        .filter(|r| bound(j, *r).1 >= kth)
                        .collect();
                    kept.sort_unstable();
                    prop_assert_eq!(&kept, &want[j], "{:?}, query {}", level, j);
                }
            }
        }

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
            let (lo, hi) = bounds(&cx, cy.scale, cy.norm, cy.error, i, x.len());
            let exact = super::super::dot(&x, &y);
            prop_assert!(f64::from(exact) >= lo && f64::from(exact) <= hi, "{lo} {exact} {hi}");
            prop_assert!(hi - lo < 0.2, "a useful bound: {}", hi - lo);
        }
    }
}
