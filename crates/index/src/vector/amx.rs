//! The first pass of [`super::VectorIndex::search_many`] on Intel AMX's int8 tiles: 32 queries
//! against 32 rows per step, c_q·c_r for all 1,024 pairs from 24 tile multiplies at 384
//! dimensions (about one cycle per pair, where AVX-512 VNNI takes about ten).
//!
//! A tile multiply (`tdpbssd`) adds signed int8 products into int32 sums, exactly, so the sums
//! are the integers every other kernel gives and the bounds made from them are the same. The
//! rows are tiles as stored (16 rows of 64 codes, `dim` bytes apart); the queries are laid out
//! once per group of 32 in the tiles' pair-of-four order ([`QueryTiles`]). Rust has no AMX
//! intrinsics on stable, so the five instructions used are inline assembly.
//!
//! What it is not: a general matrix multiply. Tiles are always 16 × 64 bytes, `dim` must be a
//! multiple of 64, and a caller scans the rows after the last whole group of 32 another way.

/// Queries per group and rows per step.
pub(super) const GROUP: usize = 32;

/// Whether the AMX kernel can run here: the CPU reports AMX-TILE and AMX-INT8, the kernel
/// grants this process the tile state (Linux's `arch_prctl(ARCH_REQ_XCOMP_PERM)`), and
/// `NOISEBENCH_AMX` is not `0` (to measure the VNNI kernel on the same machine). Asked once.
pub(crate) fn ready() -> bool {
    static READY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *READY.get_or_init(|| std::env::var("NOISEBENCH_AMX").as_deref() != Ok("0") && detect())
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn detect() -> bool {
    // CPUID leaf 7: EDX bit 24 is AMX-TILE, bit 25 AMX-INT8. The VNNI level is asked too:
    // the filter after each step uses AVX-512 F.
    let cpu = super::cpu::level() == super::cpu::Level::Avx512Vnni
        && (std::arch::x86_64::__cpuid_count(7, 0).edx >> 24) & 3 == 3;
    if !cpu {
        return false;
    }
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: a request for a permission; it changes nothing else and fails cleanly.
    unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        ) == 0
    }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn detect() -> bool {
    false
}

/// 32 queries' codes in tile order: for each 64-code slice of the dimensions, two tiles (queries
/// 0-15 and 16-31) whose row k holds, for each query in turn, its codes 4k..4k + 4 of the slice.
pub(super) struct QueryTiles {
    codes: Vec<i8>,
}

impl QueryTiles {
    /// `queries` holds [`GROUP`] code vectors of `dim` codes (a multiple of 64).
    pub(super) fn new(queries: &[&[i8]], dim: usize) -> Self {
        debug_assert_eq!(queries.len(), GROUP);
        debug_assert!(dim.is_multiple_of(64));
        let mut codes = vec![0i8; dim * GROUP];
        for slice in 0..dim / 64 {
            for half in 0..2 {
                let tile = &mut codes[(slice * 2 + half) * 1024..][..1024];
                for k in 0..16 {
                    for n in 0..16 {
                        let from = &queries[half * 16 + n][slice * 64 + 4 * k..][..4];
                        tile[k * 64 + 4 * n..][..4].copy_from_slice(from);
                    }
                }
            }
        }
        QueryTiles { codes }
    }
}

/// The tile configuration: palette 1, eight tiles of 16 rows × 64 bytes.
#[repr(C, align(64))]
struct Config([u8; 64]);

impl Config {
    fn sixteen_by_64() -> Self {
        let mut c = [0u8; 64];
        c[0] = 1;
        for t in 0..8 {
            c[16 + 2 * t] = 64;
            c[48 + t] = 16;
        }
        Config(c)
    }
}

/// For each whole group of 32 rows of `rows` (row after row, `dim` codes each), c_q·c_r of
/// every row with every query of `queries`: `step(first row, sums)` with `sums[r * 32 + j]` the
/// sum of row `first + r` and query j. Returns the rows scanned (a multiple of 32).
///
/// # Safety
/// [`ready`] must have returned true, and `dim` must be the queries' and a multiple of 64.
#[cfg(target_arch = "x86_64")]
pub(super) unsafe fn scan(
    rows: &[i8],
    queries: &QueryTiles,
    dim: usize,
    mut step: impl FnMut(usize, &[i32; GROUP * GROUP]),
) -> usize {
    use std::arch::asm;
    debug_assert!(dim > 0 && dim.is_multiple_of(64) && queries.codes.len() == dim * GROUP);
    let groups = rows.len() / dim / GROUP;
    let config = Config::sixteen_by_64();
    let mut sums = [0i32; GROUP * GROUP];
    // SAFETY: the CPU and the kernel allow AMX (`ready`); the configuration is 64 bytes,
    // aligned. Every tile load below reads 16 rows of 64 bytes: the row tiles from rows
    // g·32..g·32 + 32 at a slice's offset (< dim), which exist as g < groups; the query tiles
    // from within `queries.codes` (dim · 32 bytes, 2 KB per slice). The stores write 16 rows
    // of 64 bytes into `sums` (4 KB): quarter (a, b) at row 16a, column 16b, rows 128 bytes
    // apart.
    unsafe {
        asm!("ldtilecfg [{c}]", c = in(reg) config.0.as_ptr(), options(nostack, readonly));
        for g in 0..groups {
            let base = rows.as_ptr().add(g * GROUP * dim);
            asm!(
                "tilezero tmm0",
                "tilezero tmm1",
                "tilezero tmm2",
                "tilezero tmm3",
                options(nostack, nomem)
            );
            for slice in 0..dim / 64 {
                let a0 = base.add(slice * 64);
                let a1 = a0.add(16 * dim);
                let b0 = queries.codes.as_ptr().add(slice * 2048);
                let b1 = b0.add(1024);
                asm!(
                    "tileloadd tmm4, [{a0} + {stride}*1]",
                    "tileloadd tmm5, [{a1} + {stride}*1]",
                    "tileloadd tmm6, [{b0} + {sixty_four}*1]",
                    "tileloadd tmm7, [{b1} + {sixty_four}*1]",
                    "tdpbssd tmm0, tmm4, tmm6",
                    "tdpbssd tmm1, tmm4, tmm7",
                    "tdpbssd tmm2, tmm5, tmm6",
                    "tdpbssd tmm3, tmm5, tmm7",
                    a0 = in(reg) a0,
                    a1 = in(reg) a1,
                    b0 = in(reg) b0,
                    b1 = in(reg) b1,
                    stride = in(reg) dim,
                    sixty_four = in(reg) 64usize,
                    options(nostack, readonly)
                );
            }
            let out = sums.as_mut_ptr();
            asm!(
                "tilestored [{c0} + {stride}*1], tmm0",
                "tilestored [{c1} + {stride}*1], tmm1",
                "tilestored [{c2} + {stride}*1], tmm2",
                "tilestored [{c3} + {stride}*1], tmm3",
                c0 = in(reg) out,
                c1 = in(reg) out.add(16),
                c2 = in(reg) out.add(16 * GROUP),
                c3 = in(reg) out.add(16 * GROUP + 16),
                stride = in(reg) GROUP * 4,
                options(nostack)
            );
            step(g * GROUP, &sums);
        }
        asm!("tilerelease", options(nostack, nomem));
    }
    groups * GROUP
}

/// What the filter after a step needs of the 32 queries: per query its code step, |q̂| and
/// |e_q|, and the least approximate score (s_q·s_r·c_q·c_r plus the row's bound width without
/// the slack) a row must reach to be offered.
pub(super) struct Filter {
    pub scales: [f32; GROUP],
    pub norms: [f32; GROUP],
    pub errors: [f32; GROUP],
    pub limits: [f32; GROUP],
}

/// Below the exact test by more than any f32 rounding here: the filter only passes too much.
const MARGIN: f64 = 1e-4;

impl Filter {
    /// The limit for a query whose threshold is `threshold`: what the exact test
    /// ([`super::quantized::bounds`]) needs, less the slack and a margin, rounded down.
    pub(super) fn limit(threshold: f64, slack: f64) -> f32 {
        let limit = threshold - slack - MARGIN;
        let f = limit as f32;
        if f64::from(f) > limit {
            f.next_down()
        } else {
            f
        }
    }

    /// Which queries' sums in `sums` (32, one row's) may reach their limit: bit j for query j.
    /// The row's code step, |r̂| and |e_r|.
    pub(super) fn passing(&self, sums: &[i32], scale: f64, norm: f64, error: f64) -> u32 {
        #[cfg(target_arch = "x86_64")]
        if super::cpu::level() >= super::cpu::Level::Avx512 {
            // SAFETY: the level holds AVX-512 F.
            return unsafe { self.passing_avx512(sums, scale as f32, norm as f32, error as f32) };
        }
        self.passing_portable(sums, scale as f32, norm as f32, error as f32)
    }

    fn passing_portable(&self, sums: &[i32], scale: f32, norm: f32, error: f32) -> u32 {
        let mut bits = 0u32;
        for (j, sum) in sums.iter().take(GROUP).enumerate() {
            let width = self.norms[j].mul_add(error, self.errors[j] * (norm + error));
            let approx = (*sum as f32).mul_add(self.scales[j] * scale, width);
            if approx >= self.limits[j] {
                bits |= 1 << j;
            }
        }
        bits
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    fn passing_avx512(&self, sums: &[i32], scale: f32, norm: f32, error: f32) -> u32 {
        use std::arch::x86_64::*;
        assert!(sums.len() >= GROUP);
        let (scale, error, both) = (
            _mm512_set1_ps(scale),
            _mm512_set1_ps(error),
            _mm512_set1_ps(norm + error),
        );
        let mut bits = 0u32;
        for half in 0..2 {
            let at = half * 16;
            // SAFETY: 16 lanes from index `at` < 32 of 32-long arrays and of `sums` (asserted).
            unsafe {
                let load = |v: &[f32; GROUP]| _mm512_loadu_ps(v.as_ptr().add(at));
                let width = _mm512_fmadd_ps(
                    load(&self.norms),
                    error,
                    _mm512_mul_ps(load(&self.errors), both),
                );
                let ints = _mm512_cvtepi32_ps(_mm512_loadu_si512(sums.as_ptr().add(at).cast()));
                let approx = _mm512_fmadd_ps(ints, _mm512_mul_ps(load(&self.scales), scale), width);
                let keep = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(approx, load(&self.limits));
                bits |= u32::from(keep) << at;
            }
        }
        bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The tiles' sums are the integer dot products, row by row and query by query.
        #[test]
        fn tile_sums_are_the_dot_products(
            slices in 1usize..4,
            seed in proptest::collection::vec(-127i8..=127, 64 * 3 * 70),
            rows in 0usize..70,
        ) {
            if !ready() {
                return Ok(());
            }
            let dim = slices * 64;
            let codes = &seed[..rows * dim];
            let queries: Vec<Vec<i8>> = (0..GROUP)
                .map(|j| (0..dim).map(|d| seed[(j * 31 + d * 7) % seed.len()]).collect())
                .collect();
            let refs: Vec<&[i8]> = queries.iter().map(Vec::as_slice).collect();
            let tiles = QueryTiles::new(&refs, dim);
            let mut seen = 0;
            // SAFETY: ready, and dim is a multiple of 64.
            let scanned = unsafe {
                scan(codes, &tiles, dim, |first, sums| {
                    assert_eq!(first, seen);
                    seen += GROUP;
                    for r in 0..GROUP {
                        let row = &codes[(first + r) * dim..][..dim];
                        for (j, q) in queries.iter().enumerate() {
                            let want: i32 =
                                q.iter().zip(row).map(|(a, b)| i32::from(*a) * i32::from(*b)).sum();
                            assert_eq!(sums[r * GROUP + j], want, "row {} query {j}", first + r);
                        }
                    }
                })
            };
            prop_assert_eq!(scanned, rows / GROUP * GROUP);
            prop_assert_eq!(seen, scanned);
        }

        /// The vector filter passes what the portable one does, and never drops a pair whose
        /// f64 score reaches the limit.
        #[test]
        fn the_filter_passes_what_reaches_the_limit(
            sums in proptest::collection::vec(-2_000_000i32..2_000_000, GROUP),
            scales in proptest::collection::vec(1e-4f64..2e-3, GROUP + 1),
            norms in proptest::collection::vec(0.9f64..1.0, GROUP + 1),
            errors in proptest::collection::vec(0.0f64..0.02, GROUP + 1),
            thresholds in proptest::collection::vec(-0.5f64..0.9, GROUP),
        ) {
            let filter = Filter {
                scales: std::array::from_fn(|j| scales[j] as f32),
                norms: std::array::from_fn(|j| norms[j] as f32),
                errors: std::array::from_fn(|j| errors[j] as f32),
                limits: std::array::from_fn(|j| Filter::limit(thresholds[j], 1e-4)),
            };
            let (rs, rn, re) = (scales[GROUP], norms[GROUP], errors[GROUP]);
            let got = filter.passing(&sums, rs, rn, re);
            prop_assert_eq!(got, filter.passing_portable(&sums, rs as f32, rn as f32, re as f32));
            for j in 0..GROUP {
                let code = super::super::quantized::Code {
                    codes: Vec::new(),
                    scale: scales[j],
                    norm: norms[j],
                    error: errors[j],
                };
                let (_, upper) = super::super::quantized::bounds(&code, rs, rn, re, sums[j], 64);
                if upper >= thresholds[j] {
                    prop_assert!(got & (1 << j) != 0, "query {} dropped: {} >= {}", j, upper, thresholds[j]);
                }
            }
        }
    }
}
