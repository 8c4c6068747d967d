//! PodTopologySpread's PreFilter and Filter (`filtering.go`): for each DoNotSchedule
//! constraint, placing the pod on the node must not make its domain exceed the least
//! populated domain by more than `maxSkew` (the least counts as 0 while there are fewer
//! domains than `minDomains`). A node without the constraint's key is rejected outright.

use super::super::node_affinity::RequiredNodeAffinity;
use super::super::node_info::NodeInfo;
use super::super::plugin::{Code, Plugin, Rejection};
use super::{constraints, count_matching, has_every_key, Constraint};
use crate::cluster::kube::{Pod, Snapshot, WhenUnsatisfiable};
use std::collections::HashMap;

/// The reason for a node without the topology key (`ErrReasonNodeLabelNotMatch`).
pub const MISSING_LABEL_REASON: &str =
    "node(s) didn't match pod topology spread constraints (missing required label)";
/// The reason for a node the skew rejects (`ErrReasonConstraintsNotMatch`).
pub const SKEW_REASON: &str = "node(s) didn't match pod topology spread constraints";

/// What PreFilter leaves for Filter (`preFilterState`): the constraints and, per constraint,
/// the matching pods per domain.
#[derive(Clone, Debug)]
pub struct FilterState {
    constraints: Vec<Constraint>,
    counts: Vec<HashMap<String, i64>>,
}

/// `PodTopologySpread.PreFilter` (`calPreFilterState`): `None` (skip) when the pod has no
/// DoNotSchedule constraint.
pub fn pre_filter(snapshot: &Snapshot, nodes: &[NodeInfo], pod: &Pod) -> Option<FilterState> {
    let constraints = constraints(snapshot, pod, WhenUnsatisfiable::DoNotSchedule);
    if constraints.is_empty() {
        return None;
    }
    let required = RequiredNodeAffinity::of(pod);
    let mut counts = vec![HashMap::new(); constraints.len()];
    for info in nodes {
        if !has_every_key(info.node, &constraints) {
            continue;
        }
        for (i, constraint) in constraints.iter().enumerate() {
            if !constraint.includes(pod, info.node, &required) {
                continue;
            }
            let value = info.node.labels[&constraint.topology_key].clone();
            *counts[i].entry(value).or_insert(0) +=
                count_matching(&info.pods, &constraint.selector, &pod.namespace);
        }
    }
    Some(FilterState {
        constraints,
        counts,
    })
}

impl FilterState {
    /// `minMatchNum`: the fewest matching pods in a domain, or 0 while there are fewer
    /// domains than `minDomains`.
    fn min_match(&self, i: usize) -> i64 {
        let domains = &self.counts[i];
        if (domains.len() as i64) < i64::from(self.constraints[i].min_domains) {
            return 0;
        }
        domains.values().copied().min().unwrap_or(0)
    }

    /// `PodTopologySpread.Filter`.
    pub fn filter(&self, pod: &Pod, node: &NodeInfo) -> Option<Rejection> {
        for (i, constraint) in self.constraints.iter().enumerate() {
            let Some(value) = node.node.labels.get(&constraint.topology_key) else {
                return Some(Rejection::new(
                    Plugin::PodTopologySpread,
                    Code::UnschedulableAndUnresolvable,
                    MISSING_LABEL_REASON,
                ));
            };
            let self_match = i64::from(constraint.selector.matches(&pod.labels));
            let matching = self.counts[i].get(value).copied().unwrap_or(0);
            if matching + self_match - self.min_match(i) > i64::from(constraint.max_skew) {
                return Some(Rejection::new(
                    Plugin::PodTopologySpread,
                    Code::Unschedulable,
                    SKEW_REASON,
                ));
            }
        }
        None
    }

    /// The constraints, for explanations.
    pub fn constraints(&self) -> &[Constraint] {
        &self.constraints
    }

    /// Constraint `i`'s matching pods per domain, for explanations: its domains (the values
    /// of its key on the nodes it includes) in name order.
    pub fn domains(&self, i: usize) -> Vec<(&str, i64)> {
        let mut domains: Vec<(&str, i64)> = self.counts[i]
            .iter()
            .map(|(domain, &count)| (domain.as_str(), count))
            .collect();
        domains.sort_unstable();
        domains
    }
}
