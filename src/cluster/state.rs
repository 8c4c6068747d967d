//! The mutable part of a cluster: what controllers and events change, hashed and stored per
//! state.
//!
//! # Layout
//!
//! The search makes one successor per transition, a copy of its parent plus a few edits, so
//! the cost of a state is the cost of a step. A state is therefore laid out to be copied and
//! hashed in as few passes as its contents allow, at any cluster size:
//!
//! - **One buffer.** The fields that do not grow with the cluster (clock, events, intent
//!   monitors, perturbations: 92 bytes) lead, and every node, pod slot and deployment follows as a packed
//!   record of plain bytes ([`NodeState`], [`PodState`], [`DeploymentState`]), the three tables
//!   back to back, sized by the spec. Copying a state is one allocation and one copy; its
//!   canonical encoding starts with that buffer as it lies in memory; and the state itself is
//!   small (about a hundred bytes), so the search moves it cheaply.
//! - **Membership in the records.** Which replica set a pod belongs to, and which work queues
//!   hold it, are bytes of its own record, with the replica sets' sizes kept in the deployment
//!   record: nothing in a state is sized by the model's limits rather than by the cluster.
//! - **One buffer of queues.** The controllers' seven work queues are segments of one vector
//!   of ids (empty, and so not allocated, in most states), with O(1) pops and O(1) duplicate
//!   checks (a queue flag in the pod or node record).
//!
//! At 5,000 nodes and 150,000 pod slots a state is about 2.5 MB: 13 bytes a node, 16 a pod
//! slot, 43 a deployment, plus the ids pending in queues.

use bytemuck::NoUninit;

/// Most nodes a cluster may have: Kubernetes' documented largest cluster.
pub const MAX_NODES: usize = 5_000;
/// Most pod slots a cluster may have: Kubernetes' documented largest cluster.
pub const MAX_PODS: usize = 150_000;
/// Most deployments a cluster may have (deployment ids are bytes).
pub const MAX_DEPLOYMENTS: usize = 255;
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
    /// The node's part in a maintenance event.
    pub maintenance: MaintenancePhase,
    /// Time since the node's drain started, saturated at the maintenance wait time.
    pub maintenance_elapsed: u16,
    /// Pods the descheduler has evicted from the node (kept only while a limit below 256
    /// makes the count observable, as Kivi's byte counters).
    pub evictions: u8,
    /// Whether the node waits in the node controller's queue.
    pub queued: bool,
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
struct Header {
    clock: Clock,
    monitors: MonitorState,
    events: EventsState,
    /// Pods the descheduler has evicted in the (single) namespace, kept like the per-node
    /// counts.
    namespace_evictions: u8,
    perturbations: PerturbationState,
}

/// A controller's work queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Queue {
    /// Deployments waiting for the deployment controller.
    Deployment = 0,
    /// Deployments waiting for the HPA.
    Hpa = 1,
    /// Nodes waiting for the node controller.
    Node = 2,
    /// Deployments waiting for the descheduler.
    Descheduler = 3,
    /// Pods waiting for the taint manager.
    Taint = 4,
    /// Pods waiting for the kubelet (to start or to remove).
    Kubelet = 5,
    /// Pods waiting for the scheduler.
    Scheduler = 6,
}

/// The queues, in the order of their segments.
const QUEUES: [Queue; 7] = [
    Queue::Deployment,
    Queue::Hpa,
    Queue::Node,
    Queue::Descheduler,
    Queue::Taint,
    Queue::Kubelet,
    Queue::Scheduler,
];

/// The seven work queues: pending ids in FIFO order without duplicates (Kivi's `updateQueue`
/// skips items already pending), as segments of one vector. Segment `k` holds
/// `items[start(k)..ends[k]]`, of which the first `heads[k] - start(k)` were popped already;
/// popping moves the head, and a segment is compacted when it runs empty. The pod queues,
/// whose lengths grow with the cluster, come last, the scheduler's (appended to in bulk by
/// the deployment controller) at the very end.
///
/// The segments' `ends` and `heads` lead the same vector, and the vector is empty (not
/// allocated) while every queue is: a state carries one pointer-sized handle for its queues,
/// so that the search moves states cheaply.
#[derive(Debug, Default)]
struct Queues {
    /// Empty, or `ends` (7), `heads` (7), then the ids.
    data: Vec<u32>,
}

/// The number of queues.
const QUEUE_COUNT: usize = QUEUES.len();
/// Where the ids start in [`Queues::data`], after `ends` and `heads`.
const QUEUE_IDS: usize = 2 * QUEUE_COUNT;
/// The bookkeeping of empty queues: every end and head at 0.
const NO_BOOKKEEPING: [u32; QUEUE_IDS] = [0; QUEUE_IDS];

/// Room for this many more ids that a copy of non-empty queues keeps, so that the step that
/// follows the copy can queue a few ids without growing the vector (a copy is made for every
/// successor state, and most steps queue an id or two).
const QUEUE_HEADROOM: usize = 8;

impl Clone for Queues {
    fn clone(&self) -> Self {
        let mut data = Vec::new();
        if !self.data.is_empty() {
            data.reserve_exact(self.data.len() + QUEUE_HEADROOM);
            data.extend_from_slice(&self.data);
        }
        Self { data }
    }

    /// Copies `source` into this vector's allocation.
    fn clone_from(&mut self, source: &Self) {
        self.data.clear();
        self.data.extend_from_slice(&source.data);
    }
}

impl Queues {
    /// The segments' ends, then their heads.
    fn bookkeeping(&self) -> &[u32] {
        if self.data.is_empty() {
            &NO_BOOKKEEPING
        } else {
            &self.data[..QUEUE_IDS]
        }
    }

    /// Each segment's end (cumulative).
    fn ends(&self) -> &[u32] {
        &self.bookkeeping()[..QUEUE_COUNT]
    }

    fn end(&self, k: usize) -> usize {
        self.bookkeeping()[k] as usize
    }

    fn head(&self, k: usize) -> usize {
        self.bookkeeping()[QUEUE_COUNT + k] as usize
    }

    /// The ids, segment after segment.
    fn items(&self) -> &[u32] {
        self.data.get(QUEUE_IDS..).unwrap_or(&[])
    }

    /// The bookkeeping and ids, allocated if they were not.
    fn data_mut(&mut self) -> &mut Vec<u32> {
        if self.data.is_empty() {
            self.data.extend_from_slice(&NO_BOOKKEEPING);
        }
        &mut self.data
    }

    /// Adds `by` to the ends of segments `k..` and the heads of segments `k + 1..`.
    fn shift(&mut self, k: usize, by: i32) {
        let data = self.data_mut();
        for end in &mut data[k..QUEUE_COUNT] {
            *end = end.wrapping_add_signed(by);
        }
        for head in &mut data[QUEUE_COUNT + k + 1..QUEUE_IDS] {
            *head = head.wrapping_add_signed(by);
        }
    }

    fn start(&self, k: usize) -> usize {
        if k == 0 {
            0
        } else {
            self.end(k - 1)
        }
    }

    fn is_empty(&self, k: usize) -> bool {
        self.head(k) == self.end(k)
    }

    fn pending(&self, k: usize) -> &[u32] {
        &self.items()[self.head(k)..self.end(k)]
    }

    /// Whether `id` is pending in segment `k`.
    fn contains(&self, k: usize, id: u32) -> bool {
        let Some(bookkeeping) = self.data.get(..QUEUE_IDS) else {
            return false;
        };
        let (head, end) = (bookkeeping[QUEUE_COUNT + k], bookkeeping[k]);
        self.data[QUEUE_IDS + head as usize..QUEUE_IDS + end as usize].contains(&id)
    }

    fn push(&mut self, k: usize, id: u32) {
        let data = self.data_mut();
        let at = QUEUE_IDS + data[k] as usize;
        data.insert(at, id);
        self.shift(k, 1);
    }

    fn pop(&mut self, k: usize) -> Option<u32> {
        // Read and move the head in one borrow of the vector (unallocated: every queue empty).
        let data = &mut self.data[..];
        let (head, end) = (*data.get(QUEUE_COUNT + k)? as usize, data[k]);
        if head == end as usize {
            return None;
        }
        let id = data[QUEUE_IDS + head];
        data[QUEUE_COUNT + k] += 1;
        if head + 1 == end as usize {
            self.clear(k);
        }
        Some(id)
    }

    /// Drops segment `k` (popped or not), shifting the later segments down; the vector is
    /// emptied when no id is left.
    fn clear(&mut self, k: usize) {
        let (start, end) = (self.start(k), self.end(k));
        if self.data.is_empty() {
            return;
        }
        if end > start {
            self.data.drain(QUEUE_IDS + start..QUEUE_IDS + end);
            self.shift(k, -((end - start) as i32));
        }
        self.data[QUEUE_COUNT + k] = start as u32;
        if self.data.len() == QUEUE_IDS {
            self.data.clear();
        }
    }

    /// Removes `id` from the pending part of segment `k`; whether it was there.
    fn remove(&mut self, k: usize, id: u32) -> bool {
        let Some(offset) = self.pending(k).iter().position(|&x| x == id) else {
            return false;
        };
        let at = QUEUE_IDS + self.head(k) + offset;
        self.data.remove(at);
        self.shift(k, -1);
        if self.is_empty(k) {
            self.clear(k);
        }
        true
    }

    /// Whether every queue holds the same pending ids as in `other`.
    fn same_as(&self, other: &Queues) -> bool {
        (0..QUEUE_COUNT).all(|k| self.pending(k) == other.pending(k))
    }

    /// Whether no queue holds an id (popped segments are dropped as they run empty).
    fn all_empty(&self) -> bool {
        self.items().is_empty()
    }

    /// Whether no segment keeps popped ids: the ids are then exactly the pending ids, queue
    /// after queue, and the ends their cumulative counts.
    fn is_compact(&self) -> bool {
        (0..QUEUE_COUNT).all(|k| self.head(k) == self.start(k))
    }
}

/// Byte sizes of the header and the three kinds of record.
const HEADER_BYTES: usize = std::mem::size_of::<Header>();
const NODE_BYTES: usize = std::mem::size_of::<NodeState>();
const POD_BYTES: usize = std::mem::size_of::<PodState>();
const DEPLOYMENT_BYTES: usize = std::mem::size_of::<DeploymentState>();

/// One state of the cluster: the mutable part only (see the module documentation).
pub struct ClusterState {
    /// The header, then the node, pod and deployment records, back to back; kept as `u16`s
    /// so that the header is aligned, with a zero byte at the end when the records' total is
    /// odd.
    buffer: Box<[u16]>,
    nodes: u32,
    pods: u32,
    deployments: u32,
    /// Copies of the record tables kept after them (`--perturb stale-view`; 0 otherwise).
    views: u32,
    queues: Queues,
}

impl Clone for ClusterState {
    fn clone(&self) -> Self {
        Self {
            buffer: self.buffer.clone(),
            nodes: self.nodes,
            pods: self.pods,
            deployments: self.deployments,
            views: self.views,
            queues: self.queues.clone(),
        }
    }

    /// Copies `source` into this state's allocations when they fit (a state of the same
    /// cluster always does), so that a search that reuses spent states allocates nothing.
    fn clone_from(&mut self, source: &Self) {
        self.buffer.clone_from(&source.buffer);
        self.nodes = source.nodes;
        self.pods = source.pods;
        self.deployments = source.deployments;
        self.views = source.views;
        self.queues.clone_from(&source.queues);
    }
}

impl ClusterState {
    /// A state of `nodes` nodes, `pods` pod slots and `deployments` deployments, all at their
    /// defaults, with empty queues, clock, events and monitors.
    pub fn new(nodes: usize, pods: usize, deployments: usize) -> Self {
        let mut bytes = Vec::with_capacity(
            HEADER_BYTES
                + nodes * NODE_BYTES
                + pods * POD_BYTES
                + deployments * DEPLOYMENT_BYTES
                + 1,
        );
        bytes.extend_from_slice(bytemuck::bytes_of(&Header::default()));
        for _ in 0..nodes {
            bytes.extend_from_slice(bytemuck::bytes_of(&NodeState::default()));
        }
        for _ in 0..pods {
            bytes.extend_from_slice(bytemuck::bytes_of(&PodState::default()));
        }
        for _ in 0..deployments {
            bytes.extend_from_slice(bytemuck::bytes_of(&DeploymentState::default()));
        }
        if bytes.len() % 2 == 1 {
            bytes.push(0);
        }
        let buffer = bytes
            .chunks_exact(2)
            .map(|pair| u16::from_ne_bytes([pair[0], pair[1]]))
            .collect();
        Self {
            buffer,
            nodes: nodes as u32,
            pods: pods as u32,
            deployments: deployments as u32,
            views: 0,
            queues: Queues::default(),
        }
    }

    /// Bytes of the record tables (nodes, pods, deployments).
    fn records_bytes(&self) -> usize {
        self.nodes as usize * NODE_BYTES
            + self.pods as usize * POD_BYTES
            + self.deployments as usize * DEPLOYMENT_BYTES
    }

    /// The record tables as bytes, as they lie in the buffer.
    pub fn records_as_bytes(&self) -> &[u8] {
        &self.bytes()[HEADER_BYTES..HEADER_BYTES + self.records_bytes()]
    }

    /// Overwrites the record tables with `records` (bytes of another state of this cluster,
    /// from [`ClusterState::records_as_bytes`] or [`ClusterState::view`]).
    pub fn load_records(&mut self, records: &[u8]) {
        let end = HEADER_BYTES + self.records_bytes();
        self.bytes_mut()[HEADER_BYTES..end].copy_from_slice(records);
    }

    /// Makes room for `views` copies of the record tables after them, each starting as a copy
    /// of the tables as they are now (`--perturb stale-view`: what a controller's informer
    /// cache showed; the copies are part of the state, hashed and compared with it).
    pub fn keep_views(&mut self, views: usize) {
        let records = self.records_as_bytes().to_vec();
        let mut bytes = self.bytes()[..HEADER_BYTES + records.len()].to_vec();
        for _ in 0..views {
            bytes.extend_from_slice(&records);
        }
        if bytes.len() % 2 == 1 {
            bytes.push(0);
        }
        self.buffer = bytes
            .chunks_exact(2)
            .map(|pair| u16::from_ne_bytes([pair[0], pair[1]]))
            .collect();
        self.views = views as u32;
    }

    /// The number of views kept.
    pub fn views(&self) -> usize {
        self.views as usize
    }

    /// View `slot`'s record tables as bytes.
    pub fn view(&self, slot: usize) -> &[u8] {
        let size = self.records_bytes();
        let start = HEADER_BYTES + size * (1 + slot);
        &self.bytes()[start..start + size]
    }

    /// Copies view `from` into view `to`.
    pub fn copy_view(&mut self, from: usize, to: usize) {
        let size = self.records_bytes();
        let start = |slot: usize| HEADER_BYTES + size * (1 + slot);
        let (from, to) = (start(from), start(to));
        self.bytes_mut().copy_within(from..from + size, to);
    }

    /// Clears every view (to zeros): once no view can be used again, states that differ only
    /// in their views are the same.
    pub fn clear_views(&mut self) {
        let start = HEADER_BYTES + self.records_bytes();
        let end = start + self.records_bytes() * self.views as usize;
        self.bytes_mut()[start..end].fill(0);
    }

    /// Makes view `slot` a copy of the record tables as they are now.
    pub fn save_view(&mut self, slot: usize) {
        let size = self.records_bytes();
        let to = HEADER_BYTES + size * (1 + slot);
        self.bytes_mut()
            .copy_within(HEADER_BYTES..HEADER_BYTES + size, to);
    }

    /// The buffer as bytes: the header and the records as they lie in memory.
    fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.buffer)
    }

    /// The buffer as bytes, mutable (only for the typed views below).
    fn bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(&mut self.buffer)
    }

    fn header(&self) -> &Header {
        // SAFETY: the buffer starts with a `Header` written from a valid value in `new` and
        // changed only through `&mut Header` views, which keep it valid; the buffer's `u16`
        // elements align it to 2, `Header`'s alignment.
        unsafe { &*self.buffer.as_ptr().cast::<Header>() }
    }

    fn header_mut(&mut self) -> &mut Header {
        // SAFETY: as in `header`; the exclusive borrow of `self` makes the view unique.
        unsafe { &mut *self.buffer.as_mut_ptr().cast::<Header>() }
    }

    /// The logical clock.
    pub fn clock(&self) -> &Clock {
        &self.header().clock
    }

    /// The logical clock, mutable.
    pub fn clock_mut(&mut self) -> &mut Clock {
        &mut self.header_mut().clock
    }

    /// Events and user commands.
    pub fn events(&self) -> &EventsState {
        &self.header().events
    }

    /// Events and user commands, mutable.
    pub fn events_mut(&mut self) -> &mut EventsState {
        &mut self.header_mut().events
    }

    /// What is left of the run's perturbations.
    pub fn perturbations(&self) -> &PerturbationState {
        &self.header().perturbations
    }

    /// What is left of the run's perturbations, mutable.
    pub fn perturbations_mut(&mut self) -> &mut PerturbationState {
        &mut self.header_mut().perturbations
    }

    /// Intent monitors.
    pub fn monitors(&self) -> &MonitorState {
        &self.header().monitors
    }

    /// Intent monitors, mutable.
    pub fn monitors_mut(&mut self) -> &mut MonitorState {
        &mut self.header_mut().monitors
    }

    /// Pods the descheduler has evicted in the (single) namespace, kept like the per-node
    /// counts.
    pub fn namespace_evictions(&self) -> u8 {
        self.header().namespace_evictions
    }

    /// The namespace's eviction count, mutable.
    pub fn namespace_evictions_mut(&mut self) -> &mut u8 {
        &mut self.header_mut().namespace_evictions
    }

    fn nodes_offset(&self) -> usize {
        HEADER_BYTES
    }

    fn pods_offset(&self) -> usize {
        self.nodes_offset() + self.nodes as usize * NODE_BYTES
    }

    fn deployments_offset(&self) -> usize {
        self.pods_offset() + self.pods as usize * POD_BYTES
    }

    /// The `count` records of type `T` starting at byte `offset` of the buffer. Called only
    /// for the three ranges `new` fills with records of that type.
    fn records<T: NoUninit>(&self, offset: usize, count: usize) -> &[T] {
        const { assert!(std::mem::align_of::<T>() == 1) };
        let bytes = &self.bytes()[offset..offset + count * std::mem::size_of::<T>()];
        // SAFETY: `T` is a packed record (alignment 1, checked above) of plain bytes, and this
        // range of the buffer only ever holds `T`s: it is written from valid `T`s in `new` and
        // changed only through `&mut T` views, which keep it valid.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast(), count) }
    }

    /// [`ClusterState::records`], mutable.
    fn records_mut<T: NoUninit>(&mut self, offset: usize, count: usize) -> &mut [T] {
        const { assert!(std::mem::align_of::<T>() == 1) };
        let bytes = &mut self.bytes_mut()[offset..offset + count * std::mem::size_of::<T>()];
        // SAFETY: as in `records`; the exclusive borrow of `self` makes the view unique.
        unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast(), count) }
    }

    /// The node records, by id - 1.
    pub fn nodes(&self) -> &[NodeState] {
        self.records(self.nodes_offset(), self.nodes as usize)
    }

    /// The node records, mutable.
    pub fn nodes_mut(&mut self) -> &mut [NodeState] {
        self.records_mut(self.nodes_offset(), self.nodes as usize)
    }

    /// The pod records, by id - 1.
    pub fn pods(&self) -> &[PodState] {
        self.records(self.pods_offset(), self.pods as usize)
    }

    /// The pod records, mutable.
    pub fn pods_mut(&mut self) -> &mut [PodState] {
        self.records_mut(self.pods_offset(), self.pods as usize)
    }

    /// The deployment records, by id - 1.
    pub fn deployments(&self) -> &[DeploymentState] {
        self.records(self.deployments_offset(), self.deployments as usize)
    }

    /// The deployment records, mutable.
    pub fn deployments_mut(&mut self) -> &mut [DeploymentState] {
        self.records_mut(self.deployments_offset(), self.deployments as usize)
    }

    /// The byte offset of the record of type `T` with 1-based index `id` in the table of
    /// `count` records at byte `offset`, after one bounds check (of `id` against `count`), where
    /// slicing the table and then the record would check three times. Records are read one at a
    /// time in every controller's inner loop, so this is on the hot path of every step.
    fn record_at<T: NoUninit>(offset: usize, count: usize, id: usize) -> usize {
        const { assert!(std::mem::align_of::<T>() == 1) };
        let index = id.wrapping_sub(1);
        assert!(index < count, "record {id} of {count}");
        offset + index * std::mem::size_of::<T>()
    }

    /// The record of type `T` with 1-based index `id` in the table of `count` records at byte
    /// `offset` ([`ClusterState::record_at`]). Called only for the three tables `new` fills
    /// with records of that type.
    fn record<T: NoUninit>(&self, offset: usize, count: usize, id: usize) -> &T {
        let at = Self::record_at::<T>(offset, count, id);
        // SAFETY: the index is below `count`, and the buffer holds `count` records of type `T`
        // from `offset` (it is built that way in `new` and never shrinks); `T` is a packed
        // record of plain bytes (alignment 1), valid as `records` explains.
        unsafe { &*self.bytes().as_ptr().add(at).cast() }
    }

    /// [`ClusterState::record`], mutable.
    fn record_mut<T: NoUninit>(&mut self, offset: usize, count: usize, id: usize) -> &mut T {
        let at = Self::record_at::<T>(offset, count, id);
        // SAFETY: as in `record`; the exclusive borrow of `self` makes the view unique.
        unsafe { &mut *self.bytes_mut().as_mut_ptr().add(at).cast() }
    }

    /// Node with id `id` (1-based).
    pub fn node(&self, id: usize) -> &NodeState {
        self.record(self.nodes_offset(), self.nodes as usize, id)
    }

    /// Mutable node with id `id` (1-based).
    pub fn node_mut(&mut self, id: usize) -> &mut NodeState {
        self.record_mut(self.nodes_offset(), self.nodes as usize, id)
    }

    /// Pod with id `id` (1-based).
    pub fn pod(&self, id: usize) -> &PodState {
        self.record(self.pods_offset(), self.pods as usize, id)
    }

    /// Mutable pod with id `id` (1-based).
    pub fn pod_mut(&mut self, id: usize) -> &mut PodState {
        self.record_mut(self.pods_offset(), self.pods as usize, id)
    }

    /// Deployment with id `id` (1-based).
    pub fn deployment(&self, id: usize) -> &DeploymentState {
        self.record(self.deployments_offset(), self.deployments as usize, id)
    }

    /// Mutable deployment with id `id` (1-based).
    pub fn deployment_mut(&mut self, id: usize) -> &mut DeploymentState {
        self.record_mut(self.deployments_offset(), self.deployments as usize, id)
    }

    /// The member pods of replica set `version` of deployment `d`, in ascending order (Kivi's
    /// `podIds`).
    pub fn replica_set_members(
        &self,
        d: usize,
        version: usize,
    ) -> impl Iterator<Item = usize> + '_ {
        self.pods()
            .iter()
            .enumerate()
            .filter(move |(_, p)| p.deployment as usize == d && p.in_replica_set(version))
            .map(|(i, _)| i + 1)
    }

    /// Makes pod `pod` a member of replica set `version` of its deployment `d`.
    pub fn join_replica_set(&mut self, d: usize, version: usize, pod: usize) {
        self.pod_mut(pod).replica_set = version as u8 + 1;
        self.deployment_mut(d).replica_sets[version].replicas += 1;
    }

    /// Removes pod `pod` from the replica set of deployment `d` it is a member of; whether it
    /// was a member of one.
    pub fn leave_replica_set(&mut self, d: usize, pod: usize) -> bool {
        let set = self.pod(pod).replica_set;
        if set == 0 {
            return false;
        }
        self.pod_mut(pod).replica_set = 0;
        self.deployment_mut(d).replica_sets[set as usize - 1].replicas -= 1;
        true
    }

    /// Appends `id` to queue `queue` unless it is already pending there.
    pub fn enqueue(&mut self, queue: Queue, id: usize) {
        let k = queue as usize;
        match queue {
            Queue::Scheduler | Queue::Kubelet | Queue::Taint => {
                let bit = pod_flag(queue);
                let pod = self.pod_mut(id);
                if pod.queued & bit != 0 {
                    return;
                }
                pod.queued |= bit;
            }
            Queue::Node => {
                let node = self.node_mut(id);
                if node.queued {
                    return;
                }
                node.queued = true;
            }
            _ => {
                if self.queues.contains(k, id as u32) {
                    return;
                }
            }
        }
        self.queues.push(k, id as u32);
    }

    /// Removes and returns the oldest id pending in `queue`.
    pub fn dequeue(&mut self, queue: Queue) -> Option<usize> {
        let id = self.queues.pop(queue as usize)? as usize;
        match queue {
            Queue::Scheduler | Queue::Kubelet | Queue::Taint => {
                self.pod_mut(id).queued &= !pod_flag(queue)
            }
            Queue::Node => self.node_mut(id).queued = false,
            _ => {}
        }
        Some(id)
    }

    /// Empties `queue` of pods, appending its ids to `ids`, oldest first: what dequeuing until
    /// the queue is empty does, with the segment dropped once rather than popped id by id (for
    /// a controller that handles its whole queue in one step).
    pub fn take_pod_queue(&mut self, queue: Queue, ids: &mut Vec<u32>) {
        assert!(
            matches!(queue, Queue::Scheduler | Queue::Kubelet | Queue::Taint),
            "only the pod queues are taken whole"
        );
        let k = queue as usize;
        let pending = self.queues.pending(k);
        if pending.is_empty() {
            return;
        }
        let start = ids.len();
        ids.extend_from_slice(pending);
        let flag = pod_flag(queue);
        for &id in &ids[start..] {
            self.pod_mut(id as usize).queued &= !flag;
        }
        self.queues.clear(k);
    }

    /// Whether nothing is pending in `queue`.
    pub fn queue_is_empty(&self, queue: Queue) -> bool {
        self.queues.is_empty(queue as usize)
    }

    /// The ids pending in `queue`, oldest first.
    pub fn pending(&self, queue: Queue) -> &[u32] {
        self.queues.pending(queue as usize)
    }

    /// Drops deployment `id` from `queue`, one of the queues of deployments (the deployment
    /// controller's, the HPA's, the descheduler's); whether it was pending there.
    pub fn drop_pending(&mut self, queue: Queue, id: usize) -> bool {
        assert!(
            matches!(queue, Queue::Deployment | Queue::Hpa | Queue::Descheduler),
            "only deployment queues hold ids without a flag in the records"
        );
        self.queues.remove(queue as usize, id as u32)
    }

    /// Empties `queue`.
    pub fn clear_queue(&mut self, queue: Queue) {
        while self.dequeue(queue).is_some() {}
    }

    /// Makes `queue` hold `ids` (in order, without duplicates) instead of what it held.
    pub fn replace_queue(&mut self, queue: Queue, ids: &[u32]) {
        self.clear_queue(queue);
        for &id in ids {
            self.enqueue(queue, id as usize);
        }
    }

    /// Sets every pod's and node's queue flags from the queues: for records loaded from
    /// another state ([`ClusterState::load_records`]), whose flags say where *that* state's
    /// pods and nodes waited.
    pub fn sync_queue_flags(&mut self) {
        for pod in self.pods_mut() {
            pod.queued = 0;
        }
        for node in self.nodes_mut() {
            node.queued = false;
        }
        for queue in [Queue::Scheduler, Queue::Kubelet, Queue::Taint] {
            let bit = pod_flag(queue);
            for k in 0..self.queues.pending(queue as usize).len() {
                let id = self.queues.pending(queue as usize)[k] as usize;
                self.pod_mut(id).queued |= bit;
            }
        }
        for k in 0..self.queues.pending(Queue::Node as usize).len() {
            let id = self.queues.pending(Queue::Node as usize)[k] as usize;
            self.node_mut(id).queued = true;
        }
    }

    /// Bytes the state owns on the heap: its records and its queues' pending ids.
    pub fn heap_bytes(&self) -> usize {
        self.buffer.len() * 2 + self.queues.data.capacity() * std::mem::size_of::<u32>()
    }

    /// Kivi's "cluster is stable" test: no work pending for the node controller, HPA,
    /// scheduler, kubelet or deployment controller.
    pub fn is_quiet(&self) -> bool {
        self.queue_is_empty(Queue::Hpa) && self.others_quiet()
    }

    /// The HPA's view of a quiet cluster: no work pending for the node controller, scheduler,
    /// kubelet or deployment controller (its own queue does not count).
    pub fn others_quiet(&self) -> bool {
        self.queue_is_empty(Queue::Node)
            && self.queue_is_empty(Queue::Scheduler)
            && self.queue_is_empty(Queue::Kubelet)
            && self.queue_is_empty(Queue::Deployment)
    }

    /// Writes the canonical encoding: every field that can differ between reachable states,
    /// in a fixed order: the buffer (header and records) as it lies in memory, then the
    /// queues' lengths and their pending ids, queue by queue. Equal states give equal bytes and
    /// different states different bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.bytes());
        self.encode_queues(out);
    }

    /// The number of ids pending in each queue, in little-endian order: the start of the
    /// encoding after the buffer.
    fn queue_lengths(&self) -> [u8; QUEUES.len() * 4] {
        let mut lengths = [0; QUEUES.len() * 4];
        for (queue, bytes) in QUEUES.iter().zip(lengths.chunks_exact_mut(4)) {
            bytes.copy_from_slice(&(self.pending(*queue).len() as u32).to_le_bytes());
        }
        lengths
    }

    /// The encoding after the buffer (see [`ClusterState::encode`]).
    fn encode_queues(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.queue_lengths());
        for queue in QUEUES {
            put_le(self.pending(queue), u32::to_le_bytes, out);
        }
    }

    /// A hash of what [`ClusterState::encode`] writes, computed without writing the buffer
    /// out: the buffer is hashed where it lies (one-shot xxh3-64), and that hash seeds the hash
    /// of the queues: their segment ends and their ids, read in place when no segment has a
    /// popped prefix (the usual case between steps), else gathered into `scratch` first.
    /// Equal encodings give equal fingerprints: the buffer's length is fixed by the cluster,
    /// and the pending ids with their segment ends say exactly what each queue holds.
    pub fn fingerprint(&self, scratch: &mut Vec<u8>) -> u64 {
        use twox_hash::XxHash3_64;
        let buffer = XxHash3_64::oneshot(self.bytes());
        let queues = &self.queues;
        if queues.all_empty() {
            return buffer;
        }
        if queues.is_compact() {
            let seed = mix_ends(buffer, queues.ends());
            return XxHash3_64::oneshot_with_seed(seed, bytemuck::cast_slice(queues.items()));
        }
        let mut ends = [0u32; QUEUES.len()];
        scratch.clear();
        for (k, end) in ends.iter_mut().enumerate() {
            scratch.extend_from_slice(bytemuck::cast_slice(queues.pending(k)));
            *end = (scratch.len() / std::mem::size_of::<u32>()) as u32;
        }
        XxHash3_64::oneshot_with_seed(mix_ends(buffer, &ends), scratch)
    }
}

/// Folds the queues' segment ends into `seed` (the buffer's hash): a cheap, order-sensitive
/// mix (multiply by an odd constant after each add), so that the ids' hash, seeded with it,
/// depends on how the ids split into queues as well as on the ids.
fn mix_ends(seed: u64, ends: &[u32]) -> u64 {
    ends.iter().fold(seed, |h, &end| {
        (h ^ u64::from(end)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    })
}

/// A renaming of a state's nodes and pod slots: a permutation of each, given both ways.
/// [`ClusterState::encode_renamed`] writes the state as if every node and pod had its new id.
pub struct Renaming<'a> {
    /// The old node ids (1-based) in new-id order: `node_order[k]` becomes node `k + 1`.
    pub node_order: &'a [u32],
    /// The new id of each old node id (index = old id; index 0 unused).
    pub node_new: &'a [u32],
    /// The old pod ids (1-based) in new-id order.
    pub pod_order: &'a [u32],
    /// The new id of each old pod id (index = old id; index 0 unused).
    pub pod_new: &'a [u32],
    /// Per old node id - 1: the event renamed with the node, whose progress is written with
    /// the node's record instead of in place (empty: no event travels with its node).
    pub node_events: &'a [Option<u8>],
    /// Whether the kubelet's and the node controller's queues are written as sets (their
    /// renamed ids in one fixed order), for models where their order cannot show (see
    /// `model::symmetry`).
    pub queues_as_sets: bool,
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

impl ClusterState {
    /// Writes the encoding of [`ClusterState::encode`] as the state would have it with its
    /// nodes and pods renamed by `renaming` (records reordered, pods' nodes and queued ids
    /// renamed, idle slots cleared as [`PodState::renamed`] says, and each event that travels
    /// with a node written with it: a node failure's done bit follows from its progress).
    /// Two states that differ only by the names of interchangeable nodes and pods give the same
    /// bytes when each is renamed to a canonical order.
    pub fn encode_renamed(&self, renaming: &Renaming, out: &mut Vec<u8>) {
        let events = self.events();
        self.encode_header_without(renaming.node_events, out);
        let nodes = self.nodes();
        for &old in renaming.node_order {
            out.extend_from_slice(bytemuck::bytes_of(&nodes[old as usize - 1]));
            if let Some(&Some(e)) = renaming.node_events.get(old as usize - 1) {
                out.extend_from_slice(&events.progress[e as usize].to_le_bytes());
            }
        }
        let pods = self.pods();
        for &old in renaming.pod_order {
            let pod = pods[old as usize - 1].renamed(renaming.node_new);
            out.extend_from_slice(bytemuck::bytes_of(&pod));
        }
        out.extend_from_slice(&self.bytes()[self.deployments_offset()..]);
        out.extend_from_slice(&self.queue_lengths());
        for queue in QUEUES {
            let names = match queue {
                Queue::Node => Some(renaming.node_new),
                Queue::Scheduler | Queue::Kubelet | Queue::Taint => Some(renaming.pod_new),
                _ => None,
            };
            let start = out.len();
            for &id in self.pending(queue) {
                let id = names.map_or(id, |names| names[id as usize]);
                out.extend_from_slice(&id.to_le_bytes());
            }
            if renaming.queues_as_sets && matches!(queue, Queue::Kubelet | Queue::Node) {
                // Put in the order of their bytes: one order per set.
                out[start..].as_chunks_mut::<4>().0.sort_unstable();
            }
        }
    }

    /// Writes what [`ClusterState::encode_renamed`] writes that no renaming changes: the
    /// header (each event in `node_events`, which travels with its node, left out), the
    /// deployment records and what follows them, the queues' lengths, and the queues that
    /// hold no node or pod ids. A fingerprint under renamings adds the nodes and pods as
    /// multisets ([`crate::model::symmetry`]).
    pub fn encode_unnamed(&self, node_events: &[Option<u8>], out: &mut Vec<u8>) {
        self.encode_header_without(node_events, out);
        out.extend_from_slice(&self.bytes()[self.deployments_offset()..]);
        out.extend_from_slice(&self.queue_lengths());
        for queue in [Queue::Deployment, Queue::Hpa, Queue::Descheduler] {
            put_le(self.pending(queue), u32::to_le_bytes, out);
        }
    }

    /// Writes the header with each event in `node_events` cleared (its progress and done
    /// bit), as events that travel with their nodes are written with them.
    fn encode_header_without(&self, node_events: &[Option<u8>], out: &mut Vec<u8>) {
        if node_events.is_empty() {
            out.extend_from_slice(&self.bytes()[..HEADER_BYTES]);
        } else {
            let mut header = *self.header();
            for &e in node_events.iter().flatten() {
                header.events.done &= !(1 << e);
                header.events.progress[e as usize] = 0;
            }
            out.extend_from_slice(bytemuck::bytes_of(&header));
        }
    }
}

/// Appends `values` in little-endian order (`to_le` gives one value's bytes): one copy on
/// little-endian machines.
fn put_le<T: NoUninit, const N: usize>(values: &[T], to_le: fn(T) -> [u8; N], out: &mut Vec<u8>) {
    if cfg!(target_endian = "little") {
        out.extend_from_slice(bytemuck::cast_slice(values));
    } else {
        values
            .iter()
            .for_each(|&v| out.extend_from_slice(&to_le(v)));
    }
}

/// The queue bit of a pod queue.
fn pod_flag(queue: Queue) -> u8 {
    match queue {
        Queue::Scheduler => pod_queue::SCHEDULER,
        Queue::Kubelet => pod_queue::KUBELET,
        _ => pod_queue::TAINT,
    }
}

impl PartialEq for ClusterState {
    fn eq(&self, other: &Self) -> bool {
        self.buffer == other.buffer
            && (self.nodes, self.pods, self.deployments)
                == (other.nodes, other.pods, other.deployments)
            && self.queues.same_as(&other.queues)
    }
}

impl Eq for ClusterState {}

impl std::fmt::Debug for ClusterState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut queues = f.debug_map();
        for queue in QUEUES {
            queues.entry(&queue, &self.pending(queue));
        }
        queues.finish()?;
        f.debug_struct("ClusterState")
            .field("nodes", &self.nodes())
            .field("pods", &self.pods())
            .field("deployments", &self.deployments())
            .field("namespace_evictions", &self.namespace_evictions())
            .field("clock", self.clock())
            .field("events", self.events())
            .field("monitors", self.monitors())
            .finish()
    }
}

/// A set of pod ids as a bit set over a cluster's pod slots: the controllers' scratch for one
/// step (never part of a state).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodSet(Vec<u64>);

impl PodSet {
    /// An empty set for pod ids 1 to `pods`.
    pub fn new(pods: usize) -> Self {
        Self(vec![0; pods.div_ceil(64)])
    }

    /// Whether pod `id` is a member.
    pub fn contains(&self, id: usize) -> bool {
        self.0[(id - 1) / 64] & (1 << ((id - 1) % 64)) != 0
    }

    /// Adds pod `id`.
    pub fn insert(&mut self, id: usize) {
        self.0[(id - 1) / 64] |= 1 << ((id - 1) % 64);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_are_fifo_without_duplicates() {
        let mut s = ClusterState::new(2, 4, 1);
        s.enqueue(Queue::Scheduler, 3);
        s.enqueue(Queue::Scheduler, 1);
        s.enqueue(Queue::Scheduler, 3);
        s.enqueue(Queue::Kubelet, 2);
        s.enqueue(Queue::Hpa, 1);
        s.enqueue(Queue::Hpa, 1);
        assert_eq!(s.pending(Queue::Scheduler), &[3, 1]);
        assert_eq!(s.pending(Queue::Kubelet), &[2]);
        assert_eq!(s.pending(Queue::Hpa), &[1]);
        assert_eq!(s.dequeue(Queue::Scheduler), Some(3));
        s.enqueue(Queue::Scheduler, 3);
        assert_eq!(s.pending(Queue::Scheduler), &[1, 3]);
        assert_eq!(s.dequeue(Queue::Kubelet), Some(2));
        assert_eq!(s.dequeue(Queue::Kubelet), None);
        s.enqueue(Queue::Node, 2);
        s.enqueue(Queue::Node, 2);
        assert_eq!(s.pending(Queue::Node), &[2]);
        assert_eq!(s.pending(Queue::Scheduler), &[1, 3]);
        assert_eq!(s.pending(Queue::Hpa), &[1]);
    }

    #[test]
    fn equal_states_encode_and_fingerprint_alike_however_their_queues_were_used() {
        let mut a = ClusterState::new(2, 4, 1);
        let mut b = ClusterState::new(2, 4, 1);
        a.enqueue(Queue::Scheduler, 1);
        a.enqueue(Queue::Scheduler, 2);
        a.dequeue(Queue::Scheduler);
        b.enqueue(Queue::Scheduler, 2);
        assert_eq!(a, b);
        let (mut ea, mut eb) = (Vec::new(), Vec::new());
        a.encode(&mut ea);
        b.encode(&mut eb);
        assert_eq!(ea, eb);
        let mut scratch = Vec::new();
        let fingerprint = a.fingerprint(&mut scratch);
        assert_eq!(fingerprint, b.fingerprint(&mut scratch));
        b.pod_mut(3).cpu = 7;
        assert_ne!(a, b);
        assert_ne!(fingerprint, b.fingerprint(&mut scratch));
        a.events_mut().after_stable_started = true;
        assert_ne!(fingerprint, a.fingerprint(&mut scratch));
    }

    /// The sizes the module documentation and the README quote.
    #[test]
    fn records_and_header_cost_what_the_documentation_says() {
        assert_eq!(
            (HEADER_BYTES, NODE_BYTES, POD_BYTES, DEPLOYMENT_BYTES),
            (92, 13, 16, 43)
        );
        assert_eq!(ClusterState::new(5_000, 150_000, 1).heap_bytes(), 2_465_136);
    }

    #[test]
    fn replica_set_membership_is_kept_in_the_pods() {
        let mut s = ClusterState::new(1, 6, 1);
        for id in [5, 2, 4] {
            s.pod_mut(id).deployment = 1;
            s.join_replica_set(1, 0, id);
        }
        assert_eq!(s.replica_set_members(1, 0).collect::<Vec<_>>(), [2, 4, 5]);
        assert_eq!({ s.deployment(1).replica_sets[0].replicas }, 3);
        assert!(s.leave_replica_set(1, 4));
        assert!(!s.leave_replica_set(1, 4));
        assert_eq!(s.replica_set_members(1, 0).collect::<Vec<_>>(), [2, 5]);
    }
}
