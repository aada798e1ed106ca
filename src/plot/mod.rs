//! Publication figures of one analysis, drawn with plotters as SVG or PNG files: which
//! figures a model gets (or why one is skipped), how a figure becomes a file, and the text
//! helpers every figure shares (the bundled font, label placement without overlaps).
//! Numbers, names and colours come from the report and `core::figures`, as on the screens.

pub mod charts;
pub mod dpi;
pub mod html;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::core::analysis::mcq::McqMetrics;
use crate::core::figures::{Findings, Rgb};
use crate::core::text::sanitize;

/// The family every figure's text uses: DejaVu Sans, registered under the generic name so
/// that an SVG viewer without it falls back to its own sans-serif.
pub const FONT: &str = "sans-serif";
pub(crate) static FONT_BYTES: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// Registers the bundled font with plotters once; text never depends on system fonts.
fn register_font() -> Result<(), PlotError> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(PlotError::Draw("the bundled font cannot be read".into()))
    }
}

/// Why a figure could not be drawn or written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// plotters failed to draw.
    #[error("drawing failed: {0}")]
    Draw(String),
    /// The figure's file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The figure's file.
        path: PathBuf,
        /// What writing it said.
        source: std::io::Error,
    },
    /// The PNG encoder refused the picture.
    #[error("cannot write {} as PNG: {source}", path.display())]
    Encode {
        /// The figure's file.
        path: PathBuf,
        /// What the encoder said.
        source: png::EncodingError,
    },
}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for PlotError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        PlotError::Draw(e.to_string())
    }
}

/// File format of the figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Scalable vector graphics.
    Svg,
    /// A bitmap, at a resolution the caller picks.
    Png,
}

impl Format {
    /// The format's file name extension.
    pub fn ext(self) -> &'static str {
        match self {
            Format::Svg => "svg",
            Format::Png => "png",
        }
    }
}

/// Something drawn into a fixed-size picture on any plotters backend.
pub trait Chart {
    /// Width and height in pixels at [`dpi::BASE_DPI`].
    fn size(&self) -> (u32, u32);
    /// Draws the chart into `root`, which is [`Chart::size`] big.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>;
}

/// Draws a chart into a file of the given format; a PNG at `dpi` dots per inch (the
/// chart's own size is its size at [`dpi::BASE_DPI`]), recorded in the file.
pub fn render(chart: &impl Chart, format: Format, dpi: u32, path: &Path) -> Result<(), PlotError> {
    register_font()?;
    let (w, h) = chart.size();
    let write_err = |source| PlotError::Write {
        path: path.to_path_buf(),
        source,
    };
    match format {
        Format::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
                root.fill(&WHITE)?;
                chart.draw(&root)?;
                root.present()?;
            }
            write_figure(path, svg.as_bytes()).map_err(write_err)
        }
        Format::Png => {
            let scale = f64::from(dpi) / f64::from(dpi::BASE_DPI);
            let (pw, ph) = (
                (f64::from(w) * scale).round() as u32,
                (f64::from(h) * scale).round() as u32,
            );
            let mut buf = vec![255u8; pw as usize * ph as usize * 3];
            {
                let inner = BitMapBackend::with_buffer(&mut buf, (pw, ph));
                let root = dpi::Scaled {
                    inner,
                    scale,
                    size: (w, h),
                }
                .into_drawing_area();
                root.fill(&WHITE)?;
                chart.draw(&root)?;
                root.present()?;
            }
            let mut bytes = Vec::new();
            encode_png(&mut bytes, (pw, ph), dpi, &buf).map_err(|e| match e {
                png::EncodingError::IoError(e) => write_err(e),
                e => PlotError::Encode {
                    path: path.to_path_buf(),
                    source: e,
                },
            })?;
            write_figure(path, &bytes).map_err(write_err)
        }
    }
}

/// Writes a figure's bytes as a file of the output folder: renamed into place, never
/// through a symbolic link (the folder may be inside a shared dataset).
pub fn write_figure(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::core::fswrite::write_output(path, crate::core::fswrite::Links::Refuse, |w| {
        w.write_all(bytes)
    })
}

/// An RGB PNG whose pHYs chunk says its resolution, so a document that includes it sets
/// it at its intended size.
fn encode_png(
    out: &mut Vec<u8>,
    (w, h): (u32, u32),
    dpi: u32,
    rgb: &[u8],
) -> Result<(), png::EncodingError> {
    let mut enc = png::Encoder::new(out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    // Dots per inch as pixels per metre, rounded as image tools do.
    let ppm = (f64::from(dpi) / 0.0254).round() as u32;
    enc.set_pixel_dims(Some(png::PixelDimensions {
        xppu: ppm,
        yppu: ppm,
        unit: png::Unit::Meter,
    }));
    let mut writer = enc.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()
}

/// One model's measures, with the names figures print already made safe.
pub struct ModelView<'a> {
    /// Model name, control characters escaped.
    pub model: String,
    /// Scope of the analysis (`ALL` or a benchmark), escaped.
    pub scope: String,
    /// Configuration names in grid order, escaped.
    pub configs: Vec<String>,
    /// Frames of each configuration, in grid order.
    pub frames: Vec<u64>,
    /// The model's MCQ measures.
    pub x: &'a McqMetrics,
}

impl<'a> ModelView<'a> {
    /// The view of `model` in `scope`, its names escaped once for every figure.
    pub fn new(model: &str, scope: &str, x: &'a McqMetrics) -> Self {
        ModelView {
            model: sanitize(model).into_owned(),
            scope: sanitize(scope).into_owned(),
            configs: x
                .grid
                .configs
                .iter()
                .map(|c| sanitize(c).into_owned())
                .collect(),
            frames: x.grid.frames.clone(),
            x,
        }
    }

    /// Configurations of the model's grid.
    pub fn k(&self) -> usize {
        self.configs.len()
    }
}

/// Every figure `plot` draws.
pub enum Figure<'a> {
    /// A model's accuracy curve.
    Curve(charts::Curve<'a>),
    /// A model's flips at each budget step.
    Churn(charts::Churn<'a>),
    /// A model's trajectory classes and rates.
    Classes(charts::Classes<'a>),
    /// A model's complementarity heatmaps.
    Complementarity(charts::Complementarity<'a>),
    /// A model's data map.
    DataMap(charts::DataMapChart<'a>),
    /// A model's confidence cascade.
    Cascade(charts::CascadeChart<'a>),
    /// The evidence pathways the audits tagged.
    Pathways(charts::Pathways),
    /// Every model's accuracy curve on one axis.
    ModelsCurve(charts::ModelsCurve<'a>),
    /// Every model's headroom and harmful rate.
    ModelsRates(charts::ModelsRates<'a>),
    /// A model's negative flips per edge against the noise floor.
    Noise(charts::Noise<'a>),
}

impl Chart for Figure<'_> {
    fn size(&self) -> (u32, u32) {
        match self {
            Figure::Curve(c) => c.size(),
            Figure::Churn(c) => c.size(),
            Figure::Classes(c) => c.size(),
            Figure::Complementarity(c) => c.size(),
            Figure::DataMap(c) => c.size(),
            Figure::Cascade(c) => c.size(),
            Figure::Pathways(c) => c.size(),
            Figure::ModelsCurve(c) => c.size(),
            Figure::ModelsRates(c) => c.size(),
            Figure::Noise(c) => c.size(),
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        match self {
            Figure::Curve(c) => c.draw(root),
            Figure::Churn(c) => c.draw(root),
            Figure::Classes(c) => c.draw(root),
            Figure::Complementarity(c) => c.draw(root),
            Figure::DataMap(c) => c.draw(root),
            Figure::Cascade(c) => c.draw(root),
            Figure::Pathways(c) => c.draw(root),
            Figure::ModelsCurve(c) => c.draw(root),
            Figure::ModelsRates(c) => c.draw(root),
            Figure::Noise(c) => c.draw(root),
        }
    }
}

/// A figure to draw, or the reason it is left out.
pub struct Planned<'a> {
    /// File stem, e.g. `curve_Qwen2.5-VL-7B`.
    pub stem: String,
    /// What the figure shows, for index.html.
    pub caption: String,
    /// The figure, or why it is left out (index.html says so).
    pub figure: Result<Figure<'a>, String>,
}

/// The figures of one model, in the order `plot` writes them; the noise figure only for a
/// model with replicates (docs/measures.md §16).
pub fn model_figures<'a>(v: &'a ModelView<'a>, file_model: &str) -> Vec<Planned<'a>> {
    let x = v.x;
    let k = v.k();
    let stem = |kind: &str| format!("{kind}_{file_model}");
    let steps_note = "one configuration, so no budget step".to_string();
    let mut figures = vec![
        Planned {
            stem: stem("curve"),
            caption: format!(
                "Accuracy by configuration; dashed: the item-level oracle ({:.1}%), {:.1} pts above the best fixed configuration ({}).",
                x.oracle_accuracy, x.headroom, sanitize(&x.best_fixed.config)
            ),
            figure: Ok(Figure::Curve(charts::Curve(v))),
        },
        Planned {
            stem: stem("churn"),
            caption: "Churn per budget step: items stable right, gained, lost and stable wrong."
                .into(),
            figure: if k >= 2 {
                Ok(Figure::Churn(charts::Churn(v)))
            } else {
                Err(steps_note)
            },
        },
        Planned {
            stem: stem("classes"),
            caption: "Trajectory classes of the items; harmful and terminal regression rates with bootstrap intervals.".into(),
            figure: Ok(Figure::Classes(charts::Classes(v))),
        },
        Planned {
            stem: stem("complementarity"),
            caption: "Complementarity of configurations: left, % of items right at the row and wrong at the column; right, pair oracle gain (pts).".into(),
            figure: match x.complementarity.omitted {
                Some(o) => Err(format!(
                    "{} configurations, more than the {} the complementarity matrices are computed for",
                    o.configs, o.max_configs
                )),
                None if k >= 2 => Ok(Figure::Complementarity(charts::Complementarity(v))),
                None => Err("one configuration, so no pair to compare".into()),
            },
        },
        Planned {
            stem: stem("datamap"),
            caption: "Data map: items by mean correctness and share of budget steps that flip, sized by count, coloured by dominant class.".into(),
            figure: Ok(Figure::DataMap(charts::DataMapChart::new(v))),
        },
        Planned {
            stem: stem("cascade"),
            caption: "Confidence cascade: accuracy against mean frame cost over the threshold sweep, the fixed budgets, and the selected threshold.".into(),
            figure: match x.cascade.as_ref() {
                Some(c) if c.sweep.as_ref().is_some_and(|s| !s.is_empty()) => {
                    Ok(Figure::Cascade(charts::CascadeChart { v, c }))
                }
                Some(_) => Err("the cascade has no threshold sweep".into()),
                None => Err("no cascade (no confidences, or fewer than two visual stages)".into()),
            },
        },
    ];
    if let Some(r) = &x.replicates {
        figures.push(Planned {
            stem: stem("noise"),
            caption: format!(
                "Negative flips per budget step (% of items right before it, wrong after) against the noise floor of the step's two configurations over {} replicate pairs ({}); dark bars: beyond noise (Benjamini–Hochberg q ≤ {} over Fisher's one-sided test of the excess).",
                r.floor.all.pairs,
                sanitize(&r.nuisances.join(", ")),
                r.alpha
            ),
            figure: if r.edges.is_empty() {
                Err("one configuration, so no budget step".into())
            } else {
                Ok(Figure::Noise(charts::Noise { v, r }))
            },
        });
    }
    figures
}

/// The figures across models, or why each is left out. `grids` says what the models'
/// grids are (per model or joint) for the subtitles.
pub fn across_models<'a>(views: &'a [ModelView<'a>], grids: &str) -> Vec<Planned<'a>> {
    let few = (views.len() < 2).then(|| "one model, so nothing to compare".to_string());
    vec![
        Planned {
            stem: "models_curve".into(),
            caption: "Accuracy by configuration of every model on one axis.".into(),
            figure: match &few {
                Some(why) => Err(why.clone()),
                None => Ok(Figure::ModelsCurve(charts::ModelsCurve {
                    views,
                    grids: grids.into(),
                })),
            },
        },
        Planned {
            stem: "models_rates".into(),
            caption: "Oracle headroom (points) and harmful rate (% of items) of every model, with bootstrap intervals.".into(),
            figure: match few {
                Some(why) => Err(why),
                None => Ok(Figure::ModelsRates(charts::ModelsRates {
                    views,
                    grids: grids.into(),
                })),
            },
        },
    ]
}

/// The pathway figure of a set of audit records, or why there is none.
pub fn pathway_figure<'a>(findings: &Findings) -> Planned<'a> {
    Planned {
        stem: "pathways".into(),
        caption: format!(
            "Evidence pathways tagged in {} audit records ({} untagged), overall and per model; dark: tagged as primary.",
            findings.records, findings.untagged
        ),
        figure: if findings.overall.is_empty() {
            Err(if findings.records == 0 {
                "no audit records".to_string()
            } else {
                "no audit record has a pathway tag".to_string()
            })
        } else {
            Ok(Figure::Pathways(charts::Pathways::new(findings)))
        },
    }
}

/// The longest part of a file name [`file_safe`] makes of a name: a figure's file is its
/// kind (up to 15 characters), `_`, this and an extension, well inside the 255 bytes a
/// file name may have.
pub const MAX_FILE_PART: usize = 100;

/// A model name made safe as part of a file name: `[A-Za-z0-9._-]` kept, others `_`; a
/// name longer than [`MAX_FILE_PART`] is cut to a prefix and followed by `-` and the first
/// 8 hex digits of the SHA-256 of the whole name, so long names that share a prefix still
/// get files of their own.
pub fn file_safe(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        return "_".into();
    }
    if s.len() <= MAX_FILE_PART {
        return s;
    }
    use sha2::{Digest, Sha256};
    let hash = Sha256::digest(name.as_bytes());
    let hex: String = hash[..4].iter().map(|b| format!("{b:02x}")).collect();
    // `s` is ASCII, so any byte is a character boundary.
    format!("{}-{hex}", &s[..MAX_FILE_PART - 1 - hex.len()])
}

// ----- shared drawing helpers -----

pub(crate) fn rgb(c: Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

/// A colour mixed with white: `t` = 0 keeps it, 1 gives white.
pub(crate) fn tint(c: Rgb, t: f64) -> RGBColor {
    let m = |v: u8| (f64::from(v) + (255.0 - f64::from(v)) * t).round() as u8;
    RGBColor(m(c.0), m(c.1), m(c.2))
}

pub(crate) const INK: RGBColor = RGBColor(30, 30, 30);
pub(crate) const MUTED: RGBColor = RGBColor(100, 100, 100);

/// Text style of the bundled font: size in pixels, colour and anchor.
pub(crate) fn font(size: f64, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle {
        font: (FONT, size).into_font(),
        color: color.to_backend_color(),
        pos: Pos::new(h, v),
    }
}

/// Text width and height in pixels, as the bundled font lays it out.
pub(crate) fn text_size<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    text: &str,
    size: f64,
) -> (i32, i32) {
    let style = font(size, INK, HPos::Left, VPos::Top);
    root.estimate_text_size(text, &style)
        .map(|(w, h)| (w as i32, h as i32))
        .unwrap_or((
            (text.chars().count() as f64 * size * 0.6) as i32,
            size as i32,
        ))
}

pub(crate) fn text<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    s: &str,
    at: (i32, i32),
    style: &TextStyle<'_>,
) -> Result<(), PlotError> {
    root.draw(&Text::new(s.to_string(), at, style.clone()))?;
    Ok(())
}

/// The title and subtitle at the top of a figure.
pub(crate) fn title<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
) -> Result<(), PlotError> {
    text(
        root,
        title,
        (20, 12),
        &font(22.0, INK, HPos::Left, VPos::Top),
    )?;
    text(
        root,
        subtitle,
        (20, 42),
        &font(15.0, MUTED, HPos::Left, VPos::Top),
    )
}

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
pub(crate) enum Mark {
    Box,
    Line,
    Dashed,
    Dot,
    Ring,
}

/// A row of legend entries from `(x, y)`, wrapping at `max_x`; returns the height used.
pub(crate) fn legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    max_x: i32,
    items: &[(Mark, RGBColor, String)],
) -> Result<i32, PlotError> {
    let size = 15.0;
    let (mut x, mut y) = at;
    for (mark, color, label) in items {
        let (w, _) = text_size(root, label, size);
        let need = 28 + w + 22;
        if x + need > max_x && x > at.0 {
            x = at.0;
            y += 24;
        }
        let cy = y + 9;
        match mark {
            Mark::Box => {
                root.draw(&Rectangle::new(
                    [(x, cy - 7), (x + 18, cy + 7)],
                    color.filled(),
                ))?;
            }
            Mark::Line => {
                root.draw(&PathElement::new(
                    vec![(x, cy), (x + 20, cy)],
                    color.stroke_width(3),
                ))?;
            }
            Mark::Dashed => {
                for s in [0, 8, 16] {
                    root.draw(&PathElement::new(
                        vec![(x + s, cy), (x + s + 5, cy)],
                        color.stroke_width(2),
                    ))?;
                }
            }
            Mark::Dot => {
                root.draw(&Circle::new((x + 9, cy), 5, color.filled()))?;
            }
            Mark::Ring => {
                root.draw(&Circle::new((x + 9, cy), 7, color.stroke_width(2)))?;
            }
        }
        text(
            root,
            label,
            (x + 26, cy),
            &font(size, INK, HPos::Left, VPos::Center),
        )?;
        x += need;
    }
    Ok(y + 24 - at.1)
}

/// Places labels so that none overlaps another or a reserved box: each label takes the
/// first free spot of its candidates, else slides down from the first until free.
/// Boxes are filed by the squares of a grid they touch, so that a check looks only at the
/// boxes near it: a figure of many configurations reserves and places many thousands.
#[derive(Default)]
pub(crate) struct Labeller {
    taken: Vec<(i32, i32, i32, i32)>,
    /// Indices into `taken` by grid square, for boxes with some width and height.
    grid: rustc_hash::FxHashMap<(i32, i32), Vec<u32>>,
    /// Boxes without width or height (or inverted), checked against every box as before.
    odd: Vec<u32>,
}

/// Side of a grid square, in pixels.
const SQUARE: i32 = 64;

/// A box touching more squares than this is checked as the odd ones are.
const MAX_SQUARES: i64 = 4096;

/// The grid squares a box touches, from the lesser to the greater of each pair of sides;
/// `None` when they are more than [`MAX_SQUARES`].
fn squares((x0, y0, x1, y1): (i32, i32, i32, i32)) -> Option<impl Iterator<Item = (i32, i32)>> {
    let span = |a: i32, b: i32| a.min(b).div_euclid(SQUARE)..=a.max(b).div_euclid(SQUARE);
    let (xs, ys) = (span(x0, x1), span(y0, y1));
    let count = |r: &std::ops::RangeInclusive<i32>| i64::from(*r.end()) - i64::from(*r.start()) + 1;
    (count(&xs) * count(&ys) <= MAX_SQUARES)
        .then(|| xs.flat_map(move |x| ys.clone().map(move |y| (x, y))))
}

impl Labeller {
    /// Marks a box (x0, y0, x1, y1) as occupied.
    pub fn reserve(&mut self, b: (i32, i32, i32, i32)) {
        let i = self.taken.len() as u32;
        self.taken.push(b);
        // The last pixel of the box, not its open end.
        let filed = (b.0 < b.2 && b.1 < b.3)
            .then(|| squares((b.0, b.1, b.2 - 1, b.3 - 1)))
            .flatten();
        match filed {
            Some(squares) => {
                for sq in squares {
                    self.grid.entry(sq).or_default().push(i);
                }
            }
            None => self.odd.push(i),
        }
    }

    /// Marks a drawn polyline as occupied, so that labels keep off the line.
    pub fn reserve_path(&mut self, pts: &[(i32, i32)]) {
        for w in pts.windows(2) {
            let (dx, dy) = (w[1].0 - w[0].0, w[1].1 - w[0].1);
            let steps = (dx.abs().max(dy.abs()) / 4).max(1);
            for s in 0..=steps {
                let x = w[0].0 + dx * s / steps;
                let y = w[0].1 + dy * s / steps;
                self.reserve((x - 3, y - 3, x + 3, y + 3));
            }
        }
    }

    /// No taken box overlaps `b`. A box with width and height that overlaps `b` shares a
    /// pixel with it, so it is filed under a square `b` touches.
    fn free(&self, b: (i32, i32, i32, i32)) -> bool {
        let clear = |&i: &u32| {
            let t = self.taken[i as usize];
            b.2 <= t.0 || b.0 >= t.2 || b.3 <= t.1 || b.1 >= t.3
        };
        match squares(b) {
            Some(mut squares) => {
                self.odd.iter().all(clear)
                    && squares.all(|sq| self.grid.get(&sq).is_none_or(|v| v.iter().all(clear)))
            }
            None => (0..self.taken.len() as u32).all(|i| clear(&i)),
        }
    }

    /// The top-left corner for a `w` x `h` label among candidate top-left corners.
    pub fn place(&mut self, w: i32, h: i32, candidates: &[(i32, i32)]) -> (i32, i32) {
        let boxed = |(x, y): (i32, i32)| (x, y, x + w, y + h);
        let spot = candidates
            .iter()
            .copied()
            .find(|&c| self.free(boxed(c)))
            .unwrap_or_else(|| {
                let (x, mut y) = candidates[0];
                for _ in 0..40 {
                    if self.free(boxed((x, y))) {
                        break;
                    }
                    y += h / 2 + 1;
                }
                (x, y)
            });
        self.reserve(boxed(spot));
        spot
    }
}

/// Names broken into at most three lines that each fit `slot` pixels, after a `-`, `_`,
/// `/` or space (`LLaVA-NeXT-` / `Video-7B`), so that they can stand horizontally under
/// their bars; `None` when some name has a part that fits no line.
pub(crate) fn wrapped_names<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    names: &[String],
    slot: i32,
    size: f64,
) -> Option<Vec<Vec<String>>> {
    let fits = |s: &str| text_size(root, s, size).0 <= slot - 6;
    let mut all = Vec::with_capacity(names.len());
    for name in names {
        let mut parts: Vec<&str> = Vec::new();
        let mut start = 0;
        for (i, c) in name.char_indices() {
            if matches!(c, '-' | '_' | '/' | ' ') {
                let end = i + c.len_utf8();
                parts.push(&name[start..end]);
                start = end;
            }
        }
        if start < name.len() {
            parts.push(&name[start..]);
        }
        let mut lines: Vec<String> = Vec::new();
        let mut line = String::new();
        for p in parts {
            let longer = format!("{line}{p}");
            if line.is_empty() || fits(longer.trim_end()) {
                line = longer;
            } else {
                lines.push(line.trim_end().to_string());
                line = p.to_string();
            }
        }
        if !line.is_empty() {
            lines.push(line.trim_end().to_string());
        }
        if lines.len() > 3 || !lines.iter().all(|l| fits(l)) {
            return None;
        }
        all.push(lines);
    }
    Some(all)
}

/// The tops of labels `h` high for points at `centres` (sorted top to bottom), in the same
/// order and none over another: each as near its point as those above it leave room for,
/// the stack moved up where it would pass `bottom` (and never above `top`).
pub(crate) fn stack(centres: &[i32], h: i32, top: i32, bottom: i32) -> Vec<i32> {
    let mut tops: Vec<i32> = Vec::with_capacity(centres.len());
    for &c in centres {
        let want = c - h / 2;
        tops.push(match tops.last() {
            Some(&above) => want.max(above + h),
            None => want.max(top),
        });
    }
    // Up from the bottom: a label past it moves up, and so do those it then meets.
    let mut limit = bottom - h;
    for t in tops.iter_mut().rev() {
        if *t > limit {
            *t = limit;
        }
        limit = *t - h;
    }
    for t in &mut tops {
        *t = (*t).max(top);
    }
    tops
}

/// Category names under a categorical x axis at the given pixel centres, horizontal when
/// they fit their slot, else turned to read downwards. Returns the height they take.
pub(crate) fn category_labels_height<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    names: &[String],
    slot: i32,
    size: f64,
) -> (bool, i32) {
    let widest = names
        .iter()
        .map(|n| text_size(root, n, size).0)
        .max()
        .unwrap_or(0);
    if widest <= slot - 6 {
        (false, (size * 1.4) as i32)
    } else {
        (true, widest + 8)
    }
}

pub(crate) fn category_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    names: &[String],
    centres: &[i32],
    top: i32,
    size: f64,
    turned: bool,
) -> Result<(), PlotError> {
    for (name, &x) in names.iter().zip(centres) {
        if turned {
            let style = font(size, INK, HPos::Left, VPos::Center)
                .transform(plotters::style::FontTransform::Rotate90);
            text(root, name, (x, top + 2), &style)?;
        } else {
            text(
                root,
                name,
                (x, top + 4),
                &font(size, INK, HPos::Center, VPos::Top),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_keep_only_safe_characters() {
        assert_eq!(file_safe("Qwen2.5-VL-7B"), "Qwen2.5-VL-7B");
        assert_eq!(file_safe("org/model x\u{1b}"), "org_model_x_");
        assert_eq!(file_safe(""), "_");
    }

    /// Issue 37, item 14: a 10 000-character name made a file name the system refused.
    #[test]
    fn long_names_are_cut_to_a_prefix_and_a_hash() {
        let at_bound = "m".repeat(MAX_FILE_PART);
        assert_eq!(file_safe(&at_bound), at_bound, "kept as it is");
        let long = format!("org/{}", "x".repeat(10_000));
        let cut = file_safe(&long);
        assert_eq!(cut.len(), MAX_FILE_PART, "{cut}");
        assert!(cut.starts_with("org_xxxx"), "{cut}");
        let (prefix, hex) = cut.rsplit_once('-').expect("a hash");
        assert_eq!(
            prefix,
            file_safe(&long[..prefix.len()]),
            "the name's prefix"
        );
        assert!(
            hex.len() == 8 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
            "{hex}"
        );
        let other = format!("{long}y");
        assert_ne!(file_safe(&other), cut, "one more character, another file");
        assert_eq!(file_safe(&long), cut, "the same name, the same file");
    }

    /// Labels stacked beside the ends of lines keep the ends' order, never overlap, and
    /// stand at their own end where the others leave room.
    #[test]
    fn stacked_labels_keep_their_order() {
        let tops = stack(&[100, 104, 110, 300], 20, 0, 400);
        assert_eq!(tops[0], 90, "where it wants to be");
        assert_eq!(tops[3], 290, "a label with room stays at its end");
        for w in tops.windows(2) {
            assert!(w[1] >= w[0] + 20, "{tops:?}");
        }
        // At the bottom the stack moves up, still in order.
        let tops = stack(&[380, 390, 395], 20, 0, 400);
        assert_eq!(tops, vec![340, 360, 380]);
        let tops = stack(&[-50], 20, 0, 400);
        assert_eq!(tops, vec![0], "never above the top");
    }

    #[test]
    fn labeller_avoids_overlaps() {
        let mut l = Labeller::default();
        let a = l.place(40, 10, &[(0, 0)]);
        let b = l.place(40, 10, &[(10, 5), (100, 0)]);
        let c = l.place(40, 10, &[(0, 0)]);
        assert_eq!(a, (0, 0));
        assert_eq!(b, (100, 0));
        assert!(c.1 >= 10, "slid below the first: {c:?}");
    }

    /// The grid gives the answers of checking every box, on boxes of every shape (empty,
    /// inverted, negative, across squares) and labels placed among them.
    #[test]
    fn the_grid_answers_as_a_scan_of_every_box() {
        let mut rng = crate::core::analysis::bootstrap::SplitMix64::new(7);
        let mut r = |n: u64| (rng.next_u64() % n) as i32;
        let mut l = Labeller::default();
        l.reserve((-1 << 20, 5, 1 << 20, 9));
        for _ in 0..400 {
            let (x, y) = (r(600) - 100, r(400) - 100);
            l.reserve((x, y, x + r(90) - 10, y + r(50) - 10));
        }
        for _ in 0..2000 {
            let (x, y) = (r(700) - 150, r(500) - 150);
            let b = (x, y, x + r(120) - 10, y + r(60) - 10);
            let scan = l
                .taken
                .iter()
                .all(|t| b.2 <= t.0 || b.0 >= t.2 || b.3 <= t.1 || b.1 >= t.3);
            assert_eq!(l.free(b), scan, "{b:?}");
            if r(4) == 0 {
                l.place(r(60) + 1, r(20) + 1, &[(x, y)]);
            }
        }
    }
}
