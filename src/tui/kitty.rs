//! Kitty images placed directly at their cells, for kitty before 0.28, which draws no
//! Unicode placeholders (ratatui-image's only kitty form): a frame is sent with its placement
//! from its slot's first cell, and a placement whose cell is no longer on screen is deleted
//! after the draw, since kitty keeps a placement until told.

use std::fmt::Write as _;

use base64::Engine as _;
use ratatui::buffer::{Buffer, CellDiffOption};
use ratatui::layout::{Position, Rect, Size};

/// What every placement starts with, before its id: how a buffer's cell is known to hold one.
const ANCHOR: &str = "\x1b_Gq=2,i=";

/// A frame to place directly.
#[derive(Clone)]
pub struct KittyDirect {
    /// The image id (one placement each).
    pub id: u32,
    /// The escape sequences: the image sent and placed, then the text under it erased.
    data: String,
    /// The cells it covers.
    size: Size,
}

impl KittyDirect {
    /// `img`, fitted already to `size` cells, as image `id`.
    pub fn new(img: &image::DynamicImage, size: Size, id: u32) -> KittyDirect {
        let rgb = img.to_rgb8();
        let (w, h) = (rgb.width(), rgb.height());
        // At most 4096 base64 characters a chunk.
        const CHUNK: usize = 4096 / 4 * 3;
        let chunks: Vec<&[u8]> = rgb.as_raw().chunks(CHUNK).collect();
        let mut data = String::with_capacity(rgb.as_raw().len() * 4 / 3 + 64 * chunks.len());
        for (i, chunk) in chunks.iter().enumerate() {
            let more = u8::from(i + 1 < chunks.len());
            if i == 0 {
                // a=T sends and places; p=1 so that placing it again replaces the
                // placement; C=1 leaves the cursor where it was.
                let _ = write!(
                    data,
                    "{ANCHOR}{id},p=1,a=T,f=24,t=d,s={w},v={h},C=1,m={more};"
                );
            } else {
                let _ = write!(data, "\x1b_Gm={more};");
            }
            base64::engine::general_purpose::STANDARD.encode_string(chunk, &mut data);
            data.push_str("\x1b\\");
        }
        // The text under the picture is erased: a `loading…` stand-in there before would
        // show through where the picture does not reach the cells' edges.
        for _ in 0..size.height {
            let _ = write!(data, "\x1b[{}X\x1b[1B", size.width);
        }
        let _ = write!(data, "\x1b[{}A", size.height);
        KittyDirect { id, data, size }
    }

    /// The cells it covers.
    pub fn size(&self) -> Size {
        self.size
    }

    /// Puts the placement in `area`'s first cell and keeps the others from being written
    /// (as ratatui-image does for sixel); nothing when it does not fit.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        if self.size.width > area.width || self.size.height > area.height {
            return;
        }
        let drawn = Rect::new(area.x, area.y, self.size.width, self.size.height);
        for y in drawn.top()..drawn.bottom() {
            for x in drawn.left()..drawn.right() {
                if let Some(cell) = buf.cell_mut(Position::new(x, y)) {
                    cell.set_diff_option(CellDiffOption::Skip);
                }
            }
        }
        if let Some(cell) = buf.cell_mut(Position::new(area.x, area.y)) {
            cell.set_symbol(&self.data)
                .set_diff_option(CellDiffOption::ForcedWidth(std::num::NonZeroU16::MIN));
        }
    }
}

/// Takes out of a drawn buffer the placements something was drawn over (a popup): kitty
/// draws its images above text, so the popup would be under the picture. The placement
/// comes back when the cells are free again (its first cell then differs, and is written).
/// `size`: the cells each image id covers.
pub fn unplace_covered(buf: &mut Buffer, size: impl Fn(u32) -> Option<Size>) {
    let area = buf.area;
    let mut covered = Vec::new();
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            let Some(id) = anchor_id(buf[(x, y)].symbol()) else {
                continue;
            };
            let Some(s) = size(id) else { continue };
            let rect = Rect::new(x, y, s.width, s.height).intersection(area);
            let whole = rect
                .positions()
                .all(|p| p == Position::new(x, y) || buf[p].diff_option == CellDiffOption::Skip);
            if !whole {
                covered.push(rect);
            }
        }
    }
    for rect in covered {
        for p in rect.positions() {
            let cell = &mut buf[p];
            if anchor_id(cell.symbol()).is_some() {
                cell.reset();
            } else if cell.diff_option == CellDiffOption::Skip {
                cell.set_diff_option(CellDiffOption::None);
            }
        }
    }
}

fn anchor_id(symbol: &str) -> Option<u32> {
    let rest = symbol.strip_prefix(ANCHOR)?;
    let end = rest.find(|ch: char| !ch.is_ascii_digit())?;
    rest[..end].parse().ok()
}

/// The ids of the placements a drawn buffer holds.
pub fn placed(buf: &Buffer) -> Vec<u32> {
    let mut ids: Vec<u32> = buf
        .content()
        .iter()
        .filter_map(|c| anchor_id(c.symbol()))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The sequence that deletes image `id` and its placement.
pub fn delete(id: u32) -> String {
    format!("\x1b_Ga=d,d=I,i={id},q=2\x1b\\")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placement_is_found_in_the_buffer_and_deleted_by_id() {
        let img = image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(
            18,
            40,
            image::Rgb([255, 128, 0]),
        ));
        let k = KittyDirect::new(&img, Size::new(2, 2), 77);
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, 4));
        k.render(Rect::new(3, 1, 4, 3), &mut buf);
        assert_eq!(placed(&buf), vec![77]);
        let anchor = buf[(3, 1)].symbol();
        assert!(anchor.contains("s=18,v=40,C=1"), "{anchor}");
        assert_eq!(buf[(4, 2)].diff_option, CellDiffOption::Skip);
        assert_eq!(buf[(5, 1)].diff_option, CellDiffOption::None);
        // Too small an area: nothing placed.
        let mut small = Buffer::empty(Rect::new(0, 0, 10, 4));
        k.render(Rect::new(0, 0, 1, 1), &mut small);
        assert!(placed(&small).is_empty());
        assert_eq!(delete(77), "\x1b_Ga=d,d=I,i=77,q=2\x1b\\");
        // A popup drawn over a corner: the placement is taken out, its cells written.
        let size = |id| (id == 77).then_some(Size::new(2, 2));
        let mut whole = buf.clone();
        unplace_covered(&mut whole, size);
        assert_eq!(placed(&whole), vec![77]);
        buf[(4, 2)]
            .set_symbol("│")
            .set_diff_option(CellDiffOption::None);
        unplace_covered(&mut buf, size);
        assert!(placed(&buf).is_empty());
        assert_eq!(buf[(3, 2)].diff_option, CellDiffOption::None);
    }
}
