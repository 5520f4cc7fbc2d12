//! Alpha textures of alpha-masked materials: PNG decoding (alpha channel only), bounded
//! by what the header declares before a pixel is decoded, PNG encoding for the
//! generator, and the one nearest-texel lookup that the CPU reference and the GPU
//! any-hit shader both implement.
//!
//! # Texel lookup (shared contract with the GPU)
//!
//! glTF UVs put (0, 0) at the top-left corner of the image, u to the right, v down;
//! `alpha` is stored row-major with the top row first, so no flip is needed:
//!
//! ```text
//! fx = floor(u * float(width))     // f32 product, rounded as IEEE single
//! fy = floor(v * float(height))
//! fx, fy clamped to [-2^24, 2^24] and converted to int (a NaN coordinate gives 0)
//! x  = wrap(fx, width,  wrap_s)
//! y  = wrap(fy, height, wrap_t)
//! alpha = texels[y * width + x] / 255.0
//!
//! wrap(i, n, REPEAT 10497)          = i mod n                  (Euclidean, in [0, n))
//! wrap(i, n, CLAMP_TO_EDGE 33071)   = clamp(i, 0, n - 1)
//! wrap(i, n, MIRRORED_REPEAT 33648) = m < n ? m : 2n - 1 - m,  m = i mod 2n (Euclidean)
//! ```
//!
//! This is OpenGL's nearest filtering for all three wrap modes. Samplers' filters are
//! ignored (always nearest: a mask is a yes/no per texel, and linear filtering would
//! make the mask depend on the texture resolution), and so is `KHR_texture_transform`.

use glam::Vec2;

/// glTF sampler wrap mode `CLAMP_TO_EDGE`.
pub const WRAP_CLAMP_TO_EDGE: u32 = 33071;
/// glTF sampler wrap mode `MIRRORED_REPEAT`.
pub const WRAP_MIRRORED_REPEAT: u32 = 33648;
/// glTF sampler wrap mode `REPEAT` (the default when a texture has no sampler).
pub const WRAP_REPEAT: u32 = 10497;

/// Bound on |floor(u·width)| before the integer conversion, so that absurd UVs stay
/// well defined on the GPU (f32 → int of a value beyond i32 is undefined there).
const COORD_LIMIT: f32 = 16_777_216.0;

/// The alpha channel of a base colour texture used by an alpha-masked material.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlphaTexture {
    pub width: u32,
    pub height: u32,
    /// Raw texture alpha (0–255), row-major, top row first; `width * height` entries.
    /// The material's `baseColorFactor` alpha is applied separately.
    pub alpha: Vec<u8>,
    /// glTF wrap enums: 33071 clamp, 33648 mirrored repeat, 10497 repeat.
    pub wrap_s: u32,
    pub wrap_t: u32,
}

fn texel_coordinate(t: f32, size: u32, wrap: u32) -> u32 {
    let f = (t * size as f32).floor();
    let i = if f.is_nan() {
        0
    } else {
        f.clamp(-COORD_LIMIT, COORD_LIMIT) as i64
    };
    let n = i64::from(size.max(1));
    let w = match wrap {
        WRAP_CLAMP_TO_EDGE => i.clamp(0, n - 1),
        WRAP_MIRRORED_REPEAT => {
            let m = i.rem_euclid(2 * n);
            if m < n {
                m
            } else {
                2 * n - 1 - m
            }
        }
        // REPEAT, and glTF's default for anything else.
        _ => i.rem_euclid(n),
    };
    w as u32
}

/// Texture alpha in [0, 1] at `uv` by nearest texel (see the module docs for the exact
/// formula). An empty texture reads as opaque.
pub fn sample_alpha(tex: &AlphaTexture, uv: Vec2) -> f32 {
    if tex.width == 0 || tex.height == 0 {
        return 1.0;
    }
    let x = texel_coordinate(uv.x, tex.width, tex.wrap_s) as usize;
    let y = texel_coordinate(uv.y, tex.height, tex.wrap_t) as usize;
    tex.alpha
        .get(y * tex.width as usize + x)
        .map_or(1.0, |&a| f32::from(a) / 255.0)
}

/// What an image's bytes are, by their signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ImageFormat {
    Png,
    Jpeg,
    Other,
}

pub(crate) fn sniff(bytes: &[u8]) -> ImageFormat {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        ImageFormat::Png
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        ImageFormat::Jpeg
    } else {
        ImageFormat::Other
    }
}

/// Largest side of an alpha-mask texture, in pixels. 16384 is the `maxImageDimension2D`
/// of lavapipe and of most desktop GPUs, so no renderer the scene came from drew a
/// larger texture; beamtrace reads masks from a storage buffer, not an image, so this is
/// its own bound, checked from the PNG header before a pixel is decoded.
pub const MAX_TEXTURE_SIDE: u32 = 16_384;

/// Largest decoded size of one texture: width × height × channels bytes after expansion
/// to 8-bit samples, which the decoder holds at once before the alpha is picked out.
/// 256 MiB is an 8192 × 8192 RGBA image; a mask finer than that resolves nothing a
/// beam's footprint can see, and a PNG of a few megabytes can declare gigabytes
/// (a 30000 × 30000 RGBA header is 3.4 GiB decoded).
pub const MAX_DECODED_BYTES: u64 = 256 << 20;

/// Largest total of alpha bytes kept for all the masks of one scene (one byte a texel).
/// They share one storage buffer on the device, whose size Vulkan guarantees only up to
/// 128 MiB (`maxStorageBufferRange`, which lavapipe reports as is; discrete GPUs bind up
/// to 4 GiB); 1 GiB bounds the host's copy, and the simulator checks the total against
/// its device's limit before it uploads anything (`sim::scene_gpu`).
pub const MAX_ALPHA_TOTAL: u64 = 1 << 30;

/// What to do about a PNG the decoder cannot read.
const RESAVE: &str = "re-save the texture as a valid PNG";

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

/// A PNG whose header has been read and checked against [`MAX_TEXTURE_SIDE`] and
/// [`MAX_DECODED_BYTES`]; its pixels are not decoded yet.
pub(crate) struct PngHeader<'a> {
    reader: png::Reader<std::io::Cursor<&'a [u8]>>,
}

impl<'a> PngHeader<'a> {
    /// Reads the header (IHDR and the chunks before the first IDAT, not the pixels) and
    /// refuses a texture the bounds do not allow, saying what it declares.
    pub fn read(bytes: &'a [u8]) -> Result<PngHeader<'a>, String> {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        decoder.set_transformations(png::Transformations::normalize_to_color8());
        let reader = decoder
            .read_info()
            .map_err(|e| format!("broken PNG header: {e}; {RESAVE}"))?;
        let header = PngHeader { reader };
        header.check()?;
        Ok(header)
    }

    /// (width, height) as the header declares them.
    pub fn size(&self) -> (u32, u32) {
        self.reader.info().size()
    }

    /// Bytes a texel takes once decoded (channels after expansion to 8 bits).
    fn channels(&self) -> u64 {
        self.reader.output_color_type().0.samples() as u64
    }

    fn check(&self) -> Result<(), String> {
        let (w, h) = self.size();
        let channels = self.channels();
        let decoded = u64::from(w) * u64::from(h) * channels;
        if w > MAX_TEXTURE_SIDE || h > MAX_TEXTURE_SIDE || decoded > MAX_DECODED_BYTES {
            return Err(format!(
                "the PNG declares {w}×{h} pixels of {channels} channel(s), {} decoded; \
                 alpha masks may be at most {MAX_TEXTURE_SIDE} pixels a side and {} \
                 decoded: downscale the texture (a mask needs no more than the beam \
                 footprint resolves) or save its alpha alone as a grey PNG",
                mib(decoded),
                mib(MAX_DECODED_BYTES)
            ));
        }
        Ok(())
    }

    /// Decodes the alpha channel: grey+alpha and RGBA directly, palette and grey/RGB
    /// with a tRNS chunk expanded, images without alpha all 255. 16-bit samples keep
    /// their high byte. Returns (width, height, alpha row-major top row first).
    pub fn decode_alpha(mut self) -> Result<(u32, u32, Vec<u8>), String> {
        let size = self
            .reader
            .output_buffer_size()
            .ok_or_else(|| format!("PNG too large to decode; {RESAVE}"))?;
        let mut buf = vec![0u8; size];
        let info = self
            .reader
            .next_frame(&mut buf)
            .map_err(|e| format!("broken PNG data: {e}; {RESAVE}"))?;
        let alpha = alpha_of(&info, &buf).map_err(|e| format!("{e}; {RESAVE}"))?;
        Ok((info.width, info.height, alpha))
    }
}

/// The alpha bytes of a decoded frame (8-bit samples, `info.line_size` bytes a row).
fn alpha_of(info: &png::OutputInfo, buf: &[u8]) -> Result<Vec<u8>, String> {
    if info.bit_depth != png::BitDepth::Eight {
        return Err(format!(
            "unexpected {:?}-bit samples after expansion",
            info.bit_depth
        ));
    }
    let (channels, alpha_at) = match info.color_type {
        png::ColorType::Grayscale => (1, None),
        png::ColorType::Rgb => (3, None),
        png::ColorType::GrayscaleAlpha => (2, Some(1)),
        png::ColorType::Rgba => (4, Some(3)),
        png::ColorType::Indexed => {
            return Err("palette was not expanded; the PNG lacks its PLTE chunk".into())
        }
    };
    let (w, h) = (info.width as usize, info.height as usize);
    let line = info.line_size;
    if line < w * channels || buf.len() < line * h {
        return Err(format!(
            "decoded {} bytes for {w}×{h} pixels of {channels} channels",
            buf.len()
        ));
    }
    Ok(match alpha_at {
        None => vec![255u8; w * h],
        Some(a) => buf
            .chunks_exact(line)
            .take(h)
            .flat_map(|row| row[..w * channels].chunks_exact(channels).map(|px| px[a]))
            .collect(),
    })
}

/// Reads the header, checks its bounds, then decodes the alpha channel
/// ([`PngHeader::decode_alpha`]).
#[cfg(test)]
pub(crate) fn decode_png_alpha(bytes: &[u8]) -> Result<(u32, u32, Vec<u8>), String> {
    PngHeader::read(bytes)?.decode_alpha()
}

/// Encodes 8-bit RGBA pixels (row-major, top row first) as a PNG.
pub(crate) fn encode_png_rgba(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(rgba).map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())?;
    }
    Ok(out)
}
