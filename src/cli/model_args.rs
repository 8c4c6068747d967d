//! Flags that choose the model's semantics and its reduction, shared by the commands that
//! build a cluster model.

use crate::cluster::TieBreak;
use crate::model::ModelOptions;
use clap::Args;

/// How ties are broken and whether states are reduced by symmetry.
#[derive(Clone, Debug, Args)]
pub struct ModelArgs {
    /// How the scheduler breaks a tie between top-scored nodes: `lowest` takes the lowest node
    /// id (Kivi's semantics, every verdict as Kivi's); `any` explores every top-scored node, as
    /// kube-scheduler's `selectHost` picks one at random on a real cluster.
    #[arg(long, value_name = "RULE", default_value = "lowest", value_parser = parse_tie_break)]
    pub tie_break: TieBreak,
    /// Fingerprint states as they are, even where merging states that differ only by the names
    /// of interchangeable nodes and pods is sound (under `--tie-break any`).
    #[arg(long)]
    pub no_symmetry: bool,
}

impl ModelArgs {
    /// The options these flags select.
    pub fn options(&self) -> ModelOptions {
        ModelOptions {
            tie_break: self.tie_break,
            symmetry: !self.no_symmetry,
        }
    }
}

/// `lowest` or `any`.
fn parse_tie_break(text: &str) -> Result<TieBreak, String> {
    TieBreak::NAMES
        .iter()
        .find(|(name, _)| *name == text)
        .map(|&(_, rule)| rule)
        .ok_or_else(|| format!("expected `lowest` or `any`, not `{text}`"))
}
