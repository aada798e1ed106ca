//! PNG figures at another resolution: a drawing backend that lays a figure out at its
//! usual size (charts keep their pixel geometry) and draws it `scale` times larger into the
//! backend below, so lines, text and marks are sharp at any `--dpi`, not enlarged pixels.

use plotters::prelude::*;
use plotters::style::FontDesc;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
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
        // The same face at the scaled size, laid out again: glyphs are rasterised sharp.
        let font = FontDesc::new(style.family(), style.size() * self.scale, style.style())
            .transform(style.transform());
        let c = style.color();
        let big = TextStyle {
            font,
            color: c,
            pos: style.anchor(),
        };
        let at = self.at(pos);
        self.inner.draw_text(text, &big, at)
    }
}
