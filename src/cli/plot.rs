//! `kivi bench plot`: draw two numeric columns of a CSV file as an SVG line chart, one line per
//! value of a series column. The benchmark scripts use it for their plots.

use clap::Args;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Arguments of `kivi bench plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The CSV file: a header row naming the columns, then one row per point.
    #[arg(long, value_name = "FILE")]
    csv: PathBuf,
    /// Column of the x values (numbers).
    #[arg(long, value_name = "COL")]
    x: String,
    /// Column of the y values (numbers; rows where it is empty are left out).
    #[arg(long, value_name = "COL")]
    y: String,
    /// Column whose distinct values name the lines.
    #[arg(long, value_name = "COL")]
    series: String,
    /// The SVG file to write.
    #[arg(long, value_name = "FILE.svg")]
    out: PathBuf,
    /// Title above the chart (default: "Y by X").
    #[arg(long)]
    title: Option<String>,
    /// Width and height of the picture in pixels.
    #[arg(long, num_args = 2, value_names = ["W", "H"], default_values_t = [900, 560])]
    size: Vec<u32>,
}

impl PlotArgs {
    /// Reads the CSV, draws the chart and writes the SVG; returns the exit code.
    pub fn run(self) -> Result<i32, String> {
        let text = std::fs::read_to_string(&self.csv)
            .map_err(|error| format!("cannot read {}: {error}", self.csv.display()))?;
        let table =
            Table::parse(&text).map_err(|error| format!("{}: {error}", self.csv.display()))?;
        let series = table
            .series(&self.x, &self.y, &self.series)
            .map_err(|error| format!("{}: {error}", self.csv.display()))?;
        let title = self
            .title
            .clone()
            .unwrap_or_else(|| format!("{} by {}", self.y, self.x));
        let (width, height) = match self.size[..] {
            [width, height] if width >= 200 && height >= 150 => (width, height),
            _ => {
                return Err(
                    "--size: give a width of at least 200 and a height of at least 150".into(),
                )
            }
        };
        let svg = render(&series, &title, &self.x, &self.y, (width, height))?;
        std::fs::write(&self.out, svg)
            .map_err(|error| format!("cannot write {}: {error}", self.out.display()))?;
        Ok(0)
    }
}

/// A CSV file: its header and its rows, each with as many fields as the header.
#[derive(Debug)]
struct Table {
    header: Vec<String>,
    /// Each row with its line number in the file.
    rows: Vec<(usize, Vec<String>)>,
}

/// Points of each series, by series name, in the order of the file.
type Series = BTreeMap<String, Vec<(f64, f64)>>;

impl Table {
    /// Parses comma-separated values; fields may be double-quoted (`""` is a quote inside one).
    fn parse(text: &str) -> Result<Self, String> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(index, line)| (index + 1, line.trim_end_matches('\r')))
            .filter(|(_, line)| !line.trim().is_empty());
        let (header_line, header) = lines.next().ok_or("the file is empty")?;
        let header =
            split_fields(header).map_err(|error| format!("line {header_line}: {error}"))?;
        let mut rows = Vec::new();
        for (number, line) in lines {
            let fields = split_fields(line).map_err(|error| format!("line {number}: {error}"))?;
            if fields.len() != header.len() {
                return Err(format!(
                    "line {number} has {} fields but the header has {}",
                    fields.len(),
                    header.len()
                ));
            }
            rows.push((number, fields));
        }
        Ok(Self { header, rows })
    }

    fn column(&self, name: &str) -> Result<usize, String> {
        self.header
            .iter()
            .position(|column| column == name)
            .ok_or_else(|| {
                format!(
                    "no column '{name}'; the columns are: {}",
                    self.header.join(", ")
                )
            })
    }

    /// The (x, y) points of each value of the series column; rows with an empty y are skipped.
    fn series(&self, x: &str, y: &str, series: &str) -> Result<Series, String> {
        let (x_column, y_column, series_column) =
            (self.column(x)?, self.column(y)?, self.column(series)?);
        let mut points = Series::new();
        for (number, fields) in &self.rows {
            let y_text = fields[y_column].trim();
            if y_text.is_empty() {
                continue;
            }
            let x_value = parse_number(&fields[x_column], x, *number)?;
            let y_value = parse_number(y_text, y, *number)?;
            points
                .entry(fields[series_column].trim().to_string())
                .or_default()
                .push((x_value, y_value));
        }
        if points.is_empty() {
            return Err(format!("no row has a value in column '{y}'"));
        }
        for line in points.values_mut() {
            line.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        Ok(points)
    }
}

fn parse_number(text: &str, column: &str, line: usize) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|value| value.is_finite())
        .ok_or_else(|| format!("line {line}: column '{column}' holds '{text}', not a number"))
}

/// Splits one CSV line into fields.
fn split_fields(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, _) => field.push(c),
            (false, '"') if field.trim().is_empty() => {
                field.clear();
                quoted = true;
            }
            (false, ',') => fields.push(std::mem::take(&mut field)),
            (false, _) => field.push(c),
        }
    }
    if quoted {
        return Err("a quoted field is not closed".to_string());
    }
    fields.push(field);
    Ok(fields)
}

/// Formats an axis value compactly: 12.5M, 800k, 3.
fn compact(value: f64) -> String {
    let magnitude = value.abs();
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

/// Draws the chart and returns the SVG text.
fn render(
    series: &Series,
    title: &str,
    x_label: &str,
    y_label: &str,
    size: (u32, u32),
) -> Result<String, String> {
    let points = series.values().flatten();
    let (mut x_min, mut x_max, mut y_max) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    let mut y_min = 0.0f64;
    for &(x, y) in points {
        x_min = x_min.min(x);
        x_max = x_max.max(x);
        y_min = y_min.min(y);
        y_max = y_max.max(y);
    }
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    if y_max <= y_min {
        y_max = y_min + 1.0;
    }
    // Headroom above the highest point for the legend in the upper left corner.
    let y_max = y_max * 1.25;
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
            .y_label_formatter(&|value| compact(*value))
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
    use super::{compact, render, split_fields, Table};

    const CSV: &str =
        "tool,threads,states_per_s\nkivi,1,100\nkivi,2,190\n\"spin, pan\",1,80\nspin,2,\n";

    #[test]
    fn splits_quoted_fields() {
        assert_eq!(
            split_fields(r#"a,"b, c","say ""hi""",,"#).unwrap(),
            vec!["a", "b, c", "say \"hi\"", "", ""]
        );
        assert!(split_fields(r#"a,"b"#).is_err());
    }

    #[test]
    fn groups_points_by_series_and_skips_empty_values() {
        let series = Table::parse(CSV)
            .unwrap()
            .series("threads", "states_per_s", "tool")
            .unwrap();
        assert_eq!(series["kivi"], vec![(1.0, 100.0), (2.0, 190.0)]);
        assert_eq!(series["spin, pan"], vec![(1.0, 80.0)]);
        assert!(!series.contains_key("spin"));
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        let table = Table::parse(CSV).unwrap();
        let error = table.series("cores", "states_per_s", "tool").unwrap_err();
        assert!(error.contains("no column 'cores'"), "{error}");
        let error = Table::parse("a,b\n1\n").unwrap_err();
        assert!(error.contains("line 2 has 1 fields"), "{error}");
        let error = Table::parse("a,b\nx,1\n")
            .unwrap()
            .series("a", "b", "a")
            .unwrap_err();
        assert!(error.contains("'x', not a number"), "{error}");
        assert!(Table::parse("\n\n").is_err());
    }

    #[test]
    fn renders_an_svg_with_every_series() {
        let series = Table::parse(CSV)
            .unwrap()
            .series("threads", "states_per_s", "tool")
            .unwrap();
        let svg = render(&series, "throughput", "threads", "states/s", (640, 400)).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40.min(svg.len())]);
        assert!(svg.contains("kivi") && svg.contains("throughput"));
    }

    #[test]
    fn formats_axis_values_compactly() {
        assert_eq!(compact(12_500_000.0), "12.5M");
        assert_eq!(compact(800_000.0), "800k");
        assert_eq!(compact(3.0), "3");
    }
}
