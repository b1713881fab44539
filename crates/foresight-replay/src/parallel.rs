//! Runs independent jobs on a few threads and returns their results in input order, so that
//! the output does not depend on which thread finished first.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The number of threads to use: what the machine offers, at most `jobs`.
pub fn threads_for(jobs: usize) -> usize {
    let available = std::thread::available_parallelism().map_or(1, |n| n.get());
    available.min(jobs).max(1)
}

/// `items.iter().map(f).collect()`, computed on `threads` threads.
pub fn parallel_map<T, R, F>(items: &[T], threads: usize, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(&f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut parts: Vec<Vec<(usize, R)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        done.push((i, f(item)));
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| match w.join() {
                Ok(done) => done,
                // A job panicked: re-raise it on the caller's thread.
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    let mut all: Vec<(usize, R)> = parts.drain(..).flatten().collect();
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_input_order_on_any_number_of_threads() {
        let items: Vec<u64> = (0..100).collect();
        for threads in [1, 2, 3, 8] {
            let out = parallel_map(&items, threads, |x| x * x);
            assert_eq!(out, items.iter().map(|x| x * x).collect::<Vec<_>>());
        }
        assert!(parallel_map(&[] as &[u64], 4, |x| *x).is_empty());
    }
}
