//! A model state as the Kubernetes objects kube-scheduler would read from it
//! (`--semantics kubernetes`): the [`Snapshot`] of a [`ClusterSpec`] and a [`ClusterState`].
//!
//! What Kivi's state says is turned into what the API server and the controllers around the
//! scheduler would have written:
//! - a node has `allocatable` cpu and memory (the model's units, `ClusterSpec::units`) and
//!   110 pods, the kubelet's default `--max-pods`; its labels are its label values as strings,
//!   Kivi's `hostname` and `zone` keys written `kubernetes.io/hostname` and
//!   `topology.kubernetes.io/zone`;
//! - a node that is not ready (failed, kernel-panicked, down for maintenance: its kubelet
//!   stopped reporting) carries the `node.kubernetes.io/unreachable` NoSchedule taint, as the
//!   node lifecycle controller taints it by condition (`pkg/controller/nodelifecycle/node_lifecycle_controller.go`), and the
//!   NoExecute one once that controller's rate-limited tainting has reached it
//!   ([`NodeState::no_execute_taint`](crate::cluster::NodeState::no_execute_taint)); a node
//!   being drained, for maintenance or by a `drain` event, is cordoned, `spec.unschedulable`
//!   (`kubectl drain`);
//! - a node the cluster autoscaler removes carries its `ToBeDeletedByClusterAutoscaler`
//!   NoSchedule taint, and one it has found unneeded its
//!   `DeletionCandidateOfClusterAutoscaler` PreferNoSchedule soft taint
//!   ([`NodeState::deletion_candidate`](crate::cluster::NodeState::deletion_candidate)),
//!   which TaintToleration's score reads; both with an empty value where upstream writes the
//!   time it tainted;
//! - a pod requests its template's cpu and memory (a pod without template: what it uses), and
//!   every pod carries the NoExecute tolerations of `not-ready` and `unreachable` for 300 s that
//!   the DefaultTolerationSeconds admission plugin adds
//!   (`plugin/pkg/admission/defaulttolerationseconds/admission.go`);
//! - a DaemonSet's pod placed when the model started (`ClusterSpec::daemon_pods`) runs on its
//!   node, owned by its DaemonSet ([`daemon_pod`]), after the model's pods, and a node's
//!   reserved load (a running cluster's system pods) is one more pod on it ([`reserved_pod`]);
//! - each replica set version of a deployment is a ReplicaSet that controls its member pods,
//!   selecting them by a `pod-template-hash` label, so that PodTopologySpread's system default
//!   constraints apply to them (`helper.DefaultSelector`,
//!   `pkg/scheduler/framework/plugins/helper/spread.go`); Kivi's own default constraints, which
//!   the loader fills in for templates without any ([`PodTemplate::default_spread`]), are left
//!   out for that reason.
//!
//! - a pod has its template's `priority` and `preemptionPolicy`
//!   ([`PodTemplate::priority`]), what the Priority admission plugin wrote from its
//!   PriorityClass;
//! - a PodDisruptionBudget selects its deployments' pods by their ReplicaSets'
//!   `pod-template-hash` labels and carries the status the disruption controller would have
//!   written for the state ([`budget_status`]).
//!
//! - a pod is in its template's namespace ([`PodTemplate::namespace`], `default` for a pod
//!   without template), a DaemonSet's pod in its DaemonSet's, a ReplicaSet in its
//!   Deployment's, and a PodDisruptionBudget in its deployments' (the reader lets a budget
//!   select only Deployments of its own namespace, as `getPodsForPdb` lists only the
//!   budget's namespace's pods).
//!
//! Nodes are named `node-<id>` and pods `pod-<id>`, unique whatever their namespace;
//! [`node_id`] and [`pod_id`] read an id back.

use super::daemon_pod;
use super::labels::{LabelSelector, Labels, Operator, Requirement};
use super::{
    Amount, Container, DisruptionStatus, Node, NodeAffinity, NodeSelectorTerm, OwnerReference, Pod,
    PodDisruptionBudget, PodPhase, PreferredSchedulingTerm, ResourceList, SelectorOwner,
    SelectorOwnerKind, Snapshot, TopologySpreadConstraint, WhenUnsatisfiable,
};
use crate::cluster::spec::{self, ClusterSpec, DaemonPod, DisruptionBudget, PodTemplate};
use crate::cluster::state::{NodeStatus, PodPhase as Phase};
use crate::cluster::taints::{Taint, TaintEffect, Toleration, TolerationOperator};
use crate::cluster::ClusterState;

/// The kubelet's default `--max-pods`: a node's `allocatable.pods` unless configured.
pub const DEFAULT_MAX_PODS: u64 = 110;
/// The namespace of the pods that carry the nodes' reserved load ([`reserved_pod`]).
const RESERVED_NAMESPACE: &str = "kube-system";
/// The priority of the `system-node-critical` PriorityClass (`SystemPriorityClasses` in
/// `pkg/apis/scheduling`).
const SYSTEM_NODE_CRITICAL: i32 = 2_000_001_000;
/// The taint the node lifecycle controller puts on a node whose Ready condition is not true.
pub const NOT_READY_TAINT: &str = "node.kubernetes.io/not-ready";
/// The taint it puts on a node that stopped reporting.
pub const UNREACHABLE_TAINT: &str = "node.kubernetes.io/unreachable";
/// The taint of a node the model takes down. Every way it does (a failure, a kernel panic,
/// maintenance) stops the node's kubelet, so the node's Ready condition turns Unknown and the
/// node lifecycle controller taints it `unreachable`, not `not-ready` (which is for a kubelet
/// that reports Ready false): `doNoExecuteTaintingPass` and `TaintNodesByCondition` in
/// `pkg/controller/nodelifecycle/node_lifecycle_controller.go`.
pub const NODE_DOWN_TAINT: &str = UNREACHABLE_TAINT;
/// The taint the cluster autoscaler puts on a node it removes (`ToBeDeletedTaint`,
/// cluster-autoscaler/utils/taints/taints.go).
pub const TO_BE_DELETED_TAINT: &str = "ToBeDeletedByClusterAutoscaler";
/// The soft taint the cluster autoscaler puts on a node it finds unneeded
/// (`DeletionCandidateTaint`, cluster-autoscaler/utils/taints/taints.go), effect
/// PreferNoSchedule: kube-scheduler prefers other nodes for new pods.
pub const DELETION_CANDIDATE_TAINT: &str = "DeletionCandidateOfClusterAutoscaler";
/// The `tolerationSeconds` of the `not-ready` and `unreachable` tolerations the
/// DefaultTolerationSeconds admission plugin adds to a pod that has none
/// (`--default-not-ready-toleration-seconds`,
/// `plugin/pkg/admission/defaulttolerationseconds/admission.go`).
pub const DEFAULT_TOLERATION_SECONDS: u32 = 300;
/// The label by which a ReplicaSet selects its pods.
const TEMPLATE_HASH: &str = "pod-template-hash";

/// The name of node `id`.
pub fn node_name(id: usize) -> String {
    format!("node-{id}")
}

/// The name of pod `id`.
pub fn pod_name(id: usize) -> String {
    format!("pod-{id}")
}

/// The pod id a name of [`pod_name`] stands for.
pub fn pod_id(name: &str) -> Option<usize> {
    name.strip_prefix("pod-")?.parse().ok()
}

/// The namespace of model pod `p` in `state`: its template's.
pub fn pod_namespace<'a>(spec: &'a ClusterSpec, state: &ClusterState, p: usize) -> &'a str {
    spec.template_or_none(state.pod(p).template).namespace()
}

/// The node id a name of [`node_name`] stands for.
pub fn node_id(name: &str) -> Option<usize> {
    name.strip_prefix("node-")?.parse().ok()
}

/// The Kubernetes name of label key `key`: Kivi's `hostname` and `zone` are the well-known
/// `kubernetes.io/hostname` and `topology.kubernetes.io/zone`.
pub fn key_name(spec: &ClusterSpec, key: usize) -> String {
    match spec.label_keys.get(key).map(String::as_str) {
        Some("hostname") => "kubernetes.io/hostname".to_string(),
        Some("zone") => "topology.kubernetes.io/zone".to_string(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// The text of value `value` of label key `key`.
fn value_text(spec: &ClusterSpec, key: usize, value: u16) -> String {
    (value as usize)
        .checked_sub(1)
        .and_then(|v| spec.label_values.get(key)?.get(v))
        .cloned()
        .unwrap_or_else(|| value.to_string())
}

/// A label vector (value number per key) as labels.
fn labels(spec: &ClusterSpec, values: &[u16]) -> Labels {
    values
        .iter()
        .enumerate()
        .filter(|(_, &value)| value != 0)
        .map(|(key, &value)| (key_name(spec, key), value_text(spec, key, value)))
        .collect()
}

/// `(key, value)` pairs as labels.
fn pairs(spec: &ClusterSpec, pairs: &[(usize, u16)]) -> Labels {
    pairs
        .iter()
        .map(|&(key, value)| (key_name(spec, key), value_text(spec, key, value)))
        .collect()
}

/// The snapshot kube-scheduler would take of `state`: its existing nodes (a cluster
/// autoscaler's slot without a Node is left out, with the DaemonSet pods and reserved load
/// that come with it). Node `n` is built from
/// `state.node(n)` alone and pod `p` from `state.pod(p)` and its nominated node alone (with
/// the spec), and the
/// DaemonSets' pods and the nodes' reserved load, after the model's, from the spec alone, which
/// [`super::incremental::IncrementalSnapshot`] relies on.
pub fn snapshot(spec: &ClusterSpec, state: &ClusterState) -> Snapshot {
    let exists = |n: &usize| state.node(*n).status.exists();
    let nodes = (1..=spec.nodes.len())
        .filter(exists)
        .map(|n| node(spec, state, n))
        .collect();
    let pods = (1..=spec.pods.len())
        .filter_map(|p| pod(spec, state, p))
        .chain(
            spec.daemon_pods
                .iter()
                .filter(|d| exists(&d.node))
                .map(|d| daemon_pod(spec, d)),
        )
        .chain(
            (1..=spec.nodes.len())
                .filter(exists)
                .filter_map(|n| reserved_pod(spec, n)),
        )
        .collect();
    let selector_owners = (1..=spec.deployments.len())
        .flat_map(|d| (1..=2).map(move |version| replica_set(spec, d, version)))
        .collect();
    Snapshot {
        nodes,
        pods,
        selector_owners,
        namespaces: Vec::new(),
        pod_disruption_budgets: Vec::new(),
        priority_classes: Vec::new(),
    }
}

/// The status the disruption controller writes for `budget` in `state`
/// (`trySync` in `pkg/controller/disruption/disruption.go`, arithmetic in
/// [`DisruptionStatus::compute`]). Its pods (`getPodsForPdb`) are every pod of its
/// deployments and its bare pods, pending, running or terminating. A pod is healthy
/// (`countHealthyPods`) when it is not being deleted and is Ready: running on a ready node,
/// since the node lifecycle controller marks the pods of a node that stopped reporting not
/// ready (`MarkPodsNotReady`, `pkg/controller/nodelifecycle/node_lifecycle_controller.go`).
/// The scale (`getExpectedScale`) sums the desired replicas of each deployment with a pod
/// owned through one of its ReplicaSets (`getPodDeployment`: a ReplicaSet's owning
/// Deployment's `spec.replicas`); a deployment without such a pod adds nothing, as upstream
/// only visits the matching pods' controllers. A bare pod has no controller: when the scale is
/// needed ([`DisruptionBudget::needs_scale`]) `getExpectedScale` fails on it and `failSafe`
/// writes `disruptionsAllowed: 0`, keeping the rest of the last status; the model keeps no
/// last status, so the fail-safe status has the current healthy pods and nothing desired or
/// expected (every eviction of a pod it selects is then refused).
pub fn budget_status(state: &ClusterState, budget: &DisruptionBudget) -> DisruptionStatus {
    let (mut pods, mut healthy, mut scale) = (0, 0, 0);
    let is_healthy = |pod: &crate::cluster::PodState| {
        pod.phase == Phase::Running
            && pod.loc != 0
            && state.node(pod.loc as usize).status == NodeStatus::Ready
    };
    for &d in &budget.deployments {
        let mut controlled = false;
        for pod in state.pods().iter().filter(|p| p.deployment == d) {
            if pod.phase == Phase::Idle {
                continue;
            }
            pods += 1;
            controlled |= pod.owned && pod.replica_set != 0;
            healthy += i32::from(is_healthy(pod));
        }
        if controlled {
            scale += state.deployment(d as usize).spec_replicas;
        }
    }
    let mut uncontrolled = false;
    for &p in &budget.pods {
        let pod = state.pod(p as usize);
        if pod.phase == Phase::Idle {
            continue;
        }
        pods += 1;
        uncontrolled = true;
        healthy += i32::from(is_healthy(pod));
    }
    if uncontrolled && budget.needs_scale() {
        return DisruptionStatus::fail_safe(healthy);
    }
    DisruptionStatus::compute(
        budget.min_available,
        budget.max_unavailable,
        pods,
        scale,
        healthy,
    )
}

/// The model's PodDisruptionBudgets as the eviction subresource reads them: each selecting
/// the pods it covers by the label [`budget_label`] that [`pod`] gives them, with
/// [`budget_status`].
pub fn budgets(spec: &ClusterSpec, state: &ClusterState) -> Vec<PodDisruptionBudget> {
    spec.pdbs
        .iter()
        .enumerate()
        .map(|(index, budget)| {
            let mut selector = LabelSelector::default();
            selector
                .match_labels
                .insert(budget_label(index), "true".into());
            PodDisruptionBudget {
                namespace: budget.namespace.clone(),
                name: budget.name.clone(),
                selector: Some(selector),
                min_available: budget.min_available,
                max_unavailable: budget.max_unavailable,
                status: Some(budget_status(state, budget)),
            }
        })
        .collect()
}

/// The label key by which budget number `index` of the spec selects its pods in a snapshot:
/// the model resolved each budget's selector to deployments and bare pods when it read the
/// input, and one label stands for that choice (no user selector names this key).
fn budget_label(index: usize) -> String {
    format!("pdb.kivi.dev/budget-{index}")
}

/// Node `n`: what `state.node(n)` and the spec say of it.
pub(super) fn node(spec: &ClusterSpec, state: &ClusterState, n: usize) -> Node {
    let node = spec.node(n);
    let now = state.node(n);
    let mut taints: Vec<Taint> = (node.taint_type as usize)
        .checked_sub(1)
        .and_then(|t| spec.taint_types.get(t))
        .cloned()
        .unwrap_or_default();
    let no_schedule = (now.status != NodeStatus::Ready).then_some(TaintEffect::NoSchedule);
    let no_execute = now.no_execute_taint().then_some(TaintEffect::NoExecute);
    if now.maintenance.removing() {
        // `taints.MarkToBeDeleted` (cluster-autoscaler/utils/taints/taints.go).
        taints.push(Taint {
            key: TO_BE_DELETED_TAINT.to_string(),
            value: String::new(),
            effect: TaintEffect::NoSchedule,
        });
    }
    if now.deletion_candidate() {
        // `taints.MarkDeletionCandidate` (cluster-autoscaler/utils/taints/taints.go).
        taints.push(Taint {
            key: DELETION_CANDIDATE_TAINT.to_string(),
            value: String::new(),
            effect: TaintEffect::PreferNoSchedule,
        });
    }
    for effect in no_schedule.into_iter().chain(no_execute) {
        taints.push(Taint {
            key: NODE_DOWN_TAINT.to_string(),
            value: String::new(),
            effect,
        });
    }
    let mut allocatable = ResourceList::new();
    allocatable.insert("cpu".into(), cpu(spec, node.cpu));
    allocatable.insert("memory".into(), memory(spec, node.memory));
    allocatable.insert("pods".into(), Amount::from_units(DEFAULT_MAX_PODS));
    Node {
        name: node_name(n),
        labels: labels(spec, &node.labels),
        taints,
        unschedulable: now.maintenance.cordoned(),
        allocatable,
        images: Vec::new(),
        ready: now.status == NodeStatus::Ready,
    }
}

/// `amount` model units of CPU.
fn cpu(spec: &ClusterSpec, amount: i32) -> Amount {
    Amount::from_milli((amount.max(0) as u64) * spec.units.cpu_millis as u64)
}

/// `amount` model units of memory.
fn memory(spec: &ClusterSpec, amount: i32) -> Amount {
    Amount::from_units((amount.max(0) as u64) * spec.units.memory_bytes as u64)
}

/// The ReplicaSet of version `version` (1 or 2) of deployment `d`, in its namespace.
fn replica_set(spec: &ClusterSpec, d: usize, version: usize) -> SelectorOwner {
    let mut selector = LabelSelector::default();
    selector
        .match_labels
        .insert(TEMPLATE_HASH.into(), template_hash(d, version));
    SelectorOwner {
        kind: SelectorOwnerKind::ReplicaSet,
        namespace: spec.deployments[d - 1].namespace().into(),
        name: replica_set_name(d, version),
        selector: Some(selector),
    }
}

fn replica_set_name(d: usize, version: usize) -> String {
    format!("deployment-{d}-{}", template_hash(d, version))
}

fn template_hash(d: usize, version: usize) -> String {
    format!("d{d}v{version}")
}

/// Pod `p`, unless its slot is free: what `state.pod(p)`, its nominated node and the spec
/// say of it (its labels are the spec's, chosen by the record's `template_labels` and
/// `template`).
pub(super) fn pod(spec: &ClusterSpec, state: &ClusterState, p: usize) -> Option<Pod> {
    let now = state.pod(p);
    if now.phase == Phase::Idle {
        return None;
    }
    let template = spec.template_or_none(now.template);
    let mut pod = Pod::new(template.namespace(), &pod_name(p));
    pod.labels = labels(spec, spec.pod_labels(state, p));
    for (index, budget) in spec.pdbs.iter().enumerate() {
        if budget.selects(p, now) {
            pod.labels.insert(budget_label(index), "true".into());
        }
    }
    if now.owned && now.replica_set != 0 {
        let (d, version) = (now.deployment as usize, now.replica_set as usize);
        pod.labels
            .insert(TEMPLATE_HASH.into(), template_hash(d, version));
        pod.controller = Some(OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: replica_set_name(d, version),
        });
    }
    pod.owner_references = pod.controller.iter().cloned().collect();
    pod.priority = template.priority;
    pod.preemption_policy = template.preemption_policy;
    pod.terminating = now.phase == Phase::Terminating;
    pod.terminating_by_preemption = pod.terminating && state.terminating_by_preemption(p);
    // The node lifecycle controller marks the pods of a node that stopped reporting not ready
    // (`MarkPodsNotReady`), as `budget_status` counts them.
    pod.ready = now.phase == Phase::Running
        && now.loc != 0
        && state.node(now.loc as usize).status == NodeStatus::Ready;
    pod.node_name = (now.loc != 0).then(|| node_name(now.loc as usize));
    let nominated = state.nominated_node(p);
    pod.nominated_node_name = (nominated != 0).then(|| node_name(nominated));
    pod.phase = match now.phase {
        Phase::Running | Phase::Terminating => PodPhase::Running,
        _ => PodPhase::Pending,
    };
    let (cpu_request, memory_request) = spec.pod_requests(state, p);
    pod.containers.push(Container {
        name: "main".into(),
        image: String::new(),
        requests: requests(spec, cpu_request, memory_request),
        limits: ResourceList::new(),
        host_ports: Vec::new(),
        sidecar: false,
    });
    pod.tolerations = tolerations(template);
    pod.node_affinity = node_affinity(spec, template);
    if !template.default_spread {
        pod.topology_spread_constraints = spread(spec, template);
    }
    Some(pod)
}

/// DaemonSet pod `daemon`, Running on its node ([`daemon_pod::name`]) in its template's
/// namespace: owned by its
/// DaemonSet, with its template's labels and requests and the tolerations the DaemonSet
/// controller adds. It is built from the spec alone: the pod stays on its node whatever the
/// node goes through, and what the node's state changes of it (readiness) no reader of a
/// daemon pod looks at (the scheduler counts its requests, the descheduler refuses it).
fn daemon_pod(spec: &ClusterSpec, daemon: &DaemonPod) -> Pod {
    let template = daemon_pod::template(spec, daemon.daemon_set);
    let mut pod = Pod::new(template.namespace(), &daemon_pod::name(spec, daemon));
    pod.uid = pod.name.clone();
    pod.labels = labels(spec, &template.labels);
    pod.controller = Some(OwnerReference {
        api_version: "apps/v1".into(),
        kind: "DaemonSet".into(),
        name: spec.daemon_sets[daemon.daemon_set].name.clone(),
    });
    pod.owner_references = pod.controller.iter().cloned().collect();
    pod.ready = true;
    pod.phase = PodPhase::Running;
    pod.node_name = Some(node_name(daemon.node));
    pod.containers.push(Container {
        name: "main".into(),
        image: String::new(),
        requests: requests(spec, template.cpu_requested, template.mem_requested),
        limits: ResourceList::new(),
        host_ports: Vec::new(),
        sidecar: false,
    });
    pod.tolerations = daemon_pod::tolerations(template);
    pod.priority = template.priority;
    pod.preemption_policy = template.preemption_policy;
    pod
}

/// The load reserved on node `n` ([`spec::NodeSpec::reserved_cpu`]) as one Running pod
/// bound to it, or none where nothing is reserved. kube-scheduler counts the requests of
/// every pod bound to a node (`NodeInfo.Requested`), a running cluster's DaemonSet and system
/// pods included, so the reservation is a pod rather than less `allocatable`: the Fit filter
/// answers alike either way, but LeastAllocated and BalancedAllocation score requests
/// against allocatable. It is in `kube-system`, which the spread constraints of the modelled
/// pods of other namespaces do not count (PodTopologySpread counts the pod's own namespace),
/// has no labels (so no `matchLabels` of a `kube-system` pod's constraint counts it) and no
/// owner (the
/// descheduler's default evictor refuses a bare pod), tolerates every taint and has
/// `system-node-critical` priority, so no preemption can choose it. Kubernetes would count
/// each system pod against the node's 110 pods; the model counts one.
fn reserved_pod(spec: &ClusterSpec, n: usize) -> Option<Pod> {
    let node = spec.node(n);
    if node.reserved_cpu == 0 && node.reserved_memory == 0 {
        return None;
    }
    let mut pod = Pod::new(RESERVED_NAMESPACE, &format!("reserved-{}", node_name(n)));
    pod.uid = pod.name.clone();
    pod.ready = true;
    pod.phase = PodPhase::Running;
    pod.node_name = Some(node_name(n));
    pod.containers.push(Container {
        name: "reserved".into(),
        image: String::new(),
        requests: requests(spec, node.reserved_cpu, node.reserved_memory),
        limits: ResourceList::new(),
        host_ports: Vec::new(),
        sidecar: false,
    });
    pod.tolerations = vec![Toleration {
        key: String::new(),
        operator: TolerationOperator::Exists,
        value: String::new(),
        effect: None,
        seconds: None,
    }];
    pod.priority = SYSTEM_NODE_CRITICAL;
    Some(pod)
}

/// A container's requests of `cpu_request` and `memory_request` model units (a resource of 0
/// not requested).
fn requests(spec: &ClusterSpec, cpu_request: i32, memory_request: i32) -> ResourceList {
    let mut requests = ResourceList::new();
    if cpu_request > 0 {
        requests.insert("cpu".into(), cpu(spec, cpu_request));
    }
    if memory_request > 0 {
        requests.insert("memory".into(), memory(spec, memory_request));
    }
    requests
}

/// The template's tolerations with those DefaultTolerationSeconds adds: `not-ready` and
/// `unreachable`, NoExecute, unless the pod tolerates that taint already.
fn tolerations(template: &PodTemplate) -> Vec<Toleration> {
    let mut tolerations = template.tolerations.clone();
    for key in [NOT_READY_TAINT, UNREACHABLE_TAINT] {
        let taint = Taint {
            key: key.to_string(),
            value: String::new(),
            effect: TaintEffect::NoExecute,
        };
        if !tolerations.iter().any(|t| t.tolerates(&taint)) {
            tolerations.push(Toleration {
                key: key.to_string(),
                operator: TolerationOperator::Exists,
                value: String::new(),
                effect: Some(TaintEffect::NoExecute),
                seconds: Some(i64::from(DEFAULT_TOLERATION_SECONDS)),
            });
        }
    }
    tolerations
}

/// The template's node affinity terms: each a node selector term of `key In [value]`
/// requirements; required terms ORed, preferred terms weighted.
fn node_affinity(spec: &ClusterSpec, template: &PodTemplate) -> Option<NodeAffinity> {
    if template.affinity.is_empty() {
        return None;
    }
    let term = |wanted: &[(usize, u16)]| NodeSelectorTerm {
        match_expressions: pairs(spec, wanted)
            .into_iter()
            .filter_map(|(key, value)| Requirement::new(&key, Operator::In, vec![value]).ok())
            .collect(),
        match_fields: Vec::new(),
    };
    let required: Vec<NodeSelectorTerm> = template
        .affinity
        .iter()
        .filter(|t| t.required)
        .map(|t| term(&t.labels))
        .collect();
    let preferred: Vec<PreferredSchedulingTerm> = template
        .affinity
        .iter()
        .filter(|t| !t.required)
        .map(|t| PreferredSchedulingTerm {
            weight: t.weight,
            preference: term(&t.labels),
        })
        .collect();
    Some(NodeAffinity {
        required: (!required.is_empty()).then_some(required),
        preferred: (!preferred.is_empty()).then_some(preferred),
    })
}

/// The template's own topology spread constraints.
fn spread(spec: &ClusterSpec, template: &PodTemplate) -> Vec<TopologySpreadConstraint> {
    use super::spread::NodeInclusionPolicy::{Honor, Ignore};
    template
        .spread
        .iter()
        .map(|c| TopologySpreadConstraint {
            max_skew: c.max_skew,
            topology_key: key_name(spec, c.topology_key),
            when_unsatisfiable: match c.when_unsatisfiable {
                spec::WhenUnsatisfiable::DoNotSchedule => WhenUnsatisfiable::DoNotSchedule,
                spec::WhenUnsatisfiable::ScheduleAnyway => WhenUnsatisfiable::ScheduleAnyway,
            },
            label_selector: Some(LabelSelector {
                match_labels: pairs(spec, &c.match_labels),
                match_expressions: Vec::new(),
            }),
            min_domains: (c.when_unsatisfiable == spec::WhenUnsatisfiable::DoNotSchedule
                && c.min_domains > 1)
                .then_some(c.min_domains),
            node_affinity_policy: Some(if c.honor_node_affinity { Honor } else { Ignore }),
            node_taints_policy: Some(if c.honor_node_taints { Honor } else { Ignore }),
            match_label_keys: Vec::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::{Builder, Node, Pod as FixturePod, Template};

    /// Node 1 has 8 CPUs and 8 of memory, 3 and 5 of them free, and runs a pod whose
    /// template requests 2 and 2: 3 CPUs and 1 of memory are reserved, carried as one pod of
    /// `kube-system` bound to it that no preemption can take. Node 2's free amounts are its
    /// capacity: nothing reserved, no such pod.
    #[test]
    fn a_nodes_reserved_load_is_a_system_pod_bound_to_it() {
        let fixture = Builder::default()
            .node(Node::new(1, 8, 8).holding(1, 3, 5))
            .node(Node::new(2, 4, 4))
            .pod(FixturePod::running(1, 2, 2))
            .template(Template::new(2, 2, "app", "web"))
            .build();
        let node = fixture.spec.node(1);
        assert_eq!((node.reserved_cpu, node.reserved_memory), (3, 1));
        let snapshot = snapshot(&fixture.spec, &fixture.state);
        let reserved: Vec<&Pod> = snapshot
            .pods
            .iter()
            .filter(|p| p.namespace == RESERVED_NAMESPACE)
            .collect();
        assert_eq!(reserved.len(), 1);
        let pod = reserved[0];
        assert_eq!(pod.name, "reserved-node-1");
        assert_eq!(pod.node_name.as_deref(), Some("node-1"));
        assert_eq!(pod.containers[0].requests, requests(&fixture.spec, 3, 1));
        assert_eq!(pod.priority, SYSTEM_NODE_CRITICAL);
        assert!(pod.controller.is_none());
        assert_eq!(pod_id(&pod.name), None, "not a model pod");
    }

    /// A template in namespace `team` puts its pods, their deployment's ReplicaSets and a
    /// budget of that deployment in `team`; a pod without template is in `default`.
    #[test]
    fn pods_replica_sets_and_budgets_are_in_their_templates_namespace() {
        let mut fixture = Builder::default()
            .node(Node::new(1, 8, 8))
            .pod(FixturePod::running(1, 2, 2))
            .pod(FixturePod::running(1, 1, 1))
            .template(Template::new(2, 2, "app", "web").namespace("team"))
            .deployment(crate::cluster::fixture::Deployment::new(1, 1, &[1]))
            .build();
        fixture.state.pod_mut(2).template = 0;
        fixture.spec.pdbs = vec![DisruptionBudget {
            name: "web".into(),
            namespace: "team".into(),
            deployments: vec![1],
            pods: Vec::new(),
            min_available: None,
            max_unavailable: None,
        }];
        let snapshot = snapshot(&fixture.spec, &fixture.state);
        let namespace_of = |name: &str| {
            let pod = snapshot.pods.iter().find(|p| p.name == name).unwrap();
            pod.namespace.clone()
        };
        assert_eq!(namespace_of("pod-1"), "team");
        assert_eq!(namespace_of("pod-2"), "default");
        assert_eq!(pod_namespace(&fixture.spec, &fixture.state, 1), "team");
        assert!(snapshot
            .selector_owners
            .iter()
            .all(|o| o.namespace == "team"));
        let budgets = budgets(&fixture.spec, &fixture.state);
        assert_eq!(budgets[0].namespace, "team");
    }

    /// A budget over deployment 1's two pods and the bare pod 3: the disruption controller
    /// counts the bare pod with an integer `minAvailable`, fails safe when it needs the scale,
    /// and the snapshot's budget selects all three pods.
    #[test]
    fn a_bare_pod_counts_in_its_budget_and_has_no_scale() {
        use crate::cluster::kube::IntOrPercent::Int;
        use crate::cluster::kube::Selector;
        let mut fixture = Builder::default()
            .node(Node::new(1, 8, 8))
            .pod(FixturePod::running(1, 1, 1))
            .pod(FixturePod::running(1, 1, 1))
            .pod(FixturePod::running(1, 1, 1))
            .template(Template::new(1, 1, "app", "web"))
            .deployment(crate::cluster::fixture::Deployment::new(1, 2, &[1, 2]))
            .build();
        let bare = fixture.state.pod_mut(3);
        bare.owned = false;
        bare.deployment = 0;
        let budget = |min_available, max_unavailable| DisruptionBudget {
            name: "web".into(),
            namespace: "default".into(),
            deployments: vec![1],
            pods: vec![3],
            min_available,
            max_unavailable,
        };
        let status = budget_status(&fixture.state, &budget(Some(Int(2)), None));
        assert_eq!(
            (
                status.expected_pods,
                status.current_healthy,
                status.disruptions_allowed
            ),
            (3, 3, 1)
        );
        let fail_safe = DisruptionStatus {
            current_healthy: 3,
            ..DisruptionStatus::default()
        };
        assert_eq!(
            budget_status(&fixture.state, &budget(None, Some(Int(1)))),
            fail_safe
        );
        // Once the bare pod is gone, the scale is the deployment's again.
        fixture.state.pod_mut(3).phase = Phase::Idle;
        let status = budget_status(&fixture.state, &budget(None, Some(Int(1))));
        assert_eq!(status.current_healthy, 2);
        assert_ne!(
            status,
            DisruptionStatus {
                current_healthy: 2,
                ..fail_safe
            }
        );
        fixture.state.pod_mut(3).phase = Phase::Running;
        fixture.spec.pdbs = vec![budget(Some(Int(2)), None)];
        let snapshot = snapshot(&fixture.spec, &fixture.state);
        let budgets = budgets(&fixture.spec, &fixture.state);
        let selector = Selector::from_label_selector(budgets[0].selector.as_ref());
        let selected: Vec<&str> = snapshot
            .pods
            .iter()
            .filter(|p| selector.matches(&p.labels))
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(selected, ["pod-1", "pod-2", "pod-3"]);
    }

    /// The pods of a node that is not ready are not ready (`MarkPodsNotReady`).
    #[test]
    fn pods_of_a_node_that_is_not_ready_are_not_ready() {
        let mut fixture = Builder::default()
            .node(Node::new(1, 8, 8))
            .node(Node::new(2, 8, 8))
            .pod(FixturePod::running(1, 1, 1))
            .pod(FixturePod::running(2, 1, 1))
            .template(Template::new(1, 1, "app", "web"))
            .deployment(crate::cluster::fixture::Deployment::new(1, 2, &[1, 2]))
            .build();
        fixture.state.node_mut(2).status = NodeStatus::NotReady;
        let ready = |p| pod(&fixture.spec, &fixture.state, p).unwrap().ready;
        assert!(ready(1));
        assert!(!ready(2));
    }
}
