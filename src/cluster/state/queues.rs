//! The controllers' seven work queues, kept as segments of one vector of ids.

use super::{pod_queue, ClusterState};

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
pub(super) const QUEUES: [Queue; 7] = [
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
pub(super) struct Queues {
    /// Empty, or `ends` (7), `heads` (7), then the ids.
    pub(super) data: Vec<u32>,
}

/// The number of queues.
pub(super) const QUEUE_COUNT: usize = QUEUES.len();
/// Where the ids start in [`Queues::data`], after `ends` and `heads`.
pub(super) const QUEUE_IDS: usize = 2 * QUEUE_COUNT;
/// The bookkeeping of empty queues: every end and head at 0.
pub(super) const NO_BOOKKEEPING: [u32; QUEUE_IDS] = [0; QUEUE_IDS];

/// Room for this many more ids that a copy of non-empty queues keeps, so that the step that
/// follows the copy can queue a few ids without growing the vector (a copy is made for every
/// successor state, and most steps queue an id or two).
pub(super) const QUEUE_HEADROOM: usize = 8;

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
    pub(super) fn bookkeeping(&self) -> &[u32] {
        if self.data.is_empty() {
            &NO_BOOKKEEPING
        } else {
            &self.data[..QUEUE_IDS]
        }
    }

    /// Each segment's end (cumulative).
    pub(super) fn ends(&self) -> &[u32] {
        &self.bookkeeping()[..QUEUE_COUNT]
    }

    pub(super) fn end(&self, k: usize) -> usize {
        self.bookkeeping()[k] as usize
    }

    pub(super) fn head(&self, k: usize) -> usize {
        self.bookkeeping()[QUEUE_COUNT + k] as usize
    }

    /// The ids, segment after segment.
    pub(super) fn items(&self) -> &[u32] {
        self.data.get(QUEUE_IDS..).unwrap_or(&[])
    }

    /// The bookkeeping and ids, allocated if they were not.
    pub(super) fn data_mut(&mut self) -> &mut Vec<u32> {
        if self.data.is_empty() {
            self.data.extend_from_slice(&NO_BOOKKEEPING);
        }
        &mut self.data
    }

    /// Adds `by` to the ends of segments `k..` and the heads of segments `k + 1..`.
    pub(super) fn shift(&mut self, k: usize, by: i32) {
        let bookkeeping: &mut [u32; QUEUE_IDS] = self
            .data_mut()
            .first_chunk_mut()
            .expect("allocated queues lead with their bookkeeping");
        let (ends, heads) = bookkeeping.split_at_mut(QUEUE_COUNT);
        for (segment, (end, head)) in ends.iter_mut().zip(heads).enumerate() {
            if segment >= k {
                *end = end.wrapping_add_signed(by);
            }
            if segment > k {
                *head = head.wrapping_add_signed(by);
            }
        }
    }

    pub(super) fn start(&self, k: usize) -> usize {
        if k == 0 {
            0
        } else {
            self.end(k - 1)
        }
    }

    pub(super) fn is_empty(&self, k: usize) -> bool {
        self.head(k) == self.end(k)
    }

    pub(super) fn pending(&self, k: usize) -> &[u32] {
        &self.items()[self.head(k)..self.end(k)]
    }

    /// Whether `id` is pending in segment `k`.
    pub(super) fn contains(&self, k: usize, id: u32) -> bool {
        let Some(bookkeeping) = self.data.get(..QUEUE_IDS) else {
            return false;
        };
        let (head, end) = (bookkeeping[QUEUE_COUNT + k], bookkeeping[k]);
        self.data[QUEUE_IDS + head as usize..QUEUE_IDS + end as usize].contains(&id)
    }

    pub(super) fn push(&mut self, k: usize, id: u32) {
        let data = self.data_mut();
        let at = QUEUE_IDS + data[k] as usize;
        data.insert(at, id);
        self.shift(k, 1);
    }

    pub(super) fn pop(&mut self, k: usize) -> Option<u32> {
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
    pub(super) fn clear(&mut self, k: usize) {
        let (start, end) = (self.start(k), self.end(k));
        if self.data.is_empty() {
            return;
        }
        if self.data.len() == QUEUE_IDS + end - start {
            // The segment holds every id left: nothing else to shift.
            self.data.clear();
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
    pub(super) fn remove(&mut self, k: usize, id: u32) -> bool {
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

    /// Moves `id`, pending in segment `k`, to the segment's head, the others keeping their
    /// order; whether it was pending there.
    pub(super) fn move_to_head(&mut self, k: usize, id: u32) -> bool {
        let (head, end) = (self.head(k), self.end(k));
        let Some(pending) = self.data.get_mut(QUEUE_IDS + head..QUEUE_IDS + end) else {
            return false;
        };
        let Some(at) = pending.iter().position(|&x| x == id) else {
            return false;
        };
        pending[..=at].rotate_right(1);
        true
    }

    /// Whether every queue holds the same pending ids as in `other`.
    pub(super) fn same_as(&self, other: &Queues) -> bool {
        (0..QUEUE_COUNT).all(|k| self.pending(k) == other.pending(k))
    }

    /// Whether no queue holds an id (popped segments are dropped as they run empty).
    pub(super) fn all_empty(&self) -> bool {
        self.items().is_empty()
    }

    /// Whether no segment keeps popped ids: the ids are then exactly the pending ids, queue
    /// after queue, and the ends their cumulative counts.
    pub(super) fn is_compact(&self) -> bool {
        (0..QUEUE_COUNT).all(|k| self.head(k) == self.start(k))
    }
}

impl ClusterState {
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

    /// Moves pod `id`, pending in pod queue `queue`, to the queue's head, so that the next
    /// dequeue takes it (kube-scheduler pops its active queue by priority, not in FIFO order:
    /// `model::kube_scheduling`); whether it was pending there.
    pub fn move_to_head(&mut self, queue: Queue, id: usize) -> bool {
        assert!(
            matches!(queue, Queue::Scheduler | Queue::Kubelet | Queue::Taint),
            "only pod queues are reordered"
        );
        self.queues.move_to_head(queue as usize, id as u32)
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
}

/// The queue bit of a pod queue.
fn pod_flag(queue: Queue) -> u8 {
    match queue {
        Queue::Scheduler => pod_queue::SCHEDULER,
        Queue::Kubelet => pod_queue::KUBELET,
        _ => pod_queue::TAINT,
    }
}
