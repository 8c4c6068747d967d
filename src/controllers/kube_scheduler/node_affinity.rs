//! NodeAffinity (`pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go`, with the
//! matching of `k8s.io/component-helpers/scheduling/corev1/nodeaffinity`): the filter admits a
//! node that has every `nodeSelector` label and meets one required node selector term; the
//! score sums the weights of the preferred terms the node meets, normalised by the highest.

use super::normalize::default_normalize;
use super::plugin::{Code, Plugin, Rejection};
use crate::cluster::kube::{
    Labels, Node, NodeSelectorTerm, Operator, Pod, PreferredSchedulingTerm,
};
use std::collections::BTreeSet;

/// The filter's reason (`ErrReasonPod`).
pub const REASON: &str = "node(s) didn't match Pod's node affinity/selector";
/// PreFilter's reason when every required term names nodes and no node is left
/// (`errReasonConflict`).
pub const CONFLICT_REASON: &str = "pod affinity terms conflict";

/// A pod's node selector and required node affinity together
/// (`nodeaffinity.RequiredNodeAffinity`).
#[derive(Clone, Copy, Debug)]
pub struct RequiredNodeAffinity<'a> {
    /// `spec.nodeSelector`, when it has labels.
    node_selector: Option<&'a Labels>,
    /// The required terms, when the pod has required node affinity.
    terms: Option<&'a [NodeSelectorTerm]>,
}

impl<'a> RequiredNodeAffinity<'a> {
    /// `GetRequiredNodeAffinity`.
    pub fn of(pod: &'a Pod) -> Self {
        Self {
            node_selector: pod.node_selector.as_ref().filter(|s| !s.is_empty()),
            terms: pod
                .node_affinity
                .as_ref()
                .and_then(|a| a.required.as_deref()),
        }
    }

    /// `RequiredNodeAffinity.Match`: every node selector label, then one term (a list of no
    /// terms, or of empty terms only, admits no node).
    pub fn matches(&self, node: &Node) -> bool {
        if let Some(selector) = self.node_selector {
            if !selector
                .iter()
                .all(|(key, value)| node.labels.get(key) == Some(value))
            {
                return false;
            }
        }
        match self.terms {
            None => true,
            Some(terms) => terms.iter().any(|t| t.matches(&node.name, &node.labels)),
        }
    }
}

/// What PreFilter leaves for Filter.
#[derive(Clone, Debug)]
pub enum PreFilter<'a> {
    /// The pod has no node selector and no required node affinity: the plugin is skipped.
    Skip,
    /// Filter with this.
    Filter {
        /// The selector and terms.
        required: RequiredNodeAffinity<'a>,
        /// When every required term names nodes by `metadata.name In`, only those nodes are
        /// considered (`PreFilterResult.NodeNames`).
        node_names: Option<BTreeSet<String>>,
    },
    /// Every term names nodes and no name is left: the pod fits nowhere.
    Conflict,
}

/// `NodeAffinity.PreFilter`.
pub fn pre_filter(pod: &Pod) -> PreFilter<'_> {
    let required_terms = pod
        .node_affinity
        .as_ref()
        .and_then(|a| a.required.as_deref());
    if required_terms.is_none() && pod.node_selector.is_none() {
        return PreFilter::Skip;
    }
    let required = RequiredNodeAffinity::of(pod);
    let Some(terms) = required_terms.filter(|t| !t.is_empty()) else {
        return PreFilter::Filter {
            required,
            node_names: None,
        };
    };
    let mut names: BTreeSet<String> = BTreeSet::new();
    for term in terms {
        let mut term_names: Option<BTreeSet<String>> = None;
        for field in &term.match_fields {
            if field.key == "metadata.name" && field.operator == Operator::In {
                let these: BTreeSet<String> = field.values.iter().cloned().collect();
                term_names = Some(match term_names {
                    None => these,
                    Some(before) => before.intersection(&these).cloned().collect(),
                });
            }
        }
        match term_names {
            None => {
                return PreFilter::Filter {
                    required,
                    node_names: None,
                }
            }
            Some(these) => names.extend(these),
        }
    }
    if names.is_empty() {
        PreFilter::Conflict
    } else {
        PreFilter::Filter {
            required,
            node_names: Some(names),
        }
    }
}

/// `NodeAffinity.Filter`.
pub fn filter(required: &RequiredNodeAffinity, node: &Node) -> Option<Rejection> {
    (!required.matches(node)).then(|| {
        Rejection::new(
            Plugin::NodeAffinity,
            Code::UnschedulableAndUnresolvable,
            REASON,
        )
    })
}

/// `NodeAffinity.PreScore`: the preferred terms, or `None` (skip) when the pod has none.
pub fn pre_score(pod: &Pod) -> Option<&[PreferredSchedulingTerm]> {
    pod.node_affinity.as_ref()?.preferred.as_deref()
}

/// `NodeAffinity.Score`: the weights of the preferred terms the node meets (terms of weight
/// 0 and empty terms never count, `NewPreferredSchedulingTerms`).
pub fn score(preferred: &[PreferredSchedulingTerm], node: &Node) -> i64 {
    preferred
        .iter()
        .filter(|t| t.weight != 0 && t.preference.matches(&node.name, &node.labels))
        .map(|t| i64::from(t.weight))
        .sum()
}

/// `NodeAffinity.NormalizeScore`: `100·sum/max`.
pub fn normalize(scores: &mut [i64]) {
    default_normalize(scores, false);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::kube::{NodeAffinity, Requirement};

    fn node(name: &str, labels: &[(&str, &str)]) -> Node {
        Node {
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Node::new(name)
        }
    }

    fn term(key: &str, operator: Operator, values: &[&str]) -> NodeSelectorTerm {
        NodeSelectorTerm {
            match_expressions: vec![Requirement::new(
                key,
                operator,
                values.iter().map(|v| v.to_string()).collect(),
            )
            .unwrap()],
            match_fields: Vec::new(),
        }
    }

    #[test]
    fn terms_are_ored_and_an_empty_list_admits_no_node() {
        let mut pod = Pod::new("default", "p");
        pod.node_affinity = Some(NodeAffinity {
            required: Some(vec![
                term("disktype", Operator::In, &["ssd"]),
                term("generation", Operator::Gt, &["4"]),
            ]),
            preferred: None,
        });
        let required = RequiredNodeAffinity::of(&pod);
        assert!(required.matches(&node("a", &[("disktype", "ssd")])));
        assert!(required.matches(&node("b", &[("generation", "5")])));
        assert!(!required.matches(&node("c", &[("generation", "4")])));
        pod.node_affinity = Some(NodeAffinity {
            required: Some(vec![NodeSelectorTerm::default()]),
            preferred: None,
        });
        assert!(!RequiredNodeAffinity::of(&pod).matches(&node("a", &[])));
        assert!(matches!(pre_filter(&pod), PreFilter::Filter { .. }));
    }

    #[test]
    fn an_absent_node_selector_skips_but_an_empty_one_filters() {
        let mut pod = Pod::new("default", "p");
        assert!(matches!(pre_filter(&pod), PreFilter::Skip));
        pod.node_selector = Some(Labels::new());
        assert!(matches!(pre_filter(&pod), PreFilter::Filter { .. }));
        assert!(RequiredNodeAffinity::of(&pod).matches(&node("a", &[])));
    }

    #[test]
    fn preferred_weights_sum_and_normalise_by_the_highest() {
        let preferred = vec![
            PreferredSchedulingTerm {
                weight: 30,
                preference: term("zone", Operator::In, &["a"]),
            },
            PreferredSchedulingTerm {
                weight: 45,
                preference: term("disktype", Operator::Exists, &[]),
            },
        ];
        let nodes = [
            node("a", &[("zone", "a"), ("disktype", "ssd")]),
            node("b", &[("zone", "a")]),
            node("c", &[]),
        ];
        let mut scores: Vec<i64> = nodes.iter().map(|n| score(&preferred, n)).collect();
        assert_eq!(scores, [75, 30, 0]);
        normalize(&mut scores);
        assert_eq!(scores, [100, 40, 0]);
    }
}
