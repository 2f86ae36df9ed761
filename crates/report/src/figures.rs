//! The page's figures: bar charts of labelled counts and histograms of values, drawn by
//! `plotters` into SVG strings the page inlines.

use plotters::prelude::*;

/// Figure size in pixels.
const SIZE: (u32, u32) = (600, 300);
/// Histograms have at most this many bins.
const MAX_BINS: usize = 12;
const BAR: RGBColor = RGBColor(70, 110, 170);

/// A bar per labelled count, in the order given. An error (plotters' backend writes to a String,
/// so it has no I/O to fail; this is defensive) becomes a sentence in place of the figure.
pub fn bars(counts: &[(String, u64)], x_desc: &str, y_desc: &str) -> String {
    match draw_bars(counts, x_desc, y_desc) {
        Ok(svg) => inline(&svg),
        Err(e) => format!(
            "<p>The figure could not be drawn: {}</p>",
            crate::html::escape(&e)
        ),
    }
}

/// A histogram of `values`: integer values spanning few numbers get a bar each, others equal
/// bins labelled by their lower bound.
pub fn histogram(values: &[f64], x_desc: &str, y_desc: &str) -> String {
    bars(&bin(values), x_desc, y_desc)
}

/// Bins of `values` as labelled counts, in increasing order.
pub fn bin(values: &[f64]) -> Vec<(String, u64)> {
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

fn draw_bars(counts: &[(String, u64)], x_desc: &str, y_desc: &str) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let n = counts.len().max(1) as u32;
        let top = counts.iter().map(|c| c.1).max().unwrap_or(0).max(1);
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(56)
            .build_cartesian_2d((0u32..n).into_segmented(), 0u64..top + top / 10 + 1)
            .map_err(|e| e.to_string())?;
        let label = |v: &SegmentValue<u32>| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => counts
                .get(*i as usize)
                .map(|c| c.0.clone())
                .unwrap_or_default(),
            SegmentValue::Last => String::new(),
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(counts.len().max(1))
            .x_label_formatter(&label)
            .x_desc(x_desc)
            .y_desc(y_desc)
            // plotters' SVG backend writes font sizes divided by 1.24: these come out at 13px.
            .label_style(("sans-serif", 16))
            .axis_desc_style(("sans-serif", 16))
            // Smaller category names when many share the axis, so neighbours do not overlap.
            .x_label_style(("sans-serif", if counts.len() > 5 { 13 } else { 16 }))
            .draw()
            .map_err(|e| e.to_string())?;
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
