//! Reading glTF accessors straight from the buffers, with bounds checks that turn
//! corrupt files into messages instead of panics (dense and sparse accessors).

use gltf::json;
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::validation::Checked;

const MAX_ELEMENTS: u64 = 1 << 28;

/// At most this many elements in an accessor without a buffer view (zeros, overwritten
/// by its sparse values): its size costs the file nothing, so bound it tighter.
const MAX_ZERO_ELEMENTS: u64 = 1 << 22;

fn component_size(c: ComponentType) -> usize {
    match c {
        ComponentType::I8 | ComponentType::U8 => 1,
        ComponentType::I16 | ComponentType::U16 => 2,
        ComponentType::U32 | ComponentType::F32 => 4,
    }
}

fn type_components(t: Type) -> usize {
    match t {
        Type::Scalar => 1,
        Type::Vec2 => 2,
        Type::Vec3 => 3,
        Type::Vec4 | Type::Mat2 => 4,
        Type::Mat3 => 9,
        Type::Mat4 => 16,
    }
}

/// Bytes of one buffer view, checked against its buffer.
pub(crate) fn view_bytes<'a>(
    root: &json::Root,
    buffers: &'a [Vec<u8>],
    view: json::Index<json::buffer::View>,
) -> Result<(&'a [u8], Option<usize>), String> {
    let v = root
        .buffer_views
        .get(view.value())
        .ok_or_else(|| format!("buffer view {} does not exist", view.value()))?;
    let data = buffers
        .get(v.buffer.value())
        .ok_or_else(|| format!("buffer {} does not exist", v.buffer.value()))?;
    let start = v.byte_offset.map_or(0, |o| o.0 as usize);
    let end = start.saturating_add(v.byte_length.0 as usize);
    let bytes = data.get(start..end).ok_or_else(|| {
        format!(
            "buffer view {} (bytes {start}..{end}) lies outside buffer {} ({} bytes)",
            view.value(),
            v.buffer.value(),
            data.len()
        )
    })?;
    Ok((bytes, v.byte_stride.map(|s| s.0)))
}

/// Reads the raw element bytes of `count` elements of `elem` bytes at `offset`/`stride`.
fn elements(
    bytes: &[u8],
    offset: usize,
    stride: usize,
    count: usize,
    elem: usize,
) -> Result<Vec<&[u8]>, String> {
    (0..count)
        .map(|i| {
            let at = offset + i * stride;
            bytes.get(at..at + elem).ok_or_else(|| {
                format!(
                    "element {i} (byte {at}) lies outside its buffer view ({} bytes)",
                    bytes.len()
                )
            })
        })
        .collect()
}

fn decode(c: ComponentType, raw: &[u8]) -> f64 {
    match c {
        ComponentType::I8 => f64::from(raw[0] as i8),
        ComponentType::U8 => f64::from(raw[0]),
        ComponentType::I16 => f64::from(i16::from_le_bytes([raw[0], raw[1]])),
        ComponentType::U16 => f64::from(u16::from_le_bytes([raw[0], raw[1]])),
        ComponentType::U32 => f64::from(u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]])),
        ComponentType::F32 => f64::from(f32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]])),
    }
}

/// How an accessor's elements are stored.
struct Layout {
    component: ComponentType,
    /// Components per element.
    n: usize,
    /// Bytes per component.
    csize: usize,
    normalised: bool,
}

impl Layout {
    /// Bytes per element.
    fn elem(&self) -> usize {
        self.n * self.csize
    }

    /// Decodes one element's bytes into `out` (n values), normalised integers to
    /// [0, 1] or [−1, 1] as glTF defines them.
    fn decode_row(&self, raw: &[u8], out: &mut [f64]) {
        let csize = self.csize;
        for (c, slot) in out.iter_mut().enumerate() {
            let v = decode(self.component, &raw[c * csize..(c + 1) * csize]);
            *slot = if self.normalised {
                match self.component {
                    ComponentType::U8 => v / 255.0,
                    ComponentType::U16 => v / 65535.0,
                    ComponentType::I8 => (v / 127.0).max(-1.0),
                    ComponentType::I16 => (v / 32767.0).max(-1.0),
                    _ => v,
                }
            } else {
                v
            };
        }
    }
}

/// Reads an accessor as a flat list of `f64` (components of element i at
/// `i*n .. (i+1)*n`, n from `want_type`) after checking its type. `allowed` lists the
/// component types the caller accepts (the glTF spec fixes them per attribute).
pub(crate) fn read(
    root: &json::Root,
    buffers: &[Vec<u8>],
    index: json::Index<json::Accessor>,
    want_type: Type,
    allowed: &[ComponentType],
) -> Result<Vec<f64>, String> {
    let a = root
        .accessors
        .get(index.value())
        .ok_or_else(|| format!("accessor {} does not exist", index.value()))?;
    let layout = checked_layout(a, index, want_type, allowed)?;
    let count = a.count.0 as usize;
    // Larger than any buffer this loader could hold; refuse before allocating.
    if a.count.0 > MAX_ELEMENTS {
        return Err(format!(
            "accessor {}: count {} is implausibly large",
            index.value(),
            a.count.0
        ));
    }
    let mut rows = match a.buffer_view {
        Some(view) => dense_rows(root, buffers, a, index, view, &layout)?,
        None if a.count.0 > MAX_ZERO_ELEMENTS => {
            return Err(format!(
                "accessor {}: count {} without a bufferView is implausibly large (at most \
                 {MAX_ZERO_ELEMENTS})",
                index.value(),
                a.count.0
            ))
        }
        None => vec![0.0; count * layout.n],
    };
    if let Some(sparse) = &a.sparse {
        apply_sparse(root, buffers, sparse, index, &layout, count, &mut rows)?;
    }
    Ok(rows)
}

/// The accessor's layout, if its type is `want_type` and its component type allowed.
fn checked_layout(
    a: &json::Accessor,
    index: json::Index<json::Accessor>,
    want_type: Type,
    allowed: &[ComponentType],
) -> Result<Layout, String> {
    let comp = match a.component_type {
        Checked::Valid(c) => c.0,
        Checked::Invalid => {
            return Err(format!(
                "accessor {}: invalid component type",
                index.value()
            ))
        }
    };
    let ty = match a.type_ {
        Checked::Valid(t) => t,
        Checked::Invalid => return Err(format!("accessor {}: invalid type", index.value())),
    };
    if ty != want_type || !allowed.contains(&comp) {
        return Err(format!(
            "accessor {} is {ty:?} of {comp:?}, expected {want_type:?} of {allowed:?}",
            index.value()
        ));
    }
    Ok(Layout {
        component: comp,
        n: type_components(ty),
        csize: component_size(comp),
        normalised: a.normalized,
    })
}

/// The elements stored in the accessor's buffer view.
fn dense_rows(
    root: &json::Root,
    buffers: &[Vec<u8>],
    a: &json::Accessor,
    index: json::Index<json::Accessor>,
    view: json::Index<json::buffer::View>,
    layout: &Layout,
) -> Result<Vec<f64>, String> {
    let elem = layout.elem();
    let count = a.count.0 as usize;
    let (bytes, stride) = view_bytes(root, buffers, view)?;
    let stride = stride.unwrap_or(elem);
    if stride < elem {
        return Err(format!(
            "accessor {}: byte stride {stride} is smaller than its element ({elem} bytes)",
            index.value()
        ));
    }
    let offset = a.byte_offset.map_or(0, |o| o.0 as usize);
    let raw = elements(bytes, offset, stride, count, elem)
        .map_err(|e| format!("accessor {}: {e}", index.value()))?;
    let mut rows = vec![0.0; count * layout.n];
    for (r, out) in raw.into_iter().zip(rows.chunks_exact_mut(layout.n)) {
        layout.decode_row(r, out);
    }
    Ok(rows)
}

/// Overwrites the elements a sparse accessor names with its values.
fn apply_sparse(
    root: &json::Root,
    buffers: &[Vec<u8>],
    sparse: &json::accessor::sparse::Sparse,
    index: json::Index<json::Accessor>,
    layout: &Layout,
    count: usize,
    rows: &mut [f64],
) -> Result<(), String> {
    let (n, elem) = (layout.n, layout.elem());
    let k = sparse.count.0 as usize;
    let icomp = match sparse.indices.component_type {
        Checked::Valid(c) => c.0,
        Checked::Invalid => {
            return Err(format!(
                "accessor {}: invalid sparse index type",
                index.value()
            ))
        }
    };
    let (ibytes, _) = view_bytes(root, buffers, sparse.indices.buffer_view)?;
    let isize = component_size(icomp);
    let at = sparse.indices.byte_offset.0 as usize;
    let targets = elements(ibytes, at, isize, k, isize)
        .map_err(|e| format!("accessor {} sparse indices: {e}", index.value()))?;
    let (vbytes, _) = view_bytes(root, buffers, sparse.values.buffer_view)?;
    let at = sparse.values.byte_offset.0 as usize;
    let values = elements(vbytes, at, elem, k, elem)
        .map_err(|e| format!("accessor {} sparse values: {e}", index.value()))?;
    for (t, v) in targets.into_iter().zip(values) {
        let t = decode(icomp, t) as usize;
        let row = rows.get_mut(t * n..(t + 1) * n).ok_or_else(|| {
            format!(
                "accessor {}: sparse index {t} is beyond its {count} elements",
                index.value()
            )
        })?;
        layout.decode_row(v, row);
    }
    Ok(())
}
