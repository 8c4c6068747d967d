//! SVG line charts: one line per series, drawn with plotters. `kivi bench plot` and the
//! sweep benchmarks draw their figures with it.

use plotters::prelude::*;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Points of each series, by series name; each line is drawn in the order of its points.
pub type Series = BTreeMap<String, Vec<(f64, f64)>>;

/// Formats an axis value compactly: 12.5M, 800k, 3, 0.001.
fn compact(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude > 0.0 && magnitude < 1.0 {
        // Two significant digits below 1.
        let decimals = (-magnitude.log10()).ceil() as usize + 1;
        let text = format!("{value:.decimals$}");
        return text.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    let (scaled, suffix) = if magnitude >= 1e9 {
        (value / 1e9, "G")
    } else if magnitude >= 1e6 {
        (value / 1e6, "M")
    } else if magnitude >= 1e3 {
        (value / 1e3, "k")
    } else {
        (value, "")
    };
    let text = format!("{scaled:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}{suffix}")
}

/// How the y axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum YAxis {
    /// Linear from 0 (or the lowest negative value).
    #[default]
    Linear,
    /// Logarithmic, labelled at powers of ten; points at or below 0 are left out. For values
    /// spanning orders of magnitude (states, times).
    Log,
}

/// Draws `series` as a line chart of `size` pixels and returns the SVG text.
pub fn line_chart(
    series: &Series,
    title: &str,
    x_label: &str,
    y_label: &str,
    y_axis: YAxis,
    size: (u32, u32),
) -> Result<String, String> {
    // On a log axis the chart plots log10(y) and labels the powers of ten.
    let series: Cow<Series> = match y_axis {
        YAxis::Linear => Cow::Borrowed(series),
        YAxis::Log => Cow::Owned(
            series
                .iter()
                .map(|(name, line)| {
                    let logs = line.iter().filter(|&&(_, y)| y > 0.0);
                    (name.clone(), logs.map(|&(x, y)| (x, y.log10())).collect())
                })
                .filter(|(_, line): &(String, Vec<(f64, f64)>)| !line.is_empty())
                .collect(),
        ),
    };
    if series.is_empty() {
        return Err("no point to draw (a log axis leaves out values at or below 0)".into());
    }
    let series = series.as_ref();
    let points = series.values().flatten();
    let (mut x_min, mut x_max) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut y_min, mut y_max) = match y_axis {
        YAxis::Linear => (0.0f64, 0.0f64),
        YAxis::Log => (f64::INFINITY, f64::NEG_INFINITY),
    };
    for &(x, y) in points {
        x_min = x_min.min(x);
        x_max = x_max.max(x);
        y_min = y_min.min(y);
        y_max = y_max.max(y);
    }
    if y_axis == YAxis::Log {
        y_min = y_min.floor();
        y_max = y_max.ceil();
    }
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    if y_max <= y_min {
        y_max = y_min + 1.0;
    }
    // Headroom above the highest point for the legend in the upper left corner.
    let y_max = y_min + (y_max - y_min) * 1.25;
    let y_format = move |value: &f64| match y_axis {
        YAxis::Linear => compact(*value),
        YAxis::Log if value.fract() == 0.0 => compact(10f64.powf(*value)),
        YAxis::Log => String::new(),
    };
    let integer_x = series.values().flatten().all(|&(x, _)| x.fract() == 0.0);
    let x_format = move |value: &f64| {
        if integer_x && value.fract() != 0.0 {
            String::new()
        } else {
            compact(*value)
        }
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(72)
            .build_cartesian_2d(x_min..x_max, y_min..y_max)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format)
            .draw()
            .map_err(draw_error)?;
        for (index, (name, line)) in series.iter().enumerate() {
            let color = Palette99::pick(index).to_rgba();
            chart
                .draw_series(LineSeries::new(line.iter().copied(), color.stroke_width(2)))
                .map_err(draw_error)?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(
                    line.iter()
                        .map(|&point| Circle::new(point, 3, color.filled())),
                )
                .map_err(draw_error)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

fn draw_error<E: std::fmt::Display>(error: E) -> String {
    format!("cannot draw the chart: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_axis_values_compactly() {
        assert_eq!(compact(12_500_000.0), "12.5M");
        assert_eq!(compact(800_000.0), "800k");
        assert_eq!(compact(3.0), "3");
        assert_eq!(compact(10f64.powf(-3.0)), "0.001");
        assert_eq!(compact(0.5), "0.5");
        assert_eq!(compact(0.0), "0");
    }
}
