//! The transitions of the cluster model.

/// One atomic step: one run of a controller's loop, or one event or user command.
///
/// Kivi runs each controller with `BACK_TO_BACK_OPT`: a controller's loop is one atomic block
/// that keeps taking items from its queue while its guard holds, so one controller step drains
/// its queue as far as its guard allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClusterAction {
    /// The scheduler places every queued pod, ties on the lowest node id.
    Scheduler,
    /// Under `--tie-break any`: the scheduler places the queued pods, each tied pod on the
    /// top-scored node `choices` names (see `crate::model::scheduler_steps::run`).
    SchedulerChoice {
        /// The outcome's number, in the order the step's listing gives them.
        choices: u64,
    },
    /// The deployment controller reconciles queued deployments (only while the kubelet is idle).
    DeploymentController,
    /// Under `--tie-break any`: the deployment controller's step, deleting the victims that
    /// `picks` picks among equally ranked pods (see
    /// [`crate::controllers::deployment`]).
    DeploymentChoice {
        /// The victims picked at each tie, numbered as the step's listing numbers them.
        picks: u64,
    },
    /// The HPA evaluates queued deployments (after its wait period, or when the cluster is quiet).
    Hpa,
    /// Under `--semantics kubernetes`: the oldest recommendation in deployment `deployment`'s
    /// HPA stabilisation window leaves it (a timer: see
    /// [`crate::controllers::kube_hpa::Window`]).
    HpaWindowExpires {
        /// Deployment id.
        deployment: u8,
    },
    /// Under `--semantics kubernetes`: the oldest recommendation in the scale-up
    /// stabilisation window of deployment `deployment`'s HPA (one with `behavior`) leaves it
    /// (see `crate::controllers::kube_hpa_behavior`).
    HpaUpWindowExpires {
        /// Deployment id.
        deployment: u8,
    },
    /// Under `--semantics kubernetes`: the oldest scale event of deployment `deployment`'s HPA
    /// still within its policies' `period`-th shortest period leaves it (see
    /// `crate::controllers::kube_hpa_behavior`).
    HpaScaleEventLeaves {
        /// Deployment id.
        deployment: u8,
        /// Index of the period among the behavior's distinct policy periods, shortest first.
        period: u8,
    },
    /// The node controller evicts the pods of queued nodes that are not ready.
    NodeController,
    /// Under `--semantics kubernetes`: the node lifecycle controller puts its NoExecute
    /// `unreachable` taint on node `node`, or takes it off (see
    /// `controllers::node_lifecycle`).
    NodeLifecycle {
        /// Node id.
        node: u16,
    },
    /// Under `--semantics kubernetes`: the `tolerationSeconds` of the pods on NoExecute-tainted
    /// node `node` run out, and the taint eviction controller deletes them (see
    /// `controllers::taint_eviction`).
    TolerationTimeout {
        /// Node id.
        node: u16,
    },
    /// Under `--semantics kubernetes`: the cluster autoscaler grows node group `group` by
    /// `nodes` nodes for the unschedulable pods (see `controllers::cluster_autoscaler`).
    AutoscalerScaleUp {
        /// Index of the node group.
        group: u8,
        /// Nodes added.
        nodes: u8,
    },
    /// Under `--semantics kubernetes`: pods are unschedulable and no node group of the
    /// cluster autoscaler can take them (`NotTriggerScaleUp`): `pod_always_schedulable` is
    /// violated.
    AutoscalerNoScaleUp,
    /// Under `--semantics kubernetes`: the cluster autoscaler's loop brings its soft taint
    /// `DeletionCandidateOfClusterAutoscaler` up to date: on the nodes it finds unneeded, off
    /// the others (see `controllers::cluster_autoscaler::soft_taint`).
    AutoscalerSoftTaints,
    /// Under `--semantics kubernetes`: the cluster autoscaler starts removing node `node`: it
    /// taints it; its pods are evicted by [`ClusterAction::AutoscalerEviction`]s.
    AutoscalerScaleDown {
        /// Node id.
        node: u16,
    },
    /// Under `--semantics kubernetes`: the cluster autoscaler evicts pod `pod` from a node it
    /// is removing, through the Eviction API.
    AutoscalerEviction {
        /// Pod id.
        pod: u32,
    },
    /// Under `--semantics kubernetes`: the cluster autoscaler's drain of node `node` times out
    /// on pods the Eviction API refuses: the node stays, untainted.
    AutoscalerScaleDownFails {
        /// Node id.
        node: u16,
    },
    /// Under `--semantics kubernetes`: the cluster autoscaler deletes node `node`, whose pods
    /// are gone.
    AutoscalerDeletesNode {
        /// Node id.
        node: u16,
    },
    /// Under `--semantics kubernetes`: node `node`, asked for by a scale-up, registers (a
    /// timer: its instance boots at any later point).
    NodeRegisters {
        /// Node id.
        node: u16,
    },
    /// Under `--semantics kubernetes`, where provisioning may fail: node `node`, asked for by
    /// a scale-up, has not registered within `--max-node-provision-time`; the cluster
    /// autoscaler deletes it and backs its group off.
    NodeProvisioningFails {
        /// Node id.
        node: u16,
    },
    /// Under `--semantics kubernetes`: the backoff that node `node`'s failed provisioning
    /// started ends (a timer), and its slot is free again.
    AutoscalerBackoffEnds {
        /// Node id.
        node: u16,
    },
    /// The kubelet starts and removes queued pods.
    Kubelet,
    /// The descheduler runs its profiles once per queued deployment (after its period, or while
    /// the scheduler, kubelet, deployment and node controllers are idle).
    Descheduler,
    /// Under `--tie-break any`: the descheduler's step, evicting the pods (and giving equally
    /// full domains the evictions) that `picks` picks (see
    /// [`crate::controllers::descheduler`]).
    DeschedulerChoice {
        /// The picks at each tie, numbered as the step's listing numbers them.
        picks: u64,
    },
    /// The taint manager handles the oldest queued pod: it evicts the pod when the pod's node
    /// has a NoExecute taint the pod does not tolerate.
    TaintManager,
    /// Maintenance event number `event` picks the next nodes to drain.
    Maintenance {
        /// Index of the event in the spec.
        event: u8,
    },
    /// Node `node`, picked for maintenance, is drained: under `--semantics kivi` it turns not
    /// ready and is queued for the node controller; under `--semantics kubernetes` it is
    /// cordoned and its pods are then evicted through the Eviction API
    /// ([`ClusterAction::DrainEviction`]).
    MaintenanceStart {
        /// Node id.
        node: u16,
    },
    /// Under `--semantics kubernetes`: node `node`, drained for maintenance, stops (not
    /// ready) once no pod is left on it.
    MaintenanceStop {
        /// Node id.
        node: u16,
    },
    /// Node `node`'s maintenance ends: it is ready again.
    MaintenanceEnd {
        /// Node id.
        node: u16,
    },
    /// Drain event number `event` cordons its node (`kubectl drain`'s `RunCordonOrUncordon`).
    Drain {
        /// Index of the event in the spec.
        event: u8,
    },
    /// Drain event number `event` evicts pod `pod` from its node through the Eviction API,
    /// which allows it (see `crate::events::drain`).
    DrainEviction {
        /// Index of the event in the spec.
        event: u8,
        /// Pod id.
        pod: u32,
    },
    /// Rolling node upgrade number `event` takes its next step on its current batch of nodes
    /// (see `crate::events::node_upgrade`).
    NodeUpgrade {
        /// Index of the event in the spec.
        event: u8,
        /// Which step.
        step: UpgradeStep,
    },
    /// Node failure number `event` takes its next step (fail, queue for the node controller,
    /// recover).
    NodeFailure {
        /// Index of the event in the spec.
        event: u8,
    },
    /// The cluster became quiet for the first time: the `after_stable` events start.
    StartAfterStable,
    /// `eventCpuChange` number `event` adds `delta` CPU to pod `pod` of the target deployment's
    /// current replica set (Kivi names it by its position in the set's ascending pod list;
    /// the actions come in that order).
    CpuChange {
        /// Index of the event in the spec.
        event: u8,
        /// Pod id.
        pod: u32,
        /// CPU added (1–6).
        delta: u8,
    },
    /// Every pod whose CPU usage pattern is due moves to its next step.
    CpuPattern,
    /// Node `node` kernel-panics: its CPU is nearly exhausted.
    KernelPanic {
        /// Node id.
        node: u16,
    },
    /// Node `node` recovers from a kernel panic.
    KernelRecover {
        /// Node id.
        node: u16,
    },
    /// User command number `event` (create or apply a deployment) runs.
    UserCommand {
        /// Index of the command in the spec.
        event: u8,
    },
    /// A perturbation: `queue`'s controller misses the event that queued deployment
    /// `deployment`, which leaves its queue until the controller's next resync.
    MissEvent {
        /// The queue ([`crate::cluster::Queue`] as a number).
        queue: u8,
        /// Deployment id.
        deployment: u8,
    },
    /// `queue`'s controller resyncs after a missed event: its informer lists every deployment
    /// again, and each is queued.
    Resync {
        /// The queue ([`crate::cluster::Queue`] as a number).
        queue: u8,
    },
    /// A perturbation: `queue`'s controller crashes right after the `writes`-th write of its
    /// step and restarts (see [`crate::model::restart`]).
    Restart {
        /// The controller's queue ([`crate::cluster::Queue`] as a number).
        queue: u8,
        /// The writes made before the crash.
        writes: u16,
        /// For the deployment controller: the victims picked at each tie, as in
        /// [`ClusterAction::DeploymentChoice`] (0: the lowest ids).
        picks: u64,
    },
    /// A perturbation: `queue`'s controller takes its step on the stale view it had after its
    /// `depth`-th last step (see [`crate::model::stale_view`]).
    StaleView {
        /// The controller's queue ([`crate::cluster::Queue`] as a number).
        queue: u8,
        /// How many of its own steps the view lags (1 = the view after its last step).
        depth: u8,
    },
    /// `scaleDeployment` number `event` changes deployment `deployment`'s replicas by `delta`.
    ScaleDeployment {
        /// Index of the command in the spec.
        event: u8,
        /// Deployment id.
        deployment: u8,
        /// Change of specReplicas (-3..=3).
        delta: i8,
    },
}

impl ClusterAction {
    /// Whether this is the environment or the user acting rather than a controller: an event
    /// (a load change, a failure, maintenance, a kernel panic, the start of the after-stable
    /// events) or a user command.
    pub fn is_environment(&self) -> bool {
        match self {
            Self::Scheduler
            | Self::SchedulerChoice { .. }
            | Self::DeploymentController
            | Self::DeploymentChoice { .. }
            | Self::Hpa
            | Self::HpaWindowExpires { .. }
            | Self::HpaUpWindowExpires { .. }
            | Self::HpaScaleEventLeaves { .. }
            | Self::NodeController
            | Self::NodeLifecycle { .. }
            | Self::TolerationTimeout { .. }
            | Self::AutoscalerScaleUp { .. }
            | Self::AutoscalerNoScaleUp
            | Self::AutoscalerSoftTaints
            | Self::AutoscalerScaleDown { .. }
            | Self::AutoscalerEviction { .. }
            | Self::AutoscalerScaleDownFails { .. }
            | Self::AutoscalerDeletesNode { .. }
            | Self::NodeRegisters { .. }
            | Self::NodeProvisioningFails { .. }
            | Self::AutoscalerBackoffEnds { .. }
            | Self::Kubelet
            | Self::Descheduler
            | Self::DeschedulerChoice { .. }
            | Self::TaintManager
            | Self::Resync { .. } => false,
            Self::Maintenance { .. }
            | Self::MaintenanceStart { .. }
            | Self::MaintenanceStop { .. }
            | Self::MaintenanceEnd { .. }
            | Self::Drain { .. }
            | Self::DrainEviction { .. }
            | Self::NodeUpgrade { .. }
            | Self::NodeFailure { .. }
            | Self::StartAfterStable
            | Self::CpuChange { .. }
            | Self::CpuPattern
            | Self::KernelPanic { .. }
            | Self::KernelRecover { .. }
            | Self::UserCommand { .. }
            | Self::ScaleDeployment { .. }
            | Self::MissEvent { .. }
            | Self::Restart { .. }
            | Self::StaleView { .. } => true,
        }
    }

    /// Whether this step only ends a disturbance already under way: a node's maintenance ends,
    /// a node recovers from its kernel panic, a drain under way evicts its next pod (kubectl
    /// retries until it is done), or an upgraded node is put back.
    pub fn ends_disturbance(&self) -> bool {
        matches!(
            self,
            Self::MaintenanceEnd { .. }
                | Self::KernelRecover { .. }
                | Self::DrainEviction { .. }
                | Self::NodeUpgrade {
                    step: UpgradeStep::Rejoin,
                    ..
                }
        )
    }

    /// Whether this step is an involuntary disruption as Kubernetes names them (a node failing,
    /// a kernel panic): nothing asks the Eviction API first, so no PodDisruptionBudget refuses
    /// it, though its pods count against the budgets afterwards.
    pub fn is_involuntary_disruption(&self) -> bool {
        matches!(self, Self::NodeFailure { .. } | Self::KernelPanic { .. })
    }

    /// Whether this is a scheduler step, with or without a pick.
    pub fn is_scheduler(&self) -> bool {
        matches!(self, Self::Scheduler | Self::SchedulerChoice { .. })
    }

    /// Where a scheduler step places its tied pods (0 for a step that names nothing).
    pub fn scheduler_choices(&self) -> u64 {
        match *self {
            Self::SchedulerChoice { choices } => choices,
            _ => 0,
        }
    }
}

/// The steps a rolling node upgrade takes on each batch of nodes, in order (the evictions
/// between the cordon and the restart are [`ClusterAction::DrainEviction`]s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UpgradeStep {
    /// The batch's nodes are cordoned (`kubectl drain`'s cordon).
    Cordon,
    /// The drained nodes stop for their upgrade: their kubelets are down.
    Restart,
    /// The upgraded nodes are ready again and uncordoned.
    Rejoin,
}
