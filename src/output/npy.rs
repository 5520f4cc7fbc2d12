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

#[cfg(test)]
mod tests {
    use super::*;

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
