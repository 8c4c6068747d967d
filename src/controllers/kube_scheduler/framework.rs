//! One scheduling cycle of the default profile, extension point by extension point, as
//! `Scheduler.schedulePod` runs it (`pkg/scheduler/schedule_one.go`) over the framework
//! (`pkg/scheduler/framework/runtime/framework.go`): PreFilter (a plugin may skip, or narrow
//! the nodes), Filter on every node (the first failing plugin decides the node's status),
//! then, when nodes fit, PreScore (a plugin may skip), Score, NormalizeScore over the feasible
//! nodes, weights and totals; when none fits, the FitError and the PostFilter's message.
//!
//! Every node is filtered and scored (`percentageOfNodesToScore: 100`; the default adaptive
//! percentage does the same below 100 nodes). A pod with a nominated node tries that node
//! first and goes there when it passes the filters, scoring no other (`evaluateNominatedNode`
//! in `findNodesThatFitPod`). Filter runs with the nominated pods of at least the pod's
//! priority added to the node, then without them ([`super::nominated_pods`]).

use super::decision::{Decision, PluginReason};
use super::fit_error::Diagnosis;
use super::node_info::{node_infos, node_infos_with, NodeInfo, NodeTable, UsedPort};
use super::plugin::{Code, Plugin, Rejection};
use super::pod_resources::Resource;
use super::{
    balanced_allocation, default_preemption, image_locality, inter_pod_affinity, node_affinity,
    node_name, node_ports, node_resources_fit, node_unschedulable, nominated_pods,
    pod_topology_spread, preemption, taint_toleration,
};
use crate::cluster::kube::{Pod, Snapshot};
use std::collections::BTreeMap;

/// The scheduler over one snapshot: its nodes with what is bound to them, built once and
/// used for every pending pod.
#[derive(Clone, Debug)]
pub struct Scheduler<'a> {
    snapshot: &'a Snapshot,
    nodes: Vec<NodeInfo<'a>>,
    /// The snapshot's pods with a nominated node, waiting for one
    /// ([`nominated_pods::nominated`]).
    nominated: Vec<&'a Pod>,
}

/// How much of a [`Decision`] to fill in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    /// Every field, as the conformance vectors record it.
    Full,
    /// What a scheduling cycle acts on: the top-scored nodes, or, when no node fits, the
    /// FitError with its nodes' first rejections (`first_rejection`). `feasible`, `rejected`,
    /// `scores`, `raw_scores` and `total` stay empty, and Filter stops at a node's first
    /// rejection, as `RunFilterPlugins` does (the full decision runs every filter plugin on
    /// a rejected node to record each reason): building those maps over thousands of nodes
    /// is most of a cycle's time.
    Top,
}

/// What PreFilter leaves for Filter, per plugin (`None`: skipped).
struct PreFiltered<'p> {
    node_affinity: node_affinity::PreFilter<'p>,
    node_ports: Option<Vec<UsedPort>>,
    fit: Resource,
    spread: Option<pod_topology_spread::filter::FilterState>,
    inter_pod: Option<inter_pod_affinity::filter::FilterState>,
}

impl PreFiltered<'_> {
    /// Whether `plugin`'s PreFilter returned Skip.
    fn skips(&self, plugin: Plugin) -> bool {
        match plugin {
            Plugin::NodeAffinity => matches!(self.node_affinity, node_affinity::PreFilter::Skip),
            Plugin::NodePorts => self.node_ports.is_none(),
            Plugin::PodTopologySpread => self.spread.is_none(),
            Plugin::InterPodAffinity => self.inter_pod.is_none(),
            plugin => plugin.is_volume_plugin(),
        }
    }

    /// `plugin`'s Filter on `node`.
    fn filter(&self, plugin: Plugin, pod: &Pod, node: &NodeInfo) -> Option<Rejection> {
        match plugin {
            Plugin::NodeUnschedulable => node_unschedulable::filter(pod, node.node),
            Plugin::NodeName => node_name::filter(pod, node.node),
            Plugin::TaintToleration => taint_toleration::filter(pod, node.node),
            Plugin::NodeAffinity => match &self.node_affinity {
                node_affinity::PreFilter::Filter { required, .. } => {
                    node_affinity::filter(required, node.node)
                }
                _ => None,
            },
            Plugin::NodePorts => self
                .node_ports
                .as_ref()
                .and_then(|wanted| node_ports::filter(wanted, node)),
            Plugin::NodeResourcesFit => node_resources_fit::filter(&self.fit, node),
            Plugin::PodTopologySpread => self.spread.as_ref().and_then(|s| s.filter(pod, node)),
            Plugin::InterPodAffinity => self.inter_pod.as_ref().and_then(|s| s.filter(pod, node)),
            _ => None,
        }
    }
}

/// The reason of nodes a PreFilter result leaves out.
fn left_out_reason(plugin: Plugin) -> String {
    format!("node(s) didn't satisfy plugin(s) [{plugin}]")
}

impl<'a> Scheduler<'a> {
    /// The scheduler's cache over `snapshot`.
    pub fn new(snapshot: &'a Snapshot) -> Self {
        Self {
            snapshot,
            nodes: node_infos(snapshot),
            nominated: nominated_pods::nominated(snapshot),
        }
    }

    /// The scheduler's cache over `snapshot`, with `table` (see [`node_infos_with`]).
    pub fn with_table(snapshot: &'a Snapshot, table: &NodeTable) -> Self {
        Self {
            snapshot,
            nodes: node_infos_with(snapshot, table),
            nominated: nominated_pods::nominated(snapshot),
        }
    }

    /// The nodes with what is bound to them.
    pub fn nodes(&self) -> &[NodeInfo<'a>] {
        &self.nodes
    }

    /// The snapshot decided on.
    pub fn snapshot(&self) -> &'a Snapshot {
        self.snapshot
    }

    fn pre_filter<'p>(&self, pod: &'p Pod) -> PreFiltered<'p> {
        PreFiltered {
            node_affinity: node_affinity::pre_filter(pod),
            node_ports: node_ports::pre_filter(pod),
            fit: node_resources_fit::pre_filter(pod),
            spread: pod_topology_spread::filter::pre_filter(self.snapshot, &self.nodes, pod),
            inter_pod: inter_pod_affinity::filter::pre_filter(self.snapshot, &self.nodes, pod),
        }
    }

    /// `RunFilterPluginsWithNominatedPods` on the node named `name`: its first rejection, or
    /// `None` when the pod fits there (or there is no such node).
    pub fn first_rejection(&self, pod: &Pod, name: &str) -> Option<Rejection> {
        let pre = self.pre_filter(pod);
        let node = self.nodes.iter().find(|n| n.name() == name)?;
        self.filter_node(&pre, pod, node, false).into_iter().next()
    }

    /// `RunFilterPluginsWithNominatedPods` on `node` after PreFilter gave `pre`: the
    /// rejections of the first pass that fails (every failing plugin's when `all`, else the
    /// first), none when the pod fits. The first pass has the pods nominated to the node of
    /// at least the pod's priority added ([`nominated_pods::with_nominated`]), the second
    /// not; without such pods there is one pass.
    fn filter_node(
        &self,
        pre: &PreFiltered,
        pod: &Pod,
        node: &NodeInfo,
        all: bool,
    ) -> Vec<Rejection> {
        let run = |pre: &PreFiltered, node: &NodeInfo| -> Vec<Rejection> {
            let mut rejections = Plugin::FILTERS
                .iter()
                .filter(|p| !pre.skips(**p))
                .filter_map(|p| pre.filter(*p, pod, node));
            if all {
                rejections.collect()
            } else {
                rejections.next().into_iter().collect()
            }
        };
        let with = (!self.nominated.is_empty())
            .then(|| {
                nominated_pods::with_nominated(self.snapshot, &self.nominated, pod, node.name())
            })
            .flatten();
        if let Some(with) = with {
            let scheduler = Scheduler::new(&with);
            let added = scheduler.nodes.iter().find(|n| n.name() == node.name());
            let rejections = added
                .map(|added| run(&scheduler.pre_filter(pod), added))
                .unwrap_or_default();
            if !rejections.is_empty() {
                return rejections;
            }
        }
        run(pre, node)
    }

    /// PodTopologySpread's PreFilter state for `pod`: its DoNotSchedule constraints and their
    /// domains' matching pods (`None` when it has none), for explanations.
    pub fn spread_domains(&self, pod: &Pod) -> Option<pod_topology_spread::filter::FilterState> {
        pod_topology_spread::filter::pre_filter(self.snapshot, &self.nodes, pod)
    }

    /// The decision for `pod`, every field filled in.
    pub fn decide(&self, pod: &Pod) -> Decision {
        self.decide_with(pod, Detail::Full)
    }

    /// The decision for `pod` as far as `detail` asks.
    pub fn decide_with(&self, pod: &Pod, detail: Detail) -> Decision {
        let pre = self.pre_filter(pod);
        let mut decision = Decision {
            pending_pod: pod.key(),
            num_nodes: self.nodes.len(),
            feasible: Vec::new(),
            rejected: BTreeMap::new(),
            first_rejection: BTreeMap::new(),
            prefilter_rejection: None,
            scores: BTreeMap::new(),
            raw_scores: BTreeMap::new(),
            total: BTreeMap::new(),
            top: Vec::new(),
            scoring_run_by_scheduler: false,
            skipped_filter_plugins: Plugin::FILTERS
                .into_iter()
                .filter(|p| pre.skips(*p))
                .collect(),
            skipped_score_plugins: Vec::new(),
            fit_error: None,
            fit_error_with_postfilter: None,
            preemption_candidates: Vec::new(),
            preemption_victims: Vec::new(),
            nominated_nodes: Vec::new(),
            nominated_node: None,
            nominated_by: None,
        };
        decision.skipped_filter_plugins.sort_by_key(|p| p.name());
        let mut diagnosis = Diagnosis::default();
        if let node_affinity::PreFilter::Conflict = pre.node_affinity {
            let rejection = Rejection::new(
                Plugin::NodeAffinity,
                Code::UnschedulableAndUnresolvable,
                node_affinity::CONFLICT_REASON,
            );
            diagnosis.pre_filter_message = Some(node_affinity::CONFLICT_REASON.to_string());
            diagnosis.absent = rejection.reasons.clone();
            decision.prefilter_rejection = Some(rejection);
            self.fail(pod, detail, &mut decision, &diagnosis);
            return decision;
        }
        let considered = match &pre.node_affinity {
            node_affinity::PreFilter::Filter {
                node_names: Some(names),
                ..
            } => {
                diagnosis.absent = vec![left_out_reason(Plugin::NodeAffinity)];
                Some(names)
            }
            _ => None,
        };
        let nominated = pod
            .nominated_node_name
            .as_deref()
            .filter(|name| self.first_rejection(pod, name).is_none())
            .and_then(|name| self.nodes.iter().find(|n| n.name() == name));
        let mut feasible: Vec<&NodeInfo> = Vec::new();
        // Each rejected node's first rejection, and whether Filter ran on it (a node PreFilter
        // left out is absent from the diagnosis).
        let mut firsts: Vec<(&str, Rejection, bool)> = Vec::new();
        if let Some(node) = nominated {
            feasible.push(node);
        } else {
            for node in &self.nodes {
                if considered.is_some_and(|names| !names.contains(node.name())) {
                    let rejection = Rejection::new(
                        Plugin::NodeAffinity,
                        Code::UnschedulableAndUnresolvable,
                        left_out_reason(Plugin::NodeAffinity),
                    );
                    firsts.push((node.name(), rejection, false));
                    continue;
                }
                let mut rejections = self
                    .filter_node(&pre, pod, node, detail == Detail::Full)
                    .into_iter();
                let Some(first) = rejections.next() else {
                    feasible.push(node);
                    continue;
                };
                if detail == Detail::Full {
                    let reasons = std::iter::once(first.clone())
                        .chain(rejections)
                        .flat_map(|r| {
                            let (plugin, code) = (r.plugin, r.code);
                            r.reasons.into_iter().map(move |reason| PluginReason {
                                plugin,
                                reason,
                                code,
                            })
                        })
                        .collect();
                    decision.rejected.insert(node.name().to_string(), reasons);
                }
                firsts.push((node.name(), first, true));
            }
        }
        if detail == Detail::Full || feasible.is_empty() {
            for (name, rejection, filtered) in firsts {
                if filtered {
                    diagnosis.nodes.insert(name.to_string(), rejection.clone());
                }
                decision.first_rejection.insert(name.to_string(), rejection);
            }
        }
        if detail == Detail::Full {
            decision.feasible = feasible.iter().map(|n| n.name().to_string()).collect();
            decision.feasible.sort();
        }
        if feasible.is_empty() {
            self.fail(pod, detail, &mut decision, &diagnosis);
        } else {
            decision.scoring_run_by_scheduler = feasible.len() > 1;
            self.score(pod, &feasible, detail, &mut decision);
        }
        decision
    }

    /// Fills in the FitError and the PostFilter's message, and under [`Detail::Full`] the
    /// victims on each candidate node and the nomination (the snapshot's budgets, as
    /// `getPodDisruptionBudgets` lists them).
    fn fail(&self, pod: &Pod, detail: Detail, decision: &mut Decision, diagnosis: &Diagnosis) {
        let post_filter = preemption::post_filter(self, pod, diagnosis);
        decision.fit_error = Some(diagnosis.message(self.nodes.len(), None));
        decision.fit_error_with_postfilter =
            Some(diagnosis.message(self.nodes.len(), post_filter.message.as_deref()));
        decision.preemption_candidates = post_filter.candidates;
        if detail == Detail::Full && !decision.preemption_candidates.is_empty() {
            let budgets = &self.snapshot.pod_disruption_budgets;
            let candidates = default_preemption::find_candidates(
                self.snapshot,
                pod,
                budgets,
                &decision.preemption_candidates,
            );
            let nomination = default_preemption::pick_one_node(&candidates);
            decision.nominated_nodes = nomination.nodes.iter().map(|c| c.node.clone()).collect();
            if let [one] = decision.nominated_nodes.as_slice() {
                decision.nominated_node = Some(one.clone());
            }
            decision.nominated_by = nomination.decided_by;
            decision.preemption_victims = candidates;
        }
    }

    /// PreScore, Score, NormalizeScore and weights over the feasible nodes, then totals and
    /// the top-scored nodes.
    fn score(&self, pod: &Pod, feasible: &[&NodeInfo], detail: Detail, decision: &mut Decision) {
        let names: Vec<&str> = feasible.iter().map(|n| n.name()).collect();
        let mut totals = vec![0; feasible.len()];
        let tolerations = taint_toleration::pre_score(pod);
        let preferred = node_affinity::pre_score(pod);
        let fit_request = node_resources_fit::pre_score(pod);
        let spread =
            pod_topology_spread::score::pre_score(self.snapshot, &self.nodes, feasible, pod);
        let inter_pod = inter_pod_affinity::score::pre_score(self.snapshot, &self.nodes, pod);
        let balanced = balanced_allocation::pre_score(pod);
        for (plugin, weight) in Plugin::SCORES {
            let raw = |score: &dyn Fn(&NodeInfo) -> i64| -> Vec<i64> {
                feasible.iter().map(|n| score(n)).collect()
            };
            let (raw_scores, normalized) = match plugin {
                Plugin::TaintToleration => {
                    let raw = raw(&|n| taint_toleration::score(&tolerations, n.node));
                    let mut normalized = raw.clone();
                    taint_toleration::normalize(&mut normalized);
                    (raw, normalized)
                }
                Plugin::NodeAffinity => {
                    let Some(preferred) = preferred else {
                        decision.skipped_score_plugins.push(plugin);
                        continue;
                    };
                    let raw = raw(&|n| node_affinity::score(preferred, n.node));
                    let mut normalized = raw.clone();
                    node_affinity::normalize(&mut normalized);
                    (raw, normalized)
                }
                Plugin::NodeResourcesFit => {
                    let raw = raw(&|n| node_resources_fit::score(fit_request, n));
                    (raw.clone(), raw)
                }
                Plugin::PodTopologySpread => {
                    let Some(state) = &spread else {
                        decision.skipped_score_plugins.push(plugin);
                        continue;
                    };
                    let raw = raw(&|n| state.score(pod, n));
                    let mut normalized = raw.clone();
                    state.normalize(&names, &mut normalized);
                    (raw, normalized)
                }
                Plugin::InterPodAffinity => {
                    let Some(state) = &inter_pod else {
                        decision.skipped_score_plugins.push(plugin);
                        continue;
                    };
                    let raw = raw(&|n| inter_pod_affinity::score::score(state, n));
                    let mut normalized = raw.clone();
                    inter_pod_affinity::score::normalize(&mut normalized);
                    (raw, normalized)
                }
                Plugin::NodeResourcesBalancedAllocation => {
                    let Some(request) = balanced else {
                        decision.skipped_score_plugins.push(plugin);
                        continue;
                    };
                    let raw = raw(&|n| balanced_allocation::score(request, n));
                    (raw.clone(), raw)
                }
                Plugin::ImageLocality => {
                    let raw = raw(&|n| image_locality::score(pod, n, self.nodes.len()));
                    (raw.clone(), raw)
                }
                _ => {
                    decision.skipped_score_plugins.push(plugin);
                    continue;
                }
            };
            for (total, score) in totals.iter_mut().zip(&normalized) {
                *total += score * weight;
            }
            if detail == Detail::Full {
                for (i, name) in names.iter().enumerate() {
                    decision
                        .raw_scores
                        .entry(name.to_string())
                        .or_default()
                        .insert(plugin, raw_scores[i]);
                    decision
                        .scores
                        .entry(name.to_string())
                        .or_default()
                        .insert(plugin, normalized[i] * weight);
                }
            }
        }
        decision.skipped_score_plugins.sort_by_key(|p| p.name());
        if detail == Detail::Full {
            decision.total = names
                .iter()
                .zip(&totals)
                .map(|(name, total)| (name.to_string(), *total))
                .collect();
        }
        let best = totals.iter().copied().max();
        decision.top = names
            .iter()
            .zip(&totals)
            .filter(|(_, total)| Some(**total) == best)
            .map(|(name, _)| name.to_string())
            .collect();
        decision.top.sort();
    }
}
