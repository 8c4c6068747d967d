//! InterPodAffinity's PreFilter and Filter (`filtering.go`). PreFilter counts, per
//! (topology key, value): the placed pods whose required anti-affinity the pod would break,
//! the placed pods matching all the pod's required affinity terms, and the placed pods its
//! required anti-affinity terms match. Filter then rejects a node whose domain lacks the
//! affinity's pods (unless no such pod exists anywhere and the pod matches its own terms),
//! holds pods its anti-affinity excludes, or holds pods whose anti-affinity excludes it.

use super::super::node_info::NodeInfo;
use super::super::plugin::{Code, Plugin, Rejection};
use super::{matches_all, AffinityTerm, PodTerms};
use crate::cluster::kube::{Labels, Node, Pod, Snapshot};
use std::collections::HashMap;

/// The reason for unmet required affinity (`ErrReasonAffinityRulesNotMatch`).
pub const AFFINITY_REASON: &str = "node(s) didn't match pod affinity rules";
/// The reason for the pod's own anti-affinity (`ErrReasonAntiAffinityRulesNotMatch`).
pub const ANTI_AFFINITY_REASON: &str = "node(s) didn't match pod anti-affinity rules";
/// The reason for a placed pod's anti-affinity (`ErrReasonExistingAntiAffinityRulesNotMatch`).
pub const EXISTING_ANTI_AFFINITY_REASON: &str =
    "node(s) didn't satisfy existing pods anti-affinity rules";

/// Counts per (topology key, value) (`topologyToMatchedTermCount`).
type Counts = HashMap<(String, String), i64>;

/// Adds one to the node's pair for `key`, when the node has the label.
fn count(counts: &mut Counts, node: &Node, key: &str) {
    if let Some(value) = node.labels.get(key) {
        *counts.entry((key.to_string(), value.clone())).or_insert(0) += 1;
    }
}

/// What PreFilter leaves for Filter (`preFilterState`).
#[derive(Clone, Debug)]
pub struct FilterState {
    required_affinity: Vec<AffinityTerm>,
    required_anti_affinity: Vec<AffinityTerm>,
    existing_anti_affinity: Counts,
    affinity: Counts,
    anti_affinity: Counts,
}

/// `InterPodAffinity.PreFilter`: `None` (skip) when no placed pod's anti-affinity matches the
/// pod and the pod has no required terms.
pub fn pre_filter(snapshot: &Snapshot, nodes: &[NodeInfo], pod: &Pod) -> Option<FilterState> {
    let terms = PodTerms::of(pod);
    let merge = |terms: Vec<AffinityTerm>| -> Vec<AffinityTerm> {
        terms
            .into_iter()
            .map(|t| t.merge_namespaces(snapshot))
            .collect()
    };
    let required_affinity = merge(terms.required_affinity);
    let required_anti_affinity = merge(terms.required_anti_affinity);
    let namespace_labels = snapshot.namespace_labels(&pod.namespace);
    let (mut existing_anti_affinity, mut affinity, mut anti_affinity) =
        (Counts::new(), Counts::new(), Counts::new());
    for info in nodes {
        for placed in &info.pods {
            for term in &PodTerms::of(placed).required_anti_affinity {
                if term.matches(pod, &namespace_labels) {
                    count(&mut existing_anti_affinity, info.node, &term.topology_key);
                }
            }
            if matches_all(&required_affinity, placed) {
                for term in &required_affinity {
                    count(&mut affinity, info.node, &term.topology_key);
                }
            }
            for term in &required_anti_affinity {
                if term.matches(placed, &Labels::new()) {
                    count(&mut anti_affinity, info.node, &term.topology_key);
                }
            }
        }
    }
    if existing_anti_affinity.is_empty()
        && required_affinity.is_empty()
        && required_anti_affinity.is_empty()
    {
        return None;
    }
    Some(FilterState {
        required_affinity,
        required_anti_affinity,
        existing_anti_affinity,
        affinity,
        anti_affinity,
    })
}

impl FilterState {
    /// `satisfyPodAffinity`.
    fn satisfies_affinity(&self, pod: &Pod, node: &Node) -> bool {
        let mut pods_exist = true;
        for term in &self.required_affinity {
            let Some(value) = node.labels.get(&term.topology_key) else {
                return false;
            };
            let pair = (term.topology_key.clone(), value.clone());
            if self.affinity.get(&pair).copied().unwrap_or(0) <= 0 {
                pods_exist = false;
            }
        }
        pods_exist || (self.affinity.is_empty() && matches_all(&self.required_affinity, pod))
    }

    /// `satisfyPodAntiAffinity`.
    fn satisfies_anti_affinity(&self, node: &Node) -> bool {
        self.anti_affinity.is_empty()
            || !self.required_anti_affinity.iter().any(|term| {
                node.labels.get(&term.topology_key).is_some_and(|value| {
                    let pair = (term.topology_key.clone(), value.clone());
                    self.anti_affinity.get(&pair).copied().unwrap_or(0) > 0
                })
            })
    }

    /// `satisfyExistingPodsAntiAffinity`.
    fn satisfies_existing_anti_affinity(&self, node: &Node) -> bool {
        self.existing_anti_affinity.is_empty()
            || !node.labels.iter().any(|(key, value)| {
                let pair = (key.clone(), value.clone());
                self.existing_anti_affinity.get(&pair).copied().unwrap_or(0) > 0
            })
    }

    /// `InterPodAffinity.Filter`.
    pub fn filter(&self, pod: &Pod, node: &NodeInfo) -> Option<Rejection> {
        if !self.satisfies_affinity(pod, node.node) {
            return Some(Rejection::new(
                Plugin::InterPodAffinity,
                Code::UnschedulableAndUnresolvable,
                AFFINITY_REASON,
            ));
        }
        if !self.satisfies_anti_affinity(node.node) {
            return Some(Rejection::new(
                Plugin::InterPodAffinity,
                Code::Unschedulable,
                ANTI_AFFINITY_REASON,
            ));
        }
        if !self.satisfies_existing_anti_affinity(node.node) {
            return Some(Rejection::new(
                Plugin::InterPodAffinity,
                Code::Unschedulable,
                EXISTING_ANTI_AFFINITY_REASON,
            ));
        }
        None
    }
}
