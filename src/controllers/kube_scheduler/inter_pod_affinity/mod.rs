//! InterPodAffinity (`pkg/scheduler/framework/plugins/interpodaffinity/`): required pod
//! affinity and anti-affinity (the pod's own, and the anti-affinity of pods already placed)
//! filter; preferred terms of both sides, and the required affinity of placed pods at weight 1
//! (`hardPodAffinityWeight`), score.

pub mod filter;
pub mod score;

use crate::cluster::kube::{Labels, Pod, PodAffinityTerm, Selector, Snapshot};
use std::collections::BTreeSet;

/// A pod affinity term ready to match (`framework.AffinityTerm` in
/// `pkg/scheduler/framework/types.go`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AffinityTerm {
    /// The namespaces whose pods the term looks at.
    pub namespaces: BTreeSet<String>,
    /// Which pods.
    pub selector: Selector,
    /// The node label whose value groups nodes.
    pub topology_key: String,
    /// Namespaces by their labels, besides [`AffinityTerm::namespaces`].
    pub namespace_selector: Selector,
}

impl AffinityTerm {
    /// `newAffinityTerm` for a term of `owner`: with neither namespaces nor a namespace
    /// selector, the term looks at its owner's namespace (`getNamespacesFromPodAffinityTerm`).
    pub fn new(owner: &Pod, term: &PodAffinityTerm) -> Self {
        let namespaces = if term.namespaces.is_empty() && term.namespace_selector.is_none() {
            BTreeSet::from([owner.namespace.clone()])
        } else {
            term.namespaces.iter().cloned().collect()
        };
        Self {
            namespaces,
            selector: Selector::from_label_selector(term.label_selector.as_ref()),
            topology_key: term.topology_key.clone(),
            namespace_selector: Selector::from_label_selector(term.namespace_selector.as_ref()),
        }
    }

    /// `AffinityTerm.Matches`: whether `pod` (whose namespace has `namespace_labels`) is one
    /// of the pods the term looks at.
    pub fn matches(&self, pod: &Pod, namespace_labels: &Labels) -> bool {
        (self.namespaces.contains(&pod.namespace)
            || self.namespace_selector.matches(namespace_labels))
            && self.selector.matches(&pod.labels)
    }

    /// `mergeAffinityTermNamespacesIfNotEmpty` (`plugin.go`): a namespace selector other than
    /// the empty one is replaced by the names of the snapshot's namespaces it selects.
    pub fn merge_namespaces(mut self, snapshot: &Snapshot) -> Self {
        if self.namespace_selector.is_empty() {
            return self;
        }
        for namespace in &snapshot.namespaces {
            if self.namespace_selector.matches(&namespace.labels) {
                self.namespaces.insert(namespace.name.clone());
            }
        }
        self.namespace_selector = Selector::Nothing;
        self
    }
}

/// A weighted term (`framework.WeightedAffinityTerm`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightedTerm {
    /// The term.
    pub term: AffinityTerm,
    /// Its weight.
    pub weight: i32,
}

/// A pod's four lists of terms (`framework.PodInfo`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodTerms {
    /// Required affinity.
    pub required_affinity: Vec<AffinityTerm>,
    /// Required anti-affinity.
    pub required_anti_affinity: Vec<AffinityTerm>,
    /// Preferred affinity.
    pub preferred_affinity: Vec<WeightedTerm>,
    /// Preferred anti-affinity.
    pub preferred_anti_affinity: Vec<WeightedTerm>,
}

impl PodTerms {
    /// `PodInfo.Update`: the terms of `pod`.
    pub fn of(pod: &Pod) -> Self {
        let required = |affinity: &Option<crate::cluster::kube::PodAffinity>| {
            affinity
                .iter()
                .flat_map(|a| &a.required)
                .map(|t| AffinityTerm::new(pod, t))
                .collect()
        };
        let preferred = |affinity: &Option<crate::cluster::kube::PodAffinity>| {
            affinity
                .iter()
                .flat_map(|a| &a.preferred)
                .map(|t| WeightedTerm {
                    term: AffinityTerm::new(pod, &t.term),
                    weight: t.weight,
                })
                .collect()
        };
        Self {
            required_affinity: required(&pod.pod_affinity),
            required_anti_affinity: required(&pod.pod_anti_affinity),
            preferred_affinity: preferred(&pod.pod_affinity),
            preferred_anti_affinity: preferred(&pod.pod_anti_affinity),
        }
    }
}

/// `podMatchesAllAffinityTerms`: `pod` matches every term (and there is one).
pub fn matches_all(terms: &[AffinityTerm], pod: &Pod) -> bool {
    !terms.is_empty() && terms.iter().all(|t| t.matches(pod, &Labels::new()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::kube::{LabelSelector, Namespace};

    fn term(namespaces: &[&str], namespace_selector: Option<LabelSelector>) -> PodAffinityTerm {
        PodAffinityTerm {
            label_selector: Some(LabelSelector::default()),
            namespaces: namespaces.iter().map(|n| n.to_string()).collect(),
            namespace_selector,
            topology_key: "kubernetes.io/hostname".into(),
        }
    }

    #[test]
    fn namespaces_default_to_the_owners_and_an_empty_selector_means_all() {
        let owner = Pod::new("shop", "owner");
        let other = Pod::new("batch", "other");
        let own = AffinityTerm::new(&owner, &term(&[], None));
        assert!(own.matches(&owner, &Labels::new()) && !own.matches(&other, &Labels::new()));
        let all = AffinityTerm::new(&owner, &term(&[], Some(LabelSelector::default())));
        assert!(all.matches(&other, &Labels::new()));
        let listed = AffinityTerm::new(&owner, &term(&["batch"], None));
        assert!(listed.matches(&other, &Labels::new()) && !listed.matches(&owner, &Labels::new()));
    }

    #[test]
    fn a_namespace_selector_becomes_the_names_it_selects() {
        let owner = Pod::new("shop", "owner");
        let selector = LabelSelector {
            match_labels: Labels::from([("team".to_string(), "a".to_string())]),
            match_expressions: Vec::new(),
        };
        let snapshot = Snapshot {
            namespaces: vec![
                Namespace {
                    name: "batch".into(),
                    labels: Labels::from([("team".to_string(), "a".to_string())]),
                },
                Namespace {
                    name: "web".into(),
                    labels: Labels::new(),
                },
            ],
            ..Default::default()
        };
        let merged =
            AffinityTerm::new(&owner, &term(&[], Some(selector))).merge_namespaces(&snapshot);
        assert_eq!(merged.namespaces, BTreeSet::from(["batch".to_string()]));
        assert_eq!(merged.namespace_selector, Selector::Nothing);
    }
}
