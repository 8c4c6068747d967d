//! Liveness searches of the cluster, both lassos found by the parallel nested depth-first
//! search ([`crate::engine::cndfs`]):
//! - [`eviction_loop`]: pods evicted and re-created forever (`--loop`);
//! - [`stable_reconciliation`]: runs that, after the last event and command, never stay
//!   converged (`--intent esr`);
//! - [`drain`]: a `drain` event that never completes (`--intent drain`).
//!
//! What they find is reported alike ([`FoundLoop`], [`LoopVerdict`]).

pub mod drain;
pub mod eviction_loop;
mod found;
pub mod stable_reconciliation;

pub use found::{searched_cluster, FoundLoop, LoopKind, LoopSearch, LoopVerdict};

use crate::engine::cndfs::LassoOptions;
use crate::model::ClusterModel;

impl LoopKind {
    /// Searches `model` for a lasso of this kind on every worker of `options`. `Err` is an
    /// internal error: a lasso found that does not replay.
    pub fn search(
        self,
        model: &ClusterModel,
        options: &LassoOptions,
    ) -> Result<LoopSearch, String> {
        match self {
            Self::Eviction => eviction_loop::find_eviction_loop(model, options),
            Self::UnstableReconciliation => {
                stable_reconciliation::find_unstable_reconciliation(model, options)
            }
            Self::DrainNeverCompletes => drain::find_stuck_drain(model, options),
        }
    }
}
