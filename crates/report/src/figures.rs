//! The page's figures: bar charts of labelled counts and histograms of values, drawn by
//! `plotters` into SVG strings the page inlines.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Figure size in pixels.
const SIZE: (u32, u32) = (600, 300);
/// Histograms have at most this many bins.
const MAX_BINS: usize = 12;
const BAR: RGBColor = RGBColor(70, 110, 170);

/// A bar per labelled count, in the order given. An error (plotters' backend writes to a String,
/// so it has no I/O to fail; this is defensive) becomes a sentence in place of the figure.
pub(crate) fn bars(counts: &[(String, u64)], x_desc: &str, y_desc: &str) -> String {
    match draw_bars(counts, x_desc, y_desc) {
        Ok(svg) => inline(&svg),
        Err(e) => format!(
            "<p>The figure could not be drawn: {}</p>",
            crate::escape::escape(&e)
        ),
    }
}

/// A histogram of `values`: integer values spanning few numbers get a bar each, others equal
/// bins labelled by their lower bound.
pub(crate) fn histogram(values: &[f64], x_desc: &str, y_desc: &str) -> String {
    bars(&bin(values), x_desc, y_desc)
}

/// Bins of `values` as labelled counts, in increasing order.
pub(crate) fn bin(values: &[f64]) -> Vec<(String, u64)> {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let Some(min) = finite.iter().copied().reduce(f64::min) else {
        return Vec::new();
    };
    let max = finite.iter().copied().fold(min, f64::max);
    let integers = finite.iter().all(|v| v.fract() == 0.0);
    if integers && max - min < MAX_BINS as f64 {
        let mut counts = vec![0u64; (max - min) as usize + 1];
        for v in &finite {
            counts[(v - min) as usize] += 1;
        }
        return counts
            .into_iter()
            .enumerate()
            .map(|(i, c)| (format!("{}", min as i64 + i as i64), c))
            .collect();
    }
    let mut width = (max - min) / MAX_BINS as f64;
    if integers {
        width = width.ceil();
    }
    let mut counts = vec![0u64; MAX_BINS];
    for v in &finite {
        let i = (((v - min) / width) as usize).min(MAX_BINS - 1);
        counts[i] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let lo = min + width * i as f64;
            let label = if integers {
                format!("{}", lo as i64)
            } else {
                format!("{lo:.2}")
            };
            (label, c)
        })
        .collect()
}

/// Estimated width of one character of the axis labels (13px sans-serif), generous so that an
/// estimate that fits does fit.
const CHAR_PX: f64 = 7.8;
/// Rotated category names longer than this are cut with an ellipsis.
const MAX_ROTATED_CHARS: usize = 30;
/// Pixels of the plot's width (the figure's, less margins and the y label area).
const PLOT_WIDTH: f64 = (SIZE.0 - 2 * 12 - 56) as f64;

/// How the category names of a bar chart fit under their bars: side by side when each fits its
/// bar's width, else turned a quarter (reading downwards from the axis), cut past
/// [`MAX_ROTATED_CHARS`]; the height of the x label area either way.
fn label_layout(counts: &[(String, u64)]) -> (bool, u32) {
    let slot = PLOT_WIDTH / counts.len().max(1) as f64;
    let longest = counts
        .iter()
        .map(|c| c.0.chars().count())
        .max()
        .unwrap_or(0);
    if longest as f64 * CHAR_PX + 8.0 <= slot {
        return (false, 48);
    }
    let chars = longest.min(MAX_ROTATED_CHARS) as f64;
    // Names, a gap, the axis description below them.
    (true, (chars * CHAR_PX) as u32 + 12 + 28)
}

fn cut_label(label: &str) -> String {
    if label.chars().count() <= MAX_ROTATED_CHARS {
        return label.to_string();
    }
    let head: String = label.chars().take(MAX_ROTATED_CHARS - 1).collect();
    format!("{head}\u{2026}")
}

fn draw_bars(counts: &[(String, u64)], x_desc: &str, y_desc: &str) -> Result<String, String> {
    let (rotate, label_area) = label_layout(counts);
    let size = (SIZE.0, SIZE.1 - 48 + label_area);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let n = counts.len().max(1) as u32;
        let top = counts.iter().map(|c| c.1).max().unwrap_or(0).max(1);
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(label_area)
            .y_label_area_size(56)
            .build_cartesian_2d((0u32..n).into_segmented(), 0u64..top + top / 10 + 1)
            .map_err(|e| e.to_string())?;
        let label = |v: &SegmentValue<u32>| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) if !rotate => counts
                .get(*i as usize)
                .map(|c| c.0.clone())
                .unwrap_or_default(),
            _ => String::new(),
        };
        let mut mesh = chart.configure_mesh();
        mesh.disable_x_mesh()
            .x_label_formatter(&label)
            .y_desc(y_desc)
            // plotters' SVG backend writes font sizes divided by 1.24: these come out at 13px.
            .label_style(("sans-serif", 16))
            .axis_desc_style(("sans-serif", 16))
            .x_label_style(("sans-serif", 16));
        // Turned names are drawn below, after the mesh (whose own are then empty).
        mesh.x_labels(counts.len().max(1));
        if !rotate {
            mesh.x_desc(x_desc);
        }
        mesh.draw().map_err(|e| e.to_string())?;
        // Rectangles drawn in input order rather than plotters' `Histogram` series, which
        // gathers bars in a HashMap and so emits them in a different order each run.
        chart
            .draw_series(counts.iter().enumerate().map(|(i, c)| {
                let i = i as u32;
                let mut bar = Rectangle::new(
                    [
                        (SegmentValue::Exact(i), 0),
                        (SegmentValue::Exact(i + 1), c.1),
                    ],
                    BAR.filled(),
                );
                bar.set_margin(0, 0, 4, 4);
                bar
            }))
            .map_err(|e| e.to_string())?;
        if rotate {
            let style = ("sans-serif", 16)
                .into_font()
                .transform(FontTransform::Rotate90)
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center));
            for (i, c) in counts.iter().enumerate() {
                let (x, y) = chart.backend_coord(&(SegmentValue::CenterOf(i as u32), 0));
                root.draw(&Text::new(cut_label(&c.0), (x, y + 6), style.clone()))
                    .map_err(|e| e.to_string())?;
            }
            let (left, _) = chart.backend_coord(&(SegmentValue::Exact(0), 0));
            let (right, _) = chart.backend_coord(&(SegmentValue::Exact(n), 0));
            let desc = ("sans-serif", 16)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Bottom));
            root.draw(&Text::new(
                x_desc.to_string(),
                ((left + right) / 2, size.1 as i32 - 6),
                desc,
            ))
            .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// The SVG as an inline element: inside HTML the SVG namespace is implied, and dropping the
/// declaration keeps every `http://` out of the page, so a test can refuse any.
fn inline(svg: &str) -> String {
    let body = match svg.find("<svg") {
        Some(start) => &svg[start..],
        None => svg,
    };
    body.replace(" xmlns=\"http://www.w3.org/2000/svg\"", "")
        .replace(" xmlns:xlink=\"http://www.w3.org/1999/xlink\"", "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_integer_ranges_get_a_bar_per_value() {
        let b = bin(&[1.0, 1.0, 3.0]);
        assert_eq!(b, vec![("1".into(), 2), ("2".into(), 0), ("3".into(), 1)]);
    }

    #[test]
    fn fractions_get_equal_bins_covering_every_value() {
        let values: Vec<f64> = (0..100).map(|i| i as f64 / 99.0).collect();
        let b = bin(&values);
        assert_eq!(b.len(), MAX_BINS);
        assert_eq!(b.iter().map(|c| c.1).sum::<u64>(), 100);
        assert_eq!(b[0].0, "0.00");
    }

    #[test]
    fn long_category_names_are_turned_and_short_ones_are_not() {
        let short = bars(&[("a".into(), 3), ("b".into(), 5)], "x", "y");
        assert!(!short.contains("rotate(90,"), "{short}");
        let names = [
            "false/irrelevant",
            "false/misleading",
            "false/supporting",
            "true/irrelevant",
            "true/misleading",
            "true/supporting",
        ];
        let counts: Vec<(String, u64)> = names.iter().map(|n| (n.to_string(), 4)).collect();
        let svg = bars(&counts, "claim verdict / label", "pairs");
        assert_eq!(svg.matches("rotate(90,").count(), names.len(), "{svg}");
        for n in names {
            assert!(
                svg.contains(&format!(">\n{n}\n<")) || svg.contains(n),
                "{n}"
            );
        }
        assert!(svg.contains("claim verdict / label"));
        // Taller than a chart with side-by-side names, to hold the turned ones.
        let height = |svg: &str| -> u32 {
            let h = svg.split("height=\"").nth(1).unwrap();
            h[..h.find('"').unwrap()].parse().unwrap()
        };
        assert!(height(&svg) > height(&short));
        let long = "x".repeat(80);
        let svg = bars(&[(long.clone(), 1), ("b".into(), 2)], "x", "y");
        assert!(!svg.contains(&long) && svg.contains('\u{2026}'));
    }

    #[test]
    fn a_chart_is_an_inline_svg_without_namespace_urls() {
        let svg = bars(&[("a".into(), 3), ("b".into(), 5)], "x", "y");
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(!svg.contains("http"));
        assert!(
            svg.contains("\na\n") && svg.contains("\nb\n"),
            "labels drawn: {svg}"
        );
    }
}
