//! Data parallelism on the host without a thread pool crate: a slice worked on in
//! chunks on scoped threads, one per core, results in place and in order. For the CPU
//! reference's rays and the per-frame host work (GPU points into a point cloud, a
//! frame's packets, reading the points back) that would otherwise keep one core busy.

use std::mem::MaybeUninit;
use std::sync::Mutex;
use std::thread;

/// The machine's cores, asked once: the question reads the process's CPU affinity and
/// cgroup limits, too slow to ask per frame.
pub(crate) fn threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `f(first, part)` for consecutive parts of `out` that cover it, where `first` is the
/// part's first index in `out`: one part per core, each a multiple of `align` items and
/// at least `min_chunk` long (but the last). When one part holds everything it runs on
/// this thread. A panic in `f` propagates.
pub fn for_chunks_mut<T: Send>(
    out: &mut [T],
    align: usize,
    min_chunk: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    if out.len() <= min_chunk.max(align) {
        f(0, out);
        return;
    }
    let chunk = out
        .len()
        .div_ceil(threads())
        .max(min_chunk)
        .max(1)
        .next_multiple_of(align.max(1));
    if out.len() <= chunk {
        f(0, out);
        return;
    }
    let f = &f;
    thread::scope(|s| {
        for (c, part) in out.chunks_mut(chunk).enumerate() {
            s.spawn(move || f(c * chunk, part));
        }
    });
}

/// `f(i, &items[i])` for every item, in order, in chunks of at least `min_chunk` items
/// ([`for_chunks_mut`]), each result written in place: no growing vector, no second
/// copy. The first error in item order is returned.
pub fn map<T, U, E>(
    items: &[T],
    min_chunk: usize,
    f: impl Fn(usize, &T) -> Result<U, E> + Sync,
) -> Result<Vec<U>, E>
where
    T: Sync,
    U: Send,
    E: Send,
{
    let mut out: Vec<U> = Vec::with_capacity(items.len());
    let first_error: Mutex<Option<(usize, E)>> = Mutex::new(None);
    let slots: &mut [MaybeUninit<U>] = &mut out.spare_capacity_mut()[..items.len()];
    for_chunks_mut(slots, 1, min_chunk, |first, part| {
        for (k, slot) in part.iter_mut().enumerate() {
            let i = first + k;
            match f(i, &items[i]) {
                Ok(u) => {
                    slot.write(u);
                }
                Err(e) => {
                    let mut error = first_error.lock().unwrap_or_else(|p| p.into_inner());
                    if !error.as_ref().is_some_and(|(j, _)| *j < i) {
                        *error = Some((i, e));
                    }
                    return;
                }
            }
        }
    });
    // On an error some slots stay unwritten: the length stays 0 and what was written
    // is leaked, never read.
    if let Some((_, e)) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    // SAFETY: no part stopped at an error, so every one of the first items.len() slots
    // was written.
    unsafe { out.set_len(items.len()) };
    Ok(out)
}

/// `dst.copy_from_slice(src)` in parts of at least 1 MiB ([`for_chunks_mut`]): reading a
/// frame's points out of mapped memory into a fresh vector is bound by its page faults,
/// which spread over cores. Panics when the lengths differ, as `copy_from_slice` does.
pub fn copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(
        dst.len(),
        src.len(),
        "par::copy between slices of different lengths"
    );
    for_chunks_mut(dst, 1, 1 << 20, |first, part| {
        part.copy_from_slice(&src[first..first + part.len()]);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_items_order_and_their_indices() {
        let items: Vec<u64> = (0..100_003).collect();
        let out = map(&items, 1000, |i, &x| Ok::<_, ()>((i as u64, x * 2))).unwrap();
        assert_eq!(out.len(), items.len());
        assert!(out
            .iter()
            .enumerate()
            .all(|(i, &(j, y))| j == i as u64 && y == 2 * i as u64));
    }

    #[test]
    fn the_first_error_in_item_order_wins() {
        let items: Vec<u32> = (0..50_000).collect();
        let r = map(&items, 100, |i, _| {
            if i % 7_000 == 6_999 {
                Err(i)
            } else {
                Ok(())
            }
        });
        assert_eq!(r, Err(6_999));
    }

    #[test]
    fn parts_cover_the_slice_in_aligned_pieces() {
        let mut out = vec![usize::MAX; 10_007];
        for_chunks_mut(&mut out, 7, 100, |first, part| {
            assert_eq!(first % 7, 0, "a part starts on a multiple of the alignment");
            for (k, v) in part.iter_mut().enumerate() {
                *v = first + k;
            }
        });
        assert!(out.iter().enumerate().all(|(i, &v)| v == i));
    }

    #[test]
    fn copies_whole_slices_in_chunks_and_small_ones_at_once() {
        for n in [0usize, 10, (1 << 20) + 7, 5 << 20] {
            let src: Vec<u8> = (0..n).map(|i| (i * 31 % 251) as u8).collect();
            let mut dst = vec![0u8; n];
            copy(&mut dst, &src);
            assert!(dst == src, "{n} bytes");
        }
    }

    #[test]
    fn few_items_and_empty_slices() {
        assert_eq!(
            map(&[1, 2, 3], 1000, |_, &x| Ok::<_, ()>(x + 1)),
            Ok(vec![2, 3, 4])
        );
        assert_eq!(map(&[] as &[u8], 1, |_, &x| Ok::<_, ()>(x)), Ok(vec![]));
    }
}
