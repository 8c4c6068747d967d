//! The fingerprint ([`Symmetry::fingerprint`]): a 64-bit hash of a state's class under the
//! reduction, with nodes and pods hashed as multisets (wrapping sums) instead of sorted, and
//! the sums kept in the worker's scratch so that the next state hashes again only what changed.

use super::keys::node_element;
use super::scratch::Scratch;
use super::Symmetry;
use crate::cluster::{ClusterState, Differing, NodeState, PodState, Queue, WritesSinceCopy};

impl Symmetry {
    /// A 64-bit fingerprint of `state`'s class under the reduction: equal for states that
    /// are renamings of each other, and (but for a hash collision) only for them. The nodes
    /// and pods are hashed as multisets instead of being sorted into the canonical form of
    /// [`Symmetry::encode`]: each pod as what it is but its node (its record, queue places
    /// and input-label class, and its id where pods keep their names), added into the sum of
    /// the node it counts on (bound or nominated there: [`Symmetry::pod_element`]) or of the
    /// unplaced pods; each node as its class and failure progress, record,
    /// place in the node controller's queue and that sum; and the state as what no renaming
    /// changes ([`ClusterState::encode_unnamed`]) with the sum over its nodes and the
    /// unplaced pods' sum. Two states with equal multisets are renamings of each other: match
    /// the nodes by their hashes and, on each, the pods by theirs. Queue orders are kept in
    /// the pods' and nodes' places. Equal canonical forms give equal fingerprints (the
    /// contract of [`crate::engine::Model::fingerprint`]); nodes that tie on every sort key
    /// never keep two fingerprints of one state, and no sort or renamed copy of the state is
    /// made. The parts are kept in `scratch` with what they were computed from ([`Summed`]), and
    /// the next state hashes again only the pods and nodes that changed: one comparison of the
    /// pods' and the nodes' records a block at a time (of the pod records only those either
    /// state wrote since its copy, where both are copies of one state, as a search's
    /// successors of one state are). `out` is scratch.
    pub fn fingerprint(
        &self,
        state: &ClusterState,
        scratch: &mut Scratch,
        out: &mut Vec<u8>,
    ) -> u64 {
        // Taken out for the call, so that the scratch's places can be read beside it.
        let mut summed = std::mem::take(&mut scratch.summed);
        let fingerprint = {
            let summed = &mut summed;
            let (nodes, pods) = (state.nodes().len(), state.pods().len());
            // Only the queued pods' and nodes' places are set, and cleared again below, so
            // the places are cleared whole only after another use of the scratch left some.
            if scratch.places_left
                || scratch.pod_places.len() != pods + 1
                || scratch.node_place.len() != nodes + 1
            {
                scratch.reset(nodes, pods);
                scratch.places_left = false;
            }
            self.mark_places(state, scratch);
            match summed.owner == Some((self.id, nodes, pods)) {
                true => self.sum_changes(state, scratch, summed),
                false => self.sum_afresh(state, scratch, summed),
            }
            self.clear_places(state, scratch);
            out.clear();
            state.encode_unnamed(self.node_classes.failure_event_mask(), out);
            out.extend_from_slice(&summed.node_total.to_le_bytes());
            out.extend_from_slice(&summed.unplaced_sum.to_le_bytes());
            xxhash_rust::xxh3::xxh3_64(out)
        };
        scratch.summed = summed;
        fingerprint
    }

    /// [`Symmetry::fingerprint`] summed afresh, whatever the scratch fingerprinted last.
    #[cfg(test)]
    pub(super) fn fingerprint_afresh(
        &self,
        state: &ClusterState,
        scratch: &mut Scratch,
        out: &mut Vec<u8>,
    ) -> u64 {
        scratch.summed.owner = None;
        self.fingerprint(state, scratch, out)
    }

    /// Pod `id`'s part of a fingerprint, given its queue places: the node whose sum its hash
    /// joins (0: the unplaced pods' sum) and the hash, as [`Symmetry::fingerprint`] says; none
    /// (0, 0) for an idle slot in no queue, which is alike to every other one (what is left
    /// in it is never read, [`PodState::settled`]: how many there are, and which where pods
    /// keep their names, follows from the pods hashed). Whether a slot is in a queue is read
    /// from its places, not from its queue flags: a slot the deployment controller reuses
    /// while the taint manager's queue still names it has its flags cleared but stays queued.
    fn pod_part(&self, state: &ClusterState, id: usize, places: [u32; 3]) -> (u32, u64) {
        let pod = state.pod(id);
        if pod.phase == crate::cluster::PodPhase::Idle && pod.queued == 0 && places == [0; 3] {
            return (0, 0);
        }
        let (node, hash) = self.pod_element(state, id, places);
        (node as u32, hash)
    }

    /// Fills `summed` with every part of `state`'s fingerprint, computed afresh (the scratch
    /// holds its queue places).
    fn sum_afresh(&self, state: &ClusterState, scratch: &Scratch, summed: &mut Summed) {
        let (nodes, pods) = (state.nodes().len(), state.pods().len());
        summed.owner = Some((self.id, nodes, pods));
        summed.pods.clear();
        summed.pods.extend_from_slice(state.pods());
        summed.writes = state.writes_since_copy();
        summed.parts.clear();
        summed.node_sum.clear();
        summed.node_sum.resize(nodes + 1, 0);
        summed.unplaced_sum = 0;
        for id in 1..=pods {
            let (node, hash) = self.pod_part(state, id, scratch.pod_places[id]);
            summed.parts.push((node, hash));
            match node {
                0 => summed.unplaced_sum = summed.unplaced_sum.wrapping_add(hash),
                n => {
                    let sum = &mut summed.node_sum[n as usize];
                    *sum = sum.wrapping_add(hash);
                }
            }
        }
        summed.nominations.clear();
        summed.nominations.extend(state.nomination_entries());
        summed.nodes.clear();
        summed.nodes.push(NodeState::default());
        summed.nodes.extend_from_slice(state.nodes());
        summed.progress.clear();
        summed
            .progress
            .extend_from_slice(&{ state.events().progress });
        summed.queued_nodes.clear();
        summed
            .queued_nodes
            .extend_from_slice(state.pending(Queue::Node));
        summed.node_part.clear();
        summed.node_part.push(0);
        summed.node_total = 0;
        for n in 1..=nodes {
            let part = node_element(self.node_key(state, n, scratch, summed.node_sum[n]));
            summed.node_part.push(part);
            summed.node_total = summed.node_total.wrapping_add(part);
        }
        summed.listed.clear();
        summed.listed.resize(nodes + 1, false);
        summed.listed_nodes.clear();
        summed.keep_unflagged(state);
    }

    /// Brings `summed`, the parts of the last state fingerprinted, to `state` (the scratch
    /// holds its queue places): only the pods whose record or queue places changed, and the
    /// nodes whose record, class key, queue place or pods changed, are hashed again. The
    /// sums are wrapping sums, so taking a part out and putting its new value in gives what
    /// summing afresh gives ([`Symmetry::sum_afresh`]); the tests compare the two.
    fn sum_changes(&self, state: &ClusterState, scratch: &Scratch, summed: &mut Summed) {
        // Pods and nodes whose record changed, found a block of records at a time; where this
        // state and the last one were copied from one state, only among the records either
        // wrote since.
        const BLOCK: usize = 32;
        let now = state.pods();
        let writes = state.writes_since_copy();
        let differing = match (&writes, &summed.writes) {
            (Some(mine), Some(last)) if mine.from == last.from => mine.written.hull(&last.written),
            _ => Differing {
                nodes: 0..state.nodes().len(),
                pods: 0..now.len(),
            },
        };
        summed.writes = writes;
        let (low, high) = (differing.pods.start, differing.pods.end.min(now.len()));
        let first_block = low / BLOCK * BLOCK;
        for start in (first_block..high.max(first_block)).step_by(BLOCK) {
            let end = (start + BLOCK).min(now.len());
            let then = &summed.pods[start..end];
            if bytemuck::cast_slice::<_, u8>(&now[start..end])
                == bytemuck::cast_slice::<_, u8>(then)
            {
                continue;
            }
            for (i, pod) in now.iter().enumerate().take(end).skip(start) {
                if bytemuck::bytes_of(pod) != bytemuck::bytes_of(&summed.pods[i]) {
                    self.resum_pod(state, scratch, summed, i + 1);
                }
            }
        }
        // Pods in a pod queue: their places may have moved with the pods ahead of them.
        for queue in [Queue::Scheduler, Queue::Kubelet, Queue::Taint] {
            for &id in state.pending(queue) {
                self.resum_pod(state, scratch, summed, id as usize);
            }
        }
        // Pods that left every queue: leaving one clears its flag, which changed the record,
        // unless the flag was clear already (a queue that names a reused slot, or a pod
        // twice: see `mark_places`); those entries of the last state were kept.
        let unflagged = std::mem::take(&mut summed.unflagged);
        for &id in &unflagged {
            if scratch.pod_places[id as usize] == [0; 3] {
                self.resum_pod(state, scratch, summed, id as usize);
            }
        }
        summed.unflagged = unflagged;
        summed.keep_unflagged(state);
        // Pods whose nomination or preemption mark changed: kept apart from the records.
        if state.keeps_nominations() {
            let mut nominations = std::mem::take(&mut summed.nominations);
            for (i, (entry, was)) in state.nomination_entries().zip(&mut nominations).enumerate() {
                if entry != *was {
                    *was = entry;
                    self.resum_pod(state, scratch, summed, i + 1);
                }
            }
            summed.nominations = nominations;
        }
        // Nodes whose part may have changed: those whose pods' sum changed (`resum_pod` listed
        // them), whose record changed (found a block of records at a time), whose failure
        // event took a step (its progress is in the node's class key), and those in the node
        // controller's queue now or in the last state (the place is in the part).
        let now = state.nodes();
        let (low, high) = (differing.nodes.start, differing.nodes.end.min(now.len()));
        let first_block = low / BLOCK * BLOCK;
        for start in (first_block..high.max(first_block)).step_by(BLOCK) {
            let end = (start + BLOCK).min(now.len());
            let then = &summed.nodes[start + 1..end + 1];
            if bytemuck::cast_slice::<_, u8>(&now[start..end])
                == bytemuck::cast_slice::<_, u8>(then)
            {
                continue;
            }
            for (i, node) in now.iter().enumerate().take(end).skip(start) {
                if bytemuck::bytes_of(node) != bytemuck::bytes_of(&summed.nodes[i + 1]) {
                    summed.list_node(i + 1);
                }
            }
        }
        let progress_now = state.events().progress;
        for (event, &progress) in progress_now.iter().enumerate() {
            if progress != summed.progress[event] {
                summed.progress[event] = progress;
                if let Some(n) = self.node_classes.node_of_event(event) {
                    summed.list_node(n);
                }
            }
        }
        let mut queued = std::mem::take(&mut summed.queued_nodes);
        for &n in queued.iter().chain(state.pending(Queue::Node)) {
            summed.list_node(n as usize);
        }
        queued.clear();
        queued.extend_from_slice(state.pending(Queue::Node));
        summed.queued_nodes = queued;
        let mut listed = std::mem::take(&mut summed.listed_nodes);
        for &node in &listed {
            let n = node as usize;
            summed.listed[n] = false;
            summed.nodes[n] = *state.node(n);
            let part = node_element(self.node_key(state, n, scratch, summed.node_sum[n]));
            summed.node_total = summed
                .node_total
                .wrapping_sub(summed.node_part[n])
                .wrapping_add(part);
            summed.node_part[n] = part;
        }
        listed.clear();
        summed.listed_nodes = listed;
    }

    /// Hashes pod `id` of `state` again into `summed` (taking its old part out of its old
    /// node's sum or the unplaced pods' and putting the new one in), marking the nodes whose
    /// sums changed.
    fn resum_pod(&self, state: &ClusterState, scratch: &Scratch, summed: &mut Summed, id: usize) {
        summed.pods[id - 1] = *state.pod(id);
        let new = self.pod_part(state, id, scratch.pod_places[id]);
        let old = std::mem::replace(&mut summed.parts[id - 1], new);
        if old == new {
            return;
        }
        for ((node, hash), add) in [(old, false), (new, true)] {
            let sum = match node {
                0 => &mut summed.unplaced_sum,
                n => {
                    summed.list_node(n as usize);
                    &mut summed.node_sum[n as usize]
                }
            };
            *sum = match add {
                true => sum.wrapping_add(hash),
                false => sum.wrapping_sub(hash),
            };
        }
    }
}

/// The parts of the fingerprint of the last state a worker fingerprinted
/// ([`Symmetry::fingerprint`]), with what they were computed from: a depth-first search
/// fingerprints the successors of one state one after another, and each differs from the
/// last in a few pods and nodes, so only those are hashed again ([`Symmetry::sum_changes`])
/// instead of every pod slot and node (on a 1,000-node state, 6,000 slots and 1,000 nodes
/// per successor).
#[derive(Default)]
pub(super) struct Summed {
    /// The reduction's id and the state's node and pod counts the parts are for; `None`
    /// until a state is summed.
    owner: Option<(u64, usize, usize)>,
    /// The pods' records (index: id - 1).
    pods: Vec<PodState>,
    /// Where the state whose records these are was copied from and which node and pod
    /// records it had written since ([`ClusterState::writes_since_copy`]).
    writes: Option<WritesSinceCopy>,
    /// Each pod's entry in the nomination table, where the state keeps one (index: id - 1).
    nominations: Vec<u16>,
    /// Each pod's part ([`Symmetry::pod_part`], index: id - 1).
    parts: Vec<(u32, u64)>,
    /// Per node id (index 0 unused): its record, the sum of its pods' hashes and its part of
    /// the node sum.
    nodes: Vec<NodeState>,
    node_sum: Vec<u64>,
    node_part: Vec<u64>,
    /// Per event: its progress (a failure event's is in its node's class key).
    progress: Vec<u16>,
    /// The node controller's queue (a node's place in it is in the node's part).
    queued_nodes: Vec<u32>,
    /// The nodes whose part may have changed, to hash again ([`Summed::list_node`]), and per
    /// node id whether it is listed.
    listed_nodes: Vec<u32>,
    listed: Vec<bool>,
    /// The pods named in the scheduler, kubelet or taint queue whose record's flag for that
    /// queue is clear ([`Summed::keep_unflagged`]).
    unflagged: Vec<u32>,
    /// The sum of the nodes' parts and of the unplaced pods' hashes.
    node_total: u64,
    unplaced_sum: u64,
}

impl Summed {
    /// Lists node `n` for its part to be hashed again (once).
    fn list_node(&mut self, n: usize) {
        if !self.listed[n] {
            self.listed[n] = true;
            self.listed_nodes.push(n as u32);
        }
    }

    /// Keeps the pods that `state`'s pod queues name although their records' flags say they
    /// are not there: such a pod leaves the queue without a change to its record, so
    /// [`Symmetry::sum_changes`] must look for it (most states have none: only the taint
    /// manager's queue keeps the ids of removed pods).
    fn keep_unflagged(&mut self, state: &ClusterState) {
        use crate::cluster::pod_queue::{KUBELET, SCHEDULER, TAINT};
        self.unflagged.clear();
        for (queue, flag) in [
            (Queue::Scheduler, SCHEDULER),
            (Queue::Kubelet, KUBELET),
            (Queue::Taint, TAINT),
        ] {
            let unflagged = state.pending(queue).iter().copied();
            self.unflagged
                .extend(unflagged.filter(|&id| state.pod(id as usize).queued & flag == 0));
        }
    }
}
