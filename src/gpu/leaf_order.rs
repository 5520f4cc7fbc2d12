//! The order in which an acceleration-structure build is handed its leaves (a BLAS's
//! triangles, a TLAS's instances).
//!
//! Some drivers build the hierarchy from that order alone: lavapipe (Mesa 25.0) splits
//! every node at its middle leaf, in the order given, and bounds the halves. A mesh
//! whose triangles come in authoring order then gets nodes whose boxes overlap across
//! the mesh, and every ray pays for it (a street scene with its triangles shuffled traces
//! 5–7× slower there). [`leaf_order`] orders the leaves so that those middle splits are
//! good ones. Middle splits stay short of a surface-area-heuristic tree, whose splits
//! need not be even: counted on the CPU, a VLP-16's ray in the street visits 33 nodes of
//! these trees against 26 of such a tree. A driver that sorts the leaves itself (every
//! GPU driver measured) is not affected by the order, and the ordering costs host time
//! (7 s per million leaves on one core of an AMD EPYC, 3.3 s when only centres were
//! sorted), so callers order only for a CPU device.

/// An axis-aligned box: `[min, max]`.
pub type Aabb = [[f32; 3]; 2];

/// A permutation of `0..bounds.len()`: the order to hand the leaves to a builder that
/// splits each node at its middle leaf (the first half takes the extra leaf of an odd
/// count). Top down, each node takes, of its leaves in the given order and sorted by box
/// centre, lower corner and upper corner along x, y and z, the order whose halves have
/// the least summed surface area (the corners part long boxes from the short ones their
/// centres interleave with, as a facade's wall strips and its windows); the result is
/// kept only if its tree (summed node areas, the surface-area cost of a ray in it) costs
/// less than the given order's, so a good order is never made worse.
pub fn leaf_order(bounds: &[Aabb]) -> Vec<u32> {
    let given: Vec<u32> = (0..bounds.len() as u32).collect();
    let sorted = |key: usize| {
        let mut v = given.clone();
        let (axis, corner) = (key % 3, key / 3);
        let at = |i: &u32| {
            let b = &bounds[*i as usize];
            match corner {
                0 => b[0][axis] + b[1][axis],
                1 => b[0][axis],
                _ => b[1][axis],
            }
        };
        v.sort_by(|a, b| at(a).total_cmp(&at(b)));
        v
    };
    let mut lists: [Vec<u32>; LISTS] = std::array::from_fn(|k| match k {
        k if k < LISTS - 1 => sorted(k),
        _ => given.clone(),
    });
    let mut node = Node {
        bounds,
        left: vec![false; bounds.len()],
        scratch: Vec::with_capacity(bounds.len()),
    };
    let n = bounds.len();
    node.order(&mut lists, 0..n);
    let [ordered, ..] = lists;
    if tree_cost(bounds, &ordered) < tree_cost(bounds, &given) {
        ordered
    } else {
        given
    }
}

/// Orders a node may split by: boxes sorted by centre, by lower and by upper corner along
/// each axis, and the given order.
const LISTS: usize = 10;

/// The state of [`leaf_order`]'s descent.
struct Node<'a> {
    bounds: &'a [Aabb],
    /// Per leaf: whether it goes to the first half of the node being split.
    left: Vec<bool>,
    scratch: Vec<u32>,
}

impl Node<'_> {
    /// Splits the leaves in `range` of every list (each holds the node's leaves, in its
    /// own order) by the best list's middle, keeping every list's order within each
    /// half. Every list then holds the same leaves in each half, at every depth, so any
    /// of them is the result.
    fn order(&mut self, lists: &mut [Vec<u32>; LISTS], range: std::ops::Range<usize>) {
        let n = range.len();
        if n <= 2 {
            return;
        }
        let half = n.div_ceil(2);
        let mid = range.start + half;
        let halves_area = |list: &[u32]| {
            surface_area(&union(self.bounds, &list[range.start..mid]))
                + surface_area(&union(self.bounds, &list[mid..range.end]))
        };
        let areas = lists.each_ref().map(|l| halves_area(l));
        let best = (0..LISTS).fold(0, |b, k| if areas[k] < areas[b] { k } else { b });
        for (k, &leaf) in lists[best][range.clone()].iter().enumerate() {
            self.left[leaf as usize] = k < half;
        }
        for list in lists.iter_mut() {
            self.partition(&mut list[range.clone()]);
        }
        self.order(lists, range.start..mid);
        self.order(lists, mid..range.end);
    }

    /// Puts the first half's leaves of `part` before the others, each in its order.
    fn partition(&mut self, part: &mut [u32]) {
        self.scratch.clear();
        self.scratch
            .extend(part.iter().filter(|&&i| self.left[i as usize]));
        self.scratch
            .extend(part.iter().filter(|&&i| !self.left[i as usize]));
        part.copy_from_slice(&self.scratch);
    }
}

/// The surface-area cost of the middle-split tree over `leaves` in this order: the
/// summed surface area of its inner nodes (each is opened by the rays that meet its
/// box), in units of the root's.
pub fn tree_cost(bounds: &[Aabb], leaves: &[u32]) -> f64 {
    if leaves.len() < 2 {
        return 0.0;
    }
    let (root, sum) = node_cost(bounds, leaves);
    sum / f64::from(surface_area(&root)).max(f64::MIN_POSITIVE)
}

/// The box of the subtree over `leaves` and the summed area of its inner nodes.
fn node_cost(bounds: &[Aabb], leaves: &[u32]) -> (Aabb, f64) {
    if leaves.len() == 1 {
        return (bounds[leaves[0] as usize], 0.0);
    }
    let (first, second) = leaves.split_at(leaves.len().div_ceil(2));
    let (a, ca) = node_cost(bounds, first);
    let (b, cb) = node_cost(bounds, second);
    let both = join(&a, &b);
    (both, f64::from(surface_area(&both)) + ca + cb)
}

fn union(bounds: &[Aabb], leaves: &[u32]) -> Aabb {
    let empty = [[f32::INFINITY; 3], [f32::NEG_INFINITY; 3]];
    leaves
        .iter()
        .fold(empty, |acc, &i| join(&acc, &bounds[i as usize]))
}

fn join(a: &Aabb, b: &Aabb) -> Aabb {
    let mut j = *a;
    for k in 0..3 {
        j[0][k] = a[0][k].min(b[0][k]);
        j[1][k] = a[1][k].max(b[1][k]);
    }
    j
}

fn surface_area(b: &Aabb) -> f32 {
    let e = |k: usize| (b[1][k] - b[0][k]).max(0.0);
    2.0 * (e(0) * e(1) + e(1) * e(2) + e(2) * e(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_box(x: f32, y: f32) -> Aabb {
        [[x, y, 0.0], [x + 1.0, y + 1.0, 1.0]]
    }

    /// A deterministic shuffle (no RNG crate): multiplying by a unit mod n permutes.
    fn shuffled(n: u32) -> Vec<u32> {
        (0..n).map(|i| (i * 7919) % n).collect()
    }

    fn is_permutation(order: &[u32], n: usize) -> bool {
        let mut seen = vec![false; n];
        order.len() == n
            && order
                .iter()
                .all(|&i| !std::mem::replace(&mut seen[i as usize], true))
    }

    #[test]
    fn small_inputs_keep_their_order() {
        assert!(leaf_order(&[]).is_empty());
        assert_eq!(leaf_order(&[unit_box(0.0, 0.0)]), vec![0]);
        assert_eq!(
            leaf_order(&[unit_box(5.0, 0.0), unit_box(0.0, 0.0)]),
            vec![0, 1]
        );
    }

    #[test]
    fn a_shuffled_row_comes_back_in_spatial_order() {
        // Boxes along x, handed over shuffled: the best middle-split tree is the one over
        // the boxes in x order, whose cost is known in closed form.
        let n = 64;
        let bounds: Vec<Aabb> = shuffled(n)
            .iter()
            .map(|&i| unit_box(i as f32, 0.0))
            .collect();
        let order = leaf_order(&bounds);
        assert!(is_permutation(&order, n as usize));
        // Sorted row of 64 unit cubes, middle splits: at depth d, 2^d nodes each
        // 64/2^d long; a box k long has area 2 (2k + 1).
        let expected: f64 = (0..6)
            .map(|d| (1u32 << d) as f64 * 2.0 * (2.0 * (64 >> d) as f64 + 1.0))
            .sum();
        let cost = tree_cost(&bounds, &order) * f64::from(surface_area(&union(&bounds, &order)));
        assert!(
            (cost - expected).abs() < 1e-3 * expected,
            "{cost} vs {expected}"
        );
        let given: Vec<u32> = (0..n).collect();
        assert!(tree_cost(&bounds, &order) < 0.5 * tree_cost(&bounds, &given));
    }

    #[test]
    fn a_shuffled_grid_gets_the_tree_of_its_rows() {
        // 32 x 8 boxes, rows 4 apart: in row order every middle split is a clean cut (a
        // block of rows, then half a row), which is the tree to match.
        let grid = |i: u32| unit_box((i % 32) as f32, (i / 32) as f32 * 4.0);
        let rows: Vec<Aabb> = (0..256).map(grid).collect();
        let in_rows: Vec<u32> = (0..256).collect();
        let bounds: Vec<Aabb> = shuffled(256).into_iter().map(grid).collect();
        let order = leaf_order(&bounds);
        assert!(is_permutation(&order, 256));
        let cost = tree_cost(&bounds, &order);
        assert!(cost <= 1.0001 * tree_cost(&rows, &in_rows), "{cost}");
        assert!(cost < 0.5 * tree_cost(&bounds, &in_rows));
    }

    #[test]
    fn a_good_order_is_never_made_worse() {
        let bounds: Vec<Aabb> = (0..100).map(|i| unit_box(i as f32, 0.0)).collect();
        let given: Vec<u32> = (0..100).collect();
        assert_eq!(leaf_order(&bounds), given);
    }

    #[test]
    fn long_boxes_are_split_from_short_ones_their_centres_interleave() {
        // Eight unit boxes in a row, and eight boxes 40 long centred between them (a
        // facade's wall strips among its windows), handed over alternating: by centre
        // they interleave, so both halves span the long boxes; by a corner the long ones
        // come first or last, and the middle split parts them from the short ones.
        let bounds: Vec<Aabb> = (0..16)
            .map(|k| {
                let i = (k / 2) as f32;
                match k % 2 {
                    0 => unit_box(i, 0.0),
                    _ => [[i - 19.5, 0.0, 0.0], [i + 20.5, 1.0, 1.0]],
                }
            })
            .collect();
        let long = |i: &u32| i % 2 == 1;
        let mut by_centre: Vec<u32> = (0..16).collect();
        let centre = |i: &u32| bounds[*i as usize][0][0] + bounds[*i as usize][1][0];
        by_centre.sort_by(|a, b| centre(a).total_cmp(&centre(b)));
        let order = leaf_order(&bounds);
        let (first, second) = order.split_at(8);
        let parted = |a: &[u32], b: &[u32]| a.iter().all(long) && !b.iter().any(long);
        assert!(parted(first, second) || parted(second, first), "{order:?}");
        assert!(tree_cost(&bounds, &order) < tree_cost(&bounds, &by_centre));
    }
}
