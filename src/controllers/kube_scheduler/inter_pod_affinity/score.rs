//! InterPodAffinity's PreScore, Score and NormalizeScore (`scoring.go`): every placed pod adds,
//! at its node's value of each term's topology key, the weight of the pod's preferred
//! affinity terms it matches (minus that of its preferred anti-affinity terms), 1 for each of
//! its own required affinity terms the pod matches, and the weights of its own preferred
//! terms the pod matches. A node scores the sum at its values; scores are scaled linearly so
//! that the lowest is 0 and the highest 100.

use super::super::node_info::NodeInfo;
use super::super::normalize::MAX_NODE_SCORE;
use super::{PodTerms, WeightedTerm};
use crate::cluster::kube::{Labels, Node, Pod, Snapshot};
use std::collections::HashMap;

/// `hardPodAffinityWeight` of the default `InterPodAffinityArgs`.
const HARD_POD_AFFINITY_WEIGHT: i32 = 1;

/// Scores per topology key and value (`scoreMap`).
pub type ScoreState = HashMap<String, HashMap<String, i64>>;

/// Adds `weight` at the node's value of the term's key when `pod` matches the term
/// (`scoreMap.processTerm`).
fn process(
    scores: &mut ScoreState,
    term: &super::AffinityTerm,
    weight: i32,
    pod: &Pod,
    namespace_labels: &Labels,
    node: &Node,
) {
    if !term.matches(pod, namespace_labels) {
        return;
    }
    if let Some(value) = node.labels.get(&term.topology_key) {
        *scores
            .entry(term.topology_key.clone())
            .or_default()
            .entry(value.clone())
            .or_insert(0) += i64::from(weight);
    }
}

/// `InterPodAffinity.PreScore`: `None` (skip) when no term of either side counts anywhere.
pub fn pre_score(snapshot: &Snapshot, nodes: &[NodeInfo], pod: &Pod) -> Option<ScoreState> {
    let terms = PodTerms::of(pod);
    let merge = |terms: Vec<WeightedTerm>| -> Vec<WeightedTerm> {
        terms
            .into_iter()
            .map(|t| WeightedTerm {
                term: t.term.merge_namespaces(snapshot),
                weight: t.weight,
            })
            .collect()
    };
    let preferred_affinity = merge(terms.preferred_affinity);
    let preferred_anti_affinity = merge(terms.preferred_anti_affinity);
    let has_constraints = !preferred_affinity.is_empty() || !preferred_anti_affinity.is_empty();
    let namespace_labels = snapshot.namespace_labels(&pod.namespace);
    let none = Labels::new();
    let mut scores = ScoreState::new();
    for info in nodes {
        let node = info.node;
        if node.labels.is_empty() {
            continue;
        }
        for placed in &info.pods {
            let with_affinity = placed.pod_affinity.is_some() || placed.pod_anti_affinity.is_some();
            if !has_constraints && !with_affinity {
                continue;
            }
            for t in &preferred_affinity {
                process(&mut scores, &t.term, t.weight, placed, &none, node);
            }
            for t in &preferred_anti_affinity {
                process(&mut scores, &t.term, -t.weight, placed, &none, node);
            }
            let theirs = PodTerms::of(placed);
            for term in &theirs.required_affinity {
                process(
                    &mut scores,
                    term,
                    HARD_POD_AFFINITY_WEIGHT,
                    pod,
                    &namespace_labels,
                    node,
                );
            }
            for t in &theirs.preferred_affinity {
                process(&mut scores, &t.term, t.weight, pod, &namespace_labels, node);
            }
            for t in &theirs.preferred_anti_affinity {
                process(
                    &mut scores,
                    &t.term,
                    -t.weight,
                    pod,
                    &namespace_labels,
                    node,
                );
            }
        }
    }
    (!scores.is_empty()).then_some(scores)
}

/// `InterPodAffinity.Score`: the sums at the node's values.
pub fn score(state: &ScoreState, node: &NodeInfo) -> i64 {
    state
        .iter()
        .filter_map(|(key, values)| {
            let value = node.node.labels.get(key)?;
            Some(values.get(value).copied().unwrap_or(0))
        })
        .sum()
}

/// `InterPodAffinity.NormalizeScore`: `int(100·(score − min)/(max − min))`, all 0 when equal.
pub fn normalize(scores: &mut [i64]) {
    let (Some(&min), Some(&max)) = (scores.iter().min(), scores.iter().max()) else {
        return;
    };
    let spread = max - min;
    for score in scores.iter_mut() {
        let scaled = if spread > 0 {
            MAX_NODE_SCORE as f64 * ((*score - min) as f64 / spread as f64)
        } else {
            0.0
        };
        *score = scaled as i64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalising_is_linear_between_lowest_and_highest() {
        let mut scores = [-100, 0, 100, 1];
        normalize(&mut scores);
        assert_eq!(scores, [0, 50, 100, 50], "int(100 * 101/200) = 50");
        let mut equal = [7, 7];
        normalize(&mut equal);
        assert_eq!(equal, [0, 0]);
    }
}
