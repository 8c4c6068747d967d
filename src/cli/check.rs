//! `kivi check`: verify a built-in case or a uniform-JSON file, as a single topology or as a
//! scaling sweep over every topology up to the confident size.

use super::engine_args::EngineArgs;
use super::error::CommandError;
use crate::cases;
use crate::engine::{check, CancelToken, CheckOptions, Outcome, Verdict};
use crate::input::{load_uniform, needs_translation, translate, InputOptions};
use crate::model::eviction_loop::{find_eviction_loop, fold_repeats, DEFAULT_MAX_STATES};
use crate::model::ClusterModel;
use crate::report::counterexample::Verbosity;
use crate::report::progress::SweepProgress;
use crate::report::sweep::{SweepReport, TopologyRow, ViolatingTopology};
use crate::report::{single, Format};
use crate::scaler::jobs::{run_plan, Exhaustive, JobContext, JobReport, JobVerdict};
use crate::scaler::journal::{Journal, JournalEntry};
use crate::scaler::{
    enumerate, instantiate, EnumerationOptions, FastFind, Search, Template, Topology,
};
use clap::Args;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Arguments of `kivi check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A file in Kivi's uniform JSON: a single topology, or a scaling template (with
    /// `userDefined`), which is swept unless --original is given; or Kubernetes manifests (a
    /// YAML file, or a directory with a cluster description), or a live-cluster dump.
    #[arg(required_unless_present = "case", conflicts_with = "case")]
    input: Option<PathBuf>,
    /// Check a built-in case of the paper: c1 … c8.
    #[arg(short = 'c', long, value_name = "CASE")]
    case: Option<String>,
    /// Check the single topology instead of sweeping topologies (Kivi's -o).
    #[arg(short = 'o', long)]
    original: bool,
    /// Check one topology of a scaling template instead of sweeping: the node count of each
    /// node type, a colon, the replica count of each deployment type (e.g. `1,2:6`).
    #[arg(short = 't', long, value_name = "NODES:REPLICAS", conflicts_with_all = ["original", "journal", "scale"])]
    topology: Option<Topology>,
    /// Read INPUT (a directory) as a live-cluster dump: kubectl get nodes/pods/deployments
    /// -o json, kubectl get hpa, kubectl top node/pod (detected from file names otherwise).
    #[arg(long, requires = "input")]
    from_cluster_dump: bool,
    /// Use the case's variant that has no violation (Kivi's -cn).
    #[arg(long = "non-violation", visible_alias = "cn", requires = "case")]
    non_violation: bool,
    /// Largest number of nodes per node type in a sweep (Kivi's -s; the cases' default is 3).
    #[arg(short = 's', long, value_parser = clap::value_parser!(u64).range(1..=32))]
    scale: Option<u64>,
    /// How fast a sweep ramps up: 0 every topology, 1 and 2 as Kivi, 3 galloping (see README).
    #[arg(short = 'f', long = "fast-find", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=3))]
    fast_find: u8,
    /// Confident size: nodes per node type (default 6).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=32))]
    confident_nodes: Option<u64>,
    /// Confident size: pods per node (default 6).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=64))]
    confident_ratio: Option<u64>,
    /// Append each decided topology to FILE and skip the ones it already holds.
    #[arg(long, value_name = "FILE")]
    journal: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Counterexample detail, Kivi's levels: 1 reasons only, 2 steps, 3 all steps, 4 values.
    #[arg(short = 'v', long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=4))]
    verbose: u8,
    /// No progress bar.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Look for an eviction loop instead of intent violations: a reachable cycle in which
    /// pods are evicted and re-created forever (Kivi's -l); needs a single topology.
    #[arg(short = 'l', long = "loop")]
    eviction_loop: bool,
    /// Most states the --loop search stores (it keeps the whole state graph).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STATES, requires = "eviction_loop")]
    loop_max_states: usize,
    #[command(flatten)]
    engine: EngineArgs,
}

impl CheckArgs {
    /// Runs the check; returns the exit code, or an input error.
    pub fn run(self) -> Result<i32, CommandError> {
        let (name, document) = self.read_input()?;
        let is_template = document.get("userDefined").is_some();
        let interrupt = super::interrupt::install();
        let options = CheckOptions {
            cancel: Some(interrupt.clone()),
            ..self.engine.check_options()
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads)
            .build()
            .map_err(|error| format!("cannot start {} threads: {error}", options.threads))?;
        if let Some(topology) = &self.topology {
            let template = Template::from_json(&document)
                .map_err(|error| format!("{name}: --topology needs a scaling template: {error}"))?
                .admitting(topology)
                .map_err(|error| format!("{name}: --topology {topology}: {error}"))?;
            let model = load_uniform(&instantiate(&template, topology))
                .map_err(|error| format!("{name}: topology {topology}: {error}"))?;
            self.check_single(&name, &model, options, &pool)
        } else if self.original || !is_template {
            if is_template {
                return Err(format!(
                    "{name}: this is a scaling template (it has userDefined); drop --original to \
                     sweep its topologies, or give a single-topology document"
                )
                .into());
            }
            if self.case.is_some() && self.scale.is_some_and(|scale| scale != 3) {
                return Err(CommandError::Input(
                    "the built-in single topologies are at scale 3; drop --scale, or drop \
                     --original to sweep up to --scale nodes per type"
                        .to_string(),
                ));
            }
            let model =
                load_uniform(&document).map_err(|error| error.in_file(&name).to_string())?;
            self.check_single(&name, &model, options, &pool)
        } else if self.eviction_loop {
            Err(format!(
                "{name}: --loop checks one topology; add --original (or give a single-topology \
                 document)"
            )
            .into())
        } else {
            let report = self.sweep(&name, &document, &options, &pool, &interrupt)?;
            match self.format {
                Format::Text => print!("{}", report.to_text(self.verbosity())),
                Format::Json => println!("{}", report.to_json()),
            }
            Ok(report.exit_code())
        }
    }

    /// Checks one topology (or searches it for an eviction loop with `--loop`) and prints
    /// the result; returns the exit code.
    fn check_single(
        &self,
        name: &str,
        model: &ClusterModel,
        options: CheckOptions,
        pool: &rayon::ThreadPool,
    ) -> Result<i32, CommandError> {
        if self.eviction_loop {
            return Ok(self.report_loop(model));
        }
        // One topology: report every violated intent, each with its own counterexample,
        // rather than whichever the search order meets first.
        let options = CheckOptions {
            all_violations: true,
            ..options
        };
        let outcome = pool
            .install(|| check(model, &options))
            .map_err(|error| CommandError::Internal(format!("{name}: {error}")))?;
        self.print_single(model, &outcome);
        Ok(outcome.verdict().exit_code())
    }

    /// Searches `model` for an eviction loop and prints it; returns the exit code (1 loop
    /// found, 0 none, 3 the state bound was reached).
    fn report_loop(&self, model: &ClusterModel) -> i32 {
        match find_eviction_loop(model, self.loop_max_states) {
            Err(bound) => {
                println!("Incomplete: {bound} (raise --loop-max-states)");
                3
            }
            Ok(None) => {
                match self.format {
                    Format::Text => {
                        println!("No eviction loop: every run settles or loops without evicting.")
                    }
                    Format::Json => println!(
                        "{}",
                        serde_json::json!({"mode": "loop", "verdict": "no_violation"})
                    ),
                }
                0
            }
            Ok(Some(found)) => {
                let lines = found.lines();
                match self.format {
                    Format::Text => {
                        println!("Eviction loop found: pods are evicted and re-created forever.");
                        println!("Path to the loop:");
                        for line in fold_repeats(&lines.prefix) {
                            println!("{line}");
                        }
                        println!("Loop (repeats forever):");
                        for line in &lines.cycle {
                            println!("{line}");
                        }
                    }
                    Format::Json => println!(
                        "{}",
                        serde_json::json!({
                            "mode": "loop",
                            "verdict": "violation",
                            "prefix": lines.prefix,
                            "cycle": lines.cycle,
                        })
                    ),
                }
                1
            }
        }
    }

    fn verbosity(&self) -> Verbosity {
        Verbosity::from_level(self.verbose).expect("clap keeps the level in 1..=4")
    }

    /// The input's name (for messages) and uniform-JSON document; directories and YAML files
    /// go through the front-ends, whose warnings are printed on stderr.
    fn read_input(&self) -> Result<(String, Value), String> {
        let (name, text) = if let Some(name) = &self.case {
            let case = cases::find(name)
                .ok_or_else(|| format!("unknown case '{name}': the built-in cases are c1 to c8"))?;
            let text = case.document(self.original, self.non_violation);
            (format!("case {}", case.name), text.to_string())
        } else {
            let path = self
                .input
                .as_ref()
                .expect("clap requires an input or a case");
            if needs_translation(path) || self.from_cluster_dump {
                let options = InputOptions {
                    original: self.original,
                    from_cluster_dump: self.from_cluster_dump,
                    verify: true,
                };
                let translation = translate(path, options).map_err(|error| error.to_string())?;
                eprint!("{}", translation.diagnostics.to_text());
                return Ok((path.display().to_string(), translation.document));
            }
            let text = std::fs::read_to_string(path)
                .map_err(|error| format!("{}: cannot read: {error}", path.display()))?;
            (path.display().to_string(), text)
        };
        let document = serde_json::from_str(&text).map_err(|error| {
            format!(
                "{name}:{}:{}: not valid JSON: {error}; fix the syntax at that place",
                error.line(),
                error.column()
            )
        })?;
        Ok((name, document))
    }

    fn print_single(&self, model: &ClusterModel, outcome: &Outcome<ClusterModel>) {
        match self.format {
            Format::Text => print!("{}", single::to_text(model, outcome, self.verbosity())),
            Format::Json => println!("{}", single::to_json(model, outcome)),
        }
    }

    fn enumeration_options(&self) -> Result<EnumerationOptions, String> {
        let defaults = EnumerationOptions::default();
        Ok(EnumerationOptions {
            confident_nodes: self.confident_nodes.unwrap_or(defaults.confident_nodes),
            pods_per_node: self.confident_ratio.unwrap_or(defaults.pods_per_node),
            fast_find: FastFind::from_level(self.fast_find).map_err(|error| error.to_string())?,
        })
    }

    /// Sweeps the template's topologies on `pool`.
    fn sweep(
        &self,
        name: &str,
        document: &Value,
        options: &CheckOptions,
        pool: &rayon::ThreadPool,
        interrupt: &CancelToken,
    ) -> Result<SweepReport, CommandError> {
        let mut template =
            Template::from_json(document).map_err(|error| format!("{name}: {error}"))?;
        if let Some(scale) = self.scale {
            template = template
                .with_scale(scale)
                .map_err(|error| format!("{name}: {error}"))?;
        }
        let enumeration = self.enumeration_options()?;
        let level0 = EnumerationOptions {
            fast_find: FastFind::Exhaustive,
            ..enumeration
        };
        let order = enumerate(&template, &level0);
        let positions: HashMap<Topology, usize> = order
            .iter()
            .enumerate()
            .map(|(index, topology)| (topology.clone(), index + 1))
            .collect();
        let mut journal = match &self.journal {
            Some(path) => Some(Journal::open(path, &self.input_fingerprint(document))?),
            None => None,
        };
        let passed: Arc<HashMap<Topology, JournalEntry>> =
            Arc::new(journal.as_ref().map(Journal::passed).unwrap_or_default());
        let template = Arc::new(template);
        let job = {
            let (template, options, passed) = (template.clone(), options.clone(), passed.clone());
            move |topology: &Topology, context: JobContext| {
                // A panic here would abort the pool's thread; report it as an internal error.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    check_topology(&template, &options, &passed, topology, context)
                }))
                .unwrap_or_else(|payload| {
                    failed(CommandError::Internal(format!(
                        "topology {topology}: {}",
                        crate::engine::panic_message(&*payload)
                    )))
                })
            }
        };
        let started = Instant::now();
        let mut progress = SweepProgress::new(order.len() as u64, self.quiet);
        let mut journal_error = None;
        let on_report = |report: &JobReport<TopologyCheck>| {
            progress.finished(&report.topology.to_string(), report.output.states);
            if let (Some(journal), false) = (&mut journal, report.output.from_journal) {
                if let Err(error) = journal.record(
                    &report.topology,
                    report.verdict,
                    report.output.states,
                    report.output.transitions,
                    report.elapsed.as_secs_f64(),
                ) {
                    journal_error.get_or_insert(error);
                }
            }
        };
        let threads = options.threads;
        let (reports, candidates, guaranteed_minimal, first) = if self.engine.all_violations {
            let mut plan = Exhaustive::new(order.clone());
            let reports = run_plan(pool, threads, &mut plan, job, on_report, interrupt);
            (reports, order.len(), true, None)
        } else {
            let mut search = Search::new(&template, &enumeration, threads);
            let candidates = search.candidates().len();
            let reports = run_plan(pool, threads, &mut search, job, on_report, interrupt);
            let outcome = search.outcome();
            let guaranteed = outcome.as_ref().is_some_and(|o| o.guaranteed_minimal);
            let first = outcome.and_then(|o| o.violation);
            (reports, candidates, guaranteed, first)
        };
        progress.finish();
        if let Some(error) = journal_error {
            return Err(error.into());
        }
        if let Some(error) = reports
            .iter()
            .find_map(|report| report.output.error.clone())
        {
            return Err(match error {
                CommandError::Input(message) => CommandError::Input(format!("{name}: {message}")),
                CommandError::Internal(message) => {
                    CommandError::Internal(format!("{name}: {message}"))
                }
            });
        }
        Ok(self.assemble(
            reports,
            &positions,
            &template,
            candidates,
            guaranteed_minimal,
            first,
            started,
            threads,
        ))
    }

    /// Fingerprint of everything that changes a sweep's verdicts, for the journal.
    fn input_fingerprint(&self, document: &Value) -> String {
        let key = format!(
            "{document}|scale={:?}|nodes={:?}|ratio={:?}|depth={:?}|exact={}",
            self.scale,
            self.confident_nodes,
            self.confident_ratio,
            self.engine.depth,
            self.engine.exact
        );
        format!("{:016x}", xxhash_rust::xxh3::xxh3_64(key.as_bytes()))
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
        &self,
        reports: Vec<JobReport<TopologyCheck>>,
        positions: &HashMap<Topology, usize>,
        template: &Template,
        candidates: usize,
        guaranteed_minimal: bool,
        first: Option<Topology>,
        started: Instant,
        threads: usize,
    ) -> SweepReport {
        let mut rows = Vec::new();
        let mut violations = Vec::new();
        for report in reports {
            let row = TopologyRow {
                position: positions[&report.topology],
                pods: template.pod_count(&report.topology),
                topology: report.topology,
                verdict: report.verdict,
                states: report.output.states,
                transitions: report.output.transitions,
                elapsed_s: report.output.elapsed_s,
                threads: report.threads,
                from_journal: report.output.from_journal,
            };
            let counts = self.engine.all_violations || first.as_ref() == Some(&row.topology);
            if let (true, Some((model, outcome))) = (counts, report.output.violation) {
                violations.push(ViolatingTopology {
                    row: row.clone(),
                    model,
                    outcome,
                });
            }
            rows.push(row);
        }
        rows.sort_by_key(|row| row.position);
        violations.sort_by_key(|violation| violation.row.position);
        let answer = violations.first().map(|v| v.row.position);
        let cut_short: Vec<&TopologyRow> = rows
            .iter()
            .filter(|row| {
                row.verdict == JobVerdict::Incomplete && answer.is_none_or(|p| row.position < p)
            })
            .collect();
        let incomplete = match (answer, cut_short.first()) {
            (None, Some(row)) => Some(format!(
                "the check of {} was cut short by a bound (--timeout, --memory or --depth){}",
                row.topology,
                match cut_short.len() {
                    1 => String::new(),
                    more => format!(", and {} more", more - 1),
                }
            )),
            _ => None,
        };
        let cut_short = if answer.is_some() { cut_short.len() } else { 0 };
        SweepReport {
            fast_find: self.fast_find,
            candidates,
            rows,
            violations,
            guaranteed_minimal,
            every_intent: self.engine.all_violations,
            cut_short,
            incomplete,
            elapsed_s: started.elapsed().as_secs_f64(),
            threads,
        }
    }
}

/// What one topology's check produced.
pub struct TopologyCheck {
    states: u64,
    transitions: u64,
    elapsed_s: f64,
    from_journal: bool,
    violation: Option<(ClusterModel, Outcome<ClusterModel>)>,
    error: Option<CommandError>,
}

/// A topology whose check gave no answer: an error, which ends the sweep.
fn failed(error: CommandError) -> (JobVerdict, TopologyCheck) {
    (
        JobVerdict::Incomplete,
        TopologyCheck {
            states: 0,
            transitions: 0,
            elapsed_s: 0.0,
            from_journal: false,
            violation: None,
            error: Some(error),
        },
    )
}

/// Checks one topology of the sweep (or takes its verdict from the journal).
fn check_topology(
    template: &Template,
    base: &CheckOptions,
    passed: &HashMap<Topology, JournalEntry>,
    topology: &Topology,
    context: JobContext,
) -> (JobVerdict, TopologyCheck) {
    if let Some(entry) = passed.get(topology) {
        return (
            JobVerdict::NoViolation,
            TopologyCheck {
                states: entry.states,
                transitions: entry.transitions,
                elapsed_s: entry.elapsed_s,
                from_journal: true,
                violation: None,
                error: None,
            },
        );
    }
    let model = match load_uniform(&instantiate(template, topology)) {
        Ok(model) => model,
        Err(error) => return failed(CommandError::Input(format!("topology {topology}: {error}"))),
    };
    let options = CheckOptions {
        threads: context.threads,
        cancel: Some(context.cancel),
        ..base.clone()
    };
    let outcome = match check(&model, &options) {
        Ok(outcome) => outcome,
        Err(error) => {
            return failed(CommandError::Internal(format!(
                "topology {topology}: {error}"
            )))
        }
    };
    let stats = &outcome.stats;
    let mut result = TopologyCheck {
        states: stats.states_stored,
        transitions: stats.transitions,
        elapsed_s: stats.elapsed_s,
        from_journal: false,
        violation: None,
        error: None,
    };
    let verdict = match outcome.verdict() {
        Verdict::NoViolation => JobVerdict::NoViolation,
        Verdict::Incomplete => JobVerdict::Incomplete,
        Verdict::Violation => {
            result.violation = Some((model, outcome));
            JobVerdict::Violation
        }
    };
    (verdict, result)
}
