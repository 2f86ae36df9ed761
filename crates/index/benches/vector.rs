//! Exact cosine top-k: `VectorIndex::search_many` against scoring every vector and sorting all
//! scores per query (what `search` did before), side by side in one run.
//!
//! `cargo bench -p noisebench-index --bench vector`: 20,000 random 384-dimensional vectors and
//! 2,000 queries, top 3, on one thread. Prints seconds, pairs scored per second and the ratio,
//! and checks both give the same hits. Plain `main` with `std::time`.

use std::time::Instant;

use noisebench_index::VectorIndex;
use noisebench_index::vector::dot;

fn main() {
    let (n, queries, dim, k) = (20_000usize, 2_000usize, 384usize, 3usize);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let mut index = VectorIndex::new(dim);
    let mut rows = Vec::with_capacity(n);
    for i in 0..n {
        let v: Vec<f32> = (0..dim).map(|_| next()).collect();
        index.add(format!("c{i:06}"), &v).expect("a finite vector");
        rows.push(v);
    }
    let unit = |v: &[f32]| {
        let norm = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
        v.iter()
            .map(|x| (f64::from(*x) / norm) as f32)
            .collect::<Vec<f32>>()
    };
    let rows: Vec<Vec<f32>> = rows.iter().map(|v| unit(v)).collect();
    let qs: Vec<Vec<f32>> = (0..queries)
        .map(|_| (0..dim).map(|_| next()).collect())
        .collect();

    let started = Instant::now();
    let fast = index.search_many(&qs, k).expect("valid queries");
    let fast_s = started.elapsed().as_secs_f64();

    let started = Instant::now();
    let mut naive = Vec::with_capacity(queries);
    for q in &qs {
        let q = unit(q);
        let mut all: Vec<(f32, usize)> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| (dot(&q, r).clamp(-1.0, 1.0), i))
            .collect();
        all.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        naive.push(all.into_iter().take(k).collect::<Vec<_>>());
    }
    let naive_s = started.elapsed().as_secs_f64();

    let same = fast
        .iter()
        .zip(&naive)
        .filter(|(f, n)| {
            f.iter()
                .map(|h| h.id.clone())
                .eq(n.iter().map(|(_, i)| format!("c{i:06}")))
        })
        .count();
    let pairs = (n * queries) as f64;
    println!("vector top-{k}: {queries} queries x {n} vectors x {dim} dims, one thread");
    println!(
        "  search_many          {fast_s:>7.3} s  {:>6.0} M pairs/s",
        pairs / fast_s / 1e6
    );
    println!(
        "  score all + sort     {naive_s:>7.3} s  {:>6.0} M pairs/s",
        pairs / naive_s / 1e6
    );
    println!(
        "  ratio {:.1}x; same hits for {same} of {queries} queries",
        naive_s / fast_s
    );
    assert_eq!(same, queries, "both searches must agree");
}
