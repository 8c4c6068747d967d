//! The records a state is made of: nodes, pod slots, deployments and the fixed header, each
//! plain bytes laid out without padding.

use super::{MAX_EVENTS, MAX_INTENTS};
use bytemuck::NoUninit;

/// A node's condition, as Kivi's `nodes[i].status`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, NoUninit)]
#[repr(u8)]
pub enum NodeStatus {
    /// Not ready (down for maintenance or failed).
    #[default]
    NotReady = 0,
    /// Ready: the only status the scheduler places pods on.
    Ready = 1,
    /// Unhealthy after a kernel panic.
    Unhealthy = 2,
    /// No Node object: a slot of a cluster autoscaler's node group that the autoscaler has not
    /// asked for, or has deleted (`crate::controllers::cluster_autoscaler`).
    Absent = 3,
    /// No Node object yet: asked for by the cluster autoscaler, its instance still starting
    /// (an upcoming node, in the autoscaler's words).
    Provisioning = 4,
    /// No Node object: asked for by the cluster autoscaler, it did not register within
    /// `--max-node-provision-time`, and the autoscaler deleted its instance and backed its
    /// group off; the slot is free again once the backoff ends.
    BackedOff = 5,
}

impl NodeStatus {
    /// Whether the node exists as a Node object (every status but the autoscaler's slots).
    pub fn exists(self) -> bool {
        !matches!(self, Self::Absent | Self::Provisioning | Self::BackedOff)
    }

    /// Whether the node exists and is not Ready: the status the node lifecycle controller acts on.
    pub fn is_down(self) -> bool {
        self.exists() && self != Self::Ready
    }
}

/// A pod slot's phase, as Kivi's `pods[i].status`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, NoUninit)]
#[repr(u8)]
pub enum PodPhase {
    /// The slot is free (no pod).
    #[default]
    Idle = 0,
    /// Running on its node.
    Running = 1,
    /// Created, waiting for the scheduler or the kubelet.
    Pending = 2,
    /// Being deleted; still counted as a replica until the kubelet removes it.
    Terminating = 3,
}

/// Where a node stands in a `maintenance` event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, NoUninit)]
#[repr(u8)]
pub enum MaintenancePhase {
    /// Not picked for maintenance (or already put back).
    #[default]
    Idle = 0,
    /// Picked by the maintenance event; its drain has not started yet.
    Picked = 1,
    /// Drained: not ready until the cluster settles or the wait time has passed. Under
    /// `--semantics kubernetes` the node is first ready and cordoned while its pods are evicted
    /// through the Eviction API, and turns not ready once it holds none
    /// (`crate::events::maintenance`).
    Draining = 2,
    /// Cordoned by a `drain` event (`kubectl drain`): ready and `spec.unschedulable`, its pods
    /// evicted through the Eviction API; it stays cordoned (`crate::events::drain`). A rolling
    /// node upgrade cordons its batch's nodes the same way.
    Cordoned = 3,
    /// Drained by a rolling node upgrade and stopped for it: not ready and still cordoned until
    /// the upgrade puts it back (`crate::events::node_upgrade`).
    Upgrading = 4,
    /// Picked by the cluster autoscaler for removal: tainted `ToBeDeletedByClusterAutoscaler`
    /// (NoSchedule), its pods evicted; the Node is deleted once they are gone
    /// (`crate::controllers::cluster_autoscaler`).
    ScaleDown = 5,
    /// Being removed by the cluster autoscaler ([`Self::ScaleDown`]) while picked for
    /// maintenance ([`Self::Picked`]): the phases below are an operator's phase with the
    /// autoscaler's removal on top, each of which the node keeps if the removal fails (see
    /// [`Self::with_removal`]).
    ScaleDownPicked = 6,
    /// Being removed by the cluster autoscaler while drained for maintenance
    /// ([`Self::Draining`]).
    ScaleDownDraining = 7,
    /// Being removed by the cluster autoscaler while cordoned ([`Self::Cordoned`]).
    ScaleDownCordoned = 8,
    /// Being removed by the cluster autoscaler while stopped for an upgrade
    /// ([`Self::Upgrading`]).
    ScaleDownUpgrading = 9,
}

impl MaintenancePhase {
    /// Whether the cluster autoscaler is removing the node.
    pub fn removing(self) -> bool {
        self.with_removal() == self
    }

    /// The phase with the cluster autoscaler's removal on top. The operator's phase is kept
    /// under it (the `ToBeDeletedByClusterAutoscaler` taint and a cordon are two fields of a
    /// Node, and a `kubectl drain`, a maintenance or an upgrade goes on while the autoscaler
    /// removes the node), so that a removal that fails leaves the node as it found it
    /// ([`Self::without_removal`]).
    pub fn with_removal(self) -> Self {
        match self {
            Self::Idle | Self::ScaleDown => Self::ScaleDown,
            Self::Picked | Self::ScaleDownPicked => Self::ScaleDownPicked,
            Self::Draining | Self::ScaleDownDraining => Self::ScaleDownDraining,
            Self::Cordoned | Self::ScaleDownCordoned => Self::ScaleDownCordoned,
            Self::Upgrading | Self::ScaleDownUpgrading => Self::ScaleDownUpgrading,
        }
    }

    /// The operator's phase under the cluster autoscaler's removal, if any.
    pub fn without_removal(self) -> Self {
        match self {
            Self::Idle | Self::ScaleDown => Self::Idle,
            Self::Picked | Self::ScaleDownPicked => Self::Picked,
            Self::Draining | Self::ScaleDownDraining => Self::Draining,
            Self::Cordoned | Self::ScaleDownCordoned => Self::Cordoned,
            Self::Upgrading | Self::ScaleDownUpgrading => Self::Upgrading,
        }
    }

    /// `phase` with this phase's removal, if any, on top: what an operator's step that moves
    /// the node to `phase` leaves.
    pub fn moved_to(self, phase: Self) -> Self {
        if self.removing() {
            phase.with_removal()
        } else {
            phase
        }
    }

    /// Whether an operator has cordoned the node (`spec.unschedulable`): drained for
    /// maintenance, cordoned by `kubectl drain` or an upgrade, or stopped for an upgrade.
    pub fn cordoned(self) -> bool {
        matches!(
            self.without_removal(),
            Self::Draining | Self::Cordoned | Self::Upgrading
        )
    }
}

/// Mutable node fields: a packed record of plain bytes (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, NoUninit)]
#[repr(C, packed)]
pub struct NodeState {
    /// CPU not yet requested by pods placed here.
    pub cpu_left: i16,
    /// Memory not yet requested by pods placed here.
    pub mem_left: i16,
    /// Ready, not ready or unhealthy.
    pub status: NodeStatus,
    /// Pods placed on the node.
    pub num_pods: u8,
    /// Whether the node has been through maintenance.
    pub maintained: bool,
    /// How many times the node has kernel-panicked (saturates at the intent's threshold).
    pub panics: u8,
    /// The node's part in a maintenance event, a drain, an upgrade or a scale-down.
    pub maintenance: MaintenancePhase,
    /// Time since the node's drain started, saturated at the maintenance wait time.
    pub maintenance_elapsed: u16,
    /// Pods the descheduler has evicted from the node (kept only while a limit below 256
    /// makes the count observable, as Kivi's byte counters).
    pub evictions: u8,
    /// Whether the node waits in the node controller's queue.
    pub queued: bool,
    /// The controllers' taints on the node (`--semantics kubernetes` only; [`node_taint`]
    /// bits): one byte where a `bool` stood for the first, so that a model without the later
    /// ones stores the same bytes as before.
    pub taints: u8,
}

/// Which controllers' taints a node carries: bits of [`NodeState::taints`].
pub mod node_taint {
    /// The node lifecycle controller's NoExecute `node.kubernetes.io/not-ready` taint (the
    /// taint eviction controller's timers for the node's pods run while it is on; see
    /// `controllers::node_lifecycle`). Bit 0, so a node with it alone holds the byte a `true`
    /// held.
    pub const NO_EXECUTE: u8 = 1;
    /// The cluster autoscaler's soft taint `DeletionCandidateOfClusterAutoscaler:PreferNoSchedule`
    /// on a node it found unneeded (`MarkDeletionCandidate` in
    /// `cluster-autoscaler/utils/taints/taints.go`; see
    /// `controllers::cluster_autoscaler::soft_taint`). Only models with an autoscaler set it.
    pub const DELETION_CANDIDATE: u8 = 2;
}

impl NodeState {
    /// Whether the node lifecycle controller's NoExecute taint is on the node
    /// ([`node_taint::NO_EXECUTE`]).
    pub fn no_execute_taint(&self) -> bool {
        self.taints & node_taint::NO_EXECUTE != 0
    }

    /// Puts the node lifecycle controller's NoExecute taint on the node, or takes it off.
    pub fn set_no_execute_taint(&mut self, on: bool) {
        self.set_taint(node_taint::NO_EXECUTE, on);
    }

    /// Whether the cluster autoscaler's `DeletionCandidateOfClusterAutoscaler` soft taint is on
    /// the node ([`node_taint::DELETION_CANDIDATE`]).
    pub fn deletion_candidate(&self) -> bool {
        self.taints & node_taint::DELETION_CANDIDATE != 0
    }

    /// Puts the cluster autoscaler's soft taint on the node (`MarkDeletionCandidate`), or takes
    /// it off (`CleanDeletionCandidate`).
    pub fn set_deletion_candidate(&mut self, on: bool) {
        self.set_taint(node_taint::DELETION_CANDIDATE, on);
    }

    fn set_taint(&mut self, bit: u8, on: bool) {
        let taints = self.taints;
        self.taints = if on { taints | bit } else { taints & !bit };
    }
}

/// Which queues a pod waits in: bits of [`PodState::queued`].
pub mod pod_queue {
    /// The scheduler's queue.
    pub const SCHEDULER: u8 = 1;
    /// The kubelet's queue.
    pub const KUBELET: u8 = 2;
    /// The taint manager's queue.
    pub const TAINT: u8 = 4;
}

/// Mutable pod fields: a packed record of plain bytes (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, NoUninit)]
#[repr(C, packed)]
pub struct PodState {
    /// Node id the pod is bound to (0 = none).
    pub loc: u16,
    /// Lifecycle phase.
    pub phase: PodPhase,
    /// Next step of the template's CPU usage pattern.
    pub cpu_index: u8,
    /// Current CPU usage.
    pub cpu: i16,
    /// Current memory usage.
    pub memory: i16,
    /// Whether a deployment owns the pod (Kivi's `workloadType == 1`).
    pub owned: bool,
    /// Owning deployment id.
    pub deployment: u8,
    /// Pod template id the pod was made from (0 = none).
    pub template: u8,
    /// Whether the pod's labels are its template's (true once a deployment created it) rather
    /// than the input's.
    pub template_labels: bool,
    /// Time since the pod started, saturated at the latest CPU pattern step.
    pub age: u16,
    /// The replica set of its deployment the pod is a member of: 0 none, 1 or 2 for replica
    /// set version 0 or 1.
    pub replica_set: u8,
    /// The queues the pod waits in ([`pod_queue`] bits).
    pub queued: u8,
}

impl PodState {
    /// Whether the pod is a member of replica set `version` (0 or 1).
    pub fn in_replica_set(&self, version: usize) -> bool {
        self.replica_set as usize == version + 1
    }

    /// Whether the pod waits for a node outside the scheduler's queue: Pending, unbound, not
    /// queued (under `--semantics kubernetes`, a pod the last cycle found no node for).
    pub fn unscheduled_unqueued(&self) -> bool {
        self.phase == PodPhase::Pending && self.loc == 0 && self.queued & pod_queue::SCHEDULER == 0
    }
}

/// Mutable replica set fields: a packed record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, packed)]
pub struct ReplicaSetState {
    /// The replica set's desired replicas.
    pub spec_replicas: i32,
    /// Member pods (Kivi's `replicas`); the members are the pods whose
    /// [`PodState::replica_set`] names this set.
    pub replicas: i32,
    /// Under `--semantics kubernetes`: the set's `deployment.kubernetes.io/desired-replicas`
    /// annotation, the deployment's replicas when its controller last scaled the set (see
    /// [`crate::controllers::kube_scale`]). Always 0 under `kivi`.
    pub desired_replicas: i32,
    /// Under `--semantics kubernetes`: the deployment's maxSurge (percent; 0 for Recreate) when
    /// its controller last scaled the set, which with [`Self::desired_replicas`] gives the
    /// `deployment.kubernetes.io/max-replicas` annotation. Always 0 under `kivi`.
    pub surge_percent: u8,
}

/// Mutable deployment fields (including what `kubectl apply` can change): a packed record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, NoUninit)]
#[repr(C, packed)]
pub struct DeploymentState {
    /// Whether the deployment exists.
    pub active: bool,
    /// Which replica set (0 or 1) is current.
    pub cur_version: u8,
    /// Desired replicas.
    pub spec_replicas: i32,
    /// Running or terminating replicas over both replica sets.
    pub replicas: i32,
    /// Pods created and not yet started.
    pub in_creation: i32,
    /// Pods marked for deletion and not yet removed.
    pub in_deletion: i32,
    /// The two replica set versions.
    pub replica_sets: [ReplicaSetState; 2],
    /// Pod template id.
    pub template: u8,
    /// maxSurge in percent.
    pub max_surge: u8,
    /// maxUnavailable in percent.
    pub max_unavailable: u8,
    /// Rollout strategy.
    pub strategy: crate::cluster::Strategy,
    /// Index into the spec's HPA configurations for enablement, bounds and metrics.
    pub hpa: u8,
    /// Index into the spec's HPA configurations whose metric targets apply (Kivi's apply keeps
    /// the old targets).
    pub hpa_targets: u8,
    /// A pod of the deployment was removed since the eviction monitor last looked.
    pub evicted: bool,
    /// A pod of the deployment was started since the eviction monitor last looked.
    pub added: bool,
    /// A pod of the deployment was started (for the balance monitor; never cleared).
    pub added_for_balance: bool,
    /// Under `--semantics kubernetes`: the HPA's scale-down stabilisation window, the
    /// recommendations that still bound its scale-down, as a set of values (bit `r`: `r`
    /// replicas; see [`crate::controllers::kube_hpa::Window`]). Always 0 under `kivi`.
    pub hpa_window: u64,
    /// Under `--semantics kubernetes`, for an HPA with `behavior` whose scale-up window is
    /// longer than its sync period: the recommendations that still bound a scale-up, as a set
    /// of values (the smallest of every suffix of the evaluations; see
    /// `crate::controllers::kube_hpa_behavior`). Always 0 otherwise.
    pub hpa_up_window: u64,
    /// Under `--semantics kubernetes`, for an HPA with `behavior`: its recent scale events.
    pub hpa_scale_events: super::ScaleEvents,
}

impl DeploymentState {
    /// The current replica set.
    pub fn current(&self) -> ReplicaSetState {
        self.replica_sets[self.cur_version as usize]
    }
}

/// Kivi's logical clock, reduced to what the enabling conditions can observe.
///
/// Kivi keeps one ever-growing `time` and, per periodic process, the `time` it last ran; a
/// process may fire when the difference reaches its period. Only those differences are ever
/// compared, and only against the period, so each is kept here as "time since", saturated at the
/// period: two states that differ only beyond saturation enable exactly the same steps. This keeps
/// oscillating runs finite without changing any verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, NoUninit)]
#[repr(C)]
pub struct Clock {
    /// Time since the HPA last ran, saturated at its wait period.
    pub hpa_idle: u16,
    /// Time since the descheduler last ran, saturated at its period.
    pub descheduler_idle: u16,
    /// Per event: time since it was started, saturated at its period.
    pub event_idle: [u16; MAX_EVENTS],
}

/// Bookkeeping of events and user commands: a packed record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, NoUninit)]
#[repr(C, packed)]
pub struct EventsState {
    /// Bit `i`: event `i` has run (each runs once).
    pub done: u16,
    /// Per event: how far a multi-step event has got (the next node a maintenance event
    /// considers, or the steps of a node failure taken).
    pub progress: [u16; MAX_EVENTS],
    /// Whether the cluster became quiet and the `after_stable` events were started.
    pub after_stable_started: bool,
}

/// The intent monitors' variables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, NoUninit)]
#[repr(C)]
pub struct MonitorState {
    /// Per intent: its stage (monitors that wait for a precondition first).
    pub stage: [u8; MAX_INTENTS],
    /// Bit `i`: intent `i` has been violated.
    pub violated: u16,
}

/// What is left of the run's perturbations (`--perturb`): a packed record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, NoUninit)]
#[repr(C, packed)]
pub struct PerturbationState {
    /// Perturbations the run may still make (`--perturb-budget`, counting down).
    pub left: u8,
    /// Bit `q`: queue `q` missed an event and its controller's next resync is due.
    pub resync_due: u8,
}

/// The fields of a state that do not grow with the cluster, at the head of its buffer: laid
/// out without padding (92 bytes), so the buffer is plain bytes throughout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, NoUninit)]
#[repr(C)]
pub(super) struct Header {
    pub(super) clock: Clock,
    pub(super) monitors: MonitorState,
    pub(super) events: EventsState,
    /// Pods the descheduler has evicted in the (single) namespace, kept like the per-node
    /// counts.
    pub(super) namespace_evictions: u8,
    pub(super) perturbations: PerturbationState,
}

impl PodState {
    /// The record with an idle slot that waits in no queue cleared: what the kubelet leaves
    /// behind in a removed pod's slot is never read again (a new pod overwrites the whole
    /// record), so such slots are all alike.
    pub fn settled(&self) -> PodState {
        if self.phase == PodPhase::Idle && self.queued == 0 {
            PodState::default()
        } else {
            *self
        }
    }

    /// [`PodState::settled`], with its node renamed by `node_new` (new id per old node id).
    pub fn renamed(&self, node_new: &[u32]) -> PodState {
        let mut pod = self.settled();
        if let Some(&new) = node_new.get(pod.loc as usize).filter(|_| pod.loc != 0) {
            pod.loc = new as u16;
        }
        pod
    }
}
