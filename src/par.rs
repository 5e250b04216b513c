//! Per-file parallel passes split by work rather than by file count.
//!
//! A pass that hands rayon one item per input file lets rayon halve the file list by count, and a link's work is
//! far from even across its files. Most of clang-tool's inputs are archive members never pulled in (next to no
//! work each); the others hold nearly all of it. Split by count, one worker got nearly all the work: in its
//! "output sections" pass the second worker finished early and then waited for the first (rayon had cut the
//! first half into only a few pieces, so there was nothing to steal).
//! One task per file (`with_max_len(1)`) balances that, at the cost of a rayon task for every dead file.
//!
//! [`FileRuns`] cuts the file list once into runs of consecutive files of about equal weight (sections and
//! symbols of the linked files; one for a file left out), several runs per thread, and a pass is a task per
//! run. Files stay in order inside a run and results come back in file order, so output is the same for any
//! thread count. Where one file holds most of the weight (c-gc: sqlite3.o) or there is next to none, a pass
//! runs on the calling thread instead: no second thread could shorten it, and handing it to a worker and back
//! has a cost of its own.

use crate::index::{FileId, SymId};
use rayon::prelude::*;
use std::ops::Range;

/// Runs per thread: enough that stealing evens out what the weights do not predict, few enough that a pass
/// over 5000 files costs tens of tasks, not thousands.
const RUNS_PER_THREAD: u64 = 16;

/// The input files cut into runs of about equal weight (see the module comment).
#[derive(Clone, Debug, Default)]
pub struct FileRuns {
    /// Run `k` is files `starts[k]..starts[k + 1]`; the last entry is the number of files.
    starts: Vec<usize>,
    /// Passes run on the calling thread, in file order: the work is in one file (or there is next to none),
    /// so a second thread could not shorten it, only add the hand-over to a worker and back.
    inline: bool,
}

/// A file of at least this share of the total weight (in percent) keeps a pass on the calling thread.
const INLINE_SHARE: u64 = 75;

/// Less total weight than this keeps a pass on the calling thread.
const INLINE_WEIGHT: u64 = 1024;

impl FileRuns {
    /// Runs for files of the given weights, `RUNS_PER_THREAD` per thread of the current pool (a file heavier
    /// than a run is a run of its own).
    pub fn new(weights: impl ExactSizeIterator<Item = u64>) -> Self {
        Self::with_runs(
            weights,
            RUNS_PER_THREAD * rayon::current_num_threads() as u64,
        )
    }

    fn with_runs(weights: impl ExactSizeIterator<Item = u64>, runs: u64) -> Self {
        let n = weights.len();
        let weights: Vec<u64> = weights.collect();
        let total = weights.iter().sum::<u64>();
        let heaviest = weights.iter().copied().max().unwrap_or(0);
        let inline = total < INLINE_WEIGHT || heaviest * 100 >= total * INLINE_SHARE;
        let target = total.div_ceil(runs.max(1)).max(1);
        let mut starts = vec![0];
        let mut acc = 0u64;
        for (f, w) in weights.into_iter().enumerate() {
            // A file that would overfill the run starts the next one.
            if acc > 0 && acc + w > target {
                starts.push(f);
                acc = 0;
            }
            acc += w;
            if acc >= target && f + 1 < n {
                starts.push(f + 1);
                acc = 0;
            }
        }
        if n > 0 {
            starts.push(n);
        }
        FileRuns { starts, inline }
    }

    /// The same runs, whose passes run on the calling thread (for a pass with little work in it).
    pub fn serial(&self) -> FileRuns {
        FileRuns {
            starts: self.starts.clone(),
            inline: true,
        }
    }

    /// The number of files.
    pub fn files(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
    }

    /// The runs, a task each.
    fn ranges(&self) -> impl IndexedParallelIterator<Item = Range<usize>> + '_ {
        self.starts
            .par_windows(2)
            .with_max_len(1)
            .map(|w| w[0]..w[1])
    }

    /// Calls `visit` on every file.
    pub fn for_each(&self, visit: impl Fn(FileId) + Sync + Send) {
        if self.inline {
            (0..self.files()).map(FileId::new).for_each(visit);
        } else {
            self.ranges()
                .for_each(|r| r.map(FileId::new).for_each(&visit));
        }
    }

    /// `visit(f, &mut xs[f])` for every file `f`; `xs` holds one element per file.
    pub fn for_each_mut<X: Send>(
        &self,
        xs: &mut [X],
        visit: impl Fn(FileId, &mut X) + Sync + Send,
    ) {
        assert_eq!(xs.len(), self.files(), "one element per file");
        if self.inline {
            xs.iter_mut()
                .enumerate()
                .for_each(|(f, x)| visit(FileId::new(f), x));
            return;
        }
        let mut parts = Vec::with_capacity(self.starts.len().saturating_sub(1));
        let mut rest = xs;
        for w in self.starts.windows(2) {
            let (part, tail) = rest.split_at_mut(w[1] - w[0]);
            parts.push((w[0], part));
            rest = tail;
        }
        parts
            .into_par_iter()
            .with_max_len(1)
            .for_each(|(start, part)| {
                for (k, x) in part.iter_mut().enumerate() {
                    visit(FileId::new(start + k), x);
                }
            });
    }

    /// `make(f)` for every file `f`, in file order.
    pub fn map<T: Send>(&self, make: impl Fn(FileId) -> T + Sync + Send) -> Vec<T> {
        let n = self.files();
        let mut out = Vec::with_capacity(n);
        self.for_each_mut(&mut out.spare_capacity_mut()[..n], |f, slot| {
            slot.write(make(f));
        });
        // SAFETY: `for_each_mut` visited each of the n slots once and each visit wrote its slot (a panic would
        // have unwound past this point, leaking what was written).
        unsafe { out.set_len(n) };
        out
    }

    /// `make(f, &mut xs[f])` for every file `f`, in file order; `xs` holds one element per file.
    pub fn map_mut<X: Send, T: Send>(
        &self,
        xs: &mut [X],
        make: impl Fn(FileId, &mut X) -> T + Sync + Send,
    ) -> Vec<T> {
        let n = self.files();
        let mut out = Vec::with_capacity(n);
        let mut pairs: Vec<(&mut X, &mut std::mem::MaybeUninit<T>)> = xs
            .iter_mut()
            .zip(&mut out.spare_capacity_mut()[..n])
            .collect();
        self.for_each_mut(&mut pairs, |f, (x, slot)| {
            slot.write(make(f, x));
        });
        drop(pairs);
        // SAFETY: as in `map`: every one of the n slots was written once.
        unsafe { out.set_len(n) };
        out
    }

    /// The items `items(f)` yields for each file `f`, in file order.
    pub fn flat_map<T: Send, I: Iterator<Item = T>>(
        &self,
        items: impl Fn(FileId) -> I + Sync + Send,
    ) -> Vec<T> {
        if self.inline {
            return (0..self.files()).map(FileId::new).flat_map(items).collect();
        }
        self.ranges()
            .flat_map_iter(|r| r.map(FileId::new).flat_map(&items))
            .collect()
    }
}

/// A per-symbol table of `n` entries made by `make`, filled in parallel: its first-touch page faults on one
/// thread were measurable in a large link's definitions phase, and so was clearing it there (a `vec![0; n]` that
/// malloc serves from freed heap memory is cleared by `calloc` on the calling thread).
///
/// A small table is made on the calling thread: handing it to a worker and back would cost more than making it.
pub fn per_symbol<T: Send>(n: usize, make: impl Fn() -> T + Sync + Send) -> Vec<T> {
    if n < SMALL_TABLE {
        return (0..n).map(|_| make()).collect();
    }
    (0..n).into_par_iter().map(|_| make()).collect()
}

/// Entries below which a per-symbol table is made serially (a few microseconds of work).
const SMALL_TABLE: usize = 1 << 15;

/// Whether a pass of `steps` light steps (a table entry, a symbol, a slot) is worth handing to the pool.
///
/// A parallel pass started from the linking thread costs a hand-over to a worker, the workers waking one
/// another, and the linking thread waking at the end, whatever its size. On a 16-core machine, passes of a few
/// thousand steps (rg-release's GOT, PLT and dynamic symbol passes, c-gc's COMDAT and definitions passes) took
/// longer at sixteen threads than at one.
pub fn worth_parallel(steps: usize) -> bool {
    steps >= SMALL_TABLE
}

/// `f(x)` for each element of `xs`, in order; on the calling thread unless `parallel`.
pub fn map<T: Sync, R: Send>(
    xs: &[T],
    parallel: bool,
    f: impl Fn(&T) -> R + Sync + Send,
) -> Vec<R> {
    if parallel {
        xs.par_iter().map(f).collect()
    } else {
        xs.iter().map(f).collect()
    }
}

/// `f(i, x)` for each element `x = xs[i]`, a task each (each is a file or a chunk of a table); on the calling
/// thread unless `parallel`.
pub fn for_each<T: Sync>(xs: &[T], parallel: bool, f: impl Fn(usize, &T) + Sync + Send) {
    if parallel {
        xs.par_iter()
            .enumerate()
            .with_max_len(1)
            .for_each(|(i, x)| f(i, x));
    } else {
        xs.iter().enumerate().for_each(|(i, x)| f(i, x));
    }
}

/// `f(x)` for each of `xs`, consumed; on the calling thread unless `parallel`.
pub fn for_each_owned<T: Send>(xs: Vec<T>, parallel: bool, f: impl Fn(T) + Sync + Send) {
    if parallel {
        xs.into_par_iter().for_each(f);
    } else {
        xs.into_iter().for_each(f);
    }
}

/// The symbol ids `0..n` for which `keep` holds, in order; in parallel unless `n` is small (as `per_symbol`).
///
/// In parallel, each chunk of ids is collected on its own and the chunks are joined: a rayon `filter` over the
/// range, collected, was measurably slower on a large link's GOT/PLT filters.
pub fn filter_ids(n: usize, keep: impl Fn(usize) -> bool + Sync + Send) -> Vec<SymId> {
    if n < SMALL_TABLE {
        return (0..n).filter(|&g| keep(g)).map(SymId::new).collect();
    }
    const CHUNK: usize = 1 << 14;
    let parts: Vec<Vec<SymId>> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            (c * CHUNK..n.min((c + 1) * CHUNK))
                .filter(|&g| keep(g))
                .map(SymId::new)
                .collect()
        })
        .collect();
    parts.concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_cover_every_file_once_in_order() {
        let weights = [0u64, 500, 100, 100, 100, 1000, 0, 0, 300, 100];
        for (runs, inline) in [1, 2, 3, 7, 64]
            .into_iter()
            .flat_map(|r| [(r, false), (r, true)])
        {
            let mut r = FileRuns::with_runs(weights.iter().copied(), runs);
            assert!(!r.inline, "{r:?}");
            r.inline = inline;
            assert_eq!(r.files(), weights.len());
            assert!(r.starts.windows(2).all(|w| w[0] < w[1]), "{:?}", r.starts);
            assert_eq!(r.map(FileId::index), (0..weights.len()).collect::<Vec<_>>());
            let mut xs = vec![0usize; weights.len()];
            r.for_each_mut(&mut xs, |f, x| *x = f.index() * 2);
            assert_eq!(xs, (0..weights.len()).map(|f| f * 2).collect::<Vec<_>>());
            let mut ys: Vec<usize> = (0..weights.len()).collect();
            assert_eq!(r.map_mut(&mut ys, |f, y| f.index() + *y), xs);
            assert_eq!(
                r.flat_map(|f| std::iter::repeat_n(f.index(), f.index() % 3)),
                (0..weights.len())
                    .flat_map(|f| std::iter::repeat_n(f, f % 3))
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn one_heavy_file_or_little_work_runs_inline() {
        assert!(FileRuns::with_runs([10u64, 5000, 20, 3].into_iter(), 8).inline);
        assert!(FileRuns::with_runs([100u64, 200, 300].into_iter(), 8).inline);
        assert!(!FileRuns::with_runs([1000u64, 2000, 300].into_iter(), 8).inline);
    }

    #[test]
    fn heavy_file_is_a_run_of_its_own() {
        let r = FileRuns::with_runs([1u64, 1, 1, 1000, 1, 1].into_iter(), 4);
        assert!(
            r.starts.contains(&3) && r.starts.contains(&4),
            "{:?}",
            r.starts
        );
    }

    #[test]
    fn filter_ids_keeps_order_across_chunks() {
        for n in [0, 100, SMALL_TABLE - 1, SMALL_TABLE, 3 * SMALL_TABLE + 17] {
            let keep = |g: usize| g % 7 == 3 || g.is_multiple_of(16384);
            let serial: Vec<SymId> = (0..n).filter(|&g| keep(g)).map(SymId::new).collect();
            assert_eq!(filter_ids(n, keep), serial, "n = {n}");
        }
    }

    #[test]
    fn no_files() {
        let r = FileRuns::with_runs(std::iter::empty(), 8);
        assert_eq!(r.files(), 0);
        assert!(r.map(FileId::index).is_empty());
    }
}
