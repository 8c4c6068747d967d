//! `kivi diff OLD NEW`: checks two configurations the same way and reports the violations the
//! change adds, fixes and keeps ([`crate::report::diff`]); exit 1 only when it adds one.

use super::error::CommandError;
use super::interrupt;
use super::liveness_args::LivenessArgs;
use super::{EngineArgs, ModelArgs};
use crate::engine::cndfs::LassoOptions;
use crate::engine::{check, CheckOptions};
use crate::input::{open, InputOptions, Opened, Source};
use crate::report::diff::{self, Verdicts};
use crate::report::Format;
use crate::scaler::enumerate;
use crate::scaler::enumeration::EnumerationOptions;
use crate::scaler::sweep::{topology_model, SweepInput, SweepSettings};
use clap::Args;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Arguments of `kivi diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The configuration before the change: a uniform-JSON file, a directory of manifests with
    /// a cluster description, a YAML file, or `-` for standard input.
    old: PathBuf,
    /// The configuration after the change, in any of the same forms (at most one side `-`).
    new: PathBuf,
    /// The cluster description of the side read from standard input (`-`).
    #[arg(long, value_name = "PATH")]
    cluster_config: Option<PathBuf>,
    /// Compare the single topologies instead of sweeping (Kivi's -o).
    #[arg(short = 'o', long)]
    original: bool,
    /// Largest number of nodes per node type in the sweeps.
    #[arg(short = 's', long)]
    scale: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// `--loop` compares eviction loops, `--intent esr` eventually stable reconciliation,
    /// instead of the safety intents.
    #[command(flatten)]
    liveness: LivenessArgs,
    #[command(flatten)]
    engine: EngineArgs,
    #[command(flatten)]
    semantics: ModelArgs,
}

impl DiffArgs {
    /// Checks both sides and prints the comparison; the exit code says whether NEW adds a
    /// violation (1), may add one (3: a side is incomplete), or adds none (0).
    pub fn run(self) -> Result<i32, CommandError> {
        if self.old.as_os_str() == "-" && self.new.as_os_str() == "-" {
            return Err("kivi diff: standard input (`-`) can be only one side".into());
        }
        let interrupt = interrupt::install();
        let options = CheckOptions {
            cancel: Some(interrupt.clone()),
            all_violations: true,
            ..self.engine.check_options()
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads)
            .build()
            .map_err(|error| format!("cannot start {} threads: {error}", options.threads))?;
        let old = self.verdicts(&self.old, &options, &pool, &interrupt)?;
        let new = self.verdicts(&self.new, &options, &pool, &interrupt)?;
        match self.format {
            Format::Text => print!("{}", diff::to_text(&old, &new)),
            Format::Json => println!("{}", diff::to_json(&old, &new)),
        }
        Ok(diff::exit_code(&old, &new))
    }

    /// What checking `path` finds: every violated intent of its single topology, or of every
    /// topology of its sweep with the smallest violating one.
    fn verdicts(
        &self,
        path: &std::path::Path,
        options: &CheckOptions,
        pool: &rayon::ThreadPool,
        interrupt: &crate::engine::CancelToken,
    ) -> Result<Verdicts, CommandError> {
        let source = Source::argument(
            path,
            self.cluster_config
                .as_deref()
                .filter(|_| path.as_os_str() == "-"),
            InputOptions {
                original: self.original,
                from_cluster_dump: false,
                verify: true,
                strict: false,
            },
        )?;
        let input: Opened = open(&source)?;
        let model_options = self.semantics.options("diff", input.default_semantics())?;
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
        let name = &input.name;
        let liveness = self.liveness.kind(&input.document);
        if self.original || !input.is_template() {
            let model = super::check::single_topology_model(&input)?.with_options(model_options);
            if let Some(kind) = liveness {
                let search = kind
                    .search(&model, &LassoOptions::of_check(options))
                    .map_err(|error| CommandError::Internal(format!("{name}: {error}")))?;
                return Ok(Verdicts::of_loop(name, kind, &search));
            }
            let outcome = pool
                .install(|| check(&model, options))
                .map_err(|error| CommandError::Internal(format!("{name}: {error}")))?;
            return Ok(Verdicts::of_single(name, &model, &outcome));
        }
        let template = super::check::sweep_template(&input, self.scale)?;
        let settings = SweepSettings {
            enumeration: EnumerationOptions::default(),
            check: options.clone(),
            all_violations: true,
            journal: None,
            model: model_options,
            liveness,
            shard: None,
            input: SweepInput::default(),
        };
        let checked: BTreeSet<String> = match liveness {
            Some(kind) => BTreeSet::from([kind.rule().to_string()]),
            // Every topology of a template checks the template's intents: the smallest tells.
            None => enumerate(&template, &settings.enumeration)
                .first()
                .map(|topology| topology_model(&template, topology, settings.model))
                .transpose()
                .map_err(|error| format!("{name}: {error}"))?
                .map(|model| model.intent_names().into_iter().collect())
                .unwrap_or_default(),
        };
        let result = crate::scaler::sweep::run(&template, &settings, pool, interrupt, |_| {})
            .map_err(|error| CommandError::from_sweep(name, error))?;
        Ok(Verdicts::of_sweep(name, &result, checked))
    }
}
