//! The mutable part of a cluster: what controllers and events change, hashed and stored per
//! state.
//!
//! # Layout
//!
//! A successor state is a clone of its parent plus a few edits, and the search makes one per
//! transition, so the cost of a clone is the cost of a step. The per-entity tables are therefore
//! sized by the [`ClusterSpec`](super::ClusterSpec), not by the maxima below: [`ClusterState`]
//! holds boxed slices with exactly one [`NodeState`] per node, one [`PodState`] per pod slot and
//! one [`DeploymentState`] per deployment, and each [`WorkQueue`] keeps only its pending ids on
//! the heap (an empty queue, the usual case, clones without allocating). A clone copies the few
//! hundred bytes a case uses instead of the kilobytes that [`MAX_PODS`] slots would take; what
//! stays inline is small and bounded by the event, intent and node maxima.
//!
//! [`ClusterState::encode`] copies the node and pod tables as they lie in memory (both are
//! packed records of plain bytes), writes each deployment as one fixed-width record of
//! little-endian fields, then the queues' lengths and pending ids and the small inline tables.

use bytemuck::NoUninit;

/// Most nodes a cluster may have.
pub const MAX_NODES: usize = 64;
/// Most pod slots a cluster may have (pod ids are bytes, as in Kivi without `MORE_PODS`).
pub const MAX_PODS: usize = 255;
/// Most deployments a cluster may have.
pub const MAX_DEPLOYMENTS: usize = 8;
/// Most events and user commands an input may list.
pub const MAX_EVENTS: usize = 16;
/// Most intents an input may list (including the implicit `pod_always_schedulable`).
pub const MAX_INTENTS: usize = 16;

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
    /// Drained: not ready until the cluster settles or the wait time has passed.
    Draining = 2,
}

/// Mutable node fields.
///
/// Packed, without padding, and made of plain bytes: the canonical encoding of the node table
/// is its memory, copied in one go ([`ClusterState::encode`]).
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
    /// The node's part in a maintenance event.
    pub maintenance: MaintenancePhase,
    /// Time since the node's drain started, saturated at the maintenance wait time.
    pub maintenance_elapsed: u16,
}

/// Mutable pod fields.
///
/// Packed, without padding, and made of plain bytes: the canonical encoding of the pod table
/// is its memory, copied in one go ([`ClusterState::encode`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, NoUninit)]
#[repr(C, packed)]
pub struct PodState {
    /// Node id the pod is bound to (0 = none).
    pub loc: u8,
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
}

/// A set of pod ids, kept in ascending order as Kivi keeps a replica set's `podIds`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PodSet([u64; MAX_PODS.div_ceil(64)]);

impl PodSet {
    /// Whether pod `id` is a member.
    pub fn contains(&self, id: usize) -> bool {
        self.0[(id - 1) / 64] & (1 << ((id - 1) % 64)) != 0
    }

    /// Adds pod `id`.
    pub fn insert(&mut self, id: usize) {
        self.0[(id - 1) / 64] |= 1 << ((id - 1) % 64);
    }

    /// Removes pod `id`; whether it was a member.
    pub fn remove(&mut self, id: usize) -> bool {
        let was = self.contains(id);
        self.0[(id - 1) / 64] &= !(1 << ((id - 1) % 64));
        was
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// The members in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(i, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    i * 64 + bit + 1
                })
            })
        })
    }

    /// Fills `out` with the low bytes of the bit mask, pod 1 in bit 0 of the first byte.
    fn encode(&self, out: &mut [u8]) {
        let bytes = self.0.iter().flat_map(|word| word.to_le_bytes());
        for (slot, byte) in out.iter_mut().zip(bytes) {
            *slot = byte;
        }
    }
}

/// Mutable replica set fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ReplicaSetState {
    /// The replica set's desired replicas.
    pub spec_replicas: i16,
    /// Member pods, in Kivi's ascending `podIds` order.
    pub pods: PodSet,
}

impl ReplicaSetState {
    /// Number of member pods (Kivi's `replicas`).
    pub fn replicas(&self) -> i32 {
        self.pods.len() as i32
    }

    /// The pod id at position `index` of the ascending member list, if any.
    pub fn pod_at(&self, index: usize) -> Option<usize> {
        self.pods.iter().nth(index)
    }
}

/// Mutable deployment fields (including what `kubectl apply` can change).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DeploymentState {
    /// Whether the deployment exists.
    pub active: bool,
    /// Which replica set (0 or 1) is current.
    pub cur_version: u8,
    /// Desired replicas.
    pub spec_replicas: i16,
    /// Running or terminating replicas over both replica sets.
    pub replicas: i16,
    /// Pods created and not yet started.
    pub in_creation: i16,
    /// Pods marked for deletion and not yet removed.
    pub in_deletion: i16,
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
}

impl DeploymentState {
    /// The current replica set.
    pub fn current(&self) -> &ReplicaSetState {
        &self.replica_sets[self.cur_version as usize]
    }
}

/// A controller's work queue: pending ids in FIFO order, without duplicates (Kivi's
/// `updateQueue` skips items already pending).
///
/// The ids live on the heap and only while pending, so an empty queue (the common case) costs
/// nothing to clone and a busy one only its pending ids.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct WorkQueue {
    items: Vec<u8>,
}

impl WorkQueue {
    /// Appends `id` unless it is already pending.
    pub fn push(&mut self, id: usize) {
        let id = id as u8;
        if !self.items.contains(&id) {
            self.items.push(id);
        }
    }

    /// Removes and returns the oldest pending id.
    pub fn pop(&mut self) -> Option<usize> {
        if self.items.is_empty() {
            return None;
        }
        Some(self.items.remove(0) as usize)
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The pending ids, oldest first.
    pub fn pending(&self) -> &[u8] {
        &self.items
    }
}

/// Kivi's logical clock, reduced to what the enabling conditions can observe.
///
/// Kivi keeps one ever-growing `time` and, per periodic process, the `time` it last ran; a
/// process may fire when the difference reaches its period. Only those differences are ever
/// compared, and only against the period, so each is kept here as "time since", saturated at the
/// period: two states that differ only beyond saturation enable exactly the same steps. This keeps
/// oscillating runs finite without changing any verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Clock {
    /// Time since the HPA last ran, saturated at its wait period.
    pub hpa_idle: u16,
    /// Time since the descheduler last ran, saturated at its period.
    pub descheduler_idle: u16,
    /// Per event: time since it was started, saturated at its period.
    pub event_idle: [u16; MAX_EVENTS],
}

/// Bookkeeping of events and user commands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EventsState {
    /// Bit `i`: event `i` has run (each runs once).
    pub done: u16,
    /// Whether the cluster became quiet and the `after_stable` events were started.
    pub after_stable_started: bool,
    /// Per event: how far a multi-step event has got (the next node a maintenance event
    /// considers, or the steps of a node failure taken).
    pub progress: [u8; MAX_EVENTS],
}

/// The descheduler's eviction counts. As in Kivi they are never reset, and they are kept only
/// while a limit below 256 makes them observable (Kivi's byte counters can never exceed a
/// larger limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EvictionCounts {
    /// Pods evicted per node (index = node id - 1).
    pub per_node: [u8; MAX_NODES],
    /// Pods evicted in the (single) namespace.
    pub namespace: u8,
}

impl Default for EvictionCounts {
    fn default() -> Self {
        Self {
            per_node: [0; MAX_NODES],
            namespace: 0,
        }
    }
}

/// The intent monitors' variables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MonitorState {
    /// Per intent: its stage (monitors that wait for a precondition first).
    pub stage: [u8; MAX_INTENTS],
    /// Bit `i`: intent `i` has been violated.
    pub violated: u16,
}

/// One state of the cluster: the mutable part only.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClusterState {
    /// Nodes by id - 1, one per node of the spec.
    pub nodes: Box<[NodeState]>,
    /// Pods by id - 1, one per pod slot of the spec.
    pub pods: Box<[PodState]>,
    /// Deployments by id - 1, one per deployment of the spec.
    pub deployments: Box<[DeploymentState]>,
    /// Pods waiting for the scheduler.
    pub scheduler_queue: WorkQueue,
    /// Pods waiting for the kubelet (to start or to remove).
    pub kubelet_queue: WorkQueue,
    /// Deployments waiting for the deployment controller.
    pub deployment_queue: WorkQueue,
    /// Deployments waiting for the HPA.
    pub hpa_queue: WorkQueue,
    /// Nodes waiting for the node controller.
    pub node_queue: WorkQueue,
    /// Deployments waiting for the descheduler.
    pub descheduler_queue: WorkQueue,
    /// Pods waiting for the taint manager.
    pub taint_queue: WorkQueue,
    /// The descheduler's eviction counts.
    pub evictions: EvictionCounts,
    /// The logical clock.
    pub clock: Clock,
    /// Events and user commands.
    pub events: EventsState,
    /// Intent monitors.
    pub monitors: MonitorState,
}

impl ClusterState {
    /// A state of `nodes` nodes, `pods` pod slots and `deployments` deployments, all at their
    /// defaults, with empty queues, clock, events and monitors.
    pub fn new(nodes: usize, pods: usize, deployments: usize) -> Self {
        Self {
            nodes: vec![NodeState::default(); nodes].into_boxed_slice(),
            pods: vec![PodState::default(); pods].into_boxed_slice(),
            deployments: vec![DeploymentState::default(); deployments].into_boxed_slice(),
            scheduler_queue: WorkQueue::default(),
            kubelet_queue: WorkQueue::default(),
            deployment_queue: WorkQueue::default(),
            hpa_queue: WorkQueue::default(),
            node_queue: WorkQueue::default(),
            descheduler_queue: WorkQueue::default(),
            taint_queue: WorkQueue::default(),
            evictions: EvictionCounts::default(),
            clock: Clock::default(),
            events: EventsState::default(),
            monitors: MonitorState::default(),
        }
    }

    /// Bytes the state owns on the heap: its tables and its queues' pending ids.
    pub fn heap_bytes(&self) -> usize {
        let queues = [
            &self.scheduler_queue,
            &self.kubelet_queue,
            &self.deployment_queue,
            &self.hpa_queue,
            &self.node_queue,
            &self.descheduler_queue,
            &self.taint_queue,
        ];
        std::mem::size_of_val(&*self.nodes)
            + std::mem::size_of_val(&*self.pods)
            + std::mem::size_of_val(&*self.deployments)
            + queues.iter().map(|q| q.items.capacity()).sum::<usize>()
    }

    /// Node with id `id` (1-based).
    pub fn node(&self, id: usize) -> &NodeState {
        &self.nodes[id - 1]
    }

    /// Mutable node with id `id` (1-based).
    pub fn node_mut(&mut self, id: usize) -> &mut NodeState {
        &mut self.nodes[id - 1]
    }

    /// Pod with id `id` (1-based).
    pub fn pod(&self, id: usize) -> &PodState {
        &self.pods[id - 1]
    }

    /// Mutable pod with id `id` (1-based).
    pub fn pod_mut(&mut self, id: usize) -> &mut PodState {
        &mut self.pods[id - 1]
    }

    /// Deployment with id `id` (1-based).
    pub fn deployment(&self, id: usize) -> &DeploymentState {
        &self.deployments[id - 1]
    }

    /// Mutable deployment with id `id` (1-based).
    pub fn deployment_mut(&mut self, id: usize) -> &mut DeploymentState {
        &mut self.deployments[id - 1]
    }

    /// Kivi's "cluster is stable" test: no work pending for the node controller, HPA,
    /// scheduler, kubelet or deployment controller.
    pub fn is_quiet(&self) -> bool {
        self.hpa_queue.is_empty() && self.others_quiet()
    }

    /// The HPA's view of a quiet cluster: no work pending for the node controller, scheduler,
    /// kubelet or deployment controller (its own queue does not count).
    pub fn others_quiet(&self) -> bool {
        self.node_queue.is_empty()
            && self.scheduler_queue.is_empty()
            && self.kubelet_queue.is_empty()
            && self.deployment_queue.is_empty()
    }

    /// Writes the canonical encoding: every field that can differ between reachable states, in
    /// a fixed order, with the first `events` event and `intents` intent entries. The node and
    /// pod tables are copied as they lie in memory (packed plain bytes), each deployment is one
    /// fixed-width record, and each queue its length and pending ids, so equal states give
    /// equal bytes and different states different bytes.
    pub fn encode(&self, events: usize, intents: usize, out: &mut Vec<u8>) {
        let set_bytes = self.pods.len().div_ceil(8);
        let queues = [
            &self.scheduler_queue,
            &self.kubelet_queue,
            &self.deployment_queue,
            &self.hpa_queue,
            &self.node_queue,
            &self.descheduler_queue,
            &self.taint_queue,
        ];
        let node_bytes: &[u8] = bytemuck::cast_slice(&self.nodes);
        let pod_bytes: &[u8] = bytemuck::cast_slice(&self.pods);
        let len = node_bytes.len()
            + self.nodes.len()
            + pod_bytes.len()
            + self.deployments.len() * (DEPLOYMENT_BYTES + 2 * (2 + set_bytes))
            + queues.iter().map(|q| 1 + q.items.len()).sum::<usize>()
            + 3 * events
            + intents
            + 10;
        let start = out.len();
        out.resize(start + len, 0);
        let mut w = Writer(&mut out[start..]);
        w.put(node_bytes);
        w.put(pod_bytes);
        for d in self.deployments.iter() {
            w.put(&d.encoded());
            for rs in &d.replica_sets {
                w.put(&rs.spec_replicas.to_le_bytes());
                rs.pods.encode(w.take(set_bytes));
            }
        }
        for q in queues {
            w.put(&[q.items.len() as u8]);
            w.put(&q.items);
        }
        w.put(&self.evictions.per_node[..self.nodes.len()]);
        w.put(&[self.evictions.namespace]);
        w.put(&self.clock.hpa_idle.to_le_bytes());
        w.put(&self.clock.descheduler_idle.to_le_bytes());
        for idle in &self.clock.event_idle[..events] {
            w.put(&idle.to_le_bytes());
        }
        w.put(&self.events.done.to_le_bytes());
        w.put(&[self.events.after_stable_started as u8]);
        w.put(&self.events.progress[..events]);
        w.put(&self.monitors.stage[..intents]);
        w.put(&self.monitors.violated.to_le_bytes());
        debug_assert!(w.0.is_empty(), "encode wrote its computed length");
    }
}

/// Fills a pre-sized buffer front to back.
struct Writer<'a>(&'a mut [u8]);

impl<'a> Writer<'a> {
    /// The next `n` bytes, which the writer moves past.
    fn take(&mut self, n: usize) -> &'a mut [u8] {
        let (head, rest) = std::mem::take(&mut self.0).split_at_mut(n);
        self.0 = rest;
        head
    }

    /// Writes `bytes` next.
    fn put(&mut self, bytes: &[u8]) {
        self.take(bytes.len()).copy_from_slice(bytes);
    }
}

/// Bytes of a deployment's record in [`ClusterState::encode`], without its replica sets.
const DEPLOYMENT_BYTES: usize = 14;

impl DeploymentState {
    fn encoded(&self) -> [u8; DEPLOYMENT_BYTES] {
        let [s0, s1] = self.spec_replicas.to_le_bytes();
        let [r0, r1] = self.replicas.to_le_bytes();
        let [c0, c1] = self.in_creation.to_le_bytes();
        let [d0, d1] = self.in_deletion.to_le_bytes();
        let flags = self.active as u8
            | self.cur_version << 1
            | (self.strategy as u8) << 2
            | (self.evicted as u8) << 3
            | (self.added as u8) << 4
            | (self.added_for_balance as u8) << 5;
        [
            flags,
            s0,
            s1,
            r0,
            r1,
            c0,
            c1,
            d0,
            d1,
            self.template,
            self.max_surge,
            self.max_unavailable,
            self.hpa,
            self.hpa_targets,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_is_fifo_without_duplicates() {
        let mut q = WorkQueue::default();
        q.push(3);
        q.push(1);
        q.push(3);
        assert_eq!(q.pending(), &[3, 1]);
        assert_eq!(q.pop(), Some(3));
        q.push(3);
        assert_eq!(q.pending(), &[1, 3]);
    }

    #[test]
    fn replica_set_members_are_indexed_in_ascending_order() {
        let mut rs = ReplicaSetState::default();
        for id in [200, 5, 70, 8, 6] {
            rs.pods.insert(id);
        }
        assert!(rs.pods.remove(6));
        assert!(!rs.pods.remove(6));
        assert_eq!(rs.replicas(), 4);
        assert_eq!(rs.pods.iter().collect::<Vec<_>>(), [5, 8, 70, 200]);
        assert_eq!(rs.pod_at(0), Some(5));
        assert_eq!(rs.pod_at(3), Some(200));
        assert_eq!(rs.pod_at(4), None);
        let mut out = [0; 2];
        rs.pods.encode(&mut out);
        assert_eq!(out, [0b1001_0000, 0]);
    }
}
