//! `kivi simulate`: one random run of the single topology (Kivi's `-si`), printed as a
//! counterexample-style trace. The same seed gives the same run.

use super::check::warn_of_policy;
use super::dump::print_units;
use super::error::CommandError;
use super::model_args::parse_semantics;
use crate::cluster::Semantics;
use crate::engine::rng::SplitMix64;
use crate::engine::{Model, WorkerBounds};
use crate::input::{load_uniform, open, InputOptions, Source};
use crate::model::{ClusterModel, ModelOptions};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `kivi simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// A directory of manifests with a cluster description, a YAML file, a live-cluster dump,
    /// or a single-topology uniform-JSON file.
    input: PathBuf,
    /// Seed of the random choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Most steps to take.
    #[arg(long, default_value_t = 1000)]
    steps: u64,
    /// Read INPUT as a live-cluster dump.
    #[arg(long)]
    from_cluster_dump: bool,
    /// Keys of a uniform-JSON input that Kivi's format does not have are errors (exit 2).
    #[arg(long)]
    strict: bool,
    /// Whose rules the model follows, as `kivi check --semantics`, with `check`'s default:
    /// `kivi` for Kivi's own formats (its `-si`), `kubernetes` for Kubernetes inputs.
    #[arg(long, value_name = "RULES", value_parser = parse_semantics)]
    semantics: Option<Semantics>,
}

impl SimulateArgs {
    /// Runs the simulation; exit 1 when an intent was violated on the way. An input that
    /// `kivi check` refuses under the same semantics (a DeschedulerPolicy the model cannot
    /// run whole, under kubernetes) is refused with the same message, exit 2.
    pub fn run(self) -> Result<i32, CommandError> {
        let input = open(&Source::argument(
            &self.input,
            None,
            InputOptions {
                original: true,
                from_cluster_dump: self.from_cluster_dump,
                verify: true,
                strict: self.strict,
            },
        )?)?;
        let semantics = self.semantics.unwrap_or(input.default_semantics());
        eprint!("{}", input.diagnostics.to_text_under(semantics));
        print_units(&input);
        if let Some(refusal) = input.refused_under(semantics) {
            return Err(refusal.into());
        }
        for warning in input.unused_under(semantics) {
            eprintln!("warning: {warning}");
        }
        let name = &input.name;
        if input.is_template() {
            return Err(format!(
                "{name}: a scaling template; simulate a single topology (kivi dump --original \
                 gives one)"
            )
            .into());
        }
        let options = ModelOptions {
            semantics,
            ..ModelOptions::default()
        };
        let model = load_uniform(&input.document)
            .map_err(|error| error.in_file(name).to_string())?
            .with_options(options);
        warn_of_policy(name, &model);
        let (lines, violated) = simulate(&model, self.seed, self.steps);
        println!(
            "Simulation with seed {} (semantics {}):",
            self.seed,
            semantics.name()
        );
        for line in &lines {
            println!("{line}");
        }
        match violated {
            Some(intent) => {
                println!("Violated intent: {intent}");
                Ok(1)
            }
            None => Ok(0),
        }
    }
}

/// One random run from the initial state: the trace lines and the first violated intent.
pub fn simulate(model: &ClusterModel, seed: u64, steps: u64) -> (Vec<String>, Option<String>) {
    let mut rng = SplitMix64::new(seed);
    let properties = model.properties();
    let mut state = model.initial_state().clone();
    let mut lines = Vec::new();
    let mut actions = Vec::new();
    let mut worker = model.worker(WorkerBounds::none());
    let violated = |worker: &mut _, state: &<ClusterModel as Model>::State| {
        (0..properties.len())
            .find(|&p| !Model::holds(model, worker, p, state))
            .map(|p| properties[p].name.clone())
    };
    if let Some(name) = violated(&mut worker, &state) {
        return (lines, Some(name));
    }
    for _ in 0..steps {
        actions.clear();
        Model::actions(model, &mut worker, &state, &mut actions);
        if actions.is_empty() {
            lines.push("The cluster is quiet: no controller or event can act.".to_string());
            return (lines, None);
        }
        let action = actions[rng.below(actions.len())];
        for line in model.describe_step(&state, &action) {
            lines.push(line.render(lines.len()));
        }
        let Some(next) = Model::next_state(model, &mut worker, &state, &action) else {
            continue;
        };
        state = next;
        if let Some(name) = violated(&mut worker, &state) {
            return (lines, Some(name));
        }
    }
    lines.push(format!("Stopped after {steps} steps."));
    (lines, None)
}
