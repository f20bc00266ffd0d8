//! PNG charts: the same SVG the page shows, rasterised by resvg with the
//! system's fonts, and encoded with a `Software: tankbench report` text chunk so
//! a later `-o` can tell the file is ours (see `output`).

use crate::error::{Error, Result};
use resvg::{tiny_skia, usvg};
use std::sync::{Arc, OnceLock};

/// Value of the PNG `Software` text chunk.
pub const PNG_SOFTWARE: &str = "tankbench report";

/// The system fonts, loaded once per process (a scan of /usr/share/fonts).
fn fonts() -> Result<Arc<usvg::fontdb::Database>> {
    static DB: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    let db = DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        // Generic `sans-serif` falls back to DejaVu Sans when present, which is
        // also the first family the charts ask for.
        db.set_sans_serif_family("DejaVu Sans");
        Arc::new(db)
    });
    if db.is_empty() {
        return Err(Error::Render(
            "PNG charts need a TrueType font and none was found on this system \
             (install fonts-dejavu-core, or write .svg instead)"
                .into(),
        ));
    }
    Ok(db.clone())
}

/// Render an SVG document to PNG bytes; `scale` 2 gives sharp text on
/// high-density screens and in tickets.
pub fn svg_to_png(svg: &str, scale: f32) -> Result<Vec<u8>> {
    let opt = usvg::Options {
        fontdb: fonts()?,
        font_family: "DejaVu Sans".into(),
        ..Default::default()
    };
    let tree = usvg::Tree::from_str(svg, &opt)
        .map_err(|e| Error::Render(format!("chart SVG does not parse: {e}")))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| Error::Render("chart has no size".into()))?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| Error::Render("chart too large to rasterise".into()))?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    // tiny-skia stores premultiplied alpha; PNG wants straight alpha.
    let mut rgba = Vec::with_capacity(pixmap.data().len());
    for p in pixmap.pixels() {
        let c = p.demultiply();
        rgba.extend_from_slice(&[c.red(), c.green(), c.blue(), c.alpha()]);
    }
    let mut out = Vec::new();
    let mut encode = || -> std::result::Result<(), png::EncodingError> {
        let mut enc = png::Encoder::new(&mut out, size.width(), size.height());
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        enc.add_text_chunk("Software".into(), PNG_SOFTWARE.into())?;
        let mut writer = enc.write_header()?;
        writer.write_image_data(&rgba)?;
        writer.finish()
    };
    encode().map_err(|e| Error::Render(format!("PNG encoding failed: {e}")))?;
    Ok(out)
}

/// Whether `bytes` is a PNG whose `Software` text chunk (before the image data)
/// is ours.
pub fn is_tankbench_png(bytes: &[u8]) -> bool {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if !bytes.starts_with(SIGNATURE) {
        return false;
    }
    let mut pos = SIGNATURE.len();
    let want = format!("Software\0{PNG_SOFTWARE}");
    while pos + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize;
        let kind = &bytes[pos + 4..pos + 8];
        let data = bytes.get(pos + 8..pos + 8 + len);
        match (kind, data) {
            (b"tEXt", Some(d)) if d == want.as_bytes() => return true,
            (b"IDAT" | b"IEND", _) | (_, None) => return false,
            _ => pos += 12 + len,
        }
    }
    false
}
