//! PodTopologySpread's PreScore, Score and NormalizeScore (`scoring.go`): for each
//! ScheduleAnyway constraint a node scores `count·ln(domains + 2) + maxSkew − 1`, where
//! `count` is the matching pods in its domain (on the node itself for the hostname key) and
//! `domains` the number of domains among the feasible nodes; fewer is better, so the scores
//! are normalised as `100·(max + min − score)/max`.

use super::super::node_affinity::RequiredNodeAffinity;
use super::super::node_info::NodeInfo;
use super::super::normalize::MAX_NODE_SCORE;
use super::{constraints, count_matching, has_every_key, Constraint, HOSTNAME};
use crate::cluster::kube::{Pod, Snapshot, WhenUnsatisfiable};
use std::collections::{HashMap, HashSet};

/// What PreScore leaves for Score (`preScoreState`).
#[derive(Clone, Debug)]
pub struct ScoreState {
    constraints: Vec<Constraint>,
    /// Feasible nodes without every constraint's key, when the pod's own constraints demand
    /// them all: they score 0.
    ignored: HashSet<String>,
    /// Per constraint (hostname ones left empty): matching pods per domain of the feasible
    /// nodes.
    counts: Vec<HashMap<String, i64>>,
    /// Per constraint: `ln(domains + 2)`.
    weights: Vec<f64>,
}

/// `PodTopologySpread.PreScore`: `None` (skip) when the pod has no ScheduleAnyway
/// constraint (nor system defaults). `feasible` are the nodes being scored, `nodes` all.
pub fn pre_score(
    snapshot: &Snapshot,
    nodes: &[NodeInfo],
    feasible: &[&NodeInfo],
    pod: &Pod,
) -> Option<ScoreState> {
    if nodes.is_empty() {
        return None;
    }
    let constraints = constraints(snapshot, pod, WhenUnsatisfiable::ScheduleAnyway);
    if constraints.is_empty() {
        return None;
    }
    let require_all_keys = !pod.topology_spread_constraints.is_empty();
    let mut ignored = HashSet::new();
    let mut counts = vec![HashMap::new(); constraints.len()];
    for info in feasible {
        if require_all_keys && !has_every_key(info.node, &constraints) {
            ignored.insert(info.name().to_string());
            continue;
        }
        for (i, constraint) in constraints.iter().enumerate() {
            if constraint.topology_key == HOSTNAME {
                continue;
            }
            let value = label_or_empty(info, &constraint.topology_key);
            counts[i].entry(value).or_insert(0);
        }
    }
    let weights = constraints
        .iter()
        .enumerate()
        .map(|(i, constraint)| {
            let size = if constraint.topology_key == HOSTNAME {
                feasible.len() - ignored.len()
            } else {
                counts[i].len()
            };
            ((size + 2) as f64).ln()
        })
        .collect();
    let required = RequiredNodeAffinity::of(pod);
    for info in nodes {
        if require_all_keys && !has_every_key(info.node, &constraints) {
            continue;
        }
        for (i, constraint) in constraints.iter().enumerate() {
            if !constraint.includes(pod, info.node, &required) {
                continue;
            }
            let value = label_or_empty(info, &constraint.topology_key);
            if let Some(count) = counts[i].get_mut(&value) {
                *count += count_matching(&info.pods, &constraint.selector, &pod.namespace);
            }
        }
    }
    Some(ScoreState {
        constraints,
        ignored,
        counts,
        weights,
    })
}

/// The node's value of `key`, empty when it has none (a Go map read).
fn label_or_empty(info: &NodeInfo, key: &str) -> String {
    info.node.labels.get(key).cloned().unwrap_or_default()
}

impl ScoreState {
    /// `PodTopologySpread.Score`.
    pub fn score(&self, pod: &Pod, node: &NodeInfo) -> i64 {
        if self.ignored.contains(node.name()) {
            return 0;
        }
        let mut score = 0.0;
        for (i, constraint) in self.constraints.iter().enumerate() {
            let Some(value) = node.node.labels.get(&constraint.topology_key) else {
                continue;
            };
            let count = if constraint.topology_key == HOSTNAME {
                count_matching(&node.pods, &constraint.selector, &pod.namespace)
            } else {
                self.counts[i].get(value).copied().unwrap_or(0)
            };
            score += count as f64 * self.weights[i] + f64::from(constraint.max_skew - 1);
        }
        score.round() as i64
    }

    /// `PodTopologySpread.NormalizeScore`; `names` are the scored nodes' names.
    pub fn normalize(&self, names: &[&str], scores: &mut [i64]) {
        let counted = || {
            names
                .iter()
                .zip(scores.iter())
                .filter(|(name, _)| !self.ignored.contains(**name))
                .map(|(_, score)| *score)
        };
        let min = counted().min().unwrap_or(i64::MAX);
        let max = counted().max().unwrap_or(0).max(0);
        for (name, score) in names.iter().zip(scores.iter_mut()) {
            *score = if self.ignored.contains(*name) {
                0
            } else if max == 0 {
                MAX_NODE_SCORE
            } else {
                MAX_NODE_SCORE * (max + min - *score) / max
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalising_favours_the_emptiest_domain() {
        let state = ScoreState {
            constraints: Vec::new(),
            ignored: HashSet::from(["c".to_string()]),
            counts: Vec::new(),
            weights: Vec::new(),
        };
        let mut scores = [9, 7, 0];
        state.normalize(&["a", "b", "c"], &mut scores);
        assert_eq!(scores, [77, 100, 0], "100*(9+7-9)/9 = 77");
        let mut zeros = [0, 0];
        state.normalize(&["a", "b"], &mut zeros);
        assert_eq!(zeros, [100, 100]);
    }
}
