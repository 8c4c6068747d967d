//! PodTopologySpread (`pkg/scheduler/framework/plugins/podtopologyspread/`): the pod's
//! DoNotSchedule constraints filter, its ScheduleAnyway constraints score. A pod without
//! constraints of its own that a Service, ReplicationController, ReplicaSet or StatefulSet
//! selects gets the system defaults (hostname skew 3, zone skew 5, both ScheduleAnyway),
//! selecting the pods its owners select.
//!
//! Pods are counted per domain (value of the topology key) over the nodes that carry every
//! constraint's key and that the inclusion policies admit: node affinity is honoured and
//! taints ignored unless the constraint says otherwise. Terminating pods are not counted.

pub mod filter;
pub mod score;

use super::node_affinity::RequiredNodeAffinity;
use super::taint_toleration::FILTERED_EFFECTS;
use crate::cluster::kube::{
    Labels, Node, NodeInclusionPolicy, Pod, Selector, SelectorOwnerKind, Snapshot,
    TopologySpreadConstraint as ApiConstraint, WhenUnsatisfiable,
};
use crate::cluster::taints::first_untolerated;

/// The hostname label (`v1.LabelHostname`).
pub const HOSTNAME: &str = "kubernetes.io/hostname";
/// The zone label (`v1.LabelTopologyZone`).
pub const ZONE: &str = "topology.kubernetes.io/zone";

/// A constraint as the plugin uses it (`topologySpreadConstraint` in `common.go`): the
/// selector built, the defaults applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraint {
    /// `maxSkew`.
    pub max_skew: i32,
    /// `topologyKey`.
    pub topology_key: String,
    /// Which pods count.
    pub selector: Selector,
    /// `minDomains`, 1 when absent.
    pub min_domains: i32,
    /// `nodeAffinityPolicy`, Honor when absent.
    pub node_affinity_policy: NodeInclusionPolicy,
    /// `nodeTaintsPolicy`, Ignore when absent.
    pub node_taints_policy: NodeInclusionPolicy,
}

impl Constraint {
    /// `matchNodeInclusionPolicies`: whether `node` is one of this constraint's domains'
    /// nodes for `pod`.
    pub fn includes(&self, pod: &Pod, node: &Node, required: &RequiredNodeAffinity) -> bool {
        if self.node_affinity_policy == NodeInclusionPolicy::Honor && !required.matches(node) {
            return false;
        }
        !(self.node_taints_policy == NodeInclusionPolicy::Honor
            && first_untolerated(&node.taints, &pod.tolerations, &FILTERED_EFFECTS).is_some())
    }
}

/// The system default constraints (`systemDefaultConstraints` in `plugin.go`).
fn system_defaults() -> [ApiConstraint; 2] {
    let constraint = |key: &str, max_skew| ApiConstraint {
        max_skew,
        topology_key: key.to_string(),
        when_unsatisfiable: WhenUnsatisfiable::ScheduleAnyway,
        label_selector: None,
        min_domains: None,
        node_affinity_policy: None,
        node_taints_policy: None,
        match_label_keys: Vec::new(),
    };
    [constraint(HOSTNAME, 3), constraint(ZONE, 5)]
}

/// `filterTopologySpreadConstraints`: the constraints of `action`, with their selectors
/// (the pod's values of `matchLabelKeys` added) and defaults.
fn of_action(
    constraints: &[ApiConstraint],
    labels: &Labels,
    action: WhenUnsatisfiable,
) -> Vec<Constraint> {
    constraints
        .iter()
        .filter(|c| c.when_unsatisfiable == action)
        .map(|c| {
            let mut selector = Selector::from_label_selector(c.label_selector.as_ref());
            let keys: Labels = c
                .match_label_keys
                .iter()
                .filter_map(|key| labels.get(key).map(|value| (key.clone(), value.clone())))
                .collect();
            if !keys.is_empty() {
                if let Some(requirements) = selector.requirements() {
                    selector = Selector::from_set(&keys).with(requirements);
                }
            }
            Constraint {
                max_skew: c.max_skew,
                topology_key: c.topology_key.clone(),
                selector,
                min_domains: c.min_domains.unwrap_or(1),
                node_affinity_policy: c.node_affinity_policy.unwrap_or(NodeInclusionPolicy::Honor),
                node_taints_policy: c.node_taints_policy.unwrap_or(NodeInclusionPolicy::Ignore),
            }
        })
        .collect()
}

/// The pod's constraints of `action` (`getConstraints`, `initPreScoreState`): its own, or the
/// system defaults with [`default_selector`] when it has none.
pub fn constraints(snapshot: &Snapshot, pod: &Pod, action: WhenUnsatisfiable) -> Vec<Constraint> {
    if !pod.topology_spread_constraints.is_empty() {
        return of_action(&pod.topology_spread_constraints, &pod.labels, action);
    }
    let mut defaults = of_action(&system_defaults(), &pod.labels, action);
    if defaults.is_empty() {
        return defaults;
    }
    let selector = default_selector(snapshot, pod);
    if selector.is_empty() {
        return Vec::new();
    }
    for constraint in &mut defaults {
        constraint.selector = selector.clone();
    }
    defaults
}

/// `helper.DefaultSelector` (`pkg/scheduler/framework/plugins/helper/spread.go`): the
/// selectors of the Services selecting the pod merged, then the selector of its controller
/// when that is a ReplicationController, ReplicaSet or StatefulSet of the snapshot.
pub fn default_selector(snapshot: &Snapshot, pod: &Pod) -> Selector {
    let in_namespace = |kind: SelectorOwnerKind| {
        snapshot
            .selector_owners
            .iter()
            .filter(move |o| o.kind == kind && o.namespace == pod.namespace)
    };
    let mut set = Labels::new();
    for service in in_namespace(SelectorOwnerKind::Service) {
        let Some(selector) = &service.selector else {
            continue;
        };
        if Selector::from_set(&selector.match_labels).matches(&pod.labels) {
            set.extend(selector.match_labels.clone());
        }
    }
    let mut selector = Selector::from_set(&set);
    let Some(owner) = &pod.controller else {
        return selector;
    };
    let kind = [
        SelectorOwnerKind::ReplicationController,
        SelectorOwnerKind::ReplicaSet,
        SelectorOwnerKind::StatefulSet,
    ]
    .into_iter()
    .find(|kind| kind.api() == (owner.kind.as_str(), owner.api_version.as_str()));
    let Some(kind) = kind else {
        return selector;
    };
    let Some(found) = in_namespace(kind).find(|o| o.name == owner.name) else {
        return selector;
    };
    match kind {
        SelectorOwnerKind::ReplicationController => {
            if let Some(map) = &found.selector {
                set.extend(map.match_labels.clone());
            }
            selector = Selector::from_set(&set);
        }
        _ => {
            let theirs = Selector::from_label_selector(found.selector.as_ref());
            if let Some(requirements) = theirs.requirements() {
                selector = selector.with(requirements);
            }
        }
    }
    selector
}

/// `nodeLabelsMatchSpreadConstraints`: whether the node carries every constraint's key.
pub fn has_every_key(node: &Node, constraints: &[Constraint]) -> bool {
    constraints
        .iter()
        .all(|c| node.labels.contains_key(&c.topology_key))
}

/// `countPodsMatchSelector`: the pods of `namespace` among `pods` the selector selects,
/// terminating ones left out; an empty selector counts none.
pub fn count_matching(pods: &[&Pod], selector: &Selector, namespace: &str) -> i64 {
    if selector.is_empty() {
        return 0;
    }
    pods.iter()
        .filter(|p| !p.terminating && p.namespace == namespace && selector.matches(&p.labels))
        .count() as i64
}
