//! The picture `beamtrace run` writes beside each cloud, decoded by the `png` crate and
//! read as README describes it: for a VLP-16 (1808 columns, so 1808 px wide) the
//! bird's-eye view is 1024 px square, centred, 80 m either side (the sensor's range up to
//! 80 m), its circles every 10 m (at most 8 out to the edge) labelled "10 m" … just right
//! of where they cross the line to the sensor's right; a white triangle ahead of the
//! sensor; the colour bar (512 px, centred) titled with its quantity and labelled with
//! its ends' values. The glyphs expected are font8x8's own bitmaps, 8 px per character
//! (doubled where the text fits: the colour bar's), white on black.

use font8x8::{UnicodeFonts, BASIC_FONTS};
use std::path::Path;
use std::process::Command;

struct Png {
    width: u32,
    rgb: Vec<u8>,
}

impl Png {
    fn read(path: &Path) -> Png {
        let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
        let mut reader = png::Decoder::new(file).read_info().unwrap();
        let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut rgb).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        Png {
            width: info.width,
            rgb,
        }
    }

    fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * self.width + x) * 3) as usize;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// Whether `text`'s glyphs are at (x, y), `scale` px per font pixel: each lit font
    /// pixel white, each other one black.
    fn has_text(&self, x: u32, y: u32, text: &str, scale: u32) -> bool {
        text.chars().enumerate().all(|(i, c)| {
            let glyph = BASIC_FONTS.get(c).unwrap();
            (0..8u32).all(|row| {
                (0..8u32).all(|col| {
                    let lit = glyph[row as usize] & (1 << col) != 0;
                    let at = (x + (8 * i as u32 + col) * scale, y + row * scale);
                    self.pixel(at.0, at.1) == if lit { [255; 3] } else { [0; 3] }
                })
            })
        })
    }
}

#[test]
fn the_frame_picture_labels_its_rings_heading_and_colour_bar() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pic");
    let o = Command::new(env!("CARGO_BIN_EXE_beamtrace"))
        .args(["run", "--thin", "--ideal", "--sensor", "vlp-16"])
        .args(["--scene", "scenes/box_room.glb", "--out"])
        .arg(&out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pic = Png::read(&out.join("frame_000000.png"));
    assert_eq!(pic.width, 1808);
    // The sensor at the view's centre: x (1808 − 1024) / 2 + 512, row 512; 64 px per
    // 10 m. Labels 8 px tall (doubled, 64 px, they would not fit between circles 64 px
    // apart), 3 px right of the crossing, their foot 2 px above the line.
    let (cx, cy) = (904, 512);
    for k in 1..=7u32 {
        let text = format!("{} m", 10 * k);
        assert!(
            pic.has_text(cx + 64 * k + 3, cy - 10, &text, 1),
            "no {text:?} by its circle"
        );
    }
    assert_eq!(pic.pixel(cx, cy - 12), [255; 3], "the heading mark");
    assert_ne!(pic.pixel(cx, cy + 12), [255; 3], "nothing behind");
    // The colour bar: 16 rings × 8 px under the view; title 20 px above the bar.
    let bar_y = 1024 + 6 + 16 * 8 + 6 + 20;
    let title = "intensity = apparent reflectance (white target = 1)";
    let title_x = (1808 - 16 * title.len() as u32) / 2;
    assert!(pic.has_text(title_x, bar_y - 20, title, 2), "the title");
    let (bar_x0, bar_x1) = ((1808 - 512) / 2, (1808 + 512) / 2);
    assert!(pic.has_text(bar_x0, bar_y + 20, "0.01", 2), "the low end");
    assert!(
        pic.has_text(bar_x1 - 32, bar_y + 20, "10", 2),
        "the high end"
    );
}
