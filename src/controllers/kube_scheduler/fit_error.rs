//! The message of a pod that fits no node, as `FitError.Error()` writes it
//! (`pkg/scheduler/framework/types.go`): `0/N nodes are available: ` and each reason with the
//! number of nodes giving it, sorted as strings, then the PostFilter's message.

use super::plugin::Rejection;
use std::collections::BTreeMap;

/// Why the pod fits nowhere (`framework.Diagnosis`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnosis {
    /// Each filtered node's first rejection (`NodeToStatus`'s explicit nodes).
    pub nodes: BTreeMap<String, Rejection>,
    /// The reasons of every other node (`AbsentNodesStatus`): nodes PreFilter left out.
    pub absent: Vec<String>,
    /// A PreFilter rejection's message: it replaces the node reasons.
    pub pre_filter_message: Option<String>,
}

impl Diagnosis {
    /// `FitError.Error()` for a cluster of `num_nodes` nodes, followed by `post_filter` (the
    /// PostFilter plugins' message) when there is one.
    pub fn message(&self, num_nodes: usize, post_filter: Option<&str>) -> String {
        let mut message = format!("0/{num_nodes} nodes are available:");
        match &self.pre_filter_message {
            Some(pre_filter) => message.push_str(&format!(" {pre_filter}.")),
            None => {
                let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
                for rejection in self.nodes.values() {
                    for reason in &rejection.reasons {
                        *counts.entry(reason).or_default() += 1;
                    }
                }
                let absent = num_nodes.saturating_sub(self.nodes.len());
                if absent > 0 {
                    for reason in &self.absent {
                        *counts.entry(reason).or_default() += absent;
                    }
                }
                let mut histogram: Vec<String> = counts
                    .iter()
                    .map(|(reason, count)| format!("{count} {reason}"))
                    .collect();
                histogram.sort();
                if !histogram.is_empty() {
                    message.push_str(&format!(" {}.", histogram.join(", ")));
                }
            }
        }
        if let Some(post_filter) = post_filter.filter(|m| !m.is_empty()) {
            message.push_str(&format!(" {post_filter}"));
        }
        message
    }
}

#[cfg(test)]
mod tests {
    use super::super::plugin::{Code, Plugin};
    use super::*;

    #[test]
    fn counts_each_reason_and_sorts_the_strings_as_go_does() {
        let mut diagnosis = Diagnosis::default();
        let fit = Rejection {
            plugin: Plugin::NodeResourcesFit,
            reasons: vec!["Insufficient cpu".into(), "Insufficient memory".into()],
            code: Code::Unschedulable,
        };
        for i in 0..10 {
            diagnosis.nodes.insert(format!("n{i}"), fit.clone());
        }
        diagnosis.nodes.insert(
            "tainted".into(),
            Rejection::new(
                Plugin::TaintToleration,
                Code::UnschedulableAndUnresolvable,
                "node(s) had untolerated taint {dedicated: gpu}",
            ),
        );
        assert_eq!(
            diagnosis.message(11, None),
            "0/11 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, \
             10 Insufficient cpu, 10 Insufficient memory."
        );
        assert_eq!(
            diagnosis.message(11, Some("preemption: x.")),
            "0/11 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, \
             10 Insufficient cpu, 10 Insufficient memory. preemption: x."
        );
    }

    #[test]
    fn nodes_left_out_by_pre_filter_count_under_its_reason() {
        let diagnosis = Diagnosis {
            absent: vec!["node(s) didn't satisfy plugin(s) [NodeAffinity]".into()],
            ..Default::default()
        };
        assert_eq!(
            diagnosis.message(3, None),
            "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity]."
        );
    }
}
