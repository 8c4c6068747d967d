//! `kivi check`: verify a built-in case or an input, as a single topology, one topology of a
//! template, an eviction-loop search, or a scaling sweep over every topology up to the
//! confident size. It parses, makes one library call and prints.

use super::engine_args::EngineArgs;
use super::error::CommandError;
use super::interrupt;
use super::liveness_args::LivenessArgs;
use super::model_args::ModelArgs;
use crate::engine::cndfs::LassoOptions;
use crate::engine::{check, CheckOptions, MemoryBudget};
use crate::input::{load_uniform, open, InputOptions, Names, Opened, Source};
use crate::model::liveness::LoopKind;
use crate::model::ClusterModel;
use crate::report::counterexample::Verbosity;
use crate::report::progress::SweepProgress;
use crate::report::{ci, eviction_loop, html, single, sweep, CheckFormat};
use crate::scaler::sweep::{topology_model, SweepInput, SweepResult, SweepSettings};
use crate::scaler::{enumerate, EnumerationOptions, FastFind, Shard, Template, Topology};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `kivi check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A file in Kivi's uniform JSON: a single topology, or a scaling template (with
    /// `userDefined`), which is swept unless --original is given; or Kubernetes manifests (a
    /// YAML file, or a directory with a cluster description), or a live-cluster dump; `-`
    /// reads one YAML stream (`helm template … |`) or uniform-JSON document from standard input.
    #[arg(required_unless_present = "case", conflicts_with = "case")]
    pub(super) input: Option<PathBuf>,
    /// With input from standard input (`-`): the cluster description (node types, events,
    /// intents), as a user_input/ folder, its cluster_configs.json, or a YAML file with a
    /// `kivi:` document.
    #[arg(long, value_name = "PATH", requires = "input")]
    cluster_config: Option<PathBuf>,
    /// Check a built-in case of the paper: c1 … c8.
    #[arg(short = 'c', long, value_name = "CASE")]
    case: Option<String>,
    /// Check the single topology instead of sweeping topologies (Kivi's -o).
    #[arg(short = 'o', long)]
    pub(super) original: bool,
    /// Check one topology of a scaling template instead of sweeping: the node count of each
    /// node type, a colon, the replica count of each deployment type (e.g. `1,2:6`).
    #[arg(short = 't', long, value_name = "NODES:REPLICAS", conflicts_with_all = ["original", "journal", "scale"])]
    pub(super) topology: Option<Topology>,
    /// Read INPUT (a directory) as a live-cluster dump: kubectl get nodes/pods/deployments
    /// -o json, kubectl get hpa, kubectl top node/pod (detected from file names otherwise).
    #[arg(long, requires = "input")]
    from_cluster_dump: bool,
    /// Keys of a uniform-JSON input that Kivi's format does not have are errors (exit 2)
    /// instead of warnings.
    #[arg(long)]
    strict: bool,
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
    /// Name the input PATH in reports (text, JSON names, SARIF locations) and in the journal
    /// instead of the path it is read from: for a copy of the input, as in a `kivi job` pod
    /// that reads it from /input.
    #[arg(long, value_name = "PATH", requires = "input")]
    pub(super) report_as: Option<String>,
    /// Append each decided topology to FILE and skip the ones it already holds.
    #[arg(long, value_name = "FILE")]
    pub(super) journal: Option<PathBuf>,
    /// Decide only shard I of N of the sweep's topologies (I from 0), recording them in the
    /// --journal for `kivi merge` (see README, "Running on a cluster").
    #[arg(long, value_name = "I/N", requires = "journal", conflicts_with_all = ["original", "topology"])]
    pub(super) shard: Option<Shard>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: CheckFormat,
    /// Also write the report as one self-contained HTML page to FILE: the verdict, the setup,
    /// and each counterexample as a timeline (a lane per node, a column per step).
    #[arg(long, value_name = "FILE")]
    pub(super) html: Option<PathBuf>,
    /// Counterexample detail, Kivi's levels: 1 reasons only, 2 steps, 3 all steps, 4 values.
    #[arg(short = 'v', long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=4))]
    verbose: u8,
    /// No progress bar.
    #[arg(short = 'q', long)]
    quiet: bool,
    #[command(flatten)]
    liveness: LivenessArgs,
    #[command(flatten)]
    pub(super) engine: EngineArgs,
    #[command(flatten)]
    pub(super) semantics: ModelArgs,
}

impl CheckArgs {
    /// Runs the check; returns the exit code, or why there is no answer.
    pub fn run(self) -> Result<i32, CommandError> {
        if let Some(path) = &self.html {
            std::fs::File::create(path).map_err(|error| {
                format!("--html {}: cannot write the page: {error}", path.display())
            })?;
        }
        let mut input = open(&self.source()?)?;
        let model_options = self.semantics.options("check", input.default_semantics())?;
        eprint!(
            "{}",
            input.diagnostics.to_text_under(model_options.semantics)
        );
        if let Some(refusal) = input.refused_under(model_options.semantics) {
            return Err(refusal.into());
        }
        for warning in input.unused_under(model_options.semantics) {
            eprintln!("warning: {warning}");
        }
        let swept = input.is_template() && !self.original;
        if let Some(group) = input.node_group_by_position().filter(|_| swept) {
            return Err(format!(
                "{}: controllers.clusterAutoscaler.nodeGroups[{}] lists the input's own nodes, \
                 which a sweep replaces with its topologies; give the group a `nodeType` (a \
                 position in userDefined.nodesTypes: its nodes in each topology are that \
                 type's), or check the input as it is with --original",
                input.name, group
            )
            .into());
        }
        if let (Some(shown), Some(read)) = (&self.report_as, &self.input) {
            input.name = shown.clone();
            if let Some(names) = &mut input.names {
                names.relocate(&read.display().to_string(), shown);
            }
        }
        let interrupt = interrupt::install();
        let options = CheckOptions {
            cancel: Some(interrupt.clone()),
            ..self.engine.check_options()
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads)
            .build()
            .map_err(|error| format!("cannot start {} threads: {error}", options.threads))?;
        let name = &input.name;
        let liveness = self.liveness.kind(&input.document);
        if let Some(topology) = &self.topology {
            let template = Template::from_json(&input.document)
                .map_err(|error| format!("{name}: --topology needs a scaling template: {error}"))?
                .written_in(&input.origins)
                .admitting(topology)
                .map_err(|error| format!("{name}: --topology {topology}: {error}"))?;
            let model = topology_model(&template, topology, model_options)
                .map_err(|e| format!("{name}: {e}"))?;
            warn_of_policy(name, &model);
            return self.check_single(name, &model, (None, liveness), options, &pool);
        }
        if self.original || !input.is_template() {
            let model = self.single_topology(&input)?.with_options(model_options);
            for placed in model.daemon_set_placement() {
                eprintln!("note: {name}: {placed}");
            }
            for warning in model.daemon_set_warnings() {
                eprintln!("warning: {name}: {warning}");
            }
            warn_of_policy(name, &model);
            let names = input.names.as_ref();
            return self.check_single(name, &model, (names, liveness), options, &pool);
        }
        let template = sweep_template(&input, self.scale)?;
        let enumeration = self.enumeration_options()?;
        // A topology that does not load is the sweep's to report, if it gets there.
        let largest = enumerate(&template, &enumeration).pop();
        // Where no topology is left, the sweep's error says why.
        if let (Some(_), Some(named)) = (&largest, template.named_node()) {
            eprintln!("note: {name}: {named}");
        }
        if largest.is_some() {
            for pin in template.pins_leaving_topologies_out() {
                eprintln!("note: {name}: {}", pin.note(&template.origins));
            }
        }
        if let Some(Ok(model)) = largest.map(|t| topology_model(&template, &t, model_options)) {
            warn_of_policy(name, &model);
        }
        let settings = SweepSettings {
            enumeration,
            check: options,
            all_violations: self.engine.all_violations,
            journal: self.journal.clone(),
            model: model_options,
            liveness,
            shard: self.shard,
            input: SweepInput {
                name: name.clone(),
                uri: self.input_uri(),
                names: input.names.clone(),
            },
        };
        let mut progress: Option<SweepProgress> = None;
        let result = crate::scaler::sweep::run(&template, &settings, &pool, &interrupt, |done| {
            progress
                .get_or_insert_with(|| SweepProgress::new(done.candidates as u64, self.quiet))
                .finished(&done.topology.to_string(), done.states);
        });
        if let Some(progress) = progress {
            progress.finish();
        }
        let result = result.map_err(|error| CommandError::from_sweep(name, error))?;
        for warning in &result.warnings {
            eprintln!("warning: {warning}");
        }
        let report = || sweep_json(&result, input.names.as_ref());
        let names = input.names.as_ref();
        let memory = &settings.check.memory;
        let text = || with_legend(sweep::to_text(&result, self.verbosity()), names);
        self.print_report((name, memory), text, report);
        self.write_html(|| html::sweep_page(name, &result))?;
        Ok(result.verdict().exit_code())
    }

    /// Where the input comes from.
    pub(super) fn source(&self) -> Result<Source<'_>, String> {
        match (&self.case, &self.input) {
            (Some(name), _) => Ok(Source::Case {
                name,
                original: self.original,
                non_violation: self.non_violation,
            }),
            (None, Some(path)) => Source::argument(
                path,
                self.cluster_config.as_deref(),
                InputOptions {
                    original: self.original,
                    from_cluster_dump: self.from_cluster_dump,
                    verify: true,
                    strict: self.strict,
                },
            ),
            (None, None) => unreachable!("clap requires an input or a case"),
        }
    }

    /// The model of a single-topology document (`--original`, or a document that is not a
    /// template).
    fn single_topology(&self, input: &Opened) -> Result<ClusterModel, CommandError> {
        if self.case.is_some() && self.scale.is_some_and(|scale| scale != 3) && !input.is_template()
        {
            return Err(
                "the built-in single topologies are at scale 3; drop --scale, or drop \
                 --original to sweep up to --scale nodes per type"
                    .into(),
            );
        }
        single_topology_model(input)
    }

    /// Checks one topology (or searches it for a lasso of `liveness`'s kind: an eviction loop,
    /// a run that does not stay converged) and prints the result, with the names of the nodes
    /// and deployments its traces mention when `names` knows them; returns the exit code.
    fn check_single(
        &self,
        name: &str,
        model: &ClusterModel,
        (names, liveness): (Option<&Names>, Option<LoopKind>),
        options: CheckOptions,
        pool: &rayon::ThreadPool,
    ) -> Result<i32, CommandError> {
        if let Some(kind) = liveness {
            let found = kind
                .search(model, &LassoOptions::of_check(&options))
                .map_err(|error| CommandError::Internal(format!("{name}: {error}")))?;
            self.print_report(
                (name, &options.memory),
                || eviction_loop::to_text(kind, model, &found, self.verbosity()),
                || eviction_loop::to_json(kind, model, &found),
            );
            self.write_html(|| {
                html::loop_page(name, kind, model, &found).named(node_names(names))
            })?;
            return Ok(eviction_loop::exit_code(&found));
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
        let report = || {
            let mut report = single::to_json(model, &outcome);
            if let Some(names) = names {
                add_names(&mut report, names);
            }
            report
        };
        self.print_report(
            (name, &options.memory),
            || with_legend(single::to_text(model, &outcome, self.verbosity()), names),
            report,
        );
        self.write_html(|| html::single_page(name, model, &outcome).named(node_names(names)))?;
        Ok(outcome.verdict().exit_code())
    }

    /// Prints a report in the chosen format; JSON also says what the checks held of the
    /// memory budget `memory` at most.
    fn print_report(
        &self,
        (name, memory): (&str, &MemoryBudget),
        text: impl FnOnce() -> String,
        json: impl FnOnce() -> serde_json::Value,
    ) {
        let json = || {
            let mut report = json();
            report["memory"] = serde_json::json!({
                "budget_bytes": memory.limit(),
                "peak_charged_bytes": memory.peak(),
            });
            report
        };
        print_report(self.format, (name, &self.input_uri()), text, json);
    }

    /// Writes the HTML page `page` makes to the `--html` file, if one was asked for.
    fn write_html(&self, page: impl FnOnce() -> html::Page) -> Result<(), CommandError> {
        write_html(self.html.as_deref(), page)
    }

    /// The input as a URI reference for SARIF: its path, or a built-in case's file.
    pub(super) fn input_uri(&self) -> String {
        if let Some(shown) = &self.report_as {
            return shown.replace('\\', "/");
        }
        match (&self.case, &self.input) {
            (Some(case), _) => format!(
                "cases/{case}/{}{}.json",
                if self.original {
                    "original"
                } else {
                    "template"
                },
                if self.non_violation {
                    "-non-violation"
                } else {
                    ""
                }
            ),
            (None, Some(path)) => path.display().to_string().replace('\\', "/"),
            (None, None) => unreachable!("clap requires an input or a case"),
        }
    }

    fn verbosity(&self) -> Verbosity {
        Verbosity::from_level(self.verbose).expect("clap keeps the level in 1..=4")
    }

    fn enumeration_options(&self) -> Result<EnumerationOptions, String> {
        let defaults = EnumerationOptions::default();
        Ok(EnumerationOptions {
            confident_nodes: self.confident_nodes.unwrap_or(defaults.confident_nodes),
            pods_per_node: self.confident_ratio.unwrap_or(defaults.pods_per_node),
            fast_find: FastFind::from_level(self.fast_find).map_err(|error| error.to_string())?,
        })
    }
}

/// The model of `input`'s single topology (`--original`, or a document that is not a
/// template); a scaling template is refused with the reason, since it has no single topology.
pub(super) fn single_topology_model(input: &Opened) -> Result<ClusterModel, CommandError> {
    let name = &input.name;
    if input.is_template() {
        return Err(format!(
            "{name}: this is a scaling template (it has userDefined); drop --original to sweep \
             its topologies, or give a single-topology document"
        )
        .into());
    }
    Ok(load_uniform(&input.document)
        .map_err(|error| input.origins.locate(error.in_file(name)).to_string())?)
}

/// Prints the warnings for the input's DeschedulerPolicy that `model` runs (the fields its
/// pods and nodes cannot show), naming the input `name`. A sweep says them once, from the
/// model of its largest topology: the policy is the template's, the same in every topology,
/// and that topology has nodes of every type, so it keeps every label key the others do.
pub(super) fn warn_of_policy(name: &str, model: &ClusterModel) {
    for warning in model.descheduler_policy_warnings() {
        eprintln!("warning: {name}: {warning}");
    }
}

/// Prints a report in `format`: `text` as is, else the JSON report `json` or a CI format built
/// from it, naming the input `name` (`uri` in SARIF).
pub(super) fn print_report(
    format: CheckFormat,
    (name, uri): (&str, &str),
    text: impl FnOnce() -> String,
    json: impl FnOnce() -> serde_json::Value,
) {
    match format {
        CheckFormat::Text => print!("{}", text()),
        CheckFormat::Json => println!("{}", json()),
        CheckFormat::Sarif => println!("{}", ci::to_sarif(&json(), uri)),
        CheckFormat::Junit => print!("{}", ci::to_junit(&json(), name)),
    }
}

/// Writes the HTML page `page` makes to `path`, if one was asked for.
pub(super) fn write_html(
    path: Option<&std::path::Path>,
    page: impl FnOnce() -> html::Page,
) -> Result<(), CommandError> {
    let Some(path) = path else {
        return Ok(());
    };
    std::fs::write(path, page().render()).map_err(|error| {
        format!("--html {}: cannot write the page: {error}", path.display()).into()
    })
}

/// The JSON report of a sweep, each violation's counterexample with the names of the nodes
/// and deployments it mentions when `names` knows them.
pub(super) fn sweep_json(result: &SweepResult, names: Option<&Names>) -> serde_json::Value {
    let mut report = sweep::to_json(result);
    if let Some(names) = names {
        let violations = report["violations"].as_array_mut().into_iter().flatten();
        for violation in violations {
            add_names(&mut violation["report"], names);
        }
    }
    report
}

/// Lists under `names` in the JSON report `report` of a single check the nodes and
/// deployments its counterexamples mention (in their intents and traces), with each deployment's manifest (file, line) when
/// known.
fn add_names(report: &mut serde_json::Value, names: &Names) {
    let traces = report["counterexamples"].as_array().into_iter().flatten();
    let lines = traces
        .flat_map(|c| {
            let trace = c["kiviTrace"].as_array().into_iter().flatten();
            std::iter::once(&c["intent"]).chain(trace)
        })
        .filter_map(|line| line.as_str());
    let named: Vec<serde_json::Value> = names
        .mentioned(lines)
        .into_iter()
        .map(|(kind, id, name)| {
            let mut entry = serde_json::json!({"kind": kind, "id": id, "name": name});
            let place = names.deployment_places.get(id - 1).cloned().flatten();
            if let (true, Some((file, line))) = (kind == "deployment", place) {
                entry["file"] = file.replace('\\', "/").into();
                entry["line"] = line.into();
            }
            entry
        })
        .collect();
    report["names"] = serde_json::json!(named);
}

/// The scaling template of `input`, swept up to `scale` nodes per node type when given; errors
/// name the input.
pub(super) fn sweep_template(input: &Opened, scale: Option<u64>) -> Result<Template, String> {
    let name = &input.name;
    let template = Template::from_json(&input.document)
        .map_err(|error| format!("{name}: {error}"))?
        .written_in(&input.origins);
    match scale {
        Some(scale) => template
            .with_scale(scale)
            .map_err(|error| format!("{name}: {error}")),
        None => Ok(template),
    }
}

/// The node names `names` knows (none when the input named no nodes).
fn node_names(names: Option<&Names>) -> &[String] {
    names.map_or(&[], |names| &names.nodes)
}

/// `text` with a line naming the nodes and deployments its traces mention, placed before the
/// summary, when `names` knows them.
fn with_legend(text: String, names: Option<&Names>) -> String {
    let Some(legend) = names.and_then(|names| names.legend(text.lines())) else {
        return text;
    };
    match text.rfind("Summary:") {
        Some(at) => format!("{}{legend}\n\n{}", &text[..at], &text[at..]),
        None => format!("{text}{legend}\n"),
    }
}
