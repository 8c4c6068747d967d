//! The scheduler step under `--semantics kubernetes`: one scheduling cycle of kube-scheduler
//! v1.33 ([`crate::controllers::kube_scheduler`]) for the pod at the head of the queue, on the
//! snapshot of the state ([`crate::cluster::kube::of_model`]).
//!
//! The head is the queued pod of highest priority, the first queued among equals: the active
//! queue's `PrioritySort` (`pkg/scheduler/framework/plugins/queuesort/priority_sort.go`,
//! `Less`: higher priority first, then the earlier queue timestamp), the model's queue order
//! standing for the timestamps. A pod no node fits may preempt pods of lower priority and is
//! then nominated to the node ([`super::kube_preemption`]), which its next cycles try first.
//!
//! As `Scheduler.scheduleOne` (`pkg/scheduler/schedule_one.go`) does, a cycle pops one pod,
//! filters and scores every node and binds the pod to one of the top-scored nodes, which
//! `selectHost` picks at random: under `--tie-break lowest` the lowest node id among them,
//! under `any` each of them is a successor of its own. A pod no node fits stays Pending, out
//! of the queue, as in the scheduling queue's unschedulable pods
//! (`pkg/scheduler/backend/queue/scheduling_queue.go`), and `pod_always_schedulable` is
//! violated. Such pods are queued again when a later step changes a node or where a pod runs,
//! as `MoveAllToActiveOrBackoffQueue` moves them on cluster events. The backoff before their
//! next cycle is any interleaving of the steps after the requeue, and the periodic flush of
//! unschedulable pods (`flushUnschedulablePodsLeftover`, five minutes) is not modelled: a
//! cycle reads only the snapshot, which changes only with what requeues them, so a retry on
//! an unchanged cluster fails as the last one did.
//!
//! Kivi's scheduler ([`crate::controllers::scheduler`]) instead drains the whole queue in one
//! step, fits on usage and scores over every node.

use super::kube_preemption::{self, LeftOut, Preemption};
use crate::cluster::kube::incremental::IncrementalSnapshot;
use crate::cluster::kube::of_model::{node_id, pod_name, snapshot};
use crate::cluster::kube::Snapshot;
use crate::cluster::{ClusterSpec, ClusterState, ItemClock, PodPhase, Queue, Recorder};
use crate::controllers::kube_scheduler::node_info::NodeTable;
use crate::controllers::kube_scheduler::{Decision, Detail, Scheduler};
use crate::controllers::scheduler::fit_error::{FitError, NodeRejection};

/// What a scheduling cycle finds for the pod at the head of the queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cycle {
    /// The head is bound, running or terminating already, or names a node that does not exist
    /// in `nodeName`: it is taken off the queue as it is.
    Skip,
    /// No node fits the pod: kube-scheduler's FitError.
    Unschedulable(FitError),
    /// No node fits the pod, and it preempts: per equally good choice (ascending node ids),
    /// the node and the pods deleted there; and which choices were left out, if any.
    Preempt(FitError, Vec<(usize, Vec<usize>)>, Option<LeftOut>),
    /// No node fits the pod, and it would preempt, but on no node the model can take
    /// ([`Preemption::Unmodelled`]): the cycle is not a step of the model.
    Unmodelled(FitError),
    /// No node fits the pod, and it waits for the lower-priority pods terminating on this node,
    /// its nominated node (`PodEligibleToPreemptOthers`); it keeps the nomination.
    AwaitsVictims(FitError, usize),
    /// The pod and its top-scored nodes, ascending ids.
    Top(usize, Vec<usize>),
}

/// What a worker keeps from one cycle to the next: the snapshot of the last state it cycled
/// in, brought up to date for the next ([`IncrementalSnapshot`], as kube-scheduler's cache
/// updates its snapshot by generation), and the last cycle with the snapshot generation and
/// pod it was decided for. A step under `--tie-break any` with thousands of top-scored nodes
/// lists them with one cycle and takes each outcome by binding the pod there: the cycle of
/// an outcome's source is the one kept (same records, same generation, same pod). Each
/// worker has its own ([`ClusterWorker`](super::ClusterWorker)); what it gives is a function
/// of the state alone. The nodes' names and allocatable, which a snapshot takes from the
/// spec alone, are read once into a [`NodeTable`].
#[derive(Debug, Default)]
pub struct CycleCache {
    snapshot: IncrementalSnapshot,
    table: NodeTable,
    last: Option<(u64, usize, Cycle)>,
}

/// The decision for `pod` in `snapshot`, as far as a cycle acts on it ([`Detail::Top`]), with
/// `table` (made for `snapshot`'s nodes if it does not hold them).
fn decide(
    spec: &ClusterSpec,
    state: &ClusterState,
    snapshot: &Snapshot,
    pod: usize,
    table: &mut NodeTable,
) -> Option<Decision> {
    let subject = kube_preemption::subject(spec, state, snapshot, pod)?;
    if !table.fits(snapshot) {
        *table = NodeTable::of(snapshot);
    }
    Some(Scheduler::with_table(snapshot, table).decide_with(subject, Detail::Top))
}

/// The cycle for the head of the scheduler queue of `state`, if any pod is queued, with the
/// snapshot `cache` keeps.
pub fn cycle<'c>(
    spec: &ClusterSpec,
    state: &ClusterState,
    cache: &'c mut CycleCache,
) -> Option<&'c Cycle> {
    let pod = head(spec, state)?;
    let (snapshot, generation) = cache.snapshot.update(spec, state);
    // A preemption also reads the budgets' status, which the deployments' desired replicas
    // change without changing the snapshot: it is not kept where budgets exist.
    let kept = matches!(&cache.last, Some((g, p, c)) if (*g, *p) == (generation, pod)
        && (spec.pdbs.is_empty() || !matches!(c, Cycle::Preempt(..) | Cycle::Unmodelled(..))));
    if !kept {
        let cycle = cycle_on(spec, state, snapshot, pod, &mut cache.table)?;
        cache.last = Some((generation, pod, cycle));
    }
    cache.last.as_ref().map(|(_, _, cycle)| cycle)
}

/// The queued pod a cycle pops: the first of the highest priority (see the module
/// documentation).
pub fn head(spec: &ClusterSpec, state: &ClusterState) -> Option<usize> {
    let queue = state.pending(Queue::Scheduler);
    let priority = |p: u32| {
        spec.template_or_none(state.pod(p as usize).template)
            .priority
    };
    let mut head = *queue.first()?;
    for &p in &queue[1..] {
        if priority(p) > priority(head) {
            head = p;
        }
    }
    Some(head as usize)
}

/// The cycle for `pod`, the head of the queue of `state`, whose snapshot is `snapshot`.
fn cycle_on(
    spec: &ClusterSpec,
    state: &ClusterState,
    snapshot: &Snapshot,
    pod: usize,
    table: &mut NodeTable,
) -> Option<Cycle> {
    let phase = state.pod(pod).phase;
    if phase == PodPhase::Running || phase == PodPhase::Terminating || state.pod(pod).loc != 0 {
        return Some(Cycle::Skip);
    }
    let pinned = spec.template_or_none(state.pod(pod).template).node_name;
    if pinned != 0 {
        // `spec.nodeName` set: the API binds the pod there and kube-scheduler never sees it
        // (`assignedPod`, `pkg/scheduler/eventhandlers.go`); one naming no node waits.
        let node = (1..=spec.nodes.len()).find(|&n| spec.node(n).name == pinned);
        return Some(node.map_or(Cycle::Skip, |n| Cycle::Top(pod, vec![n])));
    }
    let decision = decide(spec, state, snapshot, pod, table)?;
    let mut top: Vec<usize> = decision.top.iter().filter_map(|n| node_id(n)).collect();
    top.sort_unstable();
    if top.is_empty() {
        let error = fit_error(pod, &decision);
        let subject = kube_preemption::subject(spec, state, snapshot, pod)?;
        return Some(
            match kube_preemption::preemption(spec, state, snapshot, subject, &decision) {
                None => Cycle::Unschedulable(error),
                Some(Preemption::Awaits(node)) => Cycle::AwaitsVictims(error, node),
                Some(Preemption::Victims(choices, left_out)) => {
                    Cycle::Preempt(error, choices, left_out)
                }
                Some(Preemption::Unmodelled) => Cycle::Unmodelled(error),
            },
        );
    }
    Some(Cycle::Top(pod, top))
}

/// For a trace: the matching pods in each domain of `pod`'s DoNotSchedule spread constraints,
/// as PodTopologySpread's PreFilter counts them in `state`, a domain whose nodes are all not
/// ready marked so (a not-ready node stays a domain: `nodeTaintsPolicy` is Ignore unless set).
fn spread_domains(spec: &ClusterSpec, state: &ClusterState, pod: usize) -> Vec<String> {
    let snapshot = snapshot(spec, state);
    let name = pod_name(pod);
    let Some(subject) = snapshot.pods.iter().find(|p| p.name == name) else {
        return Vec::new();
    };
    let Some(spread) = Scheduler::new(&snapshot).spread_domains(subject) else {
        return Vec::new();
    };
    spread
        .constraints()
        .iter()
        .enumerate()
        .map(|(i, constraint)| {
            let key = &constraint.topology_key;
            let domains: Vec<String> = spread
                .domains(i)
                .into_iter()
                .map(|(domain, count)| {
                    let nodes: Vec<_> = snapshot
                        .nodes
                        .iter()
                        .filter(|n| n.labels.get(key).map(String::as_str) == Some(domain))
                        .collect();
                    let ids: Vec<String> = nodes
                        .iter()
                        .filter_map(|n| node_id(&n.name))
                        .map(|id| id.to_string())
                        .collect();
                    let place = match ids.as_slice() {
                        [one] => format!("node {one}"),
                        _ => format!("{domain} (nodes {})", ids.join(", ")),
                    };
                    let mark = if nodes.iter().all(|n| !n.ready) {
                        ", not ready"
                    } else {
                        ""
                    };
                    format!("{place}{mark}: {count}")
                })
                .collect();
            format!(
                "Pod {pod}'s spread over {key} (maxSkew {}), matching pods per domain: {}",
                constraint.max_skew,
                domains.join(", ")
            )
        })
        .collect()
}

/// kube-scheduler's FitError for `pod` as the reports show one.
fn fit_error(pod: usize, decision: &Decision) -> FitError {
    let mut nodes: Vec<NodeRejection> = decision
        .first_rejection
        .iter()
        .filter_map(|(name, rejection)| {
            Some(NodeRejection {
                node: node_id(name)?,
                plugin: rejection.plugin.name(),
                detail: rejection.reasons.join(", "),
            })
        })
        .collect();
    nodes.sort_by_key(|n| n.node);
    FitError {
        pod,
        message: decision
            .fit_error_with_postfilter
            .clone()
            .or_else(|| decision.fit_error.clone())
            .unwrap_or_default(),
        nodes,
    }
}

/// How many successors the cycle in `state` has under `--tie-break any`: one per top-scored
/// node, or per equally good node to preempt on (one when the pod fits nowhere or is
/// skipped; none when it would preempt on no node the model can take, under either
/// tie-break: [`Cycle::Unmodelled`]).
pub fn choices(spec: &ClusterSpec, state: &ClusterState, cache: &mut CycleCache) -> usize {
    match cycle(spec, state, cache) {
        Some(Cycle::Top(_, top)) => top.len(),
        Some(Cycle::Preempt(_, nodes, _)) => nodes.len(),
        Some(Cycle::Unmodelled(_)) => 0,
        _ => 1,
    }
}

/// Takes one scheduling cycle in `state`: binds the head of the queue to its `choice`-th
/// top-scored node (in ascending ids), or, when no node fits, preempts on its `choice`-th
/// equally good choice or leaves it Pending. Returns which of the cycle's runs the model
/// leaves out, if any; a cycle the model cannot take ([`Cycle::Unmodelled`], never offered
/// as a step) only moves the pod to the head of the queue.
pub fn run(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    choice: usize,
    rec: &mut Recorder,
    cache: &mut CycleCache,
) -> Option<LeftOut> {
    let cycle = cycle(spec, state, cache)?;
    let left_out = match cycle {
        Cycle::Preempt(_, _, left_out) => *left_out,
        Cycle::Unmodelled(_) => Some(LeftOut::DaemonPodVictims),
        _ => None,
    };
    let mut clock = ItemClock::default();
    if let Some(pod) = head(spec, state) {
        state.move_to_head(Queue::Scheduler, pod);
    }
    match cycle {
        Cycle::Unmodelled(_) => return left_out,
        Cycle::Skip => {
            state.dequeue(Queue::Scheduler);
        }
        Cycle::Unschedulable(error) => {
            rec.log(Some("Scheduler - no_feasible_node"), || {
                format!("No feasible node! Pod {}: {}", error.pod, error.message)
            });
            if rec.is_recording() {
                for line in spread_domains(spec, state, error.pod) {
                    rec.log(Some("Scheduler - no_feasible_node"), || line);
                }
            }
            state.dequeue(Queue::Scheduler);
            // The PostFilter found no candidate: `Preempt` clears the nomination
            // (`NewPostFilterResultWithNominatedNode("")` in `preemption.go`), which
            // `handleSchedulingFailure` writes to `status.nominatedNodeName` and the nominator.
            state.nominate(error.pod, 0);
            state.found_no_node(spec);
        }
        Cycle::Preempt(error, nodes, _) => {
            let (node, victims) = &nodes[choice.min(nodes.len() - 1)];
            let pod = error.pod;
            state.dequeue(Queue::Scheduler);
            kube_preemption::preempt(spec, state, pod, *node, victims, rec);
        }
        Cycle::AwaitsVictims(error, node) => {
            let (pod, node) = (error.pod, *node);
            rec.log(Some("Scheduler"), || {
                format!(
                    "Pod {pod} fits no node and waits for the lower-priority pods terminating \
                     on node {node}, its nominated node"
                )
            });
            state.dequeue(Queue::Scheduler);
        }
        Cycle::Top(pod, top) => {
            let (pod, n) = (*pod, top[choice.min(top.len() - 1)]);
            rec.log(Some("Scheduler"), || {
                if top.len() > 1 {
                    format!(
                        "Pod {pod} is scheduled on node {n} (one of {} top-scored nodes)",
                        top.len()
                    )
                } else {
                    format!("Pod {pod} is scheduled on node {n}")
                }
            });
            crate::controllers::scheduler::bind(spec, state, pod, n);
        }
    }
    clock.tick(spec, state);
    clock.settle(spec, state);
    left_out
}

/// What the informers' initial lists start with: every pod waiting for a node in the
/// scheduler's queue ([`queue_pending`]), and every existing deployment in the deployment
/// controller's, which reconciles it on start (`Run` of `pkg/controller/deployment` and of the
/// ReplicaSet controller sync every object once), so that a running cluster with fewer
/// replicas than desired gets them created.
pub fn start(state: &mut ClusterState) {
    queue_pending(state);
    for d in 1..=state.deployments().len() {
        if state.deployment(d).active {
            state.enqueue(Queue::Deployment, d);
        }
    }
}

/// Queues every pod of `state` that is Pending, unbound and out of the queue, in id order: at
/// the start, kube-scheduler's queue holds every pod that waits for a node (the pods Kivi's
/// input gives as Pending without a node, which Kivi's scheduler never takes).
pub fn queue_pending(state: &mut ClusterState) {
    for p in 1..=state.pods().len() {
        if state.pod(p).unscheduled_unqueued() {
            state.enqueue(Queue::Scheduler, p);
        }
    }
}

/// Queues again the pods an earlier cycle left Pending (unbound, out of the queue) when the
/// step from `before` to `after` changed a node's readiness or maintenance, or where a pod
/// runs: the cluster events on which kube-scheduler retries unschedulable pods.
pub fn requeue_unschedulable(before: &ClusterState, after: &mut ClusterState) {
    let nodes_changed = before
        .nodes()
        .iter()
        .zip(after.nodes())
        .any(|(b, a)| b.status != a.status || b.maintenance != a.maintenance);
    let pods_changed = before
        .pods()
        .iter()
        .zip(after.pods())
        .any(|(b, a)| b.phase != a.phase || b.loc != a.loc);
    if nodes_changed || pods_changed {
        queue_pending(after);
    }
}
