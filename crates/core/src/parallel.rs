//! Order-keeping parallel maps over slices on scoped threads: the one helper every stage that
//! spreads pure per-item work over the cores uses (no thread pool, no global state).

/// Map `f` over `items` on up to `threads` scoped threads (contiguous parts, one per thread),
/// results in input order. A panic in `f` is resumed on the calling thread.
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    parallel_map_with(items, threads, || (), |(), x| f(x))
}

/// [`parallel_map`] with state each thread makes once (`init`) and keeps across its part: a
/// score array, a cache of compiled patterns.
pub fn parallel_map_with<T: Sync, S, R: Send>(
    items: &[T],
    threads: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    let part = |part: &[T]| {
        let mut state = init();
        part.iter().map(|x| f(&mut state, x)).collect::<Vec<R>>()
    };
    if threads == 1 {
        return part(items);
    }
    let size = items.len().div_ceil(threads);
    let part = &part;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(size)
            .map(|p| s.spawn(move || part(p)))
            .collect();
        joined(handles)
    })
}

/// The parts' results, in part order; a part's panic is resumed here.
fn joined<R>(handles: Vec<std::thread::ScopedJoinHandle<'_, Vec<R>>>) -> Vec<R> {
    handles
        .into_iter()
        .flat_map(|h| match h.join() {
            Ok(v) => v,
            Err(panic) => std::panic::resume_unwind(panic),
        })
        .collect()
}

/// [`parallel_map`] over owned items: each thread takes its contiguous part by value.
pub fn parallel_map_owned<T: Send, R: Send>(
    items: Vec<T>,
    threads: usize,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.into_iter().map(f).collect();
    }
    let size = items.len().div_ceil(threads);
    let mut parts: Vec<Vec<T>> = Vec::with_capacity(threads);
    let mut rest = items.into_iter();
    loop {
        let part: Vec<T> = rest.by_ref().take(size).collect();
        if part.is_empty() {
            break;
        }
        parts.push(part);
    }
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|p| s.spawn(move || p.into_iter().map(f).collect::<Vec<R>>()))
            .collect();
        joined(handles)
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

    #[test]
    fn owned_items_keep_order_on_any_number_of_threads() {
        for n in [0usize, 1, 2, 3, 999, 1000] {
            let items: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            let want: Vec<usize> = (0..n).map(|i| i.to_string().len() + i).collect();
            for threads in [0, 1, 2, 3, 7, 5000] {
                let got = parallel_map_owned(items.clone(), threads, |s| {
                    s.len() + s.parse::<usize>().unwrap()
                });
                assert_eq!(got, want, "{n} items on {threads} threads");
            }
        }
    }

    #[test]
    fn each_thread_keeps_its_own_state_over_its_part() {
        let items: Vec<u32> = (0..100).collect();
        // A running count per thread: on 2 threads each part counts from 1 again.
        let got = parallel_map_with(
            &items,
            2,
            || 0u32,
            |n, _| {
                *n += 1;
                *n
            },
        );
        let want: Vec<u32> = (1..=50).chain(1..=50).collect();
        assert_eq!(got, want);
    }
}
