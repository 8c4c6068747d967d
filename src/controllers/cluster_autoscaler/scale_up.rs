//! The autoscaler's scale-up: which pending pods need a new node, which node groups could give
//! them one, and how many nodes each would add.
//!
//! Upstream (`cluster-autoscaler/core/static_autoscaler.go`, `RunOnce`; then
//! `core/scaleup/orchestrator/orchestrator.go`, `ScaleUp`):
//! - the pods to help are the unschedulable ones: Pending, unbound, marked unschedulable by
//!   the scheduler (in the model: out of the scheduler's queue after a failed cycle), and
//!   the pods a controller will recreate that are still on a node the autoscaler is removing
//!   (`core/podlistprocessor/currently_drained_nodes.go`), so that room is found for them
//!   before they are evicted, when the cluster has changed since the removal was planned;
//! - `FilterOutSchedulable` (`core/podlistprocessor/filter_out_schedulable.go`) drops those
//!   that fit the cluster as it is, with the upcoming nodes (asked for, not yet registered)
//!   added as template copies, placing each where it fits first;
//! - a node group backed off after a failed scale-up is skipped (`NodeGroupScaleUpSafety`, in
//!   `clusterstate/clusterstate.go`);
//! - per node group below its maximum, `ComputeExpansionOption`: the pods that fit an empty
//!   node copied from the group's template, and the nodes the binpacking estimator
//!   (`estimator/binpacking_estimator.go`, `Estimate`) needs for them: pods in decreasing
//!   size, each on a node added so far where it fits, else on one more new node (up to the
//!   group's maximum), a pod fitting no new node left out;
//! - the expander picks among the options (`expander/random`, `expander/waste`,
//!   `expander/mostpods`, `expander/priority`), and the group's target size grows by the
//!   option's node count, capped at its maximum.
//!
//! A pod that no node of any group could take leaves the autoscaler with nothing to do: it
//! reports `NotTriggerScaleUp` with each group's reason ("max node group size reached", or
//! the filter that rejected the template node).

use super::simulation::{requests_on, Simulation};
use crate::cluster::kube::of_model::node_name;
use crate::cluster::{
    ClusterAutoscalerSpec, ClusterSpec, ClusterState, Expander, NodeStatus, PodPhase,
};

/// What a scale-up could do for one node group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpansionOption {
    /// The group's index.
    pub group: usize,
    /// The nodes it would add.
    pub nodes: usize,
    /// The pending pods they would take, ascending.
    pub pods: Vec<usize>,
    /// CPU and memory left idle on the added nodes, in thousandths of their allocatable (what
    /// the least-waste expander compares).
    pub waste: (u64, u64),
    /// Under `--balance-similar-node-groups`, the pending pods that fit an empty copy of the
    /// group's template, ascending (the group's schedulable pod groups, which
    /// [`super::balance::targets`] compares); empty otherwise.
    pub fits: Vec<usize>,
}

/// What the autoscaler finds for the pending pods of a state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScaleUp {
    /// No pod needs a new node.
    NotNeeded,
    /// The groups the expander may grow (one or more).
    Options(Vec<ExpansionOption>),
    /// Pods need a new node and no group can give one: per pod, why not (`NotTriggerScaleUp`).
    Impossible(Vec<(usize, String)>),
}

/// The pods of `state` the scheduler found no node for: Pending, unbound, out of its queue,
/// not pinned to a node by `nodeName`.
pub fn unschedulable_pods(spec: &ClusterSpec, state: &ClusterState) -> Vec<usize> {
    (1..=state.pods().len())
        .filter(|&p| {
            let pod = state.pod(p);
            pod.unscheduled_unqueued() && spec.template_or_none(pod.template).node_name == 0
        })
        .collect()
}

/// The scale-up the autoscaler finds in `state` (see the module documentation): the options
/// its expander may pick.
pub fn scale_up(
    spec: &ClusterSpec,
    autoscaler: &ClusterAutoscalerSpec,
    state: &ClusterState,
) -> ScaleUp {
    match every_option(spec, autoscaler, state) {
        ScaleUp::Options(options) => ScaleUp::Options(best(autoscaler, options)),
        other => other,
    }
}

/// The pods of `state` that a deployment will recreate and that are still on a node the
/// autoscaler is removing, not yet evicted (`currentlyDrainedPods`: the node's pods to move).
pub fn drained_pods(state: &ClusterState) -> Vec<usize> {
    (1..=state.pods().len())
        .filter(|&p| {
            let pod = state.pod(p);
            pod.owned
                && pod.phase != PodPhase::Terminating
                && pod.phase != PodPhase::Idle
                && state
                    .nodes()
                    .get((pod.loc as usize).wrapping_sub(1))
                    .is_some_and(|node| node.maintenance.removing())
        })
        .collect()
}

/// The scale-up the autoscaler finds in `state` with every group's option, before the
/// expander picks.
pub fn every_option(
    spec: &ClusterSpec,
    autoscaler: &ClusterAutoscalerSpec,
    state: &ClusterState,
) -> ScaleUp {
    let mut pending = unschedulable_pods(spec, state);
    let drained = drained_pods(state);
    if pending.is_empty() && drained.is_empty() {
        return ScaleUp::NotNeeded;
    }
    let mut cluster = Simulation::new(state);
    for &pod in &drained {
        cluster.place(pod, 0);
    }
    pending.extend(drained);
    let upcoming: Vec<usize> = (1..=spec.nodes.len())
        .filter(|&n| state.node(n).status == NodeStatus::Provisioning)
        .collect();
    for &n in &upcoming {
        cluster.add_node(spec, n);
    }
    let existing: Vec<usize> = (1..=spec.nodes.len())
        .filter(|&n| cluster.state().node(n).status.exists())
        .collect();
    let mut left = Vec::new();
    for pod in pending {
        match cluster.first_fit(spec, pod, existing.iter().copied()) {
            Some(n) => cluster.place(pod, n),
            None => left.push(pod),
        }
    }
    if left.is_empty() {
        return ScaleUp::NotNeeded;
    }
    let mut by_size = left.clone();
    by_size.sort_by_key(|&p| {
        let template = spec.template_or_none(state.pod(p).template);
        std::cmp::Reverse((template.cpu_requested, template.mem_requested))
    });
    let mut options = Vec::new();
    let mut reasons: Vec<Vec<String>> = vec![Vec::new(); left.len()];
    for (g, group) in autoscaler.node_groups.iter().enumerate() {
        if group.backed_off(state) {
            for why in &mut reasons {
                why.push(format!(
                    "node group {}: backed off after a failed scale-up",
                    group.name
                ));
            }
            continue;
        }
        let room = group.max_size.saturating_sub(group.target_size(state));
        let free: Vec<usize> = group.free_slots(state).take(room).collect();
        let Some(&template) = free.first() else {
            for why in &mut reasons {
                why.push(format!(
                    "node group {}: max node group size reached",
                    group.name
                ));
            }
            continue;
        };
        let mut sim = cluster.clone();
        let mut added: Vec<usize> = Vec::new();
        let mut pods = Vec::new();
        for &pod in &by_size {
            if let Some(n) = sim.first_fit(spec, pod, added.iter().copied()) {
                sim.place(pod, n);
                pods.push(pod);
                continue;
            }
            let Some(&next) = free.get(added.len()) else {
                continue;
            };
            sim.add_node(spec, next);
            if sim.first_fit(spec, pod, [next]).is_some() {
                sim.place(pod, next);
                added.push(next);
                pods.push(pod);
            } else {
                sim.remove_node(spec, next);
            }
        }
        if added.is_empty() {
            let mut probe = cluster.clone();
            probe.add_node(spec, template);
            for (i, &pod) in left.iter().enumerate() {
                let why = probe
                    .decide(spec, pod)
                    .and_then(|d| d.first_rejection.get(&node_name(template)).cloned())
                    .map_or_else(|| "did not fit".to_string(), |r| r.reasons.join(", "));
                reasons[i].push(format!("node group {}: {why}", group.name));
            }
            continue;
        }
        pods.sort_unstable();
        let fits = if autoscaler.balance_similar {
            let mut probe = cluster.clone();
            probe.add_node(spec, template);
            left.iter()
                .copied()
                .filter(|&pod| probe.first_fit(spec, pod, [template]).is_some())
                .collect()
        } else {
            Vec::new()
        };
        options.push(ExpansionOption {
            group: g,
            nodes: added.len(),
            waste: waste(spec, sim.state(), &added),
            pods,
            fits,
        });
    }
    if options.is_empty() {
        return ScaleUp::Impossible(
            left.into_iter()
                .zip(reasons.into_iter().map(|r| r.join("; ")))
                .collect(),
        );
    }
    ScaleUp::Options(options)
}

/// The options the autoscaler's expander may pick: every one under `random`, the least
/// wasteful, those placing the most pods, or those of the groups of the highest priority
/// otherwise (ties kept: each is a run of its own, as the random expander upstream breaks
/// them).
fn best(autoscaler: &ClusterAutoscalerSpec, options: Vec<ExpansionOption>) -> Vec<ExpansionOption> {
    let priority = |o: &ExpansionOption| autoscaler.node_groups[o.group].priority;
    // `BestOptions` leaves out the groups no priority names, unless none is named.
    let named = |o: &ExpansionOption| priority(o).is_some();
    let options = if autoscaler.expander == Expander::Priority && options.iter().any(named) {
        options.into_iter().filter(named).collect()
    } else {
        options
    };
    let key = |o: &ExpansionOption| match autoscaler.expander {
        Expander::Random => 0,
        Expander::LeastWaste => o.waste.0 + o.waste.1,
        Expander::MostPods => u64::MAX - o.pods.len() as u64,
        Expander::Priority => u64::from(u32::MAX - priority(o).unwrap_or(0)),
    };
    let Some(least) = options.iter().map(key).min() else {
        return options;
    };
    options.into_iter().filter(|o| key(o) == least).collect()
}

/// CPU and memory the pods placed on `added` leave idle there, in thousandths of the added
/// nodes' allocatable (`expander/waste`'s `BestOptions` adds the two fractions).
fn waste(spec: &ClusterSpec, state: &ClusterState, added: &[usize]) -> (u64, u64) {
    let (mut cpu, mut memory, mut cpu_used, mut memory_used) = (0i64, 0i64, 0i64, 0i64);
    for &n in added {
        cpu += i64::from(spec.node(n).cpu);
        memory += i64::from(spec.node(n).memory);
        let (pods_cpu, pods_memory) = requests_on(spec, state, n);
        cpu_used += pods_cpu;
        memory_used += pods_memory;
    }
    let idle = |total: i64, used: i64| ((total - used).max(0) * 1000 / total.max(1)) as u64;
    (idle(cpu, cpu_used), idle(memory, memory_used))
}

/// Grows node group `group` by `nodes`: its next free slots become upcoming nodes, whose
/// instances start (`IncreaseSize`). Returns the slots.
pub fn grow(
    autoscaler: &ClusterAutoscalerSpec,
    state: &mut ClusterState,
    group: usize,
    nodes: usize,
) -> Vec<usize> {
    let slots: Vec<usize> = autoscaler.node_groups[group]
        .free_slots(state)
        .take(nodes)
        .collect();
    for &n in &slots {
        state.node_mut(n).status = NodeStatus::Provisioning;
    }
    slots
}
