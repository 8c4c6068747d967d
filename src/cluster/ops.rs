//! State updates shared by several controllers and events.

use super::spec::{ClusterSpec, EventKind};
use super::state::{ClusterState, MaintenancePhase, PodPhase};
use super::timing::*;
use super::trace::Recorder;
use crate::cluster::Queue;

impl EventKind {
    /// How long the event waits before it may fire without the cluster being quiet; its clock
    /// saturates there (0: the event has no clock).
    pub fn period(&self) -> u16 {
        match self {
            EventKind::CpuChange { .. } => EVENT_CPU_TIME,
            _ => 0,
        }
    }
}

/// Kivi's clock over one controller step that handles its queue item by item, each item
/// taking [`CONTROLLER_RUN_TIME`]: [`ItemClock::tick`] after each item, [`ItemClock::settle`]
/// at the end of the step.
///
/// Advancing is saturating addition to "time since" counters, so advancing `n` times by `d`
/// is advancing once by `n · d` as long as nothing in between reads or resets a counter. The
/// scheduler, kubelet, node controller and deployment controller read no clock while they drain
/// their queues; only pod ages, which the kubelet resets when it starts a pod, must see each
/// item's time as it passes. So without CPU usage patterns (no pod ages to keep) the time is
/// added once, at the end, which spares a pass over the clock's counters per item.
#[derive(Default)]
pub struct ItemClock {
    pending: u32,
}

impl ItemClock {
    /// One item handled.
    pub fn tick(&mut self, spec: &ClusterSpec, state: &mut ClusterState) {
        if spec.max_pattern_time > 0 {
            state.advance(spec, CONTROLLER_RUN_TIME);
        } else {
            self.pending += CONTROLLER_RUN_TIME;
        }
    }

    /// Adds the items' time not yet added.
    pub fn settle(self, spec: &ClusterSpec, state: &mut ClusterState) {
        state.advance(spec, self.pending);
    }
}

impl ClusterState {
    /// Advances Kivi's clock by `delta`: every "time since" counter grows, saturating at the
    /// value beyond which no enabling condition can tell the difference.
    pub fn advance(&mut self, spec: &ClusterSpec, delta: u32) {
        if delta == 0 {
            return;
        }
        let grow = |v: u16, cap: u16| (v as u32 + delta).min(cap as u32) as u16;
        if spec.hpa_enabled {
            self.clock_mut().hpa_idle = grow(self.clock().hpa_idle, HPA_WAIT_TIME);
        }
        if spec.descheduler.is_some() {
            self.clock_mut().descheduler_idle =
                grow(self.clock().descheduler_idle, DESCHEDULER_WAIT_TIME);
        }
        if spec.maintenance_enabled() {
            for node in self.nodes_mut() {
                if node.maintenance.without_removal() == MaintenancePhase::Draining {
                    node.maintenance_elapsed =
                        grow(node.maintenance_elapsed, MAINTENANCE_WAIT_TIME);
                }
            }
        }
        for (i, e) in spec.events.iter().enumerate() {
            // An event without a period keeps its clock at 0: nothing to grow.
            let period = e.kind.period();
            if period != 0 && self.event_started(spec, i) && self.events().done & (1 << i) == 0 {
                self.clock_mut().event_idle[i] = grow(self.clock().event_idle[i], period);
            }
        }
        if spec.max_pattern_time > 0 {
            let cap = spec.max_pattern_time as u16;
            for id in 1..=spec.pods.len() {
                let pod = *self.pod(id);
                let pattern = spec
                    .pod_template(pod.template)
                    .map_or(0, |t| t.cpu_pattern.len());
                self.pod_mut(id).age =
                    if pod.phase == PodPhase::Running && (pod.cpu_index as usize) < pattern {
                        grow(pod.age, cap)
                    } else {
                        0
                    };
            }
        }
    }

    /// Whether event `i` has been started: at the beginning, or once the cluster was first
    /// quiet for `after_stable` events.
    pub fn event_started(&self, spec: &ClusterSpec, i: usize) -> bool {
        !spec.events[i].after_stable || self.events().after_stable_started
    }

    /// Whether a deployment the input describes is yet to be created: a
    /// `createTargetDeployment` command that is not itself `after_stable` has not run. Under
    /// `--semantics kubernetes` the cluster an `after_stable` event waits for is the one the
    /// manifests describe, settled, so it does not start before these; Kivi starts such events
    /// in the empty initial state, which is quiet.
    pub fn workloads_pending(&self, spec: &ClusterSpec) -> bool {
        spec.events.iter().enumerate().any(|(i, e)| {
            matches!(e.kind, EventKind::CreateTargetDeployment { .. })
                && !e.after_stable
                && self.events().done & (1 << i) == 0
        })
    }

    /// Whether a command marked `first` has yet to run; until then nothing else may.
    pub fn first_pending(&self, spec: &ClusterSpec) -> bool {
        spec.events
            .iter()
            .enumerate()
            .any(|(i, e)| e.first && self.events().done & (1 << i) == 0)
    }

    /// Queues deployment `d` for the HPA, when an HPA runs at all.
    pub fn enqueue_hpa(&mut self, spec: &ClusterSpec, d: usize) {
        if spec.hpa_enabled {
            self.enqueue(Queue::Hpa, d);
        }
    }

    /// Queues deployment `d` for the descheduler, when one runs.
    pub fn enqueue_descheduler(&mut self, spec: &ClusterSpec, d: usize) {
        if spec.descheduler.is_some() {
            self.enqueue(Queue::Descheduler, d);
        }
    }

    /// Under `--semantics kubernetes`, the replica set (0 or 1) of its deployment that pod
    /// `pod` belongs to: a started pod's own, a pod not yet started the one that made it. The
    /// model records the set only when the pod starts, so a Pending pod is told by its
    /// template: a deployment's pods of an older template belong to its old set (which
    /// creates pods of its own pods' template), every other one to the current set.
    pub fn kube_replica_set_of(&self, pod: usize) -> usize {
        let p = self.pod(pod);
        if p.replica_set != 0 {
            return p.replica_set as usize - 1;
        }
        let dep = self.deployment(p.deployment as usize);
        let current = dep.cur_version as usize;
        if p.template != dep.template {
            1 - current
        } else {
            current
        }
    }

    /// Binds `pod` to node `node` and charges the node for it: one more pod, less free CPU
    /// and memory by the pod's usage (the kubelet gives them back when the pod is removed).
    pub fn bind(&mut self, pod: usize, node: usize) {
        let (cpu, memory) = (self.pod(pod).cpu, self.pod(pod).memory);
        let record = self.node_mut(node);
        record.num_pods = record.num_pods.wrapping_add(1);
        record.cpu_left = record.cpu_left.wrapping_sub(cpu);
        record.mem_left = record.mem_left.wrapping_sub(memory);
        self.pod_mut(pod).loc = node as u16;
        // A bound pod is nominated nowhere (the nominator forgets it once the scheduler
        // assumes it: `DeleteNominatedPodIfExists` in `schedule_one.go`'s `assume`).
        self.nominate(pod, 0);
    }

    /// The pods on any of `nodes` (bound there, in any phase but a free slot), ascending.
    pub fn pods_on<'a>(&'a self, nodes: &'a [usize]) -> impl Iterator<Item = usize> + 'a {
        (1..=self.pods().len()).filter(move |&p| {
            let pod = self.pod(p);
            pod.phase != PodPhase::Idle && nodes.contains(&(pod.loc as usize))
        })
    }

    /// Marks `pod` of deployment `d` for deletion and hands it to the kubelet (Kivi's
    /// `deleteAPodUpdate`). A nominated pod is unbound, and the API server deletes an unbound
    /// pod at once (`CheckGracefulDelete` in `pkg/registry/core/pod/strategy.go`), which the
    /// nominator forgets (`DeleteNominatedPodIfExists`): its nomination is cleared.
    pub fn mark_for_deletion(&mut self, d: usize, pod: usize) {
        self.nominate(pod, 0);
        if let Some(dep) = self.deployments_mut().get_mut(d.wrapping_sub(1)) {
            dep.in_deletion += 1;
        }
        self.pod_mut(pod).phase = PodPhase::Terminating;
        self.enqueue(Queue::Kubelet, pod);
    }

    /// Changes `pod`'s CPU usage by `change` (clamped to 0..=64) and its node's free CPU with
    /// it (Kivi's `updatePodCpuUsageOnNode`).
    pub fn change_pod_cpu(&mut self, pod: usize, change: i32, rec: &mut Recorder) {
        let loc = self.pod(pod).loc as usize;
        let old = self.pod(pod).cpu as i32;
        let new = (old + change).clamp(0, POD_CPU_MAX);
        self.pod_mut(pod).cpu = new as i16;
        let mut left = 0;
        if let Some(node) = self.nodes_mut().get_mut(loc.wrapping_sub(1)) {
            node.cpu_left = node.cpu_left.wrapping_add((old - new) as i16);
            left = node.cpu_left;
        }
        rec.log(Some("CPU Change"), || {
            format!("CPU change {change} on pod {pod}, now {new}, and node {loc}, now {left}")
        });
    }
}
