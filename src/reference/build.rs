//! Binned SAH construction of the bounding volume hierarchy.
//!
//! Iterative (an explicit work stack, so deep trees cannot overflow the thread's stack)
//! and deterministic: the same triangles in the same order give the same tree.

use glam::Vec3;

/// Bins per axis for the surface area heuristic.
const BINS: usize = 16;
/// Largest number of triangles in a leaf.
pub(crate) const MAX_LEAF: usize = 4;
/// Cost of visiting a node relative to one triangle test.
const TRAVERSAL_COST: f32 = 1.0;

/// A tree node: a leaf when `count > 0` (triangles `first .. first + count`), otherwise
/// an interior node whose children are `first` and `first + 1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Node {
    pub min: Vec3,
    pub first: u32,
    pub max: Vec3,
    pub count: u32,
}

#[derive(Debug, Clone, Copy)]
struct Aabb {
    min: Vec3,
    max: Vec3,
}

impl Aabb {
    const EMPTY: Self = Self {
        min: Vec3::INFINITY,
        max: Vec3::NEG_INFINITY,
    };

    fn grow(&mut self, min: Vec3, max: Vec3) {
        self.min = self.min.min(min);
        self.max = self.max.max(max);
    }

    fn half_area(&self) -> f32 {
        let e = (self.max - self.min).max(Vec3::ZERO);
        e.x * e.y + e.y * e.z + e.z * e.x
    }
}

/// The tree over `boxes` (one per triangle, `centroids` their centres), and the order in
/// which the leaves reference the triangles.
pub(crate) fn build(boxes: &[(Vec3, Vec3)], centroids: &[Vec3]) -> (Vec<Node>, Vec<u32>) {
    let n = boxes.len();
    let mut order: Vec<u32> = (0..n as u32).collect();
    if n == 0 {
        return (Vec::new(), order);
    }
    let mut nodes = Vec::with_capacity(n);
    nodes.push(Node {
        min: Vec3::ZERO,
        first: 0,
        max: Vec3::ZERO,
        count: 0,
    });
    let mut work = vec![(0usize, 0usize, n)];
    while let Some((node, start, end)) = work.pop() {
        let range = &mut order[start..end];
        let mut bounds = Aabb::EMPTY;
        let mut cbounds = Aabb::EMPTY;
        for &i in range.iter() {
            let (lo, hi) = boxes[i as usize];
            bounds.grow(lo, hi);
            let c = centroids[i as usize];
            cbounds.grow(c, c);
        }
        nodes[node].min = bounds.min;
        nodes[node].max = bounds.max;
        let count = end - start;

        let split = if count > 1 {
            best_split(range, boxes, centroids, &cbounds)
        } else {
            None
        };
        let leaf_cost = bounds.half_area() * count as f32;
        let mid = match split {
            Some(s)
                if count > MAX_LEAF || TRAVERSAL_COST * bounds.half_area() + s.cost < leaf_cost =>
            {
                let m = start + partition(range, centroids, &cbounds, s.axis, s.plane);
                if m == start || m == end {
                    // Cannot happen when the bins were counted with the same arithmetic;
                    // kept so a surprise costs a worse tree, not a broken one.
                    start + count / 2
                } else {
                    m
                }
            }
            // All centroids coincide: no plane separates them, so halve the list.
            None if count > MAX_LEAF => start + count / 2,
            _ => {
                nodes[node].first = start as u32;
                nodes[node].count = count as u32;
                continue;
            }
        };
        let left = nodes.len();
        let blank = nodes[node];
        nodes.push(blank);
        nodes.push(blank);
        nodes[node].first = left as u32;
        nodes[node].count = 0;
        work.push((left + 1, mid, end));
        work.push((left, start, mid));
    }
    (nodes, order)
}

#[derive(Debug, Clone, Copy)]
struct Split {
    axis: usize,
    /// Bins `0 .. plane` go left.
    plane: usize,
    /// Σ half-area × count over both sides.
    cost: f32,
}

#[inline]
fn bin_of(c: f32, lo: f32, scale: f32) -> usize {
    // `as` saturates (NaN and negatives give 0), the clamp catches the top edge.
    (((c - lo) * scale) as usize).min(BINS - 1)
}

fn best_split(
    range: &[u32],
    boxes: &[(Vec3, Vec3)],
    centroids: &[Vec3],
    cbounds: &Aabb,
) -> Option<Split> {
    let mut best: Option<Split> = None;
    let extent = cbounds.max - cbounds.min;
    for axis in 0..3 {
        if extent[axis] <= 0.0 {
            continue;
        }
        let scale = BINS as f32 / extent[axis];
        let lo = cbounds.min[axis];
        let mut bins = [(Aabb::EMPTY, 0usize); BINS];
        for &i in range {
            let b = bin_of(centroids[i as usize][axis], lo, scale);
            let (bmin, bmax) = boxes[i as usize];
            bins[b].0.grow(bmin, bmax);
            bins[b].1 += 1;
        }
        // Right-to-left sweep first, then evaluate each plane on the way left-to-right.
        let mut right_cost = [0.0f32; BINS];
        let mut right_count = [0usize; BINS];
        let mut acc = Aabb::EMPTY;
        let mut cnt = 0;
        for b in (1..BINS).rev() {
            acc.grow(bins[b].0.min, bins[b].0.max);
            cnt += bins[b].1;
            right_count[b] = cnt;
            right_cost[b] = if cnt > 0 {
                acc.half_area() * cnt as f32
            } else {
                0.0
            };
        }
        let mut acc = Aabb::EMPTY;
        let mut cnt = 0;
        for plane in 1..BINS {
            acc.grow(bins[plane - 1].0.min, bins[plane - 1].0.max);
            cnt += bins[plane - 1].1;
            if cnt == 0 || right_count[plane] == 0 {
                continue;
            }
            let cost = acc.half_area() * cnt as f32 + right_cost[plane];
            if best.map_or(true, |b| cost < b.cost) {
                best = Some(Split { axis, plane, cost });
            }
        }
    }
    best
}

/// Moves the triangles left of the plane to the front; returns how many there are.
fn partition(
    range: &mut [u32],
    centroids: &[Vec3],
    cbounds: &Aabb,
    axis: usize,
    plane: usize,
) -> usize {
    let lo = cbounds.min[axis];
    let scale = BINS as f32 / (cbounds.max[axis] - lo);
    let mut i = 0;
    let mut j = range.len();
    while i < j {
        if bin_of(centroids[range[i] as usize][axis], lo, scale) < plane {
            i += 1;
        } else {
            j -= 1;
            range.swap(i, j);
        }
    }
    i
}
