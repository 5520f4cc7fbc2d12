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

/// A triangle as the builder sees it: its box, the box's centre (what the bins sort by)
/// and its place in the input. Kept together so partitioning moves one small record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BuildPrim {
    pub min: Vec3,
    pub max: Vec3,
    pub centroid: Vec3,
    pub index: u32,
}

/// The tree over `prims`, and the order in which the leaves reference them (indices
/// into the input).
pub(crate) fn build(mut prims: Vec<BuildPrim>) -> (Vec<Node>, Vec<u32>) {
    let n = prims.len();
    if n == 0 {
        return (Vec::new(), Vec::new());
    }
    let mut nodes = Vec::with_capacity(n);
    nodes.push(Node {
        min: Vec3::ZERO,
        first: 0,
        max: Vec3::ZERO,
        count: 0,
    });
    let (bounds, cbounds) = bounds_of(&prims);
    // Each work item carries its bounds, gathered while its parent was partitioned.
    let mut work = vec![(0usize, 0usize, n, bounds, cbounds)];
    while let Some((node, start, end, bounds, cbounds)) = work.pop() {
        let range = &mut prims[start..end];
        nodes[node].min = bounds.min;
        nodes[node].max = bounds.max;
        let count = end - start;

        let split = if count > 1 {
            best_split(range, &cbounds)
        } else {
            None
        };
        let leaf_cost = bounds.half_area() * count as f32;
        let halves = match split {
            Some(s)
                if count > MAX_LEAF || TRAVERSAL_COST * bounds.half_area() + s.cost < leaf_cost =>
            {
                let m = partition(range, &cbounds, s.axis, s.plane);
                if m == 0 || m == count {
                    // Cannot happen when the bins were counted with the same arithmetic;
                    // kept so a surprise costs a worse tree, not a broken one.
                    count / 2
                } else {
                    m
                }
            }
            // All centroids coincide: no plane separates them, so halve the list.
            None if count > MAX_LEAF => count / 2,
            _ => {
                nodes[node].first = start as u32;
                nodes[node].count = count as u32;
                continue;
            }
        };
        let (lb, lc) = bounds_of(&range[..halves]);
        let (rb, rc) = bounds_of(&range[halves..]);
        let left = nodes.len();
        let blank = nodes[node];
        nodes.push(blank);
        nodes.push(blank);
        nodes[node].first = left as u32;
        nodes[node].count = 0;
        let mid = start + halves;
        work.push((left + 1, mid, end, rb, rc));
        work.push((left, start, mid, lb, lc));
    }
    let order = prims.iter().map(|p| p.index).collect();
    (nodes, order)
}

/// Bounds of the boxes and of their centres.
fn bounds_of(prims: &[BuildPrim]) -> (Aabb, Aabb) {
    let mut bounds = Aabb::EMPTY;
    let mut cbounds = Aabb::EMPTY;
    for p in prims {
        bounds.grow(p.min, p.max);
        cbounds.grow(p.centroid, p.centroid);
    }
    (bounds, cbounds)
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

fn best_split(range: &[BuildPrim], cbounds: &Aabb) -> Option<Split> {
    let extent = cbounds.max - cbounds.min;
    let lo = cbounds.min.to_array();
    let axes: Vec<usize> = (0..3).filter(|&a| extent[a] > 0.0).collect();
    if axes.is_empty() {
        return None;
    }
    let scale = (Vec3::splat(BINS as f32) / extent).to_array();
    // One pass over the triangles fills the bins of every axis.
    let mut bins = [[(Aabb::EMPTY, 0usize); BINS]; 3];
    for p in range {
        let c = p.centroid.to_array();
        for &a in &axes {
            let b = bin_of(c[a], lo[a], scale[a]);
            bins[a][b].0.grow(p.min, p.max);
            bins[a][b].1 += 1;
        }
    }
    let mut best: Option<Split> = None;
    for &axis in &axes {
        let bins = &bins[axis];
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
            if best.is_none_or(|b| cost < b.cost) {
                best = Some(Split { axis, plane, cost });
            }
        }
    }
    best
}

/// Moves the triangles left of the plane to the front; returns how many there are.
fn partition(range: &mut [BuildPrim], cbounds: &Aabb, axis: usize, plane: usize) -> usize {
    let lo = cbounds.min.to_array()[axis];
    let extent = cbounds.max - cbounds.min;
    let scale = (Vec3::splat(BINS as f32) / extent).to_array()[axis];
    let mut i = 0;
    let mut j = range.len();
    while i < j {
        if bin_of(range[i].centroid.to_array()[axis], lo, scale) < plane {
            i += 1;
        } else {
            j -= 1;
            range.swap(i, j);
        }
    }
    i
}
