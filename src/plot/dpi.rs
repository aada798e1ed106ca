//! PNG figures at another resolution: a drawing backend that lays a figure out at its
//! usual size (charts keep their pixel geometry) and draws it `scale` times larger into the
//! backend below, so lines, text and marks are sharp at any `--dpi`, not enlarged pixels.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, ScaleFont};
use plotters::prelude::*;
use plotters::style::FontDesc;
use plotters::style::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontTransform,
};

/// The resolution the figures are laid out at (960 x 600 pixels = 9.6 x 6 inches).
pub const BASE_DPI: u32 = 100;

/// A backend that multiplies every coordinate, width, radius and font size by `scale`.
pub struct Scaled<B> {
    /// The backend drawn into, at the output resolution.
    pub inner: B,
    /// Output pixels per layout pixel.
    pub scale: f64,
    /// The size charts see: the inner size divided by the scale.
    pub size: (u32, u32),
}

struct Stroke<'a, S> {
    style: &'a S,
    scale: f64,
}

impl<S: BackendStyle> BackendStyle for Stroke<'_, S> {
    fn color(&self) -> BackendColor {
        self.style.color()
    }

    fn stroke_width(&self) -> u32 {
        ((f64::from(self.style.stroke_width()) * self.scale).round() as u32).max(1)
    }
}

impl<B: DrawingBackend> Scaled<B> {
    fn at(&self, (x, y): BackendCoord) -> BackendCoord {
        (
            (f64::from(x) * self.scale).round() as i32,
            (f64::from(y) * self.scale).round() as i32,
        )
    }

    fn stroke<'a, S>(&self, style: &'a S) -> Stroke<'a, S> {
        Stroke {
            style,
            scale: self.scale,
        }
    }
}

impl<B: DrawingBackend> DrawingBackend for Scaled<B> {
    type ErrorType = B::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let (x0, y0) = self.at(point);
        let (x1, y1) = self.at((point.0 + 1, point.1 + 1));
        self.inner
            .draw_rect((x0, y0), (x1 - 1, y1 - 1), &color, true)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let (a, b) = (self.at(from), self.at(to));
        let stroke = self.stroke(style);
        if stroke.stroke_width() == 1 {
            self.inner.draw_line(a, b, &stroke)
        } else {
            self.inner.draw_path([a, b], &stroke)
        }
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let (a, b) = (self.at(upper_left), self.at(bottom_right));
        let stroke = self.stroke(style);
        self.inner.draw_rect(a, b, &stroke, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let points: Vec<BackendCoord> = path.into_iter().map(|p| self.at(p)).collect();
        let stroke = self.stroke(style);
        self.inner.draw_path(points, &stroke)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let c = self.at(center);
        let r = (f64::from(radius) * self.scale).round() as u32;
        let stroke = self.stroke(style);
        self.inner.draw_circle(c, r, &stroke, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let points: Vec<BackendCoord> = vert.into_iter().map(|p| self.at(p)).collect();
        self.inner.fill_polygon(points, style)
    }

    fn draw_text<T: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &T,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let at = self.at(pos);
        let size = style.size() * self.scale;
        match bundled_font() {
            Some(face) if style.family().as_str() == super::FONT => {
                let anchor = style.anchor();
                set_text(
                    &face,
                    text,
                    size as f32,
                    (anchor.h_pos, anchor.v_pos),
                    style.transform(),
                    |(x, y), coverage| {
                        let mut c = style.color();
                        c.alpha *= f64::from(coverage);
                        self.inner.draw_pixel((at.0 + x, at.1 + y), c)
                    },
                )
            }
            _ => {
                // Another face, laid out by plotters at the scaled size.
                let font =
                    FontDesc::new(style.family(), size, style.style()).transform(style.transform());
                let big = TextStyle {
                    font,
                    color: style.color(),
                    pos: style.anchor(),
                };
                self.inner.draw_text(text, &big, at)
            }
        }
    }
}

/// The bundled face, parsed once.
fn bundled_font() -> Option<FontRef<'static>> {
    static FACE: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    FACE.get_or_init(|| FontRef::try_from_slice(super::FONT_BYTES).ok())
        .clone()
}

/// Sets `text` at `size` pixels (ab_glyph's scale, as plotters measures text) and hands
/// each covered pixel, relative to the anchor, to `pixel` with its coverage.
///
/// plotters' own rasteriser starts each glyph's ink at the pen, leaving out the glyph's
/// left side bearing: a narrow glyph such as `.` moved left and the gap after it widened
/// (`Qwen2. 5-VL`). Here each glyph is outlined at its pen position, bearing and kerning
/// kept, so the ink falls where the font puts it. The line is as wide as plotters measures
/// it (advances and kerning) and as high (size / 1.24); from cap height to descender it
/// fills that box, so a label's ink stays inside the box the figures lay it out in.
pub fn set_text<E>(
    face: &FontRef<'_>,
    text: &str,
    size: f32,
    (h, v): (HPos, VPos),
    transform: FontTransform,
    mut pixel: impl FnMut((i32, i32), f32) -> Result<(), E>,
) -> Result<(), E> {
    let font = face.as_scaled(size);
    let mut pens = Vec::with_capacity(text.len());
    let mut pen = 0f32;
    let mut prev = None;
    for c in text.chars() {
        let id = font.glyph_id(c);
        if let Some(p) = prev {
            pen += font.kern(p, id);
        }
        pens.push((id, pen));
        pen += font.h_advance(id);
        prev = Some(id);
    }
    // The box as plotters measures it, in whole pixels as it does.
    let (width, height) = (pen as i32, (f64::from(size) / 1.24) as i32);
    let dx = match h {
        HPos::Left => 0,
        HPos::Center => -width / 2,
        HPos::Right => -width,
    };
    let top = match v {
        VPos::Top => 0,
        VPos::Center => -height / 2,
        VPos::Bottom => -height,
    };
    // Cap height: DejaVu Sans's capitals are 0.729 of its em, its em 1/1.164 of the scale.
    let cap = size * 0.729 / 1.164;
    let baseline = top as f32 + cap;
    for (id, x) in pens {
        let glyph = id.with_scale_and_position(size, ab_glyph::point(dx as f32 + x, baseline));
        let Some(outline) = font.outline_glyph(glyph) else {
            continue;
        };
        let bounds = outline.px_bounds();
        let mut covered = Vec::new();
        outline.draw(|x, y, c| {
            if c > 0.0 {
                covered.push((x, y, c.min(1.0)));
            }
        });
        for (x, y, c) in covered {
            let (px, py) = (
                bounds.min.x as i32 + x as i32,
                bounds.min.y as i32 + y as i32,
            );
            pixel(transform.transform(px, py), c)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dark pixels of `text` drawn at (10, 40) at `size` pixels through [`Scaled`].
    fn ink(text: &str, size: f64, h: HPos, v: VPos, turn: FontTransform) -> Vec<(i32, i32)> {
        super::super::register_font().expect("font");
        let (w, ht) = (400u32, 240u32);
        let mut buf = vec![255u8; (w * ht * 3) as usize];
        {
            let inner = BitMapBackend::with_buffer(&mut buf, (w, ht));
            let root = Scaled {
                inner,
                scale: 1.0,
                size: (w, ht),
            }
            .into_drawing_area();
            let style = super::super::font(size, BLACK, h, v).transform(turn);
            root.draw(&Text::new(text.to_string(), (10, 40), style))
                .expect("draw");
            root.present().expect("present");
        }
        let mut dark = Vec::new();
        for y in 0..ht as i32 {
            for x in 0..w as i32 {
                if buf[((y as u32 * w + x as u32) * 3) as usize] < 128 {
                    dark.push((x, y));
                }
            }
        }
        dark
    }

    /// Issue 41: `Qwen2. 5-VL-7B`: plotters set each glyph's ink at the pen, without the
    /// glyph's left side bearing, so a `.` stood up to 3 pixels left of its place and a gap
    /// opened after it. Each glyph's ink now starts where the font puts it: at its pen
    /// (advances and kerning) plus its bearing, within a pixel.
    #[test]
    fn each_glyph_starts_where_the_font_puts_it() {
        for (text, size) in [("2.5", 28.0f32), ("Qwen2.5", 40.0)] {
            let dark = ink(
                text,
                f64::from(size),
                HPos::Left,
                VPos::Top,
                FontTransform::None,
            );
            let mut cols: Vec<i32> = dark.iter().map(|p| p.0).collect();
            cols.sort_unstable();
            cols.dedup();
            // The first column of each run of ink.
            let mut starts = vec![cols[0]];
            starts.extend(cols.windows(2).filter(|w| w[1] > w[0] + 1).map(|w| w[1]));
            let face = bundled_font().expect("font");
            let font = face.as_scaled(size);
            let mut want = Vec::new();
            let (mut pen, mut prev) = (0f32, None);
            for c in text.chars() {
                let id = font.glyph_id(c);
                if let Some(p) = prev {
                    pen += font.kern(p, id);
                }
                let outline = font
                    .outline_glyph(id.with_scale_and_position(size, ab_glyph::point(pen, 0.0)))
                    .expect("outline");
                want.push(10 + outline.px_bounds().min.x as i32);
                pen += font.h_advance(id);
                prev = Some(id);
            }
            assert_eq!(
                starts.len(),
                want.len(),
                "{text}: one run per glyph {starts:?}"
            );
            for (got, want) in starts.iter().zip(&want) {
                assert!(
                    (got - want).abs() <= 1,
                    "{text}: ink at {starts:?}, font {want:?}"
                );
            }
        }
    }

    /// A label's ink stays in the box the figures lay it out in (plotters' box: its
    /// measured width, size / 1.24 high), anchored at its top left.
    #[test]
    fn ink_stays_in_the_laid_out_box() {
        let size = 30.0;
        let dark = ink("Hgy", size, HPos::Left, VPos::Top, FontTransform::None);
        let (top, bottom) = (
            dark.iter().map(|p| p.1).min().expect("ink"),
            dark.iter().map(|p| p.1).max().expect("ink"),
        );
        let h = (size / 1.24) as i32;
        assert!(top >= 40 - 1, "ink above the box: {top}");
        assert!(
            bottom <= 40 + h + 2,
            "ink below the box: {bottom} > {}",
            40 + h
        );
        // Centred on the anchor: the capitals' middle within a few pixels of it.
        let dark = ink("H", size, HPos::Center, VPos::Center, FontTransform::None);
        let (t, b) = (
            dark.iter().map(|p| p.1).min().expect("ink"),
            dark.iter().map(|p| p.1).max().expect("ink"),
        );
        assert!(((t + b) / 2 - 40).abs() <= 4, "{t}..{b} about 40");
    }

    /// Turned text (an axis' name) still reads along its turn.
    #[test]
    fn turned_text_runs_downwards_from_its_anchor() {
        let dark = ink(
            "accuracy",
            20.0,
            HPos::Left,
            VPos::Center,
            FontTransform::Rotate90,
        );
        let xs = dark.iter().map(|p| p.0);
        let ys = dark.iter().map(|p| p.1);
        let (x0, x1) = (xs.clone().min().expect("ink"), xs.max().expect("ink"));
        let (y0, y1) = (ys.clone().min().expect("ink"), ys.max().expect("ink"));
        assert!(y1 - y0 > 3 * (x1 - x0), "{x0}..{x1} x {y0}..{y1}");
        assert!(y0 >= 38, "starts at the anchor: {y0}");
    }
}
