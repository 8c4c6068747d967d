//! The nominated node of each pod under `--semantics kubernetes`: where a preemption reserved
//! room for it (`status.nominatedNodeName`, and the scheduling queue's nominator,
//! `pkg/scheduler/backend/queue/nominator.go`). See [`crate::model`]'s `kube_preemption` for
//! when a nomination is made and cleared.
//!
//! The table is kept only in models where a pod may preempt another
//! ([`ClusterState::keep_nominations`]): one node id (two bytes) per pod slot, after the
//! record tables and their views, so that it is copied, hashed, compared and encoded with the
//! rest of the buffer. Without it a state is as it was, byte for byte.
//!
//! The same entry marks a pod terminating because a preemption chose it as a victim
//! ([`PREEMPTED`]): upstream's `DisruptionTarget` condition with reason
//! `PreemptionByScheduler`, which `podTerminatingByPreemption` reads. A victim is bound, and a
//! bound pod has no nomination, so the two never share an entry.

use super::{ClusterState, HEADER_BYTES, MAX_NODES};

/// Bytes of one entry: a node id.
const ENTRY_BYTES: usize = std::mem::size_of::<u16>();

/// Set in the entry of a pod terminating because a preemption deleted it; above every node id
/// ([`MAX_NODES`]).
const PREEMPTED: u16 = 0x8000;
const _: () = assert!(MAX_NODES < PREEMPTED as usize);

impl ClusterState {
    /// Makes room for a nomination per pod slot, none nominated: for a model whose pods may
    /// preempt (their templates' priorities differ). Kept after the views, if any.
    pub fn keep_nominations(&mut self) {
        let mut bytes = self.bytes()[..self.nominations_offset()].to_vec();
        bytes.resize(bytes.len() + self.pods as usize * ENTRY_BYTES, 0);
        self.set_bytes(bytes);
        self.nominations = self.pods;
    }

    /// Whether the state keeps nominations.
    pub fn keeps_nominations(&self) -> bool {
        self.nominations != 0
    }

    /// Byte offset of the nomination table: after the records and their views.
    pub(super) fn nominations_offset(&self) -> usize {
        HEADER_BYTES + self.records_bytes() * (1 + self.views as usize)
    }

    /// The nomination table as bytes (empty when none is kept).
    pub(super) fn nomination_bytes(&self) -> &[u8] {
        let start = self.nominations_offset();
        &self.bytes()[start..start + self.nominations as usize * ENTRY_BYTES]
    }

    /// The byte range of pod `pod`'s entry, `None` when no table is kept.
    fn nomination_at(&self, pod: usize) -> Option<usize> {
        let index = pod.wrapping_sub(1);
        (index < self.nominations as usize).then(|| self.nominations_offset() + index * ENTRY_BYTES)
    }

    /// Pod `pod`'s entry (1-based), 0 when no table is kept.
    fn entry(&self, pod: usize) -> u16 {
        self.nomination_at(pod).map_or(0, |at| {
            let bytes = &self.bytes()[at..at + ENTRY_BYTES];
            u16::from_ne_bytes([bytes[0], bytes[1]])
        })
    }

    fn set_entry(&mut self, pod: usize, entry: u16) {
        if let Some(at) = self.nomination_at(pod) {
            self.bytes_mut()[at..at + ENTRY_BYTES].copy_from_slice(&entry.to_ne_bytes());
        }
    }

    /// The node pod `pod` (1-based) is nominated to, 0 for none.
    pub fn nominated_node(&self, pod: usize) -> usize {
        (self.entry(pod) & !PREEMPTED) as usize
    }

    /// Nominates pod `pod` to node `node` (0 clears it), and forgets that it was preempted. A
    /// state without the table keeps no nomination: only a model whose pods cannot preempt
    /// has none, and it never nominates.
    pub fn nominate(&mut self, pod: usize, node: usize) {
        self.set_entry(pod, node as u16);
    }

    /// Marks pod `pod`, being deleted by a preemption, as terminating because of it.
    pub fn mark_preempted(&mut self, pod: usize) {
        let entry = self.entry(pod);
        self.set_entry(pod, entry | PREEMPTED);
    }

    /// Pod `pod`'s entry with its nominated node renamed by `node_new` (the mark kept), for
    /// an encoding under a renaming.
    pub(super) fn renamed_entry(&self, pod: usize, node_new: &[u32]) -> u16 {
        let entry = self.entry(pod);
        match entry & !PREEMPTED {
            0 => entry,
            node => node_new[node as usize] as u16 | (entry & PREEMPTED),
        }
    }

    /// Whether pod `pod` is terminating because a preemption deleted it.
    pub fn terminating_by_preemption(&self, pod: usize) -> bool {
        self.entry(pod) & PREEMPTED != 0
    }

    /// The nominated node of each pod slot, in slot order (empty when no table is kept).
    pub fn nominations(&self) -> impl ExactSizeIterator<Item = u16> + '_ {
        self.nomination_entries().map(|entry| entry & !PREEMPTED)
    }

    /// Each pod slot's entry as kept (the nominated node, and whether a preemption is
    /// deleting the pod), in slot order: what a snapshot of the pods depends on.
    pub fn nomination_entries(&self) -> impl ExactSizeIterator<Item = u16> + '_ {
        self.nomination_bytes()
            .chunks_exact(ENTRY_BYTES)
            .map(|pair| u16::from_ne_bytes([pair[0], pair[1]]))
    }
}
