//! Exact cosine top-k over vectors in memory: every stored vector is scored against the query,
//! so results are exact and deterministic (ties broken by id). Vectors are normalised once when
//! added, so a search is one dot product per vector. [`VectorIndex::search_many`] first scores
//! every row from int8 codes (an exact integer sum, on AVX-512 VNNI where the CPU has it; a block
//! of rows that stays in cache against four queries per row read) with a proven bound on the
//! distance from the exact score, and scores exactly only the rows the bound cannot rule out of
//! the top k; no list of all scores is made or sorted. The exact dot product runs on the widest
//! vector unit the CPU has (AVX-512, AVX2 with FMA, or portable code) with the same bits on
//! each. Fine for a benchmark's chunks (tens of thousands of vectors against a hundred thousand
//! queries); not an approximate nearest-neighbour index.

/// Why a vector was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VectorError {
    #[error("vector `{id}` has {got} dimensions, the index {want}")]
    Dimension { id: String, got: usize, want: usize },
    #[error("vector `{id}` holds a NaN or an infinity")]
    NotFinite { id: String },
}

/// One ranked vector.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorHit {
    pub id: String,
    /// Cosine similarity with the query, in -1..=1 (0 for a zero vector).
    pub score: f32,
}

/// Vectors of one dimension, by id.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorIndex {
    dim: usize,
    ids: Vec<String>,
    /// Unit vectors (or zeros), row after row.
    data: Vec<f32>,
    /// Their int8 codes, row after row, and per row the code step, |x̂| and |x − x̂|
    /// ([`quantized`]).
    codes: Vec<i8>,
    code_scale: Vec<f64>,
    code_norm: Vec<f64>,
    code_error: Vec<f64>,
    code_sum: Vec<i32>,
    /// The largest |x̂| and |x − x̂| of any row (made when first searched).
    code_maxima: std::sync::OnceLock<(f64, f64)>,
    /// Each row's place in id order, and the row at each place (made when first searched).
    ranks: std::sync::OnceLock<(Vec<u32>, Vec<u32>)>,
}

mod amx;
mod cpu;
mod quantized;

use cpu::Level;

/// `v` scaled to unit length (a zero vector stays zero: it is similar to nothing).
fn normalised(v: &[f32]) -> Vec<f32> {
    let norm = v
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    if norm == 0.0 {
        return vec![0.0; v.len()];
    }
    v.iter().map(|x| (f64::from(*x) / norm) as f32).collect()
}

/// Lanes of the dot product. Lane i sums the products at positions i, i + 32, i + 64, ...; the
/// lanes are then added in a fixed tree and the products after the last whole block in order.
/// Each step is one fused multiply-add, correctly rounded as IEEE 754 defines it (`f32::mul_add`),
/// so a score has the same bits whatever runs it: AVX-512 or AVX2 with FMA, ARM's NEON, or the
/// portable loop (slow only on CPUs without FMA, where `mul_add` is done in software).
const LANES: usize = 32;

/// The fixed-order sum of the lanes, then the tail products.
#[inline(always)]
fn reduce(mut acc: [f32; LANES], tail_a: &[f32], tail_b: &[f32]) -> f32 {
    let mut width = LANES / 2;
    while width > 0 {
        for i in 0..width {
            acc[i] += acc[i + width];
        }
        width /= 2;
    }
    let mut sum = acc[0];
    for (x, y) in tail_a.iter().zip(tail_b) {
        sum = x.mul_add(*y, sum);
    }
    sum
}

/// One block of [`LANES`] products added into the lanes.
#[inline(always)]
fn add_block(acc: &mut [f32; LANES], x: &[f32; LANES], y: &[f32; LANES]) {
    for i in 0..LANES {
        acc[i] = x[i].mul_add(y[i], acc[i]);
    }
}

/// Block `b` of `v` as an array (the caller knows it is whole).
#[inline(always)]
fn block(v: &[f32], b: usize) -> &[f32; LANES] {
    let at = b * LANES;
    v[at..at + LANES]
        .try_into()
        .unwrap_or_else(|_| unreachable!("a whole block"))
}

#[inline(always)]
fn dot_body(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; LANES];
    for i in 0..n / LANES {
        add_block(&mut acc, block(a, i), block(b, i));
    }
    let whole = n / LANES * LANES;
    reduce(acc, &a[whole..], &b[whole..])
}

/// The same lanes on x86-64's vector units: 32 lanes are two AVX-512 registers or four AVX2
/// registers, each step one fused multiply-add (as `f32::mul_add`), and the lanes are reduced
/// by the portable [`reduce`], so every path has the portable path's bits.
#[cfg(target_arch = "x86_64")]
mod wide {
    use super::{LANES, reduce};
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx512f")]
    pub(super) fn dot_avx512(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let whole = n / LANES * LANES;
        let (mut s0, mut s1) = (_mm512_setzero_ps(), _mm512_setzero_ps());
        let mut at = 0;
        while at < whole {
            // SAFETY: at + 32 <= whole <= the length of both slices.
            unsafe {
                let (pa, pb) = (a.as_ptr().add(at), b.as_ptr().add(at));
                s0 = _mm512_fmadd_ps(_mm512_loadu_ps(pa), _mm512_loadu_ps(pb), s0);
                s1 = _mm512_fmadd_ps(_mm512_loadu_ps(pa.add(16)), _mm512_loadu_ps(pb.add(16)), s1);
            }
            at += LANES;
        }
        reduce(lanes512(s0, s1), &a[whole..n], &b[whole..n])
    }

    #[target_feature(enable = "avx512f")]
    fn lanes512(s0: __m512, s1: __m512) -> [f32; LANES] {
        let mut acc = [0f32; LANES];
        // SAFETY: acc holds 32 floats, two stores of 16.
        unsafe {
            _mm512_storeu_ps(acc.as_mut_ptr(), s0);
            _mm512_storeu_ps(acc.as_mut_ptr().add(16), s1);
        }
        acc
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let whole = n / LANES * LANES;
        let mut s = [_mm256_setzero_ps(); 4];
        let mut at = 0;
        while at < whole {
            // SAFETY: at + 32 <= whole <= the length of both slices.
            unsafe {
                let (pa, pb) = (a.as_ptr().add(at), b.as_ptr().add(at));
                for (j, acc) in s.iter_mut().enumerate() {
                    *acc = _mm256_fmadd_ps(
                        _mm256_loadu_ps(pa.add(8 * j)),
                        _mm256_loadu_ps(pb.add(8 * j)),
                        *acc,
                    );
                }
            }
            at += LANES;
        }
        let mut acc = [0f32; LANES];
        for (j, v) in s.iter().enumerate() {
            // SAFETY: acc holds 32 floats, four stores of 8.
            unsafe { _mm256_storeu_ps(acc.as_mut_ptr().add(8 * j), *v) };
        }
        reduce(acc, &a[whole..n], &b[whole..n])
    }
}

/// Dot product of two vectors (pairs up to the shorter length): the cosine of unit vectors, and
/// the score exact search ranks by, so callers rescoring candidates agree with it to the bit.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    dot_at(cpu::level(), a, b)
}

/// [`dot`] with the kernel of `level`, which this CPU must reach (the dispatcher's, or a
/// test's that runs every kernel the CPU has).
fn dot_at(level: Level, a: &[f32], b: &[f32]) -> f32 {
    debug_assert!(level <= cpu::level());
    #[cfg(target_arch = "x86_64")]
    match level {
        // SAFETY: the level holds every feature each function is compiled for (`cpu`).
        Level::Avx512 | Level::Avx512Vnni => return unsafe { wide::dot_avx512(a, b) },
        Level::Avx2 => return unsafe { wide::dot_avx2(a, b) },
        Level::Portable => {}
    }
    dot_body(a, b)
}

/// Each item's place in id order, and the item at each place: ties are broken by the place.
pub(crate) fn id_ranks(ids: &[String]) -> (Vec<u32>, Vec<u32>) {
    let mut order: Vec<u32> = (0..ids.len() as u32).collect();
    order.sort_by(|a, b| ids[*a as usize].cmp(&ids[*b as usize]));
    let mut rank = vec![0u32; ids.len()];
    for (r, i) in order.iter().enumerate() {
        rank[*i as usize] = r as u32;
    }
    (rank, order)
}

/// The k largest values offered, kept sorted worst first: a value below the worst kept costs
/// one compare. The k-th largest is a threshold (the first pass's, BM25 pruning's).
#[derive(Debug, Clone)]
pub(crate) struct KBest<T> {
    k: usize,
    best: Vec<T>,
}

impl<T: PartialOrd + Copy> KBest<T> {
    pub(crate) fn new(k: usize) -> Self {
        Self {
            k,
            best: Vec::with_capacity(k + 1),
        }
    }

    #[inline]
    pub(crate) fn offer(&mut self, v: T) {
        if self.best.len() == self.k && !(self.k > 0 && v > self.best[0]) {
            return;
        }
        let at = self.best.partition_point(|x| *x < v);
        self.best.insert(at, v);
        if self.best.len() > self.k {
            self.best.remove(0);
        }
    }

    /// The k-th largest value offered, once k were.
    pub(crate) fn kth(&self) -> Option<T> {
        (self.k > 0 && self.best.len() == self.k).then(|| self.best[0])
    }
}

/// The `k` best `(score, rank)` pairs seen, best first: higher score, then lower rank (the id's
/// place in id order). Holds at most k entries; a score below the worst kept costs one compare.
#[derive(Debug, Clone)]
pub(crate) struct TopK {
    k: usize,
    pub(crate) best: Vec<(f32, u32)>,
}

impl TopK {
    pub(crate) fn new(k: usize) -> Self {
        Self {
            k,
            best: Vec::with_capacity(k + 1),
        }
    }

    #[inline]
    pub(crate) fn offer(&mut self, score: f32, rank: u32) {
        let better = |a: &(f32, u32), b: &(f32, u32)| a.0 > b.0 || (a.0 == b.0 && a.1 < b.1);
        if self.best.len() == self.k {
            match self.best.last() {
                Some(worst) if better(&(score, rank), worst) => {}
                _ => return,
            }
        }
        let at = self
            .best
            .iter()
            .position(|e| better(&(score, rank), e))
            .unwrap_or(self.best.len());
        self.best.insert(at, (score, rank));
        self.best.truncate(self.k);
    }

    /// The k-th best score, once k were offered.
    pub(crate) fn kth(&self) -> Option<f32> {
        (self.k > 0 && self.best.len() == self.k).then(|| self.best[self.k - 1].0)
    }
}

/// Cosine similarity of two vectors of the same length (0 when either is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    dot(&normalised(a), &normalised(b)).clamp(-1.0, 1.0)
}

impl VectorIndex {
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            ids: Vec::new(),
            data: Vec::new(),
            codes: Vec::new(),
            code_scale: Vec::new(),
            code_norm: Vec::new(),
            code_error: Vec::new(),
            code_sum: Vec::new(),
            code_maxima: std::sync::OnceLock::new(),
            ranks: std::sync::OnceLock::new(),
        }
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    fn checked(&self, id: &str, v: &[f32]) -> Result<Vec<f32>, VectorError> {
        if v.len() != self.dim {
            return Err(VectorError::Dimension {
                id: id.to_string(),
                got: v.len(),
                want: self.dim,
            });
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(VectorError::NotFinite { id: id.to_string() });
        }
        Ok(normalised(v))
    }

    /// Add a vector under `id` (ids need not be unique; each vector is its own entry).
    pub fn add(&mut self, id: impl Into<String>, vector: &[f32]) -> Result<(), VectorError> {
        let id = id.into();
        let unit = self.checked(&id, vector)?;
        let code = quantized::quantize(&unit);
        self.ids.push(id);
        self.data.extend(unit);
        self.code_sum.push(quantized::block_sum(&code.codes));
        self.codes.extend(code.codes);
        self.code_scale.push(code.scale);
        self.code_norm.push(code.norm);
        self.code_error.push(code.error);
        self.ranks = std::sync::OnceLock::new();
        self.code_maxima = std::sync::OnceLock::new();
        Ok(())
    }

    /// The `k` vectors most similar to `query` by cosine, best first, ties by id.
    pub fn search(&self, query: &[f32], k: usize) -> Result<Vec<VectorHit>, VectorError> {
        Ok(self.search_many(&[query], k)?.pop().unwrap_or_default())
    }

    /// [`VectorIndex::search`] for each of `queries`, in order: the same hits. A first pass
    /// scores every row from int8 codes (an exact integer sum, four queries per row read, a block
    /// of rows that stays in cache at a time) with a bound on its distance from the exact score;
    /// only rows whose upper bound reaches the k-th best lower bound are scored exactly.
    pub fn search_many<Q: AsRef<[f32]>>(
        &self,
        queries: &[Q],
        k: usize,
    ) -> Result<Vec<Vec<VectorHit>>, VectorError> {
        Ok(self
            .search_many_rows(queries, k)?
            .into_iter()
            .map(|hits| {
                hits.into_iter()
                    .map(|(row, score)| VectorHit {
                        id: self.ids[row as usize].clone(),
                        score,
                    })
                    .collect()
            })
            .collect())
    }

    /// [`VectorIndex::search_many`]'s hits as (row, score), the row a vector's place in the
    /// order it was added: for a caller that keeps its own list of what it added.
    pub fn search_many_rows<Q: AsRef<[f32]>>(
        &self,
        queries: &[Q],
        k: usize,
    ) -> Result<Vec<Vec<(u32, f32)>>, VectorError> {
        let units: Vec<Vec<f32>> = queries
            .iter()
            .map(|q| self.checked("query", q.as_ref()))
            .collect::<Result<_, _>>()?;
        let (rank, order) = self.ranks.get_or_init(|| id_ranks(&self.ids));
        if k == 0 {
            return Ok(units.iter().map(|_| Vec::new()).collect());
        }
        let codes: Vec<quantized::Code> = units.iter().map(|u| quantized::quantize(u)).collect();
        let mut pass: Vec<FirstPass> = units.iter().map(|_| FirstPass::new(k)).collect();
        let dim = self.dim;
        // Groups of 32 queries go to AMX's tiles where the CPU has them; the rest four at a
        // time through the VNNI (or portable) scan.
        let tiles: Vec<amx::QueryTiles> = if dim > 0 && dim.is_multiple_of(64) && amx::ready() {
            codes
                .chunks_exact(amx::GROUP)
                .map(|g| {
                    let q: Vec<&[i8]> = g.iter().map(|c| &c.codes[..]).collect();
                    amx::QueryTiles::new(&q, dim)
                })
                .collect()
        } else {
            Vec::new()
        };
        let in_tiles = tiles.len() * amx::GROUP;
        if let Some(block) = (1usize << 20).checked_div(dim) {
            // Whole groups of 32 rows per block where a block holds that many.
            let block = if block >= amx::GROUP {
                block / amx::GROUP * amx::GROUP
            } else {
                block.max(1)
            };
            for (b, rows) in self.codes.chunks(block * dim).enumerate() {
                let first = b * block;
                #[cfg(target_arch = "x86_64")]
                for ((t, g), st) in tiles
                    .iter()
                    .zip(codes.chunks_exact(amx::GROUP))
                    .zip(pass.chunks_exact_mut(amx::GROUP))
                {
                    self.scan_tiles(t, g, st, rows, first);
                }
                let mut groups = codes[in_tiles..].chunks_exact(4);
                let mut states = pass[in_tiles..].chunks_exact_mut(4);
                for (g, st) in (&mut groups).zip(&mut states) {
                    let q = [
                        &g[0].codes[..],
                        &g[1].codes[..],
                        &g[2].codes[..],
                        &g[3].codes[..],
                    ];
                    let widest = [0, 1, 2, 3].map(|j| self.widest_bound(&g[j]));
                    let n = rows.len() / dim;
                    let thresholds = [0, 1, 2, 3].map(|j| st[j].threshold);
                    let mut offer = |j: usize, r: usize, int: i32| {
                        let at = first + r;
                        st[j].offer(self.bounds(&g[j], at, int), at as u32);
                        st[j].threshold
                    };
                    let scanned = quantized::scan4x4(&mut quantized::Scan4x4 {
                        queries: q,
                        query_scales: [0, 1, 2, 3].map(|j| g[j].scale),
                        query_norms: [0, 1, 2, 3].map(|j| g[j].norm),
                        query_errors: [0, 1, 2, 3].map(|j| g[j].error),
                        thresholds,
                        rows,
                        row_sums: &self.code_sum[first..first + n],
                        row_scales: &self.code_scale[first..first + n],
                        row_norms: &self.code_norm[first..first + n],
                        row_errors: &self.code_error[first..first + n],
                        dim,
                        offer: &mut offer,
                    });
                    for (r, row) in rows.chunks_exact(dim).enumerate().skip(scanned) {
                        let at = first + r;
                        let ints = quantized::idot4(q, row, self.code_sum[at]);
                        let row_scale = self.code_scale[at];
                        for (((state, code), int), wide) in
                            st.iter_mut().zip(g).zip(ints).zip(&widest[..])
                        {
                            // Most rows fall below the threshold even with the widest bound
                            // any row has: one multiply and a compare rule them out.
                            if code.scale * row_scale * f64::from(int) + wide < state.threshold {
                                continue;
                            }
                            state.offer(self.bounds(code, at, int), at as u32);
                        }
                    }
                }
                for (code, state) in groups.remainder().iter().zip(states.into_remainder()) {
                    for (r, row) in rows.chunks_exact(dim).enumerate() {
                        let at = first + r;
                        let int = quantized::idot(&code.codes, row);
                        state.offer(self.bounds(code, at, int), at as u32);
                    }
                }
            }
        } else {
            // Zero-dimensional vectors all score 0: every row is a candidate.
            for state in &mut pass {
                for r in 0..self.ids.len() {
                    state.offer((0.0, 0.0), r as u32);
                }
            }
        }
        Ok(units
            .iter()
            .zip(pass)
            .map(|(q, state)| {
                let mut top = TopK::new(k);
                for row in state.candidates() {
                    let r = row as usize;
                    let exact = dot(q, &self.data[r * dim..(r + 1) * dim]).clamp(-1.0, 1.0);
                    top.offer(exact, rank[r]);
                }
                top.best
                    .into_iter()
                    .map(|(score, r)| (order[r as usize], score))
                    .collect()
            })
            .collect())
    }

    /// The first pass of 32 queries (`g`, their `tiles`, their states `st`) over `rows`, the
    /// block of rows from row `first`: AMX's sums of every whole group of 32 rows, a filter
    /// that passes every pair whose upper bound may reach its query's threshold, and the exact
    /// test of [`FirstPass::offer`] for those; the rows after the last group one by one.
    #[cfg(target_arch = "x86_64")]
    fn scan_tiles(
        &self,
        tiles: &amx::QueryTiles,
        g: &[quantized::Code],
        st: &mut [FirstPass],
        rows: &[i8],
        first: usize,
    ) {
        let dim = self.dim;
        let slack = quantized::slack(dim);
        let mut filter = amx::Filter {
            scales: std::array::from_fn(|j| g[j].scale as f32),
            norms: std::array::from_fn(|j| g[j].norm as f32),
            errors: std::array::from_fn(|j| g[j].error as f32),
            limits: std::array::from_fn(|j| amx::Filter::limit(st[j].threshold, slack)),
        };
        let step = |r0: usize, sums: &[i32; amx::GROUP * amx::GROUP]| {
            for (r, row_sums) in sums.chunks_exact(amx::GROUP).enumerate() {
                let at = first + r0 + r;
                let mut bits = filter.passing(
                    row_sums,
                    self.code_scale[at],
                    self.code_norm[at],
                    self.code_error[at],
                );
                while bits != 0 {
                    let j = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    st[j].offer(self.bounds(&g[j], at, row_sums[j]), at as u32);
                    filter.limits[j] = amx::Filter::limit(st[j].threshold, slack);
                }
            }
        };
        // SAFETY: the caller made `tiles` only when `amx::ready()` and dim is a multiple of 64.
        let scanned = unsafe { amx::scan(rows, tiles, dim, step) };
        for (r, row) in rows.chunks_exact(dim).enumerate().skip(scanned) {
            let at = first + r;
            for (code, state) in g.iter().zip(st.iter_mut()) {
                let int = quantized::idot(&code.codes, row);
                state.offer(self.bounds(code, at, int), at as u32);
            }
        }
    }

    /// The widest half-width of the bound of `q` with any row (an upper bound of every
    /// row's): |q̂|·max|e_r| + |e_q|·max|r̂| + |e_q|·max|e_r| + slack.
    fn widest_bound(&self, q: &quantized::Code) -> f64 {
        let (norm, error) = self.code_maxima.get_or_init(|| {
            let max = |v: &[f64]| v.iter().fold(0f64, |m, x| m.max(*x));
            (max(&self.code_norm), max(&self.code_error))
        });
        quantized::bounds(q, 0.0, *norm, *error, 0, self.dim).1
    }

    #[inline]
    fn bounds(&self, q: &quantized::Code, row: usize, int: i32) -> (f64, f64) {
        quantized::bounds(
            q,
            self.code_scale[row],
            self.code_norm[row],
            self.code_error[row],
            int,
            self.dim,
        )
    }
}

/// One query's first pass: the k best lower bounds seen, and the rows whose upper bound reached
/// the k-th of them when they were seen (pruned as it rises).
struct FirstPass {
    /// The k best lower bounds.
    lows: KBest<f64>,
    /// The k-th best lower bound so far (minus infinity until k rows were seen).
    threshold: f64,
    candidates: Vec<(f64, u32)>,
    /// How many candidates are held before those below the threshold are swept out.
    room: usize,
}

impl FirstPass {
    fn new(k: usize) -> Self {
        Self {
            lows: KBest::new(k),
            threshold: f64::NEG_INFINITY,
            candidates: Vec::new(),
            room: 64 + 8 * k,
        }
    }

    #[inline(always)]
    fn offer(&mut self, (low, high): (f64, f64), row: u32) {
        if high < self.threshold {
            return;
        }
        self.candidates.push((high, row));
        self.lows.offer(low);
        if let Some(kth) = self.lows.kth() {
            self.threshold = kth;
        }
        if self.candidates.len() >= self.room {
            let t = self.threshold;
            self.candidates.retain(|(h, _)| *h >= t);
            // Where most candidates stay (scores packed near the threshold), a larger room
            // keeps the sweeps to a constant cost per offer.
            if self.candidates.len() > self.room / 2 {
                self.room *= 2;
            }
        }
    }

    /// Rows that may be in the top k.
    fn candidates(self) -> impl Iterator<Item = u32> {
        let t = self.threshold;
        self.candidates
            .into_iter()
            .filter(move |(h, _)| *h >= t)
            .map(|(_, r)| r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ranks_by_cosine_and_refuses_bad_vectors() {
        let mut index = VectorIndex::new(2);
        index.add("east", &[1.0, 0.0]).unwrap();
        index.add("north", &[0.0, 3.0]).unwrap();
        index.add("north-east", &[2.0, 2.0]).unwrap();
        index.add("zero", &[0.0, 0.0]).unwrap();
        let hits = index.search(&[1.0, 0.1], 3).unwrap();
        let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["east", "north-east", "north"]);
        assert!((hits[0].score - cosine(&[1.0, 0.0], &[1.0, 0.1])).abs() < 1e-6);
        assert_eq!(index.search(&[0.0, 0.0], 1).unwrap()[0].score, 0.0);
        assert!(matches!(
            index.add("bad", &[1.0]),
            Err(VectorError::Dimension {
                got: 1,
                want: 2,
                ..
            })
        ));
        assert!(index.add("nan", &[f32::NAN, 0.0]).is_err());
        assert!(index.search(&[1.0, 2.0, 3.0], 1).is_err());
        assert_eq!(index.len(), 4);
    }

    proptest! {
        /// Every vector width gives the same bits: the dispatched dot and each kernel this CPU
        /// can run, the portable one always, at lengths with and without a tail.
        #[test]
        fn dot_has_the_same_bits_on_every_path(
            a in proptest::collection::vec(-1.0f32..1.0, 0..200),
            seed in proptest::collection::vec(-1.0f32..1.0, 200),
        ) {
            let b = &seed[..a.len()];
            let want = dot_body(&a, b);
            prop_assert_eq!(dot(&a, b).to_bits(), want.to_bits());
            for level in cpu::levels_here() {
                prop_assert_eq!(dot_at(level, &a, b).to_bits(), want.to_bits(), "{:?}", level);
            }
            // Against a plain f64 sum, the lanes are accurate.
            let exact: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
            prop_assert!((f64::from(want) - exact).abs() < 1e-4);
        }

        /// Searching many queries at once (blocks of rows, 32 or four queries per pass, a
        /// remainder) gives each query's own search: a full sort of every score, ties by id.
        #[test]
        fn search_many_is_each_query_searched_alone(
            (dim, vectors, queries) in prop_oneof![Just(37usize), Just(64), Just(128)].prop_flat_map(|d| (
                Just(d),
                proptest::collection::vec(proptest::collection::vec(-3i8..=3, d), 1..60),
                // Up to two groups of 32 (AMX's, where the CPU has it), groups of four, and
                // a remainder.
                proptest::collection::vec(proptest::collection::vec(-3i8..=3, d), 0..75),
            )),
            k in 0usize..8,
            shuffle in any::<u64>(),
        ) {
            let as_f32 = |v: &Vec<i8>| v.iter().map(|x| f32::from(*x)).collect::<Vec<f32>>();
            let mut index = VectorIndex::new(dim);
            // Ids not in insertion order, so ties are broken by id, not by position.
            let n = vectors.len() as u64;
            for (i, v) in vectors.iter().enumerate() {
                let name = (i as u64).wrapping_mul(shuffle | 1) % (n * 7 + 1);
                index.add(format!("v{name:04}-{i}"), &as_f32(v)).unwrap();
            }
            let qs: Vec<Vec<f32>> = queries.iter().map(as_f32).collect();
            let many = index.search_many(&qs, k).unwrap();
            prop_assert_eq!(many.len(), qs.len());
            for (q, got) in qs.iter().zip(&many) {
                let unit_q = normalised(q);
                let mut all: Vec<(f32, &str)> = index
                    .ids
                    .iter()
                    .enumerate()
                    .map(|(i, id)| {
                        (dot_body(&unit_q, &index.data[i * dim..(i + 1) * dim]).clamp(-1.0, 1.0), id.as_str())
                    })
                    .collect();
                all.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
                let want: Vec<VectorHit> = all
                    .into_iter()
                    .take(k)
                    .map(|(score, id)| VectorHit { id: id.to_string(), score })
                    .collect();
                prop_assert_eq!(got, &want);
                prop_assert_eq!(&index.search(q, k).unwrap(), got);
            }
        }

        /// The top k is the brute-force top k, whatever the insertion order.
        #[test]
        fn top_k_is_exact_and_order_free(
            vectors in proptest::collection::vec(proptest::collection::vec(-4i8..=4, 3), 1..30),
            query in proptest::collection::vec(-4i8..=4, 3),
            k in 0usize..10,
        ) {
            let as_f32 = |v: &Vec<i8>| v.iter().map(|x| f32::from(*x)).collect::<Vec<f32>>();
            let q = as_f32(&query);
            let mut forward = VectorIndex::new(3);
            let mut backward = VectorIndex::new(3);
            for (i, v) in vectors.iter().enumerate() {
                forward.add(format!("v{i:02}"), &as_f32(v)).unwrap();
            }
            for (i, v) in vectors.iter().enumerate().rev() {
                backward.add(format!("v{i:02}"), &as_f32(v)).unwrap();
            }
            let got = forward.search(&q, k).unwrap();
            prop_assert_eq!(&got, &backward.search(&q, k).unwrap());
            let mut want: Vec<(f32, String)> = vectors
                .iter()
                .enumerate()
                .map(|(i, v)| (cosine(&q, &as_f32(v)), format!("v{i:02}")))
                .collect();
            want.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            prop_assert_eq!(got.len(), k.min(vectors.len()));
            for (h, (score, _)) in got.iter().zip(&want) {
                prop_assert!((h.score - score).abs() < 1e-5);
                prop_assert!((-1.0..=1.0).contains(&h.score));
            }
        }
    }
}
