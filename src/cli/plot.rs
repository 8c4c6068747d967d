//! `kivi bench plot`: draw two numeric columns of a CSV file as an SVG line chart, one line per
//! value of a series column. The benchmark scripts use it for their plots.

use super::error::CommandError;
use crate::report::chart::{line_chart, Series, YAxis};
use clap::Args;
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
    /// A logarithmic y axis (for values spanning orders of magnitude).
    #[arg(long)]
    log_y: bool,
    /// Width and height of the picture in pixels.
    #[arg(long, num_args = 2, value_names = ["W", "H"], default_values_t = [900, 560])]
    size: Vec<u32>,
}

impl PlotArgs {
    /// Reads the CSV, draws the chart and writes the SVG; returns the exit code.
    pub fn run(self) -> Result<i32, CommandError> {
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
        let y_axis = if self.log_y {
            YAxis::Log
        } else {
            YAxis::Linear
        };
        let svg = line_chart(&series, &title, &self.x, &self.y, y_axis, (width, height))?;
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

#[cfg(test)]
mod tests {
    use super::{split_fields, Table};
    use crate::report::chart::{line_chart, YAxis};

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
        for y_axis in [YAxis::Linear, YAxis::Log] {
            let svg = line_chart(
                &series,
                "throughput",
                "threads",
                "states/s",
                y_axis,
                (640, 400),
            )
            .unwrap();
            assert!(svg.starts_with("<svg"), "{}", &svg[..40.min(svg.len())]);
            assert!(svg.contains("kivi") && svg.contains("throughput"));
        }
    }
}
