//! A Pod as the scheduler reads it.

use super::affinity::{NodeAffinity, PodAffinity};
use super::amount::ResourceList;
use super::labels::Labels;
use super::spread::TopologySpreadConstraint;
use crate::cluster::taints::Toleration;

/// The scheduler name the default profile answers to.
pub const DEFAULT_SCHEDULER: &str = "default-scheduler";

/// `status.phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PodPhase {
    /// Accepted, not (yet) running.
    Pending,
    /// Bound and running.
    Running,
    /// Every container ended successfully.
    Succeeded,
    /// Some container failed.
    Failed,
    /// The node stopped reporting.
    Unknown,
}

/// `spec.preemptionPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PreemptionPolicy {
    /// May preempt pods of lower priority (the default).
    PreemptLowerPriority,
    /// Never preempts.
    Never,
}

impl PreemptionPolicy {
    /// The policy `name` names (absent: the default, `PreemptLowerPriority`); `None` when it
    /// names none.
    pub fn named(name: Option<&str>) -> Option<Self> {
        match name {
            None | Some("PreemptLowerPriority") => Some(Self::PreemptLowerPriority),
            Some("Never") => Some(Self::Never),
            Some(_) => None,
        }
    }
}

/// The pod's controller (`metadata.ownerReferences[]` with `controller: true`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OwnerReference {
    /// `apiVersion` (`apps/v1`).
    pub api_version: String,
    /// `kind` (`ReplicaSet`, `DaemonSet`, `StatefulSet`, …).
    pub kind: String,
    /// `name`.
    pub name: String,
}

/// A host port a container asks for (`ports[]` with `hostPort` > 0).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HostPort {
    /// `hostIP`; empty binds every address.
    pub host_ip: String,
    /// `protocol`; empty is TCP.
    pub protocol: String,
    /// `hostPort`.
    pub port: i32,
}

/// A container or init container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Container {
    /// `name`.
    pub name: String,
    /// `image`, as written in the pod.
    pub image: String,
    /// `resources.requests`.
    pub requests: ResourceList,
    /// `resources.limits` (they decide the QoS class when `status.qosClass` is absent).
    pub limits: ResourceList,
    /// The host ports of `ports`.
    pub host_ports: Vec<HostPort>,
    /// For an init container: `restartPolicy: Always`, a sidecar that runs beside the
    /// containers.
    pub sidecar: bool,
}

/// A Pod: what the filters and scores read from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pod {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels`.
    pub labels: Labels,
    /// `metadata.uid`; empty when absent (the descheduler refuses to evict such a pod).
    pub uid: String,
    /// `metadata.annotations`.
    pub annotations: Labels,
    /// The controller owner reference.
    pub controller: Option<OwnerReference>,
    /// Every `metadata.ownerReferences[]` entry, controller or not, in order (the descheduler
    /// reads them all).
    pub owner_references: Vec<OwnerReference>,
    /// `status.conditions[type=Ready]` is `True`.
    pub ready: bool,
    /// Some `spec.volumes[]` entry is an `emptyDir` or a `hostPath` (local storage to the
    /// descheduler).
    pub local_storage: bool,
    /// `status.qosClass` (`BestEffort`, `Burstable`, `Guaranteed`), when the status has it.
    pub qos_class: Option<String>,
    /// `metadata.deletionTimestamp` is set: the pod is terminating.
    pub terminating: bool,
    /// Terminating because a preemption deleted it: `podTerminatingByPreemption` in
    /// `default_preemption.go` (the deletion timestamp, and the `DisruptionTarget` condition
    /// `True` with reason `PreemptionByScheduler`, which `prepareCandidate` patches in).
    pub terminating_by_preemption: bool,
    /// `spec.nodeName`: the node the pod is bound to, or `None` while it waits.
    pub node_name: Option<String>,
    /// `status.nominatedNodeName`: the node a preemption reserved for the pod.
    pub nominated_node_name: Option<String>,
    /// `status.phase`.
    pub phase: PodPhase,
    /// `spec.schedulerName`.
    pub scheduler_name: String,
    /// `spec.schedulingGates` names: while any is left the pod is not scheduled.
    pub scheduling_gates: Vec<String>,
    /// `spec.priority`.
    pub priority: i32,
    /// `spec.preemptionPolicy`.
    pub preemption_policy: PreemptionPolicy,
    /// `spec.containers`.
    pub containers: Vec<Container>,
    /// `spec.initContainers`, sidecars included.
    pub init_containers: Vec<Container>,
    /// `spec.overhead`.
    pub overhead: ResourceList,
    /// `spec.tolerations`.
    pub tolerations: Vec<Toleration>,
    /// `spec.nodeSelector`; `None` when absent.
    pub node_selector: Option<Labels>,
    /// `spec.affinity.nodeAffinity`.
    pub node_affinity: Option<NodeAffinity>,
    /// `spec.affinity.podAffinity`.
    pub pod_affinity: Option<PodAffinity>,
    /// `spec.affinity.podAntiAffinity`.
    pub pod_anti_affinity: Option<PodAffinity>,
    /// `spec.topologySpreadConstraints`.
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
}

impl Pod {
    /// A pending pod with no containers and every other field as the API server defaults it.
    pub fn new(namespace: &str, name: &str) -> Self {
        Self {
            namespace: namespace.to_string(),
            name: name.to_string(),
            labels: Labels::new(),
            uid: String::new(),
            annotations: Labels::new(),
            controller: None,
            owner_references: Vec::new(),
            ready: false,
            local_storage: false,
            qos_class: None,
            terminating: false,
            terminating_by_preemption: false,
            node_name: None,
            nominated_node_name: None,
            phase: PodPhase::Pending,
            scheduler_name: DEFAULT_SCHEDULER.to_string(),
            scheduling_gates: Vec::new(),
            priority: 0,
            preemption_policy: PreemptionPolicy::PreemptLowerPriority,
            containers: Vec::new(),
            init_containers: Vec::new(),
            overhead: ResourceList::new(),
            tolerations: Vec::new(),
            node_selector: None,
            node_affinity: None,
            pod_affinity: None,
            pod_anti_affinity: None,
            topology_spread_constraints: Vec::new(),
        }
    }

    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Whether the default scheduler would try to place this pod now: it has no node, is not
    /// being deleted, has no scheduling gates left and names `default-scheduler`
    /// (`assignedPod`, `responsibleForPod` in `pkg/scheduler/eventhandlers.go`, `skipPodSchedule`
    /// in `schedule_one.go`, the SchedulingGates plugin's PreEnqueue).
    pub fn is_pending(&self) -> bool {
        self.node_name.is_none()
            && !self.terminating
            && self.scheduling_gates.is_empty()
            && self.scheduler_name == DEFAULT_SCHEDULER
            && !matches!(self.phase, PodPhase::Succeeded | PodPhase::Failed)
    }
}
