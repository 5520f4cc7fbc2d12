//! Data parallelism on the host without a thread pool crate: a slice mapped in chunks on
//! scoped threads, results in order. For the per-frame host work (GPU points into a
//! point cloud, a frame's packets) that would otherwise keep one core busy while the GPU
//! waits for it.

use std::thread;

/// The threads a map may use: the machine's, at most 16.
fn threads() -> usize {
    thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(16)
}

/// `f(i, &items[i])` for every item, in order, on a scoped thread per core (at most 16) in
/// chunks of at least `min_chunk` items (fewer items: on this thread). The first error in
/// item order is returned; a panic in `f` propagates.
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
    let chunk = items.len().div_ceil(threads()).max(min_chunk.max(1));
    if items.len() <= chunk {
        return items.iter().enumerate().map(|(i, t)| f(i, t)).collect();
    }
    // Each thread writes its chunk of the output in place: no second copy of a frame's
    // points. The length is set only once every slot is written.
    let mut out: Vec<U> = Vec::with_capacity(items.len());
    let f = &f;
    let results: Vec<Result<(), E>> = thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .zip(out.spare_capacity_mut().chunks_mut(chunk))
            .enumerate()
            .map(|(c, (part, slots))| {
                s.spawn(move || {
                    for (i, (t, slot)) in part.iter().zip(slots.iter_mut()).enumerate() {
                        slot.write(f(c * chunk + i, t)?);
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    // On an error some slots stay unwritten: the length stays 0 and what was written
    // is leaked, never read.
    results.into_iter().collect::<Result<(), E>>()?;
    // SAFETY: every chunk returned Ok, so each of the first items.len() slots (the
    // chunks of the spare capacity pair up with the items' chunks) was written.
    unsafe { out.set_len(items.len()) };
    Ok(out)
}

/// `dst.copy_from_slice(src)` in chunks of at least 1 MiB on up to a scoped thread per
/// core: reading a frame's points out of mapped memory into a fresh vector is bound by
/// its page faults, which spread over cores. Panics when the lengths differ, as
/// `copy_from_slice` does.
pub fn copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(
        dst.len(),
        src.len(),
        "par::copy between slices of different lengths"
    );
    let chunk = src.len().div_ceil(threads()).max(1 << 20);
    if src.len() <= chunk {
        dst.copy_from_slice(src);
        return;
    }
    thread::scope(|s| {
        for (d, from) in dst.chunks_mut(chunk).zip(src.chunks(chunk)) {
            s.spawn(move || d.copy_from_slice(from));
        }
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
