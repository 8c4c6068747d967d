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
//!   small (about a hundred bytes), so the search moves it cheaply. The views of
//!   `--perturb stale-view` and, where pods may preempt under `--semantics kubernetes`, a
//!   nominated node per pod slot (two bytes, [`ClusterState::keep_nominations`]) follow the
//!   tables in the same buffer.
//! - **Membership in the records.** Which replica set a pod belongs to, and which work queues
//!   hold it, are bytes of its own record, with the replica sets' sizes kept in the deployment
//!   record: nothing in a state is sized by the model's limits rather than by the cluster.
//! - **One buffer of queues.** The controllers' seven work queues are segments of one vector
//!   of ids (empty, and so not allocated, in most states), with O(1) pops and O(1) duplicate
//!   checks (a queue flag in the pod or node record).
//!
//! At 5,000 nodes and 150,000 pod slots a state is about 2.5 MB: 14 bytes a node, 16 a pod
//! slot, 88 a deployment, plus the ids pending in queues.

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

mod encoding;
mod nominations;
mod pod_set;
mod queues;
mod record_writes;
mod records;
mod scale_events;
#[cfg(test)]
mod tests;

pub use encoding::Renaming;
pub use pod_set::PodSet;
pub use queues::Queue;
use queues::{Queues, QUEUES};
use record_writes::RecordWrites;
pub use record_writes::{Differing, WritesSinceCopy};
use records::Header;
pub use records::*;
pub use scale_events::{ScaleEvents, MAX_SCALE_EVENTS};

/// Buffers of this many `u16`s or more are copied over a related state by the records that
/// differ ([`ClusterState::copy_differing_from`]); smaller ones whole, which costs less than
/// finding out (every buffer under `cfg(test)`, so that the tests check the partial copies).
const LARGE_BUFFER: usize = 8 * 1024;

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
    /// Entries of the nomination table kept after the views: one per pod slot where pods may
    /// preempt, none otherwise ([`ClusterState::keep_nominations`]).
    nominations: u32,
    queues: Queues,
    /// The node and pod records written since the state was copied (not part of the state).
    record_writes: RecordWrites,
}

impl Clone for ClusterState {
    fn clone(&self) -> Self {
        Self {
            buffer: self.buffer.clone(),
            nodes: self.nodes,
            pods: self.pods,
            deployments: self.deployments,
            views: self.views,
            nominations: self.nominations,
            queues: self.queues.clone(),
            record_writes: self.record_writes.of_copy(),
        }
    }

    /// Copies `source` into this state's allocations when they fit (a state of the same
    /// cluster always does), so that a search that reuses spent states allocates nothing.
    /// Where both are copies of one state, or this one is a copy of `source`, and the buffer
    /// is large enough to keep notes of its record writes ([`RecordWrites`]), only the node
    /// and pod records either wrote since their copy are copied, with the rest of the buffer
    /// ([`ClusterState::copy_differing_from`]).
    fn clone_from(&mut self, source: &Self) {
        if !self.record_writes.kept() || !self.copy_differing_from(source) {
            self.buffer.clone_from(&source.buffer);
        }
        self.nodes = source.nodes;
        self.pods = source.pods;
        self.deployments = source.deployments;
        self.views = source.views;
        self.nominations = source.nominations;
        self.queues.clone_from(&source.queues);
        self.record_writes.copy_of(&source.record_writes);
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
        let buffer: Box<[u16]> = bytes
            .chunks_exact(2)
            .map(|pair| u16::from_ne_bytes([pair[0], pair[1]]))
            .collect();
        Self {
            record_writes: RecordWrites::for_buffer(buffer.len()),
            buffer,
            nodes: nodes as u32,
            pods: pods as u32,
            deployments: deployments as u32,
            views: 0,
            nominations: 0,
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
        self.record_writes.wrote_pods(0, self.pods as usize);
        self.record_writes.wrote_nodes(0, self.nodes as usize);
    }

    /// Makes room for `views` copies of the record tables after them, each starting as a copy
    /// of the tables as they are now (`--perturb stale-view`: what a controller's informer
    /// cache showed; the copies are part of the state, hashed and compared with it). The
    /// nomination table, if kept, stays after them.
    pub fn keep_views(&mut self, views: usize) {
        let records = self.records_as_bytes().to_vec();
        let table = self.nomination_bytes().to_vec();
        let mut bytes = self.bytes()[..HEADER_BYTES + records.len()].to_vec();
        for _ in 0..views {
            bytes.extend_from_slice(&records);
        }
        bytes.extend_from_slice(&table);
        self.set_bytes(bytes);
        self.views = views as u32;
    }

    /// Makes `bytes` (the header, records, views and nomination table) the buffer, with a
    /// zero byte at the end when their number is odd; the state then knows nothing of its
    /// record writes, as if it had not been copied.
    fn set_bytes(&mut self, mut bytes: Vec<u8>) {
        if bytes.len() % 2 == 1 {
            bytes.push(0);
        }
        self.buffer = bytes
            .chunks_exact(2)
            .map(|pair| u16::from_ne_bytes([pair[0], pair[1]]))
            .collect();
        self.record_writes = RecordWrites::for_buffer(self.buffer.len());
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
        self.record_writes.wrote_nodes(0, self.nodes as usize);
        self.records_mut(self.nodes_offset(), self.nodes as usize)
    }

    /// The pod records, by id - 1.
    pub fn pods(&self) -> &[PodState] {
        self.records(self.pods_offset(), self.pods as usize)
    }

    /// The pod records, mutable.
    pub fn pods_mut(&mut self) -> &mut [PodState] {
        self.record_writes.wrote_pods(0, self.pods as usize);
        self.records_mut(self.pods_offset(), self.pods as usize)
    }

    /// Makes this state's buffer `source`'s by copying the header, what follows the pod
    /// table, and of the node and pod tables only the records that may differ: those either
    /// state wrote since both were copied from one state, or this one wrote since it was
    /// copied from `source` as `source` is now ([`RecordWrites::differing`]). Returns
    /// `false`, copying nothing, when neither holds or the buffers differ in length. Asked
    /// only for buffers of [`LARGE_BUFFER`] or more, so out of line (under `cfg(test)` for
    /// every buffer, and the copy is checked against the whole buffer).
    #[inline(never)]
    fn copy_differing_from(&mut self, source: &Self) -> bool {
        if self.buffer.len() != source.buffer.len() || self.pods != source.pods {
            return false;
        }
        let Some(differing) = self.record_writes.differing(&source.record_writes) else {
            return false;
        };
        let (nodes, pods) = (self.nodes_offset(), self.pods_offset());
        let end = self.deployments_offset();
        let (to, from) = (self.bytes_mut(), source.bytes());
        let mut copy = |range: std::ops::Range<usize>| {
            to[range.clone()].copy_from_slice(&from[range]);
        };
        copy(0..nodes);
        let records = |start: usize, size: usize, written: std::ops::Range<usize>| {
            start + written.start * size..start + written.end * size
        };
        copy(records(nodes, NODE_BYTES, differing.nodes));
        copy(records(pods, POD_BYTES, differing.pods));
        copy(end..from.len());
        #[cfg(test)]
        assert!(
            self.buffer == source.buffer,
            "a node or pod record was written without a note (RecordWrites)"
        );
        true
    }

    /// The token of the state this one was copied from and the node and pod records
    /// written since, or `None` when it was not copied: two states copied from one token
    /// hold the same records outside the hulls of what they wrote.
    pub fn writes_since_copy(&self) -> Option<WritesSinceCopy> {
        self.record_writes.since_copy()
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
        self.record_writes.wrote_nodes(id.wrapping_sub(1), id);
        self.record_mut(self.nodes_offset(), self.nodes as usize, id)
    }

    /// Pod with id `id` (1-based).
    pub fn pod(&self, id: usize) -> &PodState {
        self.record(self.pods_offset(), self.pods as usize, id)
    }

    /// Mutable pod with id `id` (1-based).
    pub fn pod_mut(&mut self, id: usize) -> &mut PodState {
        self.record_writes.wrote_pods(id.wrapping_sub(1), id);
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
}

impl ClusterState {
    /// Bytes the state owns on the heap: its records and its queues' pending ids, each
    /// allocation as `allocated` rounds its requested bytes (the allocator's block size).
    pub fn heap_bytes(&self, allocated: fn(usize) -> usize) -> usize {
        allocated(self.buffer.len() * 2)
            + allocated(self.queues.data.capacity() * std::mem::size_of::<u32>())
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
}

impl PartialEq for ClusterState {
    fn eq(&self, other: &Self) -> bool {
        self.buffer == other.buffer
            && (self.nodes, self.pods, self.deployments, self.nominations)
                == (
                    other.nodes,
                    other.pods,
                    other.deployments,
                    other.nominations,
                )
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
            .field("nominations", &self.nominations().collect::<Vec<_>>())
            .field("clock", self.clock())
            .field("events", self.events())
            .field("monitors", self.monitors())
            .finish()
    }
}
