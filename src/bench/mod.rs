//! Benchmark sweeps: `kivi bench bench-configs/NAME.json` runs the measurements a sweep
//! definition asks for and writes `results/NAME.csv`, `results/NAME.md` and its charts.
//!
//! Each measurement is `kivi check` run as a child process, exactly as a user runs it, so a
//! result can be reproduced by hand from the command it names, and no run inherits another's
//! heap or warm caches.
//!
//! - [`config`]: the sweep definition, read strictly, and its validation.
//! - [`measure`]: one measurement: the check command and the figures read from its report.
//! - [`results`]: medians, speedups and the CSV, Markdown and SVG files.
//! - [`machine`]: the machine and commit facts every result file carries.

pub mod config;
pub mod machine;
pub mod measure;
pub mod results;

use crate::cases;
use crate::cluster::state::{MAX_NODES, MAX_PODS};
use crate::scaler::{Template, Topology};
use config::{Input, Mode, RunConfig, SweepConfig, Variant};
use machine::MachineFacts;
use measure::{check_arguments, take, Measurement, Sample};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// How to run a sweep.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// The sweep definition.
    pub config: PathBuf,
    /// Where the result files go.
    pub out_dir: PathBuf,
    /// Overrides the config's repetitions (for a quick look).
    pub repetitions: Option<usize>,
    /// Print the commands instead of running them.
    pub dry_run: bool,
    /// The `kivi` executable the measurements run.
    pub kivi: PathBuf,
}

/// Runs the sweep and writes its result files; returns the exit code (0), or an error for
/// a bad definition, or, after writing the files, for measurements that failed (they are
/// listed in the result's notes and left out of its tables).
pub fn run_sweep(options: &SweepOptions) -> Result<i32, String> {
    let mut config = SweepConfig::load(&options.config).map_err(|error| error.to_string())?;
    if let Some(repetitions) = options.repetitions {
        if repetitions == 0 {
            return Err("--repetitions 0: use 1 or more".into());
        }
        config.repetitions = repetitions;
        for run in &mut config.runs {
            run.repetitions = None;
        }
    }
    let facts = MachineFacts::collect();
    let cores = facts.logical_cores;
    let (fixed, skipped_threads) = plan(&config, cores);
    if options.dry_run {
        print_commands(&config, &fixed, cores)?;
        return Ok(0);
    }
    let mut samples = BTreeMap::new();
    let mut failures = measure_fixed(options, &config, &fixed, &mut samples);
    let mut notes = Vec::new();
    for (index, run) in scale_up_runs(&config) {
        for input in run.all_inputs() {
            match scale_up(options, &config, index, &input, cores, &mut samples) {
                Ok(note) => notes.push(note),
                Err(error) => {
                    eprintln!("error: {error}");
                    failures.push(error);
                }
            }
        }
    }
    for failure in &failures {
        notes.push(format!("FAILED, left out of the tables: {failure}"));
    }
    let rows = results::aggregate(&config, &samples);
    let context = results::Context {
        config_path: &options.config,
        facts: &facts,
        skipped_threads: skipped_threads.into_iter().collect(),
        notes,
        charts: Vec::new(),
    };
    let markdown = write_results(options, &config, &rows, context)?;
    if failures.is_empty() {
        Ok(0)
    } else {
        Err(format!(
            "{} measurement(s) failed (listed under Notes in {})",
            failures.len(),
            markdown.display()
        ))
    }
}

/// The measurements of the runs other than scale-up (whose sizes depend on the outcomes), and
/// the thread counts left out because the machine has fewer than `cores` cores.
fn plan(config: &SweepConfig, cores: usize) -> (Vec<Measurement>, BTreeSet<usize>) {
    let mut skipped_threads = BTreeSet::new();
    let mut fixed = Vec::new();
    for (index, run) in config.runs.iter().enumerate() {
        for input in run.all_inputs() {
            for &fast_find in &run.fast_find {
                for threads in run.threads.iter().map(|count| count.resolve(cores)) {
                    if threads > cores && !run.oversubscribe {
                        skipped_threads.insert(threads);
                    } else if run.mode != Mode::ScaleUp {
                        fixed.push(Measurement {
                            run: index,
                            input: input.clone(),
                            threads,
                            fast_find,
                            topology: run.topology.clone(),
                        });
                    }
                }
            }
        }
    }
    (fixed, skipped_threads)
}

/// Prints the check commands of the sweep (`--dry-run`).
fn print_commands(config: &SweepConfig, fixed: &[Measurement], cores: usize) -> Result<(), String> {
    for measurement in fixed {
        let args = check_arguments(&config.runs[measurement.run], measurement);
        println!("kivi {}", args.join(" "));
    }
    for (index, run) in scale_up_runs(config) {
        for input in run.all_inputs() {
            for (topology, _) in growth(run, &input)? {
                let measurement = scale_up_measurement(index, run, &input, topology, cores);
                let args = check_arguments(run, &measurement);
                println!("kivi {} (until one runs out of time)", args.join(" "));
            }
        }
    }
    Ok(())
}

/// Takes every repetition of the `fixed` measurements into `samples`; returns the failures.
///
/// Repetition-major order: every measurement's runs are spread over the whole sweep, so a
/// slow phase of a noisy machine does not land on one measurement alone. A measurement that
/// fails is reported and skipped: the rest of a long sweep still counts.
fn measure_fixed(
    options: &SweepOptions,
    config: &SweepConfig,
    fixed: &[Measurement],
    samples: &mut BTreeMap<Measurement, Vec<Sample>>,
) -> Vec<String> {
    let total: usize = fixed.iter().map(|m| config.repetitions_of(m.run)).sum();
    let most = (0..config.runs.len())
        .map(|index| config.repetitions_of(index))
        .max()
        .unwrap_or(0);
    let mut done = 0;
    let mut failures = Vec::new();
    let mut failed = BTreeSet::new();
    for repetition in 0..most {
        for measurement in fixed {
            if failed.contains(measurement) || repetition >= config.repetitions_of(measurement.run)
            {
                continue;
            }
            done += 1;
            let args = check_arguments(&config.runs[measurement.run], measurement);
            match take(&options.kivi, &args) {
                Ok(sample) => {
                    eprintln!(
                        "[{done}/{total}] kivi {}: {} in {:.3} s",
                        args.join(" "),
                        sample.verdict,
                        sample.wall_s
                    );
                    samples.entry(measurement.clone()).or_default().push(sample);
                }
                Err(error) => {
                    eprintln!("error: {error}");
                    failures.push(error);
                    failed.insert(measurement.clone());
                }
            }
        }
    }
    failures
}

/// Writes `NAME.csv`, the charts and `NAME.md` into the output folder, prints the Markdown,
/// and returns its path.
fn write_results(
    options: &SweepOptions,
    config: &SweepConfig,
    rows: &[results::ResultRow],
    mut context: results::Context,
) -> Result<PathBuf, String> {
    let name = options
        .config
        .file_stem()
        .ok_or_else(|| format!("{}: not a file name", options.config.display()))?;
    std::fs::create_dir_all(&options.out_dir)
        .map_err(|error| format!("cannot create {}: {error}", options.out_dir.display()))?;
    let csv = options.out_dir.join(Path::new(name).with_extension("csv"));
    let markdown = csv.with_extension("md");
    write(&csv, &results::to_csv(rows))?;
    for (path, svg) in results::plots(config, rows, &csv)? {
        write(&path, &svg)?;
        context.charts.push(path);
    }
    let text = results::to_markdown(config, rows, &context);
    write(&markdown, &text)?;
    println!("{text}");
    eprintln!("wrote {} and {}", csv.display(), markdown.display());
    Ok(markdown)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|error| format!("cannot write {}: {error}", path.display()))
}

/// The template a scale-up grows: the case's template of the run's variant, or the input
/// file (uniform JSON with `userDefined`).
fn template_of(run: &RunConfig, input: &Input) -> Result<Template, String> {
    let (name, text) = match input {
        Input::Case(name) => {
            let case = cases::find(name).expect("validated case name");
            (
                name.clone(),
                case.document(false, run.variant == Variant::NonViolation)
                    .to_string(),
            )
        }
        Input::File(path) => (
            path.display().to_string(),
            std::fs::read_to_string(path)
                .map_err(|error| format!("{}: cannot read: {error}", path.display()))?,
        ),
        Input::Synthetic(model) => {
            return Err(format!(
                "{model}: a synthetic model has no template to grow"
            ))
        }
    };
    let document = serde_json::from_str(&text)
        .map_err(|error| format!("{name}: scale-up needs a uniform-JSON template: {error}"))?;
    Template::from_json(&document).map_err(|error| format!("{name}: {error}"))
}

/// The topologies a scale-up of `input` tries, each with its pod count, smallest first; it
/// ends before the first that exceeds the model's node limit. Each node type gets the
/// growth's node count; the deployment types share `pods_per_node` replicas per node, fewer
/// where the template's `max_pod_per_node` allows fewer, or where the pod slots (HPA headroom
/// included) would exceed the model's pod limit.
fn growth(run: &RunConfig, input: &Input) -> Result<Vec<(Topology, u64)>, String> {
    let grow = run.grow.as_ref().expect("validated: scale-up has grow");
    let template = template_of(run, input)?;
    let mut topologies = Vec::new();
    for &per_type in &grow.nodes_per_type {
        let nodes = vec![per_type; template.node_types.len()];
        let total_nodes: u64 = nodes.iter().sum();
        if total_nodes as usize > MAX_NODES {
            break;
        }
        let deployment_types = template.deployment_types.len() as u64;
        let mut replicas = (grow.pods_per_node * total_nodes).div_ceil(deployment_types.max(1));
        if let Some(per_node) = template.max_pods_per_node {
            replicas = replicas.min(per_node * total_nodes);
        }
        let fitted = loop {
            let topology = Topology::new(nodes.clone(), vec![replicas; deployment_types as usize]);
            let admitted = template
                .clone()
                .admitting(&topology)
                .map_err(|error| error.to_string())?;
            let pods = admitted.pod_count(&topology);
            if pods as usize <= MAX_PODS {
                break Some((topology, pods));
            }
            if replicas == 0 {
                break None;
            }
            replicas -= 1;
        };
        match fitted {
            Some(fitted) => topologies.push(fitted),
            None => break,
        }
    }
    Ok(topologies)
}

/// The scale-up runs of `config`, with their indices.
fn scale_up_runs(config: &SweepConfig) -> impl Iterator<Item = (usize, &RunConfig)> {
    config
        .runs
        .iter()
        .enumerate()
        .filter(|(_, run)| run.mode == Mode::ScaleUp)
}

/// The measurement of `topology` in scale-up run `index`: on the run's first thread count.
fn scale_up_measurement(
    index: usize,
    run: &RunConfig,
    input: &Input,
    topology: Topology,
    cores: usize,
) -> Measurement {
    Measurement {
        run: index,
        input: input.clone(),
        threads: run.threads[0].resolve(cores).min(cores),
        fast_find: 0,
        topology: Some(topology.argument()),
    }
}

/// Checks ever larger topologies of `input` until one does not finish (exit 3) or the next
/// would exceed the model's limits; returns a note saying which and the largest verified.
fn scale_up(
    options: &SweepOptions,
    config: &SweepConfig,
    index: usize,
    input: &Input,
    cores: usize,
    samples: &mut BTreeMap<Measurement, Vec<Sample>>,
) -> Result<String, String> {
    let run = &config.runs[index];
    let grow = run.grow.as_ref().expect("validated: scale-up has grow");
    let topologies = growth(run, input)?;
    let tried = topologies.len();
    let mut largest = None;
    for (topology, _) in topologies {
        let measurement = scale_up_measurement(index, run, input, topology.clone(), cores);
        let args = check_arguments(run, &measurement);
        let mut finished = true;
        for _ in 0..config.repetitions_of(index) {
            let sample = take(&options.kivi, &args)?;
            eprintln!(
                "kivi {}: {} in {:.3} s",
                args.join(" "),
                sample.verdict,
                sample.wall_s
            );
            finished &= sample.exit_code != 3;
            samples.entry(measurement.clone()).or_default().push(sample);
        }
        if !finished {
            let limit = run.timeout_s.map_or("a bound".to_string(), |seconds| {
                format!("the {seconds} s limit")
            });
            return Ok(format!(
                "{} {input}: {topology} did not finish within {limit}; largest finished: {}",
                run.name,
                largest.map_or("none".to_string(), |t: Topology| t.to_string())
            ));
        }
        largest = Some(topology);
    }
    let next = grow.nodes_per_type.get(tried).map_or(
        "the end of nodes_per_type".to_string(),
        |nodes| format!("{nodes} nodes per type would exceed the model's {MAX_NODES} nodes or {MAX_PODS} pod slots"),
    );
    Ok(format!(
        "{} {input}: every check finished within the limit, up to {}; stopped at {next}",
        run.name,
        largest.map_or("none".to_string(), |t| t.to_string())
    ))
}
