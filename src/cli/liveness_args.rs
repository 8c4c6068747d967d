//! The flags that ask for a liveness search instead of the safety intents, shared by the
//! commands that check (`check`, `diff`).

use crate::input::lists_liveness_intent;
use crate::model::liveness::LoopKind;
use clap::Args;

/// `--loop`, `--intent esr` or `--intent drain`.
#[derive(Clone, Debug, Args)]
pub struct LivenessArgs {
    /// Look for an eviction loop instead of intent violations: a reachable cycle in which
    /// pods are evicted and re-created forever (Kivi's -l), on every --threads worker within
    /// --memory and --timeout; a template is swept for the smallest topology with one.
    #[arg(short = 'l', long = "loop")]
    eviction_loop: bool,
    /// Check a liveness intent instead of the safety intents: `esr`, eventually stable
    /// reconciliation (Anvil's): after the last event and command every run converges — each
    /// deployment's desired replicas running on ready nodes — and stays converged; `drain`
    /// (`drain_completes`): every `drain` event's node is eventually empty. A violation is a
    /// lasso. A template is swept for the smallest topology that violates it.
    #[arg(
        long,
        value_name = "INTENT",
        value_enum,
        conflicts_with = "eviction_loop"
    )]
    intent: Option<LivenessIntent>,
}

/// A liveness intent `--intent` checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LivenessIntent {
    /// Eventually stable reconciliation.
    #[value(name = "esr", alias = "eventually_stable_reconciliation")]
    Esr,
    /// Every drain completes.
    #[value(name = "drain", alias = "drain_completes")]
    Drain,
}

impl LivenessArgs {
    /// The lasso to search for instead of intent violations, if any: an eviction loop
    /// (`--loop`), a run that does not stay converged (`--intent esr`, or an input that lists
    /// `eventually_stable_reconciliation` among its intents, `document`), or a drain that
    /// never completes (`--intent drain`, or `drain_completes` listed).
    pub fn kind(&self, document: &serde_json::Value) -> Option<LoopKind> {
        match (self.eviction_loop, self.intent) {
            (true, _) => Some(LoopKind::Eviction),
            (false, Some(LivenessIntent::Esr)) => Some(LoopKind::UnstableReconciliation),
            (false, Some(LivenessIntent::Drain)) => Some(LoopKind::DrainNeverCompletes),
            (false, None) => match lists_liveness_intent(document)? {
                "drain_completes" => Some(LoopKind::DrainNeverCompletes),
                _ => Some(LoopKind::UnstableReconciliation),
            },
        }
    }
}
