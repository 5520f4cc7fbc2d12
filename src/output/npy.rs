//! NumPy's `.npy` format (version 1.0) for a 2-D array of little-endian `f32`: what
//! `numpy.load` reads without beamtrace.
//!
//! Layout (NumPy's "format" documentation, `numpy.lib.format`): the magic `\x93NUMPY`,
//! the version bytes 1 0, a little-endian u16 header length, then an ASCII Python dict
//! literal giving dtype, order and shape, padded with spaces and ended by a newline so
//! that the data begins on a multiple of 64 bytes; then the data, C order.

use std::io::{self, Write};

/// Writes `rows` (each `columns` long) as a `rows.len() × columns` array of `<f4`.
pub fn write_npy_f32<W: Write + ?Sized>(w: &mut W, columns: usize, rows: &[f32]) -> io::Result<()> {
    if columns == 0 || !rows.len().is_multiple_of(columns) {
        return Err(io::Error::other(format!(
            "{} values do not make rows of {columns}",
            rows.len()
        )));
    }
    let shape = format!("({}, {columns})", rows.len() / columns);
    let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    // magic (6) + version (2) + length (2) + dict + padding + '\n' ≡ 0 (mod 64).
    let unpadded = 10 + dict.len() + 1;
    let header_len = dict.len() + 1 + (64 - unpadded % 64) % 64;
    let header_u16 = u16::try_from(header_len)
        .map_err(|_| io::Error::other("an .npy v1.0 header holds at most 65535 bytes"))?;
    w.write_all(b"\x93NUMPY\x01\x00")?;
    w.write_all(&header_u16.to_le_bytes())?;
    w.write_all(dict.as_bytes())?;
    w.write_all(&vec![b' '; header_len - dict.len() - 1])?;
    w.write_all(b"\n")?;
    for v in rows {
        w.write_all(&v.to_le_bytes())?;
    }
    Ok(())
}

/// The shape (rows, columns) of a 2-D `<f4` array in C order, from its `.npy` bytes,
/// after checking that the header is NumPy's (magic, version 1.0, a dict that ends in
/// a newline) and that exactly `rows × columns × 4` bytes of data follow it. The error
/// says which part is wrong.
pub fn npy_f32_shape(bytes: &[u8]) -> Result<(usize, usize), String> {
    if bytes.len() < 10 || &bytes[..8] != b"\x93NUMPY\x01\x00" {
        return Err("no NumPy .npy v1.0 magic at its start".into());
    }
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let dict = (bytes.get(10..10 + header_len))
        .and_then(|d| std::str::from_utf8(d).ok())
        .filter(|d| d.ends_with('\n'))
        .ok_or("its header runs past the file or is not ASCII ended by a newline")?;
    if !dict.contains("'descr': '<f4'") || !dict.contains("'fortran_order': False") {
        return Err(format!(
            "its header is not a C-order float32 array: {}",
            dict.trim()
        ));
    }
    let shape = (dict
        .split_once("'shape': (")
        .and_then(|(_, s)| s.split_once(')')))
    .map(|(s, _)| s)
    .ok_or("its header has no shape")?;
    let dims: Vec<usize> = (shape.split(',').map(str::trim).filter(|d| !d.is_empty()))
        .map(|d| {
            d.parse()
                .map_err(|_| format!("its shape ({shape}) is not of counts"))
        })
        .collect::<Result<_, _>>()?;
    let &[rows, columns] = dims.as_slice() else {
        return Err(format!("its shape ({shape}) is not 2-D"));
    };
    let data = (rows.checked_mul(columns)).and_then(|n| n.checked_mul(4));
    if data != Some(bytes.len() - 10 - header_len) {
        return Err(format!(
            "its shape ({rows}, {columns}) needs {} bytes of data but {} follow the header",
            data.map_or("more than 2⁶⁴".into(), |d| d.to_string()),
            bytes.len() - 10 - header_len
        ));
    }
    Ok((rows, columns))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `.npy` file by NumPy's format documentation: magic, version, header length,
    /// the dict and its newline, then `data` bytes.
    fn npy(shape: &str, data: usize) -> Vec<u8> {
        let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}\n");
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((dict.len() as u16).to_le_bytes());
        out.extend(dict.as_bytes());
        out.resize(out.len() + data, 0);
        out
    }

    #[test]
    fn a_shape_is_read_back_and_a_file_that_lies_about_it_is_refused() {
        let mut out = Vec::new();
        write_npy_f32(&mut out, 4, &[0.5; 12]).unwrap();
        assert_eq!(npy_f32_shape(&out), Ok((3, 4)));
        assert_eq!(npy_f32_shape(&npy("(3, 4)", 48)), Ok((3, 4)));
        assert_eq!(npy_f32_shape(&npy("(0, 4)", 0)), Ok((0, 4)));
        let cut = npy_f32_shape(&out[..out.len() - 1]).unwrap_err();
        assert!(cut.contains("needs 48 bytes of data but 47"), "{cut}");
        assert!(npy_f32_shape(&npy("(3, 4, 1)", 48))
            .unwrap_err()
            .contains("not 2-D"));
        assert!(npy_f32_shape(&npy("(3,)", 12))
            .unwrap_err()
            .contains("not 2-D"));
        assert!(npy_f32_shape(&npy("(2**64, 4)", 0)).is_err());
        let wrapping = npy(&format!("({}, 8)", usize::MAX / 4), 64);
        assert!(npy_f32_shape(&wrapping).unwrap_err().contains("2⁶⁴"));
        let mut long = npy("(3, 4)", 48);
        long[8] = 0xff;
        assert!(npy_f32_shape(&long).unwrap_err().contains("runs past"));
        assert!(npy_f32_shape(b"PK\x03\x04").unwrap_err().contains("magic"));
    }

    #[test]
    fn the_data_starts_on_a_64_byte_boundary_after_numpys_magic() {
        for rows in [0usize, 1, 7, 123_456] {
            let mut out = Vec::new();
            write_npy_f32(&mut out, 4, &vec![1.5; rows * 4]).unwrap();
            assert_eq!(&out[..8], b"\x93NUMPY\x01\x00");
            let header = u16::from_le_bytes([out[8], out[9]]) as usize;
            assert_eq!((10 + header) % 64, 0);
            assert_eq!(out[10 + header - 1], b'\n');
            assert_eq!(out.len(), 10 + header + rows * 16);
            let dict = std::str::from_utf8(&out[10..10 + header]).unwrap();
            assert!(dict.contains(&format!("'shape': ({rows}, 4)")), "{dict}");
        }
        assert!(write_npy_f32(&mut Vec::new(), 4, &[1.0; 5]).is_err());
    }
}
