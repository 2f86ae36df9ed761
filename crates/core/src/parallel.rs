//! Order-keeping parallel maps over slices on scoped threads: the one helper every stage that
//! spreads pure per-item work over the cores uses (no thread pool, no global state).

/// Map `f` over `items` on up to `threads` scoped threads (contiguous parts, one per thread),
/// results in input order. A panic in `f` is resumed on the calling thread.
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let size = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(size)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(v) => v,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}

/// The threads to spread work over: what the machine offers.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_on_any_number_of_threads() {
        let items: Vec<u32> = (0..1000).collect();
        for threads in [0, 1, 2, 3, 7, 5000] {
            let got = parallel_map(&items, threads, |x| x * 2);
            assert_eq!(got, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        }
        assert!(parallel_map(&[] as &[u32], 4, |x| *x).is_empty());
    }
}
