//! Per-sequence parallelism. Sequences are compiled independently; large
//! specs (thousands of sequences) use every core, small ones stay on one
//! thread (starting the pool costs more than their whole compile). Results
//! and the reported error are those of the first failing sequence in
//! program order, so output and diagnostics do not depend on scheduling.

use rayon::prelude::*;

/// Below this many items the work stays on the calling thread.
const PARALLEL_FROM: usize = 64;

/// `f` over `items` in order; the first error in item order wins.
pub fn map<T: Sync, R: Send, E: Send>(
    items: &[T],
    f: impl Fn(&T) -> Result<R, E> + Sync + Send,
) -> Result<Vec<R>, E> {
    if items.len() < PARALLEL_FROM {
        return items.iter().map(f).collect();
    }
    let results: Vec<Result<R, E>> = items.par_iter().map(f).collect();
    results.into_iter().collect()
}

/// `a` and `b`, side by side when the work is for `items` sequences
/// (enough of them to be worth the pool), else one after the other.
pub fn join<A: Send, B: Send>(
    items: usize,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if items < PARALLEL_FROM {
        (a(), b())
    } else {
        rayon::join(a, b)
    }
}

/// `f` on each item in place; the first error in item order wins.
pub fn each_mut<T: Send, E: Send>(
    items: &mut [T],
    f: impl Fn(&mut T) -> Result<(), E> + Sync + Send,
) -> Result<(), E> {
    if items.len() < PARALLEL_FROM {
        return items.iter_mut().try_for_each(f);
    }
    let results: Vec<Result<(), E>> = items.par_iter_mut().map(f).collect();
    results.into_iter().collect()
}
