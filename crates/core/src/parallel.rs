//! Order-keeping parallel maps over slices on scoped threads: the one helper every stage that
//! spreads pure per-item work over the cores uses (no thread pool, no global state).

/// Map `f` over `items` on up to `threads` scoped threads, results in input order. The items
/// are cut into `BLOCKS_PER_THREAD` blocks per thread that idle threads take in turn, so one
/// slow stretch of items does not leave the other cores waiting. A panic in `f` is resumed on
/// the calling thread.
pub fn parallel_map<'a, T: Sync, R: Send>(
    items: &'a [T],
    threads: usize,
    f: impl Fn(&'a T) -> R + Sync,
) -> Vec<R> {
    parallel_map_with(items, threads, || (), |(), x| f(x))
}

/// Run `a` and `b` at the same time (`b` on a scoped thread), returning both results: two
/// independent pieces of work that would otherwise leave a core idle. A panic in either is
/// resumed on the calling thread.
pub fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    std::thread::scope(|s| {
        let other = s.spawn(b);
        let first = a();
        match other.join() {
            Ok(second) => (first, second),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// Blocks each thread's share of the items is cut into: enough for an uneven load to even out,
/// few enough that taking a block costs nothing next to the work in it.
pub(crate) const BLOCKS_PER_THREAD: usize = 8;

/// [`parallel_map`] with state each thread makes once (`init`) and keeps across the blocks it
/// takes: a score array, a cache of compiled patterns. Which items share a state depends on
/// thread timing, so the state must not change results (a cache, scratch space). Results may
/// borrow from the items.
pub fn parallel_map_with<'a, T: Sync, S, R: Send>(
    items: &'a [T],
    threads: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, &'a T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        let mut state = init();
        return items.iter().map(|x| f(&mut state, x)).collect();
    }
    let blocks: Vec<&'a [T]> = items.chunks(block_size(items.len(), threads)).collect();
    taken_in_turn(blocks.len(), threads, |state: &mut Option<S>, b| {
        let state = state.get_or_insert_with(&init);
        blocks[b].iter().map(|x| f(state, x)).collect()
    })
}

/// [`parallel_map`] over owned items: each block of them goes by value to the thread that
/// takes it.
pub fn parallel_map_owned<T: Send, R: Send>(
    items: Vec<T>,
    threads: usize,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.into_iter().map(f).collect();
    }
    let size = block_size(items.len(), threads);
    let mut blocks: Vec<std::sync::Mutex<Vec<T>>> = Vec::new();
    let mut rest = items.into_iter();
    loop {
        let block: Vec<T> = rest.by_ref().take(size).collect();
        if block.is_empty() {
            break;
        }
        blocks.push(std::sync::Mutex::new(block));
    }
    taken_in_turn(blocks.len(), threads, |_: &mut Option<()>, b| {
        // Each block is taken once; a poisoned lock only means another block's `f` panicked,
        // which is resumed on the caller anyway.
        let block = std::mem::take(&mut *blocks[b].lock().unwrap_or_else(|e| e.into_inner()));
        block.into_iter().map(&f).collect()
    })
}

/// Items per block: [`BLOCKS_PER_THREAD`] blocks per thread, at least one item each.
fn block_size(items: usize, threads: usize) -> usize {
    items.div_ceil(threads * BLOCKS_PER_THREAD).max(1)
}

/// Run `work(state, b)` for every block number below `blocks` on `threads` scoped threads, each
/// taking the next block not yet taken, with state of its own (`None` until its first block);
/// the blocks' results joined in block order. A panic in `work` is resumed here.
fn taken_in_turn<S, R: Send>(
    blocks: usize,
    threads: usize,
    work: impl Fn(&mut Option<S>, usize) -> Vec<R> + Sync,
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let (next, work) = (&next, &work);
    let done: Vec<Vec<(usize, Vec<R>)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.min(blocks))
            .map(|_| {
                s.spawn(move || {
                    let mut state = None;
                    let mut done = Vec::new();
                    loop {
                        let b = next.fetch_add(1, Ordering::Relaxed);
                        if b >= blocks {
                            break done;
                        }
                        done.push((b, work(&mut state, b)));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(v) => v,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    let mut by_block: Vec<Option<Vec<R>>> = (0..blocks).map(|_| None).collect();
    for (b, results) in done.into_iter().flatten() {
        by_block[b] = Some(results);
    }
    by_block.into_iter().flatten().flatten().collect()
}

/// The threads to spread work over: what the machine offers.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_returns_both_results_and_resumes_a_panic() {
        let words = ["a", "bb", "ccc"];
        let (sum, joined) = join(
            || words.iter().map(|w| w.len()).sum::<usize>(),
            || words.concat(),
        );
        assert_eq!((sum, joined.as_str()), (6, "abbccc"));
        let caught = std::panic::catch_unwind(|| join(|| 1, || -> u8 { panic!("the second") }));
        let message = caught.expect_err("a panic in the second is resumed");
        assert_eq!(message.downcast_ref::<&str>(), Some(&"the second"));
    }

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
    fn each_thread_makes_its_state_once_and_keeps_it() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let items: Vec<u32> = (0..1000).collect();
        for threads in [1, 2, 3] {
            let made = AtomicUsize::new(0);
            // A running count per thread: the counts of all threads add up to every item once.
            let got = parallel_map_with(
                &items,
                threads,
                || {
                    made.fetch_add(1, Ordering::Relaxed);
                    0u32
                },
                |n, x| {
                    *n += 1;
                    (*n, *x)
                },
            );
            assert!(made.load(Ordering::Relaxed) <= threads);
            assert_eq!(got.iter().map(|(_, x)| *x).collect::<Vec<_>>(), items);
            // Each thread's counts run 1, 2, 3, ... over the items it took, in order.
            let mut seen: Vec<u32> = got.iter().map(|(n, _)| *n).collect();
            seen.sort_unstable();
            let ones = seen.iter().filter(|n| **n == 1).count();
            assert!((1..=threads).contains(&ones));
        }
    }

    #[test]
    fn an_uneven_load_is_shared() {
        use std::sync::Mutex;
        // The first half of the items is slow: a contiguous split would give it all to one
        // thread; taken in blocks, both threads work on it.
        let items: Vec<u32> = (0..64).collect();
        let who: Mutex<Vec<(u32, std::thread::ThreadId)>> = Mutex::new(Vec::new());
        let got = parallel_map(&items, 2, |x| {
            if *x < 32 {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            who.lock().unwrap().push((*x, std::thread::current().id()));
            x + 1
        });
        assert_eq!(got, (1..=64).collect::<Vec<_>>());
        let who = who.into_inner().unwrap();
        let slow: std::collections::HashSet<_> = who
            .iter()
            .filter(|(x, _)| *x < 32)
            .map(|(_, t)| *t)
            .collect();
        assert_eq!(slow.len(), 2, "both threads took slow items");
    }

    #[test]
    fn a_panic_reaches_the_caller() {
        let items: Vec<u32> = (0..100).collect();
        let r = std::panic::catch_unwind(|| {
            parallel_map(&items, 2, |x| {
                assert!(*x != 77, "item 77");
                *x
            })
        });
        assert!(r.is_err());
        let r = std::panic::catch_unwind(|| {
            parallel_map_owned(items.clone(), 2, |x| {
                assert!(x != 13, "item 13");
                x
            })
        });
        assert!(r.is_err());
    }
}
