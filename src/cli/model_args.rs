//! Flags that choose the model's semantics and its reduction, shared by the commands that
//! build a cluster model.

use crate::cluster::{Perturbations, Semantics, TieBreak};
use crate::model::ModelOptions;
use clap::Args;

/// Whose scheduling rules the model follows, how ties are broken and whether states are
/// reduced by symmetry.
#[derive(Clone, Debug, Args)]
pub struct ModelArgs {
    /// Whose rules the scheduler follows: `kivi` is Kivi's scheduler (every verdict as
    /// Kivi's); `kubernetes` is kube-scheduler v1.33's default profile, one pod per scheduling
    /// cycle (fit on requests, scores over the feasible nodes, system default spreading).
    /// Default: `kivi` for the built-in cases and uniform JSON (Kivi's format), `kubernetes`
    /// for Kubernetes inputs (manifests, directories, standard input, dumps, Lists).
    #[arg(long, value_name = "RULES", value_parser = parse_semantics)]
    pub semantics: Option<Semantics>,
    /// How the scheduler breaks a tie between top-scored nodes: `lowest` takes the lowest node
    /// id (Kivi's semantics, every verdict as Kivi's); `any` explores every top-scored node, as
    /// kube-scheduler's `selectHost` picks one at random on a real cluster.
    #[arg(long, value_name = "RULE", default_value = "lowest", value_parser = parse_tie_break)]
    pub tie_break: TieBreak,
    /// Fingerprint states as they are, even where merging states that differ only by the names
    /// of interchangeable nodes and pods is sound (under `--tie-break any`).
    #[arg(long)]
    pub no_symmetry: bool,
    /// Controller faults a run may suffer, as Sieve injects them (comma-separated):
    /// `missed-event` — the deployment controller, HPA or descheduler misses the event that
    /// queued a deployment and sees it again only at its next resync; `restart` — the
    /// deployment controller or the descheduler crashes right after any write of a step, and
    /// restarts with a fresh view; `stale-view` — the scheduler, deployment controller, HPA or
    /// descheduler takes a step on its informer's stale view of the cluster. Off by default.
    #[arg(long, value_name = "KINDS", value_delimiter = ',', value_parser = parse_perturbation)]
    pub perturb: Vec<PerturbationKind>,
    /// The most perturbations in one run.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "perturb")]
    pub perturb_budget: u8,
    /// How far a stale view may lag (`--perturb stale-view`): the cluster as it was after one
    /// of the controller's last K steps (1 to 3).
    #[arg(long, value_name = "K", default_value_t = 1, requires = "perturb",
          value_parser = clap::value_parser!(u8).range(1..=3))]
    pub stale_depth: u8,
}

/// A kind of perturbation `--perturb` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerturbationKind {
    /// A controller misses an event until its next resync.
    MissedEvent,
    /// A controller crashes part-way through a step and restarts.
    Restart,
    /// A controller acts on a stale view of the cluster.
    StaleView,
}

/// `missed-event`, `restart` or `stale-view`: Sieve's three patterns.
fn parse_perturbation(text: &str) -> Result<PerturbationKind, String> {
    match text {
        "missed-event" => Ok(PerturbationKind::MissedEvent),
        "restart" => Ok(PerturbationKind::Restart),
        "stale-view" => Ok(PerturbationKind::StaleView),
        other => Err(format!(
            "expected `missed-event`, `restart` or `stale-view`, not `{other}`"
        )),
    }
}

impl ModelArgs {
    /// The options these flags select for `command` on an input whose default semantics is
    /// `input_default`, or why it cannot run with them: a scheduler acting on a stale view
    /// (`--perturb stale-view`) is Kivi's scheduler only.
    pub fn options(&self, command: &str, input_default: Semantics) -> Result<ModelOptions, String> {
        let semantics = self.semantics.unwrap_or(input_default);
        if semantics == Semantics::Kubernetes && self.perturb.contains(&PerturbationKind::StaleView)
        {
            return Err(format!(
                "--semantics kubernetes{} with --perturb stale-view: not supported for \
                 {command}: a scheduler on a stale view follows Kivi's rules only; give \
                 --semantics kivi, or leave stale-view out of --perturb",
                if self.semantics.is_none() {
                    " (the default for Kubernetes inputs)"
                } else {
                    ""
                }
            ));
        }
        Ok(ModelOptions {
            tie_break: self.tie_break,
            semantics,
            symmetry: !self.no_symmetry,
            perturbations: Perturbations {
                missed_event: self.perturb.contains(&PerturbationKind::MissedEvent),
                restart: self.perturb.contains(&PerturbationKind::Restart),
                stale_view: self.perturb.contains(&PerturbationKind::StaleView),
                stale_depth: self.stale_depth,
                budget: self.perturb_budget,
            },
        })
    }
}

/// `kivi` or `kubernetes`.
pub(super) fn parse_semantics(text: &str) -> Result<Semantics, String> {
    Semantics::NAMES
        .iter()
        .find(|(name, _)| *name == text)
        .map(|&(_, semantics)| semantics)
        .ok_or_else(|| format!("expected `kivi` or `kubernetes`, not `{text}`"))
}

/// `lowest` or `any`.
fn parse_tie_break(text: &str) -> Result<TieBreak, String> {
    TieBreak::NAMES
        .iter()
        .find(|(name, _)| *name == text)
        .map(|&(_, rule)| rule)
        .ok_or_else(|| format!("expected `lowest` or `any`, not `{text}`"))
}
