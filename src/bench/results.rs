//! From samples to result files: medians over repetitions, speedups against the fewest
//! threads, and the CSV, Markdown and SVG files of a sweep.

use super::config::{Input, Mode, SweepConfig};
use super::machine::MachineFacts;
use super::measure::{Measurement, Sample};
use crate::report::chart::{line_chart, Series, YAxis};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// One measurement's result: the median run and the speedup against the same measurement
/// at the fewest threads.
#[derive(Debug, Clone)]
pub struct ResultRow {
    /// The run's name.
    pub run: String,
    /// The run's mode.
    pub mode: Mode,
    /// The run's variant (cases only; empty for input files).
    pub variant: String,
    /// What was measured.
    pub measurement: Measurement,
    /// The median run by kivi's own time (figures other than times are that run's).
    pub median: Sample,
    /// Median wall time over the repetitions.
    pub wall_s: f64,
    /// Median CPU time (user and system, all threads) over the repetitions.
    pub cpu_s: f64,
    /// Median over the repetitions of CPU time over wall time: how many cores were busy.
    pub cores_busy: f64,
    /// Median peak resident memory over the repetitions, in bytes.
    pub peak_rss_bytes: u64,
    /// How many runs the medians are over.
    pub repetitions: usize,
    /// Time at the fewest threads divided by this row's time.
    pub speedup: Option<f64>,
    /// Speedup divided by the growth in threads.
    pub efficiency: Option<f64>,
}

impl ResultRow {
    /// States per second of kivi's own time.
    pub fn states_per_s(&self) -> f64 {
        if self.median.time_s > 0.0 {
            self.median.states as f64 / self.median.time_s
        } else {
            0.0
        }
    }
}

/// The median of `values` (the lower middle one for an even count: a real run).
fn median_index(values: &[f64]) -> usize {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    order[(values.len() - 1) / 2]
}

/// Aggregates the samples of each measurement into rows, in measurement order.
pub fn aggregate(
    config: &SweepConfig,
    samples: &BTreeMap<Measurement, Vec<Sample>>,
) -> Vec<ResultRow> {
    let mut rows: Vec<ResultRow> = samples
        .iter()
        .map(|(measurement, runs)| {
            let times: Vec<f64> = runs.iter().map(|sample| sample.time_s).collect();
            let walls: Vec<f64> = runs.iter().map(|sample| sample.wall_s).collect();
            let cpus: Vec<f64> = runs.iter().map(|sample| sample.cpu_s).collect();
            let memory: Vec<f64> = runs
                .iter()
                .map(|sample| sample.peak_rss_bytes as f64)
                .collect();
            let busy: Vec<f64> = runs
                .iter()
                .map(|sample| sample.cpu_s / sample.wall_s.max(1e-9))
                .collect();
            let run = &config.runs[measurement.run];
            ResultRow {
                run: run.name.clone(),
                mode: run.mode,
                variant: match measurement.input {
                    Input::Case(_) => run.variant.to_string(),
                    Input::File(_) | Input::Synthetic(_) => String::new(),
                },
                measurement: measurement.clone(),
                median: runs[median_index(&times)].clone(),
                wall_s: walls[median_index(&walls)],
                cpu_s: cpus[median_index(&cpus)],
                cores_busy: busy[median_index(&busy)],
                peak_rss_bytes: runs[median_index(&memory)].peak_rss_bytes,
                repetitions: runs.len(),
                speedup: None,
                efficiency: None,
            }
        })
        .collect();
    // Within a run and input: by fast-find, then size (scale-up grows it), then threads.
    rows.sort_by_key(|row| {
        let m = &row.measurement;
        let nodes = row.median.size.map_or(0, |(nodes, _)| nodes);
        (m.run, m.input.clone(), m.fast_find, nodes, m.threads)
    });
    let group = |row: &ResultRow| {
        let m = &row.measurement;
        (m.run, m.input.clone(), m.fast_find, m.topology.clone())
    };
    // Per group: the fewest threads, their time, and how many thread counts were measured.
    let mut fewest: BTreeMap<_, (usize, f64, usize)> = BTreeMap::new();
    for row in &rows {
        let entry =
            fewest
                .entry(group(row))
                .or_insert((row.measurement.threads, row.median.time_s, 0));
        entry.2 += 1;
        if row.measurement.threads < entry.0 {
            (entry.0, entry.1) = (row.measurement.threads, row.median.time_s);
        }
    }
    for row in &mut rows {
        let (threads, time, counts) = fewest[&group(row)];
        if counts > 1 && row.median.time_s > 0.0 {
            let speedup = time / row.median.time_s;
            row.speedup = Some(speedup);
            row.efficiency = Some(speedup * threads as f64 / row.measurement.threads as f64);
        }
    }
    rows
}

/// A CSV column: its name and how a row fills it.
type Column = (&'static str, fn(&ResultRow) -> String);

fn optional<T: ToString>(value: Option<T>) -> String {
    value.map(|value| value.to_string()).unwrap_or_default()
}

fn seconds(value: f64) -> String {
    format!("{value:.6}")
}

fn ratio(value: Option<f64>) -> String {
    value.map(|value| format!("{value:.3}")).unwrap_or_default()
}

/// The columns of the CSV file, in order.
const COLUMNS: &[Column] = &[
    ("run", |r| r.run.clone()),
    ("mode", |r| r.mode.to_string()),
    ("input", |r| r.measurement.input.to_string()),
    ("variant", |r| r.variant.clone()),
    ("fast_find", |r| r.measurement.fast_find.to_string()),
    ("threads", |r| r.measurement.threads.to_string()),
    ("topology", |r| {
        r.measurement.topology.clone().unwrap_or_default()
    }),
    ("nodes", |r| optional(r.median.size.map(|s| s.0))),
    ("pods", |r| optional(r.median.size.map(|s| s.1))),
    ("verdict", |r| r.median.verdict.clone()),
    ("exit_code", |r| r.median.exit_code.to_string()),
    ("candidates", |r| optional(r.median.candidates)),
    ("checked", |r| optional(r.median.checked)),
    ("decided", |r| optional(r.median.decided)),
    ("minimal", |r| r.median.minimal.clone().unwrap_or_default()),
    ("minimal_nodes", |r| {
        optional(r.median.minimal_size.map(|s| s.0))
    }),
    ("minimal_replicas", |r| {
        optional(r.median.minimal_size.map(|s| s.1))
    }),
    ("minimal_pods", |r| {
        optional(r.median.minimal_size.map(|s| s.2))
    }),
    ("states", |r| r.median.states.to_string()),
    ("transitions", |r| r.median.transitions.to_string()),
    ("time_s", |r| seconds(r.median.time_s)),
    ("wall_s", |r| seconds(r.wall_s)),
    ("cpu_s", |r| seconds(r.cpu_s)),
    ("cores_busy", |r| format!("{:.2}", r.cores_busy)),
    ("peak_rss_mb", |r| {
        format!("{:.1}", r.peak_rss_bytes as f64 / 1e6)
    }),
    ("states_per_s", |r| format!("{:.0}", r.states_per_s())),
    ("speedup", |r| ratio(r.speedup)),
    ("efficiency", |r| ratio(r.efficiency)),
    ("p50_ms", |r| optional(r.median.check_times_ms.map(|t| t.0))),
    ("p99_ms", |r| optional(r.median.check_times_ms.map(|t| t.1))),
    ("max_ms", |r| optional(r.median.check_times_ms.map(|t| t.2))),
    ("repetitions", |r| r.repetitions.to_string()),
];

fn column(name: &str) -> Option<&'static Column> {
    COLUMNS.iter().find(|(column, _)| *column == name)
}

/// The names of the CSV columns (what plots may name).
pub fn column_names() -> Vec<&'static str> {
    COLUMNS.iter().map(|(name, _)| *name).collect()
}

/// The rows as CSV text with a header.
pub fn to_csv(rows: &[ResultRow]) -> String {
    let quote = |field: String| {
        if field.contains([',', '"', '\n']) {
            format!("\"{}\"", field.replace('"', "\"\""))
        } else {
            field
        }
    };
    let mut text = column_names().join(",") + "\n";
    for row in rows {
        let fields: Vec<String> = COLUMNS.iter().map(|(_, value)| quote(value(row))).collect();
        text += &fields.join(",");
        text.push('\n');
    }
    text
}

/// The charts of the config as (file, SVG text) pairs.
pub fn plots(
    config: &SweepConfig,
    rows: &[ResultRow],
    csv: &Path,
) -> Result<Vec<(PathBuf, String)>, String> {
    let stem = csv.with_extension("");
    let stem = stem.display();
    let mut files = Vec::new();
    for plot in &config.plots {
        let lookup = |name: &str| {
            column(name).ok_or_else(|| {
                format!(
                    "plot \"{}\": no column '{name}'; the columns are {}",
                    plot.suffix,
                    column_names().join(", ")
                )
            })
        };
        let (x, y) = (lookup(&plot.x)?, lookup(&plot.y)?);
        let series_columns = plot
            .series
            .iter()
            .map(|name| lookup(name))
            .collect::<Result<Vec<_>, _>>()?;
        let mut series = Series::new();
        for row in rows
            .iter()
            .filter(|row| plot.runs.is_empty() || plot.runs.contains(&row.run))
        {
            let (Ok(x_value), Ok(y_value)) = ((x.1)(row).parse::<f64>(), (y.1)(row).parse::<f64>())
            else {
                continue;
            };
            let name: Vec<String> = series_columns.iter().map(|(_, value)| value(row)).collect();
            series
                .entry(name.join(" "))
                .or_default()
                .push((x_value, y_value));
        }
        if series.is_empty() {
            return Err(format!(
                "plot \"{}\": no row has numbers in '{}' and '{}'",
                plot.suffix, plot.x, plot.y
            ));
        }
        for line in series.values_mut() {
            line.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        if plot.ideal {
            let mut xs: Vec<f64> = series.values().flatten().map(|&(x, _)| x).collect();
            xs.sort_by(f64::total_cmp);
            xs.dedup();
            let smallest = xs[0];
            let line = xs.iter().map(|&x| (x, x / smallest)).collect();
            series.insert("linear speedup".to_string(), line);
        }
        let y_axis = if plot.log_y {
            YAxis::Log
        } else {
            YAxis::Linear
        };
        let svg = line_chart(&series, &plot.title, &plot.x, &plot.y, y_axis, (900, 560))?;
        files.push((PathBuf::from(format!("{stem}-{}.svg", plot.suffix)), svg));
    }
    Ok(files)
}

/// What the Markdown file says beyond the rows.
pub struct Context<'a> {
    /// The config file, as given.
    pub config_path: &'a Path,
    /// The machine and commit.
    pub facts: &'a MachineFacts,
    /// Thread counts of the config left out because the machine has fewer cores.
    pub skipped_threads: Vec<usize>,
    /// Notes of scale-up runs: why each input stopped growing.
    pub notes: Vec<String>,
    /// The chart files, to link.
    pub charts: Vec<PathBuf>,
}

/// The result file: heading, machine facts, one table per run, notes and chart links.
pub fn to_markdown(config: &SweepConfig, rows: &[ResultRow], context: &Context) -> String {
    let mut text = format!("# {}\n\n", config.title);
    if let Some(description) = &config.description {
        let _ = write!(text, "{description}\n\n");
    }
    text += &context.facts.to_markdown();
    let _ = writeln!(
        text,
        "- config: `{}`; medians over {} run(s); `time` is kivi's own time, `wall` the whole \
         process",
        context.config_path.display(),
        config.repetitions
    );
    if !context.skipped_threads.is_empty() {
        let skipped: Vec<String> = context
            .skipped_threads
            .iter()
            .map(usize::to_string)
            .collect();
        let _ = writeln!(
            text,
            "- not measured here: {} thread(s) (this machine has {} logical cores)",
            skipped.join(", "),
            context.facts.logical_cores
        );
    }
    for (index, run) in config.runs.iter().enumerate() {
        let run_rows: Vec<&ResultRow> = rows
            .iter()
            .filter(|row| row.measurement.run == index)
            .collect();
        let _ = write!(text, "\n## {}\n\n", run.name);
        if let Some(repetitions) = run.repetitions {
            let _ = write!(text, "Runs per measurement: {repetitions}.\n\n");
        }
        if run_rows.is_empty() {
            text += "No measurement on this machine.\n";
            continue;
        }
        if let Some(total) = &run.total_reference {
            let wall: f64 = run_rows.iter().map(|row| row.wall_s).sum();
            let _ = write!(
                text,
                "All {} measurements together: {wall:.3} s wall time; {}: {} s, {:.0}× as long.\n\n",
                run_rows.len(),
                total.label,
                total.seconds,
                total.seconds / wall
            );
        }
        let reference = run.reference.as_ref().map(|name| &config.references[name]);
        text += &table(run.mode, &run_rows, reference);
        if let Some(reference) = reference {
            let _ = write!(text, "\nReference columns: {}.\n", reference.source);
        }
    }
    if !context.notes.is_empty() {
        text += "\n## Notes\n\n";
        for note in &context.notes {
            let _ = writeln!(text, "- {note}");
        }
    }
    if !context.charts.is_empty() {
        text += "\n## Charts\n\n";
        for chart in &context.charts {
            let name = chart
                .file_name()
                .map(|name| name.to_string_lossy())
                .unwrap_or_default();
            let _ = writeln!(text, "![{name}]({name})");
        }
    }
    text
}

/// How a table fills one row's cells.
type RowCells<'a> = Box<dyn Fn(&ResultRow) -> Vec<String> + 'a>;

/// One run's Markdown table, with the columns that matter for its mode.
fn table(
    mode: Mode,
    rows: &[&ResultRow],
    reference: Option<&super::config::ReferenceTable>,
) -> String {
    let size = |row: &ResultRow| {
        row.median
            .minimal_size
            .map(|(nodes, replicas, pods)| format!("{nodes} / {replicas} / {pods}"))
            .unwrap_or_else(|| "–".into())
    };
    let topologies = |row: &ResultRow| {
        format!(
            "{} / {}",
            optional(row.median.decided),
            optional(row.median.candidates)
        )
    };
    let times = |row: &ResultRow| {
        row.median
            .check_times_ms
            .map(|(p50, p99, max)| format!("{p50} / {p99} / {max}"))
            .unwrap_or_default()
    };
    let (header, cells): (Vec<&str>, RowCells) = match mode {
        Mode::Scaling | Mode::AllViolations => (
            vec![
                "input",
                "variant",
                "fast-find",
                "threads",
                "verdict",
                "minimal: nodes / replicas / pod slots",
                "decided / candidates",
                "states",
                "time (s)",
                "wall (s)",
                "speedup",
                "efficiency",
                "check ms p50 / p99 / max",
            ],
            Box::new(move |row: &ResultRow| {
                vec![
                    row.measurement.input.to_string(),
                    row.variant.clone(),
                    row.measurement.fast_find.to_string(),
                    row.measurement.threads.to_string(),
                    row.median.verdict.clone(),
                    size(row),
                    topologies(row),
                    row.median.states.to_string(),
                    format!("{:.4}", row.median.time_s),
                    format!("{:.4}", row.wall_s),
                    ratio(row.speedup),
                    ratio(row.efficiency),
                    times(row),
                ]
            }),
        ),
        Mode::Single | Mode::ScaleUp | Mode::Engine => (
            vec![
                "input",
                "variant",
                "topology",
                "nodes",
                "pods",
                "threads",
                "verdict",
                "states",
                "transitions",
                "time (s)",
                "wall (s)",
                "cores busy",
                "peak memory (MB)",
                "states/s",
                "speedup",
                "efficiency",
            ],
            Box::new(|row: &ResultRow| {
                let (nodes, pods) = row.median.size.unwrap_or_default();
                vec![
                    row.measurement.input.to_string(),
                    row.variant.clone(),
                    row.measurement
                        .topology
                        .clone()
                        .unwrap_or_else(|| "original".into()),
                    nodes.to_string(),
                    pods.to_string(),
                    row.measurement.threads.to_string(),
                    row.median.verdict.clone(),
                    row.median.states.to_string(),
                    row.median.transitions.to_string(),
                    format!("{:.4}", row.median.time_s),
                    format!("{:.4}", row.wall_s),
                    format!("{:.2}", row.cores_busy),
                    format!("{:.1}", row.peak_rss_bytes as f64 / 1e6),
                    format!("{:.0}", row.states_per_s()),
                    ratio(row.speedup),
                    ratio(row.efficiency),
                ]
            }),
        ),
    };
    let mut header: Vec<String> = header.into_iter().map(str::to_string).collect();
    if let Some(reference) = reference {
        header.extend(reference.columns.iter().cloned());
    }
    let mut text = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        "---|".repeat(header.len())
    );
    for row in rows {
        let mut fields = cells(row);
        if let Some(reference) = reference {
            let values = reference.rows.get(&row.measurement.input.to_string());
            for position in 0..reference.columns.len() {
                fields.push(
                    values
                        .and_then(|values| values.get(position))
                        .map(|value| match value {
                            serde_json::Value::String(text) => text.clone(),
                            other => other.to_string(),
                        })
                        .unwrap_or_default(),
                );
            }
        }
        let _ = writeln!(text, "| {} |", fields.join(" | "));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> SweepConfig {
        serde_json::from_str(
            r#"{"title": "T", "runs": [{"name": "scaling", "mode": "scaling", "cases": ["c3"]}],
                "plots": [{"suffix": "speedup", "title": "S", "x": "threads", "y": "speedup", "series": ["input"]}]}"#,
        )
        .unwrap()
    }

    fn sample(time_s: f64) -> Sample {
        Sample {
            verdict: "violation".into(),
            exit_code: 1,
            time_s,
            wall_s: time_s + 0.01,
            states: 1000,
            minimal: Some("{a, b}".into()),
            ..Sample::default()
        }
    }

    fn measurement(threads: usize) -> Measurement {
        Measurement {
            run: 0,
            input: Input::Case("c3".into()),
            threads,
            fast_find: 0,
            topology: None,
        }
    }

    fn rows() -> Vec<ResultRow> {
        let mut samples = BTreeMap::new();
        samples.insert(measurement(1), vec![sample(4.0), sample(9.0), sample(5.0)]);
        samples.insert(measurement(4), vec![sample(1.0), sample(1.25), sample(2.0)]);
        aggregate(&config(), &samples)
    }

    #[test]
    fn medians_and_speedups() {
        let rows = rows();
        assert_eq!(rows[0].median.time_s, 5.0);
        assert_eq!(rows[1].median.time_s, 1.25);
        assert_eq!(rows[1].speedup, Some(4.0));
        assert_eq!(rows[1].efficiency, Some(1.0));
        assert_eq!(rows[0].speedup, Some(1.0));
    }

    #[test]
    fn csv_quotes_fields_with_commas() {
        let csv = to_csv(&rows());
        let mut lines = csv.lines();
        assert!(lines
            .next()
            .unwrap()
            .starts_with("run,mode,input,variant,fast_find,threads"));
        let first = lines.next().unwrap();
        assert!(first.contains(",\"{a, b}\","), "{first}");
        assert!(first.contains(",5.000000,"), "{first}");
    }

    #[test]
    fn plots_and_markdown() {
        let rows = rows();
        let files = plots(&config(), &rows, Path::new("results/x.csv")).unwrap();
        assert_eq!(files[0].0, PathBuf::from("results/x-speedup.svg"));
        assert!(files[0].1.starts_with("<svg"));
        let facts = MachineFacts::collect();
        let context = Context {
            config_path: Path::new("bench-configs/x.json"),
            facts: &facts,
            skipped_threads: vec![16],
            notes: vec!["a note".into()],
            charts: vec![files[0].0.clone()],
        };
        let text = to_markdown(&config(), &rows, &context);
        assert!(text.starts_with("# T\n"));
        assert!(text.contains("- commit: "), "{text}");
        assert!(text.contains("not measured here: 16 thread(s)"), "{text}");
        assert!(
            text.contains("| c3 | violation | 0 | 4 | violation |"),
            "{text}"
        );
        assert!(text.contains("![x-speedup.svg](x-speedup.svg)"), "{text}");
    }
}
