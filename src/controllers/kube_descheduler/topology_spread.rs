//! RemovePodsViolatingTopologySpreadConstraint
//! (`pkg/framework/plugins/removepodsviolatingtopologyspreadconstraint/topologyspreadconstraint.go`).
//!
//! It lists the pods of the ready nodes that the evictor's `Filter` (and the plugin's label
//! selector) passes, and per namespace collects their distinct constraints of the kinds in
//! `constraints`. Each constraint is balanced on its own, from the same counts: its domains
//! are the key's values on ready nodes that its node inclusion policies admit (plus those of
//! nodes that hold counted pods); the pods counted are the listed, non-terminating pods its
//! selector matches on nodes with the key. An unbalanced constraint (largest minus smallest
//! domain above `maxSkew`) is balanced by average (`balanceDomains`): domains sorted by size,
//! each domain's pods sorted so that the pods without node selector or affinity and of highest
//! priority are at the back, and pods taken from the back of the largest domains into the
//! smallest, `min(ceil(size - avg), ceil(avg - smallest), ceil((skew - maxSkew) / 2))` at a
//! time. With `topologyBalanceNodeFit` a taken pod that fits no node of a domain below the
//! average is skipped. The pods taken for all constraints are evicted as one set, each after
//! `Filter` and `PreEvictionFilter` again; a node limit skips the node's other pods, a total
//! limit ends the plugin.
//!
//! Nondeterminism: the order of equal-sized domains and of equal pods within a domain (unstable
//! sorts over Go map order) and the order of the set are choices; pods taken from a tie are
//! chosen as a subset.

use super::choices::{shuffle, subset, take, Chooser, Pruned};
use super::listing_order::ListingOrder;
use super::node_fit::{required_node_affinity_matches, tolerates_scheduling_taints};
use super::outcome::Refusal;
use super::{namespace_included, plugin_selector, PodEvictor, Step};
use crate::cluster::kube::descheduler_policy::TopologySpreadArgs;
use crate::cluster::kube::{Labels, NodeInclusionPolicy, NodeSelectorTerm, Pod, Selector};
use crate::cluster::taints::Toleration;
use std::collections::BTreeMap;

/// Domains keyed by how many matching pods they hold: each domain's value and its pods as
/// tie groups, in the order the balancing takes them.
type DomainsBySize = BTreeMap<usize, Vec<(String, Vec<Vec<usize>>)>>;

/// The most pods a domain may hold for Go's `sort.Slice` to sort it by insertion
/// (`maxInsertion` of `pdqsort_func`), keeping equal pods in (reverse) listing order; a
/// larger domain's equal pods come out in an order this model does not follow, so any subset
/// of them may be taken.
const INSERTION_SORTED: usize = 12;

/// One distinct constraint of a namespace (`topologySpreadConstraint`).
#[derive(Clone, Debug, PartialEq)]
struct Constraint {
    max_skew: i32,
    key: String,
    selector: Selector,
    honor_affinity: bool,
    honor_taints: bool,
    node_selector: Option<Labels>,
    required_terms: Option<Vec<NodeSelectorTerm>>,
    tolerations: Vec<Toleration>,
}

impl Constraint {
    /// `matchNodeInclusionPolicies`: whether the node counts as a domain of the constraint.
    fn includes(&self, pod_like: &Pod, node: &crate::cluster::kube::Node) -> bool {
        (!self.honor_affinity || required_node_affinity_matches(pod_like, node))
            && (!self.honor_taints || tolerates_scheduling_taints(pod_like, node))
    }
}

/// Runs the plugin (`Balance`).
pub fn balance(
    step: &Step,
    args: &TopologySpreadArgs,
    evictor: &mut PodEvictor,
    chooser: &mut dyn Chooser,
) -> Result<(), Pruned> {
    let TopologySpreadArgs {
        constraints: kinds,
        topology_balance_node_fit,
        namespaces,
        label_selector,
    } = args;
    let descheduler = step.descheduler;
    let snapshot = descheduler.snapshot;
    let selector = plugin_selector(label_selector.as_ref());
    let listed = |index: usize, evictor: &mut PodEvictor| {
        selector
            .as_ref()
            .is_none_or(|s| s.matches(&snapshot.pods[index].labels))
            && step.evictor_filter(index, evictor)
    };
    let mut by_namespace: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for &node in &descheduler.ready {
        for &index in &descheduler.pods_on[node] {
            if listed(index, evictor) {
                by_namespace
                    .entry(snapshot.pods[index].namespace.as_str())
                    .or_default()
                    .push(index);
            }
        }
    }
    let mut for_eviction: Vec<usize> = Vec::new();
    let mut order = ListingOrder::default();
    for (namespace, pods) in &by_namespace {
        if !namespace_included(namespaces, namespace) {
            continue;
        }
        let mut constraints: Vec<(Constraint, usize)> = Vec::new();
        for &index in pods {
            let pod = &snapshot.pods[index];
            for constraint in &pod.topology_spread_constraints {
                if !kinds.contains(&constraint.when_unsatisfiable) {
                    continue;
                }
                let made = constraint_of(pod, constraint);
                if !constraints.iter().any(|(c, _)| *c == made) {
                    constraints.push((made, index));
                }
            }
        }
        for (constraint, origin) in &constraints {
            let domains = domains_of(step, constraint, &snapshot.pods[*origin], pods, evictor);
            balance_domains(
                step,
                constraint,
                &snapshot.pods[*origin],
                domains,
                *topology_balance_node_fit,
                &mut for_eviction,
                &mut order,
                evictor,
                chooser,
            )?;
        }
    }
    let policy = descheduler.policy;
    let may_skip = policy.max_pods_per_node.is_some() || policy.max_pods_total.is_some();
    chooser.chosen(step.plugin, &for_eviction, may_skip)?;
    // A pod the loop would skip (its node at its limit, or no longer listed) stays skipped
    // for the rest of the loop and leaves no trace, so the order among skipped pods is not a
    // choice: they are dropped before each pod is chosen.
    let node_of = |index: usize| snapshot.pods[index].node_name.clone().unwrap_or_default();
    let mut node_limited: Vec<String> = Vec::new();
    loop {
        for_eviction.retain(|&i| !node_limited.contains(&node_of(i)) && listed(i, evictor));
        if for_eviction.is_empty() {
            break;
        }
        let index = take(chooser, &mut for_eviction);
        let node = node_of(index);
        if !step.filter.pre_eviction_filter(index) {
            evictor.refuse(step.plugin, index, Refusal::NodeFit, chooser)?;
            continue;
        }
        match evictor.evict(step.plugin, index, chooser)? {
            Some(Refusal::NodeLimit) => node_limited.push(node),
            Some(Refusal::TotalLimit) => return Ok(()),
            _ => {}
        }
    }
    Ok(())
}

/// `newTopologySpreadConstraint`: the constraint as `pod` gives it, its `matchLabelKeys`
/// values added to the selector, the policies defaulted (Honor affinity, Ignore taints).
fn constraint_of(
    pod: &Pod,
    constraint: &crate::cluster::kube::TopologySpreadConstraint,
) -> Constraint {
    let mut selector = Selector::from_label_selector(constraint.label_selector.as_ref());
    let keys: Labels = constraint
        .match_label_keys
        .iter()
        .filter_map(|key| pod.labels.get(key).map(|v| (key.clone(), v.clone())))
        .collect();
    if !keys.is_empty() {
        if let Some(requirements) = selector.requirements() {
            selector = Selector::from_set(&keys).with(requirements);
        }
    }
    Constraint {
        max_skew: constraint.max_skew,
        key: constraint.topology_key.clone(),
        selector,
        honor_affinity: constraint.node_affinity_policy != Some(NodeInclusionPolicy::Ignore),
        honor_taints: constraint.node_taints_policy == Some(NodeInclusionPolicy::Honor),
        node_selector: pod.node_selector.clone().filter(|s| !s.is_empty()),
        required_terms: pod.node_affinity.as_ref().and_then(|a| a.required.clone()),
        tolerations: pod.tolerations.clone(),
    }
}

/// A domain: its value and its pods (by index).
type Domain = (String, Vec<usize>);

/// The constraint's domains with the pods counted in each, from the namespace's listed `pods`.
fn domains_of(
    step: &Step,
    constraint: &Constraint,
    origin: &Pod,
    pods: &[usize],
    evictor: &PodEvictor,
) -> Vec<Domain> {
    let descheduler = step.descheduler;
    let snapshot = descheduler.snapshot;
    let mut domains: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for &n in &descheduler.ready {
        let node = &snapshot.nodes[n];
        if let Some(value) = node.labels.get(&constraint.key) {
            if constraint.includes(origin, node) {
                domains.entry(value.clone()).or_default();
            }
        }
    }
    for &index in pods {
        let pod = &snapshot.pods[index];
        if evictor.terminating(index) || !constraint.selector.matches(&pod.labels) {
            continue;
        }
        let Some(node) = descheduler.node_of[index].filter(|n| descheduler.ready.contains(n))
        else {
            continue;
        };
        if let Some(value) = snapshot.nodes[node].labels.get(&constraint.key) {
            domains.entry(value.clone()).or_default().push(index);
        }
    }
    domains.into_iter().collect()
}

/// `balanceDomains` for one constraint, adding the pods it takes to `for_eviction`; equal
/// pods are taken in the plugin's listing `order`.
#[allow(clippy::too_many_arguments)]
fn balance_domains(
    step: &Step,
    constraint: &Constraint,
    origin: &Pod,
    domains: Vec<Domain>,
    node_fit: bool,
    for_eviction: &mut Vec<usize>,
    order: &mut ListingOrder,
    evictor: &mut PodEvictor,
    chooser: &mut dyn Chooser,
) -> Result<(), Pruned> {
    let sizes = domains.iter().map(|(_, pods)| pods.len());
    let (smallest, largest) = (sizes.clone().min().unwrap_or(0), sizes.max().unwrap_or(0));
    if domains.is_empty() || (largest - smallest) as i64 <= i64::from(constraint.max_skew) {
        return Ok(());
    }
    let descheduler = step.descheduler;
    let snapshot = descheduler.snapshot;
    let total: usize = domains.iter().map(|(_, pods)| pods.len()).sum();
    let ideal = total as f64 / domains.len() as f64;
    // Domains by size, equal sizes in an order chosen; each domain's pods as tie groups in
    // ascending order (with node selector or affinity first, then by priority).
    let mut by_size: DomainsBySize = BTreeMap::new();
    for (value, pods) in domains {
        let mut groups: BTreeMap<(bool, i32), Vec<usize>> = BTreeMap::new();
        for index in pods.iter().copied() {
            let pod = &snapshot.pods[index];
            let unselective = pod.node_selector.is_none() && pod.node_affinity.is_none();
            groups
                .entry((unselective, pod.priority))
                .or_default()
                .push(index);
        }
        by_size
            .entry(pods.len())
            .or_default()
            .push((value, groups.into_values().collect()));
    }
    let mut sorted: Vec<(String, Vec<Vec<usize>>)> = Vec::new();
    for (_, mut same) in by_size {
        shuffle(chooser, &mut same);
        sorted.extend(same);
    }
    let mut sizes: Vec<usize> = sorted
        .iter()
        .map(|(_, g)| g.iter().map(Vec::len).sum())
        .collect();
    let initial = sizes.clone();
    let below: Vec<usize> = (0..descheduler.ready.len())
        .filter(|&k| {
            let node = &snapshot.nodes[descheduler.ready[k]];
            constraint.includes(origin, node)
                && node.labels.get(&constraint.key).is_some_and(|value| {
                    sorted
                        .iter()
                        .zip(&sizes)
                        .any(|((v, _), size)| v == value && (*size as f64) < ideal)
                })
        })
        .collect();
    let (mut i, mut j) = (0usize, sorted.len() - 1);
    while i < j {
        if sizes[j] as f64 <= ideal {
            j -= 1;
        }
        let skew = sizes[j] as f64 - sizes[i] as f64;
        if (skew as i32) <= constraint.max_skew {
            i += 1;
            continue;
        }
        let above = (sizes[j] as f64 - ideal).ceil();
        let below_avg = (ideal - sizes[i] as f64).ceil();
        let half = ((skew - f64::from(constraint.max_skew)) / 2.0).ceil();
        let moved = above.min(below_avg).min(half) as i64;
        if moved <= 0 {
            i += 1;
            continue;
        }
        let in_order = (initial[j] <= INSERTION_SORTED).then_some(&mut *order);
        let taken = take_from_back(step, &mut sorted[j].1, moved as usize, in_order, chooser);
        for index in taken {
            let own = descheduler.node_of[index];
            let fits = below
                .iter()
                .any(|&k| Some(descheduler.ready[k]) != own && descheduler.fit.fits(index, k));
            if node_fit && !fits {
                evictor.refuse(step.plugin, index, Refusal::TopologyBalanceNodeFit, chooser)?;
                continue;
            }
            if !for_eviction.contains(&index) {
                let policy = descheduler.policy;
                chooser.selected(
                    step.plugin,
                    index,
                    policy.max_pods_per_node.is_some(),
                    policy.max_pods_total.is_some(),
                )?;
                for_eviction.push(index);
            }
        }
        sizes[j] -= moved as usize;
        sizes[i] += moved as usize;
    }
    Ok(())
}

/// The last `count` pods of a domain's tie groups, removed from it: whole groups from the
/// back, and from the first group that has more than needed, those first in the listing
/// order (`in_order`) where the sort kept it, else a chosen
/// subset.
fn take_from_back(
    step: &Step,
    groups: &mut Vec<Vec<usize>>,
    count: usize,
    mut in_order: Option<&mut ListingOrder>,
    chooser: &mut dyn Chooser,
) -> Vec<usize> {
    let mut taken = Vec::new();
    while taken.len() < count {
        let Some(mut last) = groups.pop() else {
            break;
        };
        let needed = count - taken.len();
        if last.len() <= needed {
            taken.extend(last);
            continue;
        }
        let chosen = match in_order.as_mut() {
            Some(order) => order.first(step.descheduler, &last, needed, chooser),
            None => subset(chooser, &last, needed),
        };
        last.retain(|p| !chosen.contains(p));
        taken.extend(chosen);
        groups.push(last);
    }
    taken
}
