//! `--loop`: a reachable oscillation in which pods are evicted and re-created forever.
//!
//! Kivi's `-l` asks SPIN for non-progress cycles. kivi instead searches the cluster's state
//! graph for a lasso (see [`crate::engine::lasso`]) whose cycle evicts a pod: since the cycle
//! comes back to the same state, every pod it evicts is re-created within it, and the cluster
//! can repeat it forever without settling. Evictions are the descheduler's, the taint
//! manager's and the node controller's; a deployment scaling down is not one.

use super::ClusterModel;
use crate::cluster::{ClusterAction, ClusterState, PodPhase};
use crate::engine::lasso::{find_lasso, Lasso, TooManyStates};

/// The default bound on the states the loop search stores.
pub const DEFAULT_MAX_STATES: usize = 2_000_000;

/// Whether `action`, taken in `before` and leading to `after`, evicted a pod.
pub fn evicts_pod(
    model: &ClusterModel,
    before: &ClusterState,
    action: &ClusterAction,
    after: &ClusterState,
) -> bool {
    matches!(
        action,
        ClusterAction::Descheduler | ClusterAction::TaintManager | ClusterAction::NodeController
    ) && (1..=model.spec().pods.len()).any(|p| {
        before.pod(p).phase != PodPhase::Terminating && after.pod(p).phase == PodPhase::Terminating
    })
}

/// An eviction loop and the cluster model its states belong to.
#[derive(Clone, Debug)]
pub struct EvictionLoop {
    /// The cluster without its intent monitors, which the lasso's states and steps are of:
    /// monitors only count, so leaving them out keeps them from lengthening or hiding loops.
    pub model: ClusterModel,
    /// The path to the loop and one round of it.
    pub lasso: Lasso<ClusterModel>,
}

impl EvictionLoop {
    /// The loop as Kivi-style trace lines.
    pub fn lines(&self) -> LoopLines {
        loop_lines(&self.model, &self.lasso)
    }
}

/// `model` without intent monitors (only the scheduler's own `pod_always_schedulable`).
fn without_monitors(model: &ClusterModel) -> ClusterModel {
    let mut spec = model.spec().clone();
    spec.intents.truncate(1);
    let mut init = model.initial_state().clone();
    init.monitors = Default::default();
    ClusterModel::new(spec, init)
}

/// Searches `model` for an eviction loop, storing at most `max_states` states. `Ok(None)`
/// means the cluster has none: every run settles or only loops without evicting. This is what
/// `kivi check --loop` reports.
pub fn find_eviction_loop(
    model: &ClusterModel,
    max_states: usize,
) -> Result<Option<EvictionLoop>, TooManyStates> {
    let model = without_monitors(model);
    let lasso = find_lasso(
        &model,
        |before: &ClusterState, action: &ClusterAction, after: &ClusterState| {
            evicts_pod(&model, before, action, after)
        },
        max_states,
    )?;
    Ok(lasso.map(|lasso| EvictionLoop { model, lasso }))
}

/// A lasso as Kivi-style trace lines, numbered on from the prefix into the cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopLines {
    /// Lines of the path to the loop.
    pub prefix: Vec<String>,
    /// Lines of one round of the loop, which then repeats.
    pub cycle: Vec<String>,
}

/// The lines of `lasso` (of `model`) in Kivi's `[step][Controller] message` style.
pub fn loop_lines(model: &ClusterModel, lasso: &Lasso<ClusterModel>) -> LoopLines {
    let mut lines = Vec::new();
    let mut prefix_len = 0;
    let mut before = &lasso.init;
    for (index, step) in lasso.prefix.iter().chain(&lasso.cycle).enumerate() {
        if index == lasso.prefix.len() {
            prefix_len = lines.len();
        }
        for line in model.describe_step(before, &step.action) {
            lines.push(line.render(lines.len()));
        }
        before = &step.state;
    }
    let cycle = lines.split_off(prefix_len);
    LoopLines {
        prefix: lines,
        cycle,
    }
}

/// Longest block of lines [`fold_repeats`] looks for.
const MAX_FOLDED_BLOCK: usize = 64;

/// A trace line without its leading `[step]` number.
fn message(line: &str) -> &str {
    line.strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .map_or(line, |(_, message)| message)
}

/// `lines` with every run of a block repeated back to back (step numbers aside) shown once and
/// followed by a note of how often it repeats. A loop's prefix often repeats the loop itself
/// many times while the descheduler's clock runs up to its period; folded, it reads as the
/// rounds a person would describe.
pub fn fold_repeats(lines: &[String]) -> Vec<String> {
    let same = |a: usize, b: usize, len: usize| {
        (0..len).all(|k| message(&lines[a + k]) == message(&lines[b + k]))
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let run = (1..=MAX_FOLDED_BLOCK.min((lines.len() - i) / 2))
            .map(|len| {
                let mut copies = 1;
                while i + (copies + 1) * len <= lines.len() && same(i, i + copies * len, len) {
                    copies += 1;
                }
                (len, copies)
            })
            .find(|&(_, copies)| copies >= 3);
        match run {
            Some((len, copies)) => {
                out.extend_from_slice(&lines[i..i + len]);
                out.push(format!(
                    "... the {len} line(s) above repeat {} more times ...",
                    copies - 1
                ));
                i += len * copies;
            }
            None => {
                out.push(lines[i].clone());
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(messages: &[&str]) -> Vec<String> {
        messages
            .iter()
            .enumerate()
            .map(|(i, m)| format!("[{i}][X] {m}"))
            .collect()
    }

    #[test]
    fn folds_blocks_repeated_three_times_or_more() {
        let lines = numbered(&["start", "a", "b", "a", "b", "a", "b", "end"]);
        assert_eq!(
            fold_repeats(&lines),
            [
                "[0][X] start",
                "[1][X] a",
                "[2][X] b",
                "... the 2 line(s) above repeat 2 more times ...",
                "[7][X] end"
            ]
        );
        let twice = numbered(&["a", "b", "a", "b"]);
        assert_eq!(fold_repeats(&twice), twice);
    }
}
