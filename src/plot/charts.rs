//! One drawing per figure. Each reads only the report's numbers of a model (or the audit
//! findings) and writes every value it shows with the formats the tests compare:
//! percents and points with one decimal, counts as integers.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::{
    Chart, INK, Labeller, MUTED, Mark, ModelView, PlotError, category_labels,
    category_labels_height, font, legend, rgb, stack, text, text_size, tint, title, wrapped_names,
};
use crate::core::analysis::Interval;
use crate::core::analysis::cascade::Cascade;
use crate::core::analysis::mcq::Class;
use crate::core::analysis::noise::Replicated;
use crate::core::figures::{
    CHURN_PARTS, CURVE, DataMap, Findings, GAINED, LOST, ORACLE, PathwayCount, SERIES,
    class_colour, class_label,
};
use crate::core::text::sanitize;

const TICK: f64 = 15.0;
const DESC: f64 = 17.0;
const LABEL: f64 = 14.0;
const GRID: RGBColor = RGBColor(228, 228, 228);

/// A percent range for an axis around the values, on multiples of 5, never empty.
fn pct_range(lo: f64, hi: f64, pad_top: f64) -> (f64, f64) {
    let y0 = (((lo - 5.0) / 5.0).floor() * 5.0).max(0.0);
    let y1 = (((hi + pad_top) / 5.0).ceil() * 5.0).min(100.0);
    if y1 - y0 < 5.0 {
        (y0.min(95.0), y0.min(95.0) + 5.0)
    } else {
        (y0, y1)
    }
}

/// A figure with more configurations than this does not label its points one by one (the
/// labels would only cover each other and the curve); README's Figures says so.
const MAX_POINT_LABELS: usize = 48;

/// Draws text at a top-left corner chosen by the labeller.
fn placed<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    lab: &mut Labeller,
    s: &str,
    size: f64,
    color: RGBColor,
    candidates: &[(i32, i32)],
) -> Result<(), PlotError> {
    let (w, h) = text_size(root, s, size);
    let (x, y) = lab.place(w, h + 2, candidates);
    text(root, s, (x, y), &font(size, color, HPos::Left, VPos::Top))
}

/// Candidates for a label of `s` above, then below, a point.
fn around<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    s: &str,
    size: f64,
    (x, y): (i32, i32),
    gap: i32,
) -> Vec<(i32, i32)> {
    let (w, h) = text_size(root, s, size);
    vec![
        (x - w / 2, y - gap - h - 3),
        (x - w / 2, y + gap),
        (x + gap, y - h / 2),
        (x - gap - w, y - h / 2),
    ]
}

// ----- 1. accuracy curve -----

/// One model's accuracy by configuration, with the oracle level and the headroom.
pub struct Curve<'a>(pub &'a ModelView<'a>);

impl Chart for Curve<'_> {
    fn size(&self) -> (u32, u32) {
        (960, 600)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let v = self.0;
        let x = v.x;
        let k = v.k();
        let (w, _) = self.size();
        let best = x.best_fixed.index;
        title(
            root,
            &format!("{} · accuracy by configuration", v.model),
            &format!(
                "{} · {} items · best fixed {} at {:.1}% · oracle {:.1}%",
                v.scope, x.n_items, v.configs[best], x.best_fixed.accuracy, x.oracle_accuracy
            ),
        )?;
        let lh = legend(
            root,
            (20, 70),
            w as i32 - 20,
            &[
                (Mark::Line, rgb(CURVE), "accuracy".into()),
                (Mark::Ring, rgb(CURVE), "best fixed configuration".into()),
                (Mark::Dashed, rgb(ORACLE), "item-level oracle".into()),
                (Mark::Line, rgb(ORACLE), "headroom".into()),
            ],
        )?;
        // Room right of the last configuration for the headroom bracket and its labels.
        let extra = (k as f64 / 3.0).max(0.6);
        let slot = (w as f64 - 110.0) / (k as f64 + extra);
        let (turned, lab_h) = category_labels_height(root, &v.configs, slot as i32, TICK);
        let lo = x.accuracy.iter().copied().fold(f64::INFINITY, f64::min);
        let (y0, y1) = pct_range(lo, x.oracle_accuracy, 6.0);
        let mut chart = ChartBuilder::on(root)
            .margin_top(80 + lh)
            .margin_left(20)
            .margin_right(20)
            .margin_bottom(12)
            .x_label_area_size(lab_h + 34)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..(k as f64 - 0.5 + extra), y0..y1)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(8)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .y_desc("accuracy (%)")
            .label_style(font(TICK, INK, HPos::Center, VPos::Center))
            .axis_desc_style(font(DESC, INK, HPos::Center, VPos::Center))
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .draw()?;
        let xb = k as f64 - 0.5 + extra * 0.2;
        let acc = |i: usize| x.accuracy[i];
        chart.draw_series(DashedLineSeries::new(
            vec![(-0.5, x.oracle_accuracy), (xb, x.oracle_accuracy)],
            8,
            5,
            rgb(ORACLE).stroke_width(2),
        ))?;
        chart.draw_series(DashedLineSeries::new(
            vec![(best as f64, acc(best)), (xb, acc(best))],
            4,
            4,
            MUTED.stroke_width(1),
        ))?;
        chart.draw_series(LineSeries::new(
            (0..k).map(|i| (i as f64, acc(i))),
            rgb(CURVE).stroke_width(3),
        ))?;
        chart
            .draw_series((0..k).map(|i| Circle::new((i as f64, acc(i)), 5, rgb(CURVE).filled())))?;
        chart.draw_series(std::iter::once(Circle::new(
            (best as f64, acc(best)),
            10,
            rgb(CURVE).stroke_width(2),
        )))?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(xb, acc(best)), (xb, x.oracle_accuracy)],
            rgb(ORACLE).stroke_width(3),
        )))?;
        let px = |xv: f64, yv: f64| chart.backend_coord(&(xv, yv));
        let (bx, by_best) = px(xb, acc(best));
        let (_, by_oracle) = px(xb, x.oracle_accuracy);
        for y in [by_best, by_oracle] {
            root.draw(&PathElement::new(
                vec![(bx - 6, y), (bx + 6, y)],
                rgb(ORACLE).stroke_width(3),
            ))?;
        }
        let mut lab = Labeller::default();
        let points: Vec<(i32, i32)> = (0..k).map(|i| px(i as f64, acc(i))).collect();
        for &(cx, cy) in &points {
            lab.reserve((cx - 11, cy - 11, cx + 11, cy + 11));
        }
        lab.reserve_path(&points);
        lab.reserve_path(&[points[best], (bx, by_best)]);
        let oracle_label = format!("oracle {:.1}%", x.oracle_accuracy);
        let (_, oh) = text_size(root, &oracle_label, LABEL);
        placed(
            root,
            &mut lab,
            &oracle_label,
            LABEL,
            rgb(ORACLE),
            &[(bx + 12, by_oracle - oh - 6), (bx + 12, by_oracle + 4)],
        )?;
        let headroom_label = format!("+{:.1} pts headroom", x.headroom);
        let (_, hh) = text_size(root, &headroom_label, LABEL);
        let mid = (by_best + by_oracle) / 2;
        placed(
            root,
            &mut lab,
            &headroom_label,
            LABEL,
            rgb(ORACLE),
            &[(bx + 12, mid - hh / 2), (bx + 12, by_best + 4)],
        )?;
        // Past MAX_POINT_LABELS points their labels could only pile up over each other.
        for (i, &p) in points
            .iter()
            .enumerate()
            .take_while(|_| k <= MAX_POINT_LABELS)
        {
            let s = format!("{:.1}", acc(i));
            let c = around(root, &s, LABEL, p, 12);
            placed(root, &mut lab, &s, LABEL, rgb(CURVE), &c)?;
        }
        let (_, axis_y) = px(0.0, y0);
        let centres: Vec<i32> = (0..k).map(|i| px(i as f64, y0).0).collect();
        category_labels(root, &v.configs, &centres, axis_y, TICK, turned)?;
        let frames: Vec<String> = v.frames.iter().map(u64::to_string).collect();
        let (x_mid, _) = px((k as f64 - 1.0) / 2.0, y0);
        text(
            root,
            &format!("configuration (frames: {})", frames.join(", ")),
            (x_mid, axis_y + lab_h + 10),
            &font(DESC, INK, HPos::Center, VPos::Top),
        )
    }
}

// ----- 2. churn per budget step -----

/// One model's flips at each budget step, each way.
pub struct Churn<'a>(pub &'a ModelView<'a>);

impl Chart for Churn<'_> {
    fn size(&self) -> (u32, u32) {
        let steps = self.0.x.churn.len() as u32;
        ((150 * steps + 200).clamp(760, 1600), 620)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let v = self.0;
        let x = v.x;
        let n = x.n_items.max(1) as f64;
        let (w, _) = self.size();
        title(
            root,
            &format!("{} · churn between budget steps", v.model),
            &format!(
                "{} · {} items · {} gained and {} lost over all steps",
                v.scope,
                x.n_items,
                x.churn_totals.wrong_to_correct,
                x.churn_totals.correct_to_wrong
            ),
        )?;
        let items: Vec<(Mark, RGBColor, String)> = CHURN_PARTS
            .iter()
            .map(|&(name, c)| (Mark::Box, rgb(c), name.to_string()))
            .collect();
        let lh = legend(root, (20, 70), w as i32 - 20, &items)?;
        let names: Vec<String> = x.churn.iter().map(|c| step_name(&c.from, &c.to)).collect();
        let (mut chart, labels) = step_axes(root, w, lh, &names, n * 1.14, "items")?;
        let half = 0.28;
        let mut lab = Labeller::default();
        let mut inside = Vec::new();
        let mut beside = Vec::new();
        for (i, c) in x.churn.iter().enumerate() {
            let parts = c.parts();
            let xc = i as f64;
            let mut base = 0.0;
            for (p, &count) in parts.iter().enumerate() {
                let top = base + count as f64;
                if count > 0 {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(xc - half, base), (xc + half, top)],
                        rgb(CHURN_PARTS[p].1).filled(),
                    )))?;
                }
                // Gained and lost are labelled above the bar; the stable parts in place.
                if count > 0 && (p == 0 || p == 3) {
                    let (x0, y0) = chart.backend_coord(&(xc - half, base));
                    let (x1, y1) = chart.backend_coord(&(xc + half, top));
                    let s = count.to_string();
                    let (tw, th) = text_size(root, &s, LABEL);
                    if y0 - y1 >= th + 6 && x1 - x0 >= tw + 6 {
                        inside.push((s, ((x0 + x1) / 2, (y0 + y1) / 2), p));
                    } else {
                        beside.push((s, (x1 + 6, (y0 + y1) / 2 - th / 2)));
                    }
                }
                base = top;
            }
            let (x0, y0) = chart.backend_coord(&(xc - half, 0.0));
            let (x1, y1) = chart.backend_coord(&(xc + half, n));
            lab.reserve((x0, y1, x1, y0));
        }
        for (s, at, p) in inside {
            let color = if p == 0 { WHITE } else { INK };
            text(
                root,
                &s,
                at,
                &font(LABEL, color, HPos::Center, VPos::Center),
            )?;
        }
        // Counts that do not fit their bar go beside it, while the bars are few enough.
        for (s, at) in beside
            .into_iter()
            .take_while(|_| x.churn.len() <= MAX_POINT_LABELS)
        {
            placed(root, &mut lab, &s, LABEL, INK, &[at])?;
        }
        for (i, c) in x.churn.iter().enumerate() {
            let (cx, top) = chart.backend_coord(&(i as f64, n));
            let g = format!("+{}", c.wrong_to_correct);
            let l = format!("−{}", c.correct_to_wrong);
            let (gw, _) = text_size(root, &g, TICK);
            let (lw, _) = text_size(root, &l, TICK);
            let start = cx - (gw + 10 + lw) / 2;
            let style = |c| font(TICK, rgb(c), HPos::Left, VPos::Bottom);
            text(root, &g, (start, top - 6), &style(GAINED))?;
            text(root, &l, (start + gw + 10, top - 6), &style(LOST))?;
        }
        step_names(root, &chart, &names, labels)
    }
}

/// A budget step as the step figures name it: `8f → 16f`.
fn step_name(from: &str, to: &str) -> String {
    format!("{} → {}", sanitize(from), sanitize(to))
}

/// The axes of a figure of one bar per budget step (the churn, the noise floor): the steps
/// at 0, 1, ... on x, 0 to `y_max` on y under `y_desc`, below a legend `lh` high, room left
/// below for the steps' names; with whether the names are turned and their height, for
/// [`step_names`] once the bars are drawn.
#[allow(clippy::type_complexity)]
fn step_axes<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    w: u32,
    lh: i32,
    names: &[String],
    y_max: f64,
    y_desc: &str,
) -> Result<
    (
        ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
        (bool, i32),
    ),
    PlotError,
> {
    let steps = names.len().max(1);
    let slot = (w as f64 - 110.0) / steps as f64;
    let (turned, lab_h) = category_labels_height(root, names, slot as i32, TICK);
    let mut chart = ChartBuilder::on(root)
        .margin_top(80 + lh)
        .margin_left(20)
        .margin_right(20)
        .margin_bottom(12)
        .x_label_area_size(lab_h + 34)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5..(steps as f64 - 0.5), 0.0..y_max)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(8)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .y_desc(y_desc)
        .label_style(font(TICK, INK, HPos::Center, VPos::Center))
        .axis_desc_style(font(DESC, INK, HPos::Center, VPos::Center))
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .draw()?;
    Ok((chart, (turned, lab_h)))
}

/// The steps' names under the axis of [`step_axes`], and what the axis is.
fn step_names<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    names: &[String],
    (turned, lab_h): (bool, i32),
) -> Result<(), PlotError> {
    let (_, axis_y) = chart.backend_coord(&(0.0, 0.0));
    let centres: Vec<i32> = (0..names.len())
        .map(|i| chart.backend_coord(&(i as f64, 0.0)).0)
        .collect();
    category_labels(root, names, &centres, axis_y, TICK, turned)?;
    let steps = names.len().max(1);
    let (x_mid, _) = chart.backend_coord(&((steps as f64 - 1.0) / 2.0, 0.0));
    text(
        root,
        "budget step (lower → higher configuration)",
        (x_mid, axis_y + lab_h + 10),
        &font(DESC, INK, HPos::Center, VPos::Top),
    )
}

// ----- 3. classes and rates -----

/// One model's trajectory classes and its item rates.
pub struct Classes<'a>(pub &'a ModelView<'a>);

impl Chart for Classes<'_> {
    fn size(&self) -> (u32, u32) {
        (1080, 580)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let v = self.0;
        let x = v.x;
        let n = x.n_items;
        title(
            root,
            &format!("{} · trajectory classes and regression rates", v.model),
            &format!("{} · {} items", v.scope, n),
        )?;
        let (left, right) = root.split_horizontally(660);
        // Left: the class mix.
        let counts: Vec<usize> = Class::ALL.iter().map(|&c| x.classes.get(c)).collect();
        let names: Vec<String> = Class::ALL.iter().map(|&c| class_label(c).into()).collect();
        let max = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
        let slot = (660.0 - 110.0) / 5.0;
        let (turned, lab_h) = category_labels_height(root, &names, slot as i32, TICK);
        let mut chart = ChartBuilder::on(&left)
            .margin_top(86)
            .margin_left(20)
            .margin_right(20)
            .margin_bottom(12)
            .x_label_area_size(lab_h + 34)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..4.5, 0.0..max * 1.16)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(8)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .y_desc("items")
            .label_style(font(TICK, INK, HPos::Center, VPos::Center))
            .axis_desc_style(font(DESC, INK, HPos::Center, VPos::Center))
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .draw()?;
        for (i, (&c, &count)) in Class::ALL.iter().zip(&counts).enumerate() {
            let xc = i as f64;
            if count > 0 {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(xc - 0.32, 0.0), (xc + 0.32, count as f64)],
                    rgb(class_colour(c)).filled(),
                )))?;
            }
            let pct = if n == 0 {
                0.0
            } else {
                100.0 * count as f64 / n as f64
            };
            let (cx, top) = chart.backend_coord(&(xc, count as f64));
            text(
                root,
                &format!("{count} ({pct:.1}%)"),
                (cx, top - 5),
                &font(LABEL, INK, HPos::Center, VPos::Bottom),
            )?;
        }
        let (_, axis_y) = chart.backend_coord(&(0.0, 0.0));
        let centres: Vec<i32> = (0..5)
            .map(|i| chart.backend_coord(&(i as f64, 0.0)).0)
            .collect();
        category_labels(root, &names, &centres, axis_y, TICK, turned)?;
        text(
            root,
            "trajectory class",
            (chart.backend_coord(&(2.0, 0.0)).0, axis_y + lab_h + 10),
            &font(DESC, INK, HPos::Center, VPos::Top),
        )?;

        // Right: harmful and terminal regression rates, with their intervals.
        let rates = [
            (
                "harmful",
                x.harmful_rate,
                x.bootstrap.as_ref().map(|b| b.harmful_rate),
            ),
            (
                "terminal regression",
                x.terminal_regression_rate,
                x.terminal_interval,
            ),
        ];
        let top = rates
            .iter()
            .map(|&(_, r, i)| i.map_or(r, |i| i.hi.max(r)))
            .fold(0.0, f64::max);
        let note = match &x.bootstrap {
            Some(b) => format!("rates with 95% bootstrap intervals (B = {})", b.b),
            None => "rates; no bootstrap intervals (--boot 0)".into(),
        };
        text(
            root,
            &note,
            (680, 92),
            &font(LABEL, MUTED, HPos::Left, VPos::Top),
        )?;
        let rnames: Vec<String> = rates.iter().map(|r| r.0.to_string()).collect();
        let (rturned, rlab_h) = category_labels_height(root, &rnames, 150, TICK);
        let mut chart = ChartBuilder::on(&right)
            .margin_top(120)
            .margin_left(10)
            .margin_right(20)
            .margin_bottom(12)
            .x_label_area_size(rlab_h + 34)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..1.5, 0.0..(top * 1.35).max(5.0))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(6)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .y_desc("% of items")
            .label_style(font(TICK, INK, HPos::Center, VPos::Center))
            .axis_desc_style(font(DESC, INK, HPos::Center, VPos::Center))
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .draw()?;
        let colours = [rgb(LOST), RGBColor(140, 20, 25)];
        for (i, &(_, rate, interval)) in rates.iter().enumerate() {
            let xc = i as f64;
            chart.draw_series(std::iter::once(Rectangle::new(
                [(xc - 0.3, 0.0), (xc + 0.3, rate)],
                colours[i].filled(),
            )))?;
            let mut label_top = rate;
            if let Some(iv) = interval {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(xc, iv.lo), (xc, iv.hi)],
                    INK.stroke_width(2),
                )))?;
                for y in [iv.lo, iv.hi] {
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(xc - 0.08, y), (xc + 0.08, y)],
                        INK.stroke_width(2),
                    )))?;
                }
                label_top = label_top.max(iv.hi);
            }
            let (cx, ty) = chart.backend_coord(&(xc, label_top));
            let mut y = ty - 5;
            if let Some(iv) = interval {
                let s = format!("[{:.1}, {:.1}]", iv.lo, iv.hi);
                text(
                    root,
                    &s,
                    (cx, y),
                    &font(13.0, MUTED, HPos::Center, VPos::Bottom),
                )?;
                y -= text_size(root, &s, 13.0).1 + 6;
            }
            text(
                root,
                &format!("{rate:.1}%"),
                (cx, y),
                &font(TICK, INK, HPos::Center, VPos::Bottom),
            )?;
        }
        let (_, axis_y) = chart.backend_coord(&(0.0, 0.0));
        let centres: Vec<i32> = (0..2)
            .map(|i| chart.backend_coord(&(i as f64, 0.0)).0)
            .collect();
        category_labels(root, &rnames, &centres, axis_y, TICK, rturned)
    }
}

// ----- 4. complementarity heatmaps -----

/// One model's right-wrong and pair-oracle matrices as heatmaps.
pub struct Complementarity<'a>(pub &'a ModelView<'a>);

impl Complementarity<'_> {
    fn cell(&self) -> i32 {
        (480 / self.0.k() as i32).clamp(36, 72)
    }

    /// Row label width, column label height and whether columns are turned.
    fn label_box(&self) -> (i32, i32, bool) {
        // Estimated without a backend: DejaVu Sans averages about 0.56 em per character.
        let widest = self
            .0
            .configs
            .iter()
            .map(|c| (c.chars().count() as f64 * LABEL * 0.56) as i32)
            .max()
            .unwrap_or(0);
        if widest <= self.cell() - 6 {
            (widest + 14, 26, false)
        } else {
            (widest + 14, widest + 14, true)
        }
    }

    fn panel_width(&self) -> i32 {
        let (lw, _, _) = self.label_box();
        lw + self.cell() * self.0.k() as i32 + 110
    }
}

impl Chart for Complementarity<'_> {
    fn size(&self) -> (u32, u32) {
        let (_, ch, _) = self.label_box();
        let grid = self.cell() * self.0.k() as i32;
        let w = (40 + 2 * self.panel_width()).max(900);
        (w as u32, (110 + grid + ch + 24) as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let v = self.0;
        let x = v.x;
        title(
            root,
            &format!("{} · complementarity of configurations", v.model),
            &format!(
                "{} · {} items · rows and columns in grid order",
                v.scope, x.n_items
            ),
        )?;
        let panels = [
            (
                "right at row, wrong at column (% of items)",
                &x.complementarity.right_wrong,
                LOST,
            ),
            (
                "pair oracle gain over the better of the two (pts)",
                &x.complementarity.pair_oracle_gain,
                ORACLE,
            ),
        ];
        for (p, (name, values, base)) in panels.into_iter().enumerate() {
            self.panel(root, 20 + p as i32 * self.panel_width(), name, values, base)?;
        }
        Ok(())
    }
}

impl Complementarity<'_> {
    fn panel<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        x0: i32,
        name: &str,
        values: &[Vec<f64>],
        base: crate::core::figures::Rgb,
    ) -> Result<(), PlotError> {
        let v = self.0;
        let k = v.k();
        let cell = self.cell();
        let (lw, _, turned) = self.label_box();
        let gx = x0 + lw;
        let gy = 110;
        text(
            root,
            name,
            (x0, 80),
            &font(TICK, INK, HPos::Left, VPos::Top),
        )?;
        let max = values
            .iter()
            .flatten()
            .copied()
            .fold(0.0, f64::max)
            .max(f64::MIN_POSITIVE);
        let size = if cell < 46 { 11.0 } else { 13.0 };
        for (r, row) in values.iter().enumerate() {
            for (c, &val) in row.iter().enumerate() {
                let (cx, cy) = (gx + c as i32 * cell, gy + r as i32 * cell);
                let rect = [(cx, cy), (cx + cell - 2, cy + cell - 2)];
                let centre = (cx + cell / 2 - 1, cy + cell / 2 - 1);
                if r == c {
                    root.draw(&Rectangle::new(rect, RGBColor(238, 238, 238).filled()))?;
                    text(
                        root,
                        "–",
                        centre,
                        &font(size, MUTED, HPos::Center, VPos::Center),
                    )?;
                    continue;
                }
                let t = val / max;
                root.draw(&Rectangle::new(rect, tint(base, 0.92 - 0.92 * t).filled()))?;
                let ink = if t > 0.55 { WHITE } else { INK };
                text(
                    root,
                    &format!("{val:.1}"),
                    centre,
                    &font(size, ink, HPos::Center, VPos::Center),
                )?;
            }
        }
        for (i, name) in v.configs.iter().enumerate() {
            let y = gy + i as i32 * cell + cell / 2;
            text(
                root,
                name,
                (gx - 8, y),
                &font(LABEL, INK, HPos::Right, VPos::Center),
            )?;
        }
        let centres: Vec<i32> = (0..k).map(|i| gx + i as i32 * cell + cell / 2).collect();
        category_labels(
            root,
            &v.configs,
            &centres,
            gy + k as i32 * cell,
            LABEL,
            turned,
        )?;
        // Colour scale.
        let sx = gx + k as i32 * cell + 16;
        let h = k as i32 * cell - 2;
        let steps = 24;
        for s in 0..steps {
            let t = 1.0 - s as f64 / steps as f64;
            let y = gy + h * s / steps;
            let y1 = gy + h * (s + 1) / steps;
            root.draw(&Rectangle::new(
                [(sx, y), (sx + 14, y1)],
                tint(base, 0.92 - 0.92 * t).filled(),
            ))?;
        }
        root.draw(&Rectangle::new(
            [(sx, gy), (sx + 14, gy + h)],
            MUTED.stroke_width(1),
        ))?;
        let scale = font(13.0, MUTED, HPos::Left, VPos::Center);
        let top = if max == f64::MIN_POSITIVE { 0.0 } else { max };
        text(root, &format!("{top:.1}"), (sx + 20, gy + 6), &scale)?;
        text(root, "0", (sx + 20, gy + h - 6), &scale)
    }
}

// ----- 5. data map -----

/// One model's data map: each item by its mean correctness and its variability.
pub struct DataMapChart<'a> {
    v: &'a ModelView<'a>,
    map: DataMap,
}

impl<'a> DataMapChart<'a> {
    /// The data map of `v`, computed from its per-item results.
    pub fn new(v: &'a ModelView<'a>) -> Self {
        DataMapChart {
            v,
            map: DataMap::new(&v.x.items, v.k()),
        }
    }
}

impl Chart for DataMapChart<'_> {
    fn size(&self) -> (u32, u32) {
        (920, 700)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let v = self.v;
        let k = self.map.k;
        let (w, _) = self.size();
        title(
            root,
            &format!("{} · data map of items", v.model),
            &format!(
                "{} · {} items · {} configurations · bubble area ∝ items",
                v.scope, v.x.n_items, k
            ),
        )?;
        let items: Vec<(Mark, RGBColor, String)> = Class::ALL
            .iter()
            .map(|&c| (Mark::Dot, rgb(class_colour(c)), class_label(c).to_string()))
            .collect();
        let lh = legend(root, (20, 70), w as i32 - 20, &items)?;
        let mut chart = ChartBuilder::on(root)
            .margin_top(84 + lh)
            .margin_left(20)
            .margin_right(30)
            .margin_bottom(12)
            .x_label_area_size(60)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.07..1.07, -0.07..1.07)?;
        chart
            .configure_mesh()
            .x_labels(6)
            .y_labels(6)
            .x_label_formatter(&|v| format!("{v:.1}"))
            .y_label_formatter(&|v| format!("{v:.1}"))
            .x_desc("mean correctness across configurations")
            .y_desc("variability (share of budget steps that flip)")
            .label_style(font(TICK, INK, HPos::Center, VPos::Center))
            .axis_desc_style(font(DESC, INK, HPos::Center, VPos::Center))
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .draw()?;
        let (ax0, ay0) = chart.backend_coord(&(0.0, 0.0));
        let (ax1, ay1) = chart.backend_coord(&(1.0, 1.0));
        let sx = (ax1 - ax0) as f64 / k.max(1) as f64;
        let sy = (ay0 - ay1) as f64 / k.saturating_sub(1).max(1) as f64;
        let rmax = (0.47 * sx.min(sy)).clamp(6.0, 36.0);
        let most = self
            .map
            .cells
            .values()
            .map(|c| c.iter().sum::<usize>())
            .max()
            .unwrap_or(1)
            .max(1) as f64;
        for (&(right, flips), counts) in &self.map.cells {
            let total: usize = counts.iter().sum();
            let dominant = (0..5).fold(0, |b, i| if counts[i] > counts[b] { i } else { b });
            let colour = class_colour(Class::ALL[dominant]);
            let r = (rmax * (total as f64 / most).sqrt()).max(3.0);
            let at = chart.backend_coord(&(self.map.x(right), self.map.y(flips)));
            root.draw(&Circle::new(at, r as i32, rgb(colour).mix(0.85).filled()))?;
            root.draw(&Circle::new(
                at,
                r as i32,
                tint(colour, 0.0).stroke_width(1),
            ))?;
            if r >= 11.0 {
                let s = total.to_string();
                if f64::from(text_size(root, &s, 12.0).0) <= 2.0 * r - 4.0 {
                    text(root, &s, at, &font(12.0, WHITE, HPos::Center, VPos::Center))?;
                }
            }
        }
        Ok(())
    }
}

// ----- 6. cascade -----

/// One model's confidence cascade: accuracy against the frames it spends per item.
pub struct CascadeChart<'a> {
    /// The model drawn.
    pub v: &'a ModelView<'a>,
    /// Its cascade (a model without one gets no figure).
    pub c: &'a Cascade,
}

impl Chart for CascadeChart<'_> {
    fn size(&self) -> (u32, u32) {
        (980, 620)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let v = self.v;
        let x = v.x;
        let c = self.c;
        let sweep = c.sweep.as_deref().unwrap_or_default();
        let (w, _) = self.size();
        let stages: Vec<String> = c.stages.iter().map(|s| sanitize(s).into_owned()).collect();
        let sub = match &c.selected {
            Some(s) => format!(
                "{} · stages {} · selected τ = {:.2}: {:.1}% at {:.1} frames per item ({} at {:.1}%)",
                v.scope,
                stages.join(" → "),
                s.tau,
                s.accuracy,
                s.mean_shared_cost,
                sanitize(&c.baseline.config),
                c.baseline.accuracy
            ),
            None => format!("{} · stages {}", v.scope, stages.join(" → ")),
        };
        title(root, &format!("{} · confidence cascade", v.model), &sub)?;
        let lh = legend(
            root,
            (20, 70),
            w as i32 - 20,
            &[
                (
                    Mark::Line,
                    rgb(CURVE),
                    "cascade, threshold τ from 0 to 1".into(),
                ),
                (Mark::Box, INK, "fixed budget (each configuration)".into()),
                (Mark::Ring, rgb(ORACLE), "selected τ".into()),
            ],
        )?;
        let fixed: Vec<(f64, f64)> = (0..v.k())
            .map(|i| (v.frames[i] as f64, x.accuracy[i]))
            .collect();
        let all = sweep
            .iter()
            .map(|r| (r.mean_shared_cost, r.accuracy))
            .chain(fixed.iter().copied());
        let (mut xmax, mut lo, mut hi) = (0.0f64, f64::INFINITY, f64::NEG_INFINITY);
        for (cx, acc) in all {
            xmax = xmax.max(cx);
            lo = lo.min(acc);
            hi = hi.max(acc);
        }
        let (y0, y1) = pct_range(lo, hi, 5.0);
        let xmax = if xmax > 0.0 { xmax * 1.1 } else { 1.0 };
        let mut chart = ChartBuilder::on(root)
            .margin_top(84 + lh)
            .margin_left(20)
            .margin_right(30)
            .margin_bottom(12)
            .x_label_area_size(60)
            .y_label_area_size(70)
            .build_cartesian_2d(-xmax * 0.03..xmax, y0..y1)?;
        chart
            .configure_mesh()
            .x_labels(8)
            .y_labels(8)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .x_desc("mean frames per item")
            .y_desc("accuracy (%)")
            .label_style(font(TICK, INK, HPos::Center, VPos::Center))
            .axis_desc_style(font(DESC, INK, HPos::Center, VPos::Center))
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .draw()?;
        chart.draw_series(LineSeries::new(
            sweep.iter().map(|r| (r.mean_shared_cost, r.accuracy)),
            rgb(CURVE).stroke_width(2),
        ))?;
        let mut lab = Labeller::default();
        let line: Vec<(i32, i32)> = sweep
            .iter()
            .map(|r| chart.backend_coord(&(r.mean_shared_cost, r.accuracy)))
            .collect();
        lab.reserve_path(&line);
        let fixed_px: Vec<(i32, i32)> = fixed.iter().map(|p| chart.backend_coord(p)).collect();
        for &(px, py) in &fixed_px {
            root.draw(&Rectangle::new(
                [(px - 5, py - 5), (px + 5, py + 5)],
                INK.filled(),
            ))?;
            lab.reserve((px - 7, py - 7, px + 7, py + 7));
        }
        if let Some(s) = &c.selected {
            let at = chart.backend_coord(&(s.mean_shared_cost, s.accuracy));
            root.draw(&Circle::new(at, 10, rgb(ORACLE).stroke_width(3)))?;
            lab.reserve((at.0 - 12, at.1 - 12, at.0 + 12, at.1 + 12));
            let label = format!("τ = {:.2}", s.tau);
            let cands = around(root, &label, LABEL, at, 14);
            placed(root, &mut lab, &label, LABEL, rgb(ORACLE), &cands)?;
        }
        // Points that share a frame count (resolution variants) are labelled from the top.
        let mut order: Vec<usize> = (0..fixed.len()).collect();
        order.sort_by_key(|&i| (fixed_px[i].0, fixed_px[i].1));
        for i in order
            .into_iter()
            .take_while(|_| fixed.len() <= MAX_POINT_LABELS)
        {
            let s = &v.configs[i];
            let cands = {
                let (tw, th) = text_size(root, s, LABEL);
                let (px, py) = fixed_px[i];
                vec![
                    (px + 9, py - th / 2),
                    (px - 9 - tw, py - th / 2),
                    (px - tw / 2, py - 9 - th),
                    (px - tw / 2, py + 9),
                ]
            };
            placed(root, &mut lab, s, LABEL, INK, &cands)?;
        }
        Ok(())
    }
}

// ----- 7. pathways -----

/// The evidence pathways the audits tagged, overall and per model.
pub struct Pathways {
    /// Pathway ids, most tagged overall first (escaped).
    order: Vec<String>,
    /// ("all models" or a model, counts per pathway in `order`).
    groups: Vec<(String, Vec<PathwayCount>)>,
    records: usize,
    untagged: usize,
}

impl Pathways {
    /// The figure of `f`'s pathway counts, the most tagged pathway first.
    pub fn new(f: &Findings) -> Self {
        let mut ids: Vec<(&String, &PathwayCount)> = f.overall.iter().collect();
        ids.sort_by(|a, b| b.1.tagged.cmp(&a.1.tagged).then_with(|| a.0.cmp(b.0)));
        let counts = |t: &crate::core::figures::PathwayTable| {
            ids.iter()
                .map(|(id, _)| t.get(*id).copied().unwrap_or_default())
                .collect::<Vec<_>>()
        };
        let mut groups = vec![("all models".to_string(), counts(&f.overall))];
        groups.extend(
            f.by_model
                .iter()
                .map(|(m, t)| (sanitize(m).into_owned(), counts(t))),
        );
        Pathways {
            order: ids
                .iter()
                .map(|(id, _)| sanitize(id).into_owned())
                .collect(),
            groups,
            records: f.records,
            untagged: f.untagged,
        }
    }

    const ROW: i32 = 24;
    const HEAD: i32 = 34;
}

impl Chart for Pathways {
    fn size(&self) -> (u32, u32) {
        let rows = self.groups.len() as i32 * (Self::HEAD + self.order.len() as i32 * Self::ROW);
        (1000, (130 + rows + 20) as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let (w, _) = self.size();
        title(
            root,
            "Evidence pathways of audited harmful transitions",
            &format!(
                "{} audit records, {} without a pathway · bar: records tagged; dark part: tagged as primary",
                self.records, self.untagged
            ),
        )?;
        let name_w = self
            .order
            .iter()
            .map(|s| text_size(root, s, LABEL).0)
            .max()
            .unwrap_or(0)
            + 40;
        let x0 = 20 + name_w;
        let bar_w = w as i32 - x0 - 190;
        let most = self
            .groups
            .first()
            .map(|g| g.1.iter().map(|c| c.tagged).max().unwrap_or(0))
            .unwrap_or(0)
            .max(1) as f64;
        let mut y = 90;
        for (g, counts) in &self.groups {
            text(
                root,
                g,
                (20, y + 8),
                &font(TICK, INK, HPos::Left, VPos::Top),
            )?;
            root.draw(&PathElement::new(
                vec![
                    (20, y + Self::HEAD - 4),
                    (w as i32 - 20, y + Self::HEAD - 4),
                ],
                GRID.stroke_width(1),
            ))?;
            y += Self::HEAD;
            for (p, (id, c)) in self.order.iter().zip(counts).enumerate() {
                let colour = SERIES[p % SERIES.len()];
                let cy = y + Self::ROW / 2;
                text(
                    root,
                    id,
                    (x0 - 12, cy),
                    &font(LABEL, INK, HPos::Right, VPos::Center),
                )?;
                let len = |n: usize| (bar_w as f64 * n as f64 / most).round() as i32;
                if c.tagged > 0 {
                    root.draw(&Rectangle::new(
                        [(x0, cy - 8), (x0 + len(c.tagged), cy + 8)],
                        tint(colour, 0.55).filled(),
                    ))?;
                }
                if c.primary > 0 {
                    root.draw(&Rectangle::new(
                        [(x0, cy - 8), (x0 + len(c.primary), cy + 8)],
                        rgb(colour).filled(),
                    ))?;
                }
                text(
                    root,
                    &format!("{} tagged · {} primary", c.tagged, c.primary),
                    (x0 + len(c.tagged) + 8, cy),
                    &font(13.0, MUTED, HPos::Left, VPos::Center),
                )?;
                y += Self::ROW;
            }
        }
        Ok(())
    }
}

// ----- 8. across models: curves on one axis, headroom and harmful rate -----

/// Every model's accuracy curve on one axis. The configurations are the union of the
/// models' grids, ordered by their own budget, then by name; a model is drawn over the
/// configurations of its own grid.
pub struct ModelsCurve<'a> {
    /// The models drawn, in report order.
    pub views: &'a [ModelView<'a>],
    /// What the grids are (per model or joint), for the subtitle.
    pub grids: String,
}

impl ModelsCurve<'_> {
    /// The union of the configurations, in axis order.
    pub fn configs(&self) -> Vec<String> {
        crate::core::analysis::grid::names_by_budget(self.views.iter().flat_map(|v| {
            v.x.grid
                .own_budgets
                .iter()
                .zip(&v.configs)
                .map(|(b, c)| (b.0, c.as_str()))
        }))
        .into_iter()
        .map(str::to_string)
        .collect()
    }
}

impl Chart for ModelsCurve<'_> {
    fn size(&self) -> (u32, u32) {
        let k = self.configs().len() as u32;
        ((90 * k + 360).clamp(960, 1600), 640)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let configs = self.configs();
        let k = configs.len();
        let (w, _) = self.size();
        let scope = self.views.first().map_or("", |v| v.scope.as_str());
        title(
            root,
            "accuracy by configuration · all models",
            &format!("{scope} · {} models · {}", self.views.len(), self.grids),
        )?;
        let colour = |i: usize| rgb(SERIES[i % SERIES.len()]);
        let entries: Vec<(Mark, RGBColor, String)> = self
            .views
            .iter()
            .enumerate()
            .map(|(i, v)| (Mark::Line, colour(i), v.model.clone()))
            .collect();
        let lh = legend(root, (20, 70), w as i32 - 20, &entries)?;
        // Room right of the last configuration for the model names at the line ends.
        let extra = 1.6;
        let slot = (w as f64 - 110.0) / (k as f64 + extra);
        let (turned, lab_h) = category_labels_height(root, &configs, slot as i32, TICK);
        let values = self.views.iter().flat_map(|v| v.x.accuracy.iter().copied());
        let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
        let (y0, y1) = pct_range(lo, hi, 6.0);
        let mut chart = ChartBuilder::on(root)
            .margin_top(80 + lh)
            .margin_left(20)
            .margin_right(20)
            .margin_bottom(12)
            .x_label_area_size(lab_h + 34)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..(k as f64 - 0.5 + extra), y0..y1)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(8)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .y_desc("accuracy (%)")
            .label_style(font(TICK, INK, HPos::Center, VPos::Center))
            .axis_desc_style(font(DESC, INK, HPos::Center, VPos::Center))
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .draw()?;
        let mut ends = Vec::new();
        let column: rustc_hash::FxHashMap<&str, usize> = configs
            .iter()
            .enumerate()
            .map(|(i, c)| (c.as_str(), i))
            .collect();
        for (i, v) in self.views.iter().enumerate() {
            let mut points: Vec<(f64, f64)> = v
                .configs
                .iter()
                .zip(&v.x.accuracy)
                .filter_map(|(c, &a)| Some((*column.get(c.as_str())? as f64, a)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart.draw_series(LineSeries::new(
                points.iter().copied(),
                colour(i).stroke_width(3),
            ))?;
            chart.draw_series(
                points
                    .iter()
                    .map(|&p| Circle::new(p, 5, colour(i).filled())),
            )?;
            if let Some(last) = points.last() {
                ends.push((i, chart.backend_coord(last)));
            }
        }
        // Each line named, so that no model is told by colour alone: the names in one
        // column right of the last configuration, top to bottom as the lines end, each as
        // near its line's end as the others leave room for, a thin leader from the end to
        // a name that is not beside it.
        let (_, plot_top) = chart.backend_coord(&(0.0, y1));
        let (_, plot_bottom) = chart.backend_coord(&(0.0, y0));
        ends.sort_by_key(|&(i, (_, y))| (y, i));
        let th = text_size(root, "Mg", LABEL).1 + 2;
        let column = ends.iter().map(|&(_, (x, _))| x).max().unwrap_or(0) + 14;
        let centres: Vec<i32> = ends.iter().map(|&(_, (_, y))| y).collect();
        let tops = stack(&centres, th, plot_top, plot_bottom);
        for (&(i, (x, y)), &top) in ends.iter().zip(&tops) {
            let mid = top + th / 2;
            if x + 14 < column || (mid - y).abs() > th / 2 {
                root.draw(&PathElement::new(
                    vec![(x + 7, y), (column - 4, mid)],
                    tint(SERIES[i % SERIES.len()], 0.35).stroke_width(1),
                ))?;
            }
            text(
                root,
                &self.views[i].model,
                (column, mid),
                &font(LABEL, colour(i), HPos::Left, VPos::Center),
            )?;
        }
        let (_, axis_y) = chart.backend_coord(&(0.0, y0));
        let centres: Vec<i32> = (0..k)
            .map(|i| chart.backend_coord(&(i as f64, y0)).0)
            .collect();
        category_labels(root, &configs, &centres, axis_y, TICK, turned)?;
        let (x_mid, _) = chart.backend_coord(&((k as f64 - 1.0) / 2.0, y0));
        text(
            root,
            "configuration (by budget)",
            (x_mid, axis_y + lab_h + 10),
            &font(DESC, INK, HPos::Center, VPos::Top),
        )
    }
}

/// The oracle headroom and the harmful rate of every model, with bootstrap intervals.
pub struct ModelsRates<'a> {
    /// The models drawn, in report order.
    pub views: &'a [ModelView<'a>],
    /// What the grids are (per model or joint), for the subtitle.
    pub grids: String,
}

impl Chart for ModelsRates<'_> {
    fn size(&self) -> (u32, u32) {
        let n = self.views.len() as u32;
        ((2 * (110 * n + 120)).clamp(1080, 2400), 600)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let (w, _) = self.size();
        let scope = self.views.first().map_or("", |v| v.scope.as_str());
        let boot = self.views.iter().find_map(|v| v.x.bootstrap.as_ref());
        title(
            root,
            "oracle headroom and harmful rate · all models",
            &format!(
                "{scope} · {} models · {} · {}",
                self.views.len(),
                self.grids,
                match boot {
                    Some(b) => format!("95% bootstrap intervals (B = {})", b.b),
                    None => "no bootstrap intervals (--boot 0)".into(),
                }
            ),
        )?;
        let names: Vec<String> = self.views.iter().map(|v| v.model.clone()).collect();
        let (left, right) = root.split_horizontally(w / 2);
        let headroom: Vec<(f64, Option<Interval>)> = self
            .views
            .iter()
            .map(|v| (v.x.headroom, v.x.bootstrap.as_ref().map(|b| b.headroom)))
            .collect();
        let harmful: Vec<(f64, Option<Interval>)> = self
            .views
            .iter()
            .map(|v| {
                (
                    v.x.harmful_rate,
                    v.x.bootstrap.as_ref().map(|b| b.harmful_rate),
                )
            })
            .collect();
        let panel = Panel {
            names: &names,
            x0: 0,
        };
        panel.draw(
            root,
            &left,
            "oracle headroom over the best fixed configuration",
            "headroom (points)",
            &headroom,
            "",
            rgb(ORACLE),
        )?;
        Panel {
            x0: (w / 2) as i32,
            ..panel
        }
        .draw(
            root,
            &right,
            "items with a harmful transition",
            "harmful rate (% of items)",
            &harmful,
            "%",
            rgb(LOST),
        )
    }
}

/// One bar per model with its interval, in one half of a figure.
struct Panel<'n> {
    names: &'n [String],
    /// The panel's left edge in the figure (chart coordinates are the figure's already).
    x0: i32,
}

impl Panel<'_> {
    #[allow(clippy::too_many_arguments)]
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        area: &DrawingArea<DB, Shift>,
        heading: &str,
        y_desc: &str,
        values: &[(f64, Option<Interval>)],
        unit: &str,
        colour: RGBColor,
    ) -> Result<(), PlotError> {
        let n = values.len();
        text(
            root,
            heading,
            (self.x0 + 20, 76),
            &font(DESC, INK, HPos::Left, VPos::Top),
        )?;
        let top = values
            .iter()
            .map(|&(v, i)| i.map_or(v, |i| i.hi.max(v)))
            .fold(0.0, f64::max);
        let width = area.dim_in_pixel().0 as f64;
        let slot = (width - 110.0) / n.max(1) as f64;
        // Names horizontal, on up to three lines, where they break to fit their bar's
        // slot; turned only where a part of a name is wider than the slot.
        let wrapped = wrapped_names(root, self.names, slot as i32, TICK);
        let line_h = (TICK * 1.3) as i32;
        let (turned, lab_h) = match &wrapped {
            Some(lines) => {
                let most = lines.iter().map(Vec::len).max().unwrap_or(1) as i32;
                (false, most * line_h + 4)
            }
            None => category_labels_height(root, self.names, slot as i32, TICK),
        };
        let mut chart = ChartBuilder::on(area)
            .margin_top(120)
            .margin_left(20)
            .margin_right(20)
            .margin_bottom(12)
            .x_label_area_size(lab_h + 20)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..(n as f64 - 0.5), 0.0..(top * 1.3).max(5.0))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(6)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .y_desc(y_desc)
            .label_style(font(TICK, INK, HPos::Center, VPos::Center))
            .axis_desc_style(font(DESC, INK, HPos::Center, VPos::Center))
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .draw()?;
        for (i, &(value, interval)) in values.iter().enumerate() {
            let xc = i as f64;
            chart.draw_series(std::iter::once(Rectangle::new(
                [(xc - 0.3, 0.0), (xc + 0.3, value)],
                colour.filled(),
            )))?;
            let mut label_top = value;
            if let Some(iv) = interval {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(xc, iv.lo), (xc, iv.hi)],
                    INK.stroke_width(2),
                )))?;
                for y in [iv.lo, iv.hi] {
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(xc - 0.08, y), (xc + 0.08, y)],
                        INK.stroke_width(2),
                    )))?;
                }
                label_top = label_top.max(iv.hi);
            }
            let (cx, ty) = chart.backend_coord(&(xc, label_top));
            let mut y = ty - 5;
            if let Some(iv) = interval {
                let s = format!("[{:.1}, {:.1}]", iv.lo, iv.hi);
                text(
                    root,
                    &s,
                    (cx, y),
                    &font(13.0, MUTED, HPos::Center, VPos::Bottom),
                )?;
                y -= text_size(root, &s, 13.0).1 + 6;
            }
            text(
                root,
                &format!("{value:.1}{unit}"),
                (cx, y),
                &font(TICK, INK, HPos::Center, VPos::Bottom),
            )?;
        }
        let (_, axis_y) = chart.backend_coord(&(0.0, 0.0));
        let centres: Vec<i32> = (0..n)
            .map(|i| chart.backend_coord(&(i as f64, 0.0)).0)
            .collect();
        match wrapped {
            Some(lines) => {
                for (name, &x) in lines.iter().zip(&centres) {
                    for (j, l) in name.iter().enumerate() {
                        text(
                            root,
                            l,
                            (x, axis_y + 4 + j as i32 * line_h),
                            &font(TICK, INK, HPos::Center, VPos::Top),
                        )?;
                    }
                }
                Ok(())
            }
            None => category_labels(root, self.names, &centres, axis_y, TICK, turned),
        }
    }
}

// ----- 9. negative flips against the noise floor -----

/// One model's negative-flip rate per ladder edge against the floor of the edge's two
/// configurations over replicates (docs/measures.md §16.3): a bar per edge, the floor a
/// line across it; the edges beyond noise darker and labelled so.
pub struct Noise<'a> {
    /// The model.
    pub v: &'a ModelView<'a>,
    /// Its replicates block.
    pub r: &'a Replicated,
}

/// A p- or q-value as the figure prints it: three decimals, or two significant digits
/// below 0.001.
pub fn p_label(p: f64) -> String {
    if p >= 0.001 || p == 0.0 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

impl Chart for Noise<'_> {
    fn size(&self) -> (u32, u32) {
        let steps = self.r.edges.len() as u32;
        ((150 * steps + 200).clamp(760, 1600), 620)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let (v, r) = (self.v, self.r);
        let edges = &r.edges;
        let (w, _) = self.size();
        let beyond = edges.iter().filter(|e| e.beyond_noise).count();
        title(
            root,
            &format!("{} · negative flips against the noise floor", v.model),
            &format!(
                "{} · {} items · floor over {} replicate pairs ({}) · {} of {} edges beyond noise (q ≤ {})",
                v.scope,
                v.x.n_items,
                r.floor.all.pairs,
                sanitize(&r.nuisances.join(", ")),
                beyond,
                edges.len(),
                r.alpha
            ),
        )?;
        let items = [
            (
                Mark::Box,
                tint(LOST, 0.55),
                "observed: % of items right before the step, wrong after".to_string(),
            ),
            (Mark::Box, rgb(LOST), "beyond noise".to_string()),
            (
                Mark::Line,
                INK,
                "floor: the same under replicates of the two configurations".to_string(),
            ),
        ];
        let lh = legend(root, (20, 70), w as i32 - 20, &items)?;
        let names: Vec<String> = edges.iter().map(|e| step_name(&e.from, &e.to)).collect();
        let top = edges
            .iter()
            .map(|e| e.observed_nfr.max(e.floor_nfr.unwrap_or(0.0)))
            .fold(0.0, f64::max);
        let (mut chart, labels) = step_axes(
            root,
            w,
            lh,
            &names,
            (top * 1.4).max(5.0),
            "negative flips (% of items)",
        )?;
        let half = 0.28;
        let labelled = edges.len() <= MAX_POINT_LABELS;
        for (i, e) in edges.iter().enumerate() {
            let xc = i as f64;
            let colour = if e.beyond_noise {
                rgb(LOST)
            } else {
                tint(LOST, 0.55)
            };
            chart.draw_series(std::iter::once(Rectangle::new(
                [(xc - half, 0.0), (xc + half, e.observed_nfr)],
                colour.filled(),
            )))?;
            if let Some(f) = e.floor_nfr {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(xc - half - 0.06, f), (xc + half + 0.06, f)],
                    INK.stroke_width(3),
                )))?;
            }
        }
        step_names(root, &chart, &names, labels)?;
        // Values, q and floors are labelled while the edges are few enough to read them.
        if !labelled {
            return Ok(());
        }
        for (i, e) in edges.iter().enumerate() {
            let xc = i as f64;
            let (cx, ty) =
                chart.backend_coord(&(xc, e.observed_nfr.max(e.floor_nfr.unwrap_or(0.0))));
            let mut y = ty - 6;
            // Bottom up: the value, its floor, q, the mark.
            let mut stack = vec![(format!("{:.1}%", e.observed_nfr), TICK, INK)];
            if let Some(f) = e.floor_nfr {
                stack.push((format!("floor {f:.1}"), 13.0, MUTED));
            }
            if let Some(q) = e.excess_q {
                stack.push((format!("q = {}", p_label(q)), 13.0, MUTED));
            }
            if e.beyond_noise {
                stack.push(("beyond noise".to_string(), 13.0, rgb(LOST)));
            }
            for (s, size, colour) in stack {
                let (_, th) = text_size(root, &s, size);
                text(
                    root,
                    &s,
                    (cx, y),
                    &font(size, colour, HPos::Center, VPos::Bottom),
                )?;
                y -= th + 4;
            }
        }
        Ok(())
    }
}
