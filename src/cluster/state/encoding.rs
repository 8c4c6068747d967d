//! A state's canonical encoding and fingerprint, as it is and with its nodes and pods renamed.

use super::queues::{Queue, QUEUES};
use super::{ClusterState, HEADER_BYTES};
use bytemuck::NoUninit;

impl ClusterState {
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

impl ClusterState {
    /// Writes the encoding of [`ClusterState::encode`] as the state would have it with its
    /// nodes and pods renamed by `renaming` (records reordered, pods' nodes and queued ids
    /// renamed, idle slots cleared as [`PodState::renamed`](super::PodState::renamed) says, and each event that travels
    /// with a node written with it: a node failure's done bit follows from its progress; the
    /// nomination table, if kept, in the pods' new order with its nodes renamed).
    /// Two states that differ only by the names of interchangeable nodes and pods give the same
    /// bytes when each is renamed to a canonical order.
    pub fn encode_renamed(&self, renaming: &Renaming, out: &mut Vec<u8>) {
        let events = self.events();
        let node_events = renaming
            .node_events
            .iter()
            .flatten()
            .fold(0, |mask, &e| mask | 1 << e);
        self.encode_header_without(node_events, out);
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
        out.extend_from_slice(&self.bytes()[self.deployments_offset()..self.nominations_offset()]);
        if self.keeps_nominations() {
            for &old in renaming.pod_order {
                let entry = self.renamed_entry(old as usize, renaming.node_new);
                out.extend_from_slice(&entry.to_le_bytes());
            }
        }
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
    /// header (each event in the mask `node_events`, which travels with its node, left out), the
    /// deployment records and what follows them, the queues' lengths, and the queues that
    /// hold no node or pod ids. A fingerprint under renamings adds the nodes and pods as
    /// multisets ([`crate::model::symmetry`]). The nomination table, if kept, is left out: its
    /// entries name nodes, and the fingerprint hashes each with its pod, on its node.
    pub fn encode_unnamed(&self, node_events: u16, out: &mut Vec<u8>) {
        self.encode_header_without(node_events, out);
        out.extend_from_slice(&self.bytes()[self.deployments_offset()..self.nominations_offset()]);
        out.extend_from_slice(&self.queue_lengths());
        for queue in [Queue::Deployment, Queue::Hpa, Queue::Descheduler] {
            put_le(self.pending(queue), u32::to_le_bytes, out);
        }
    }

    /// Writes the header with each event in the mask `node_events` (bit `e`: event `e`)
    /// cleared (its progress and done bit), as events that travel with their nodes are
    /// written with them.
    fn encode_header_without(&self, node_events: u16, out: &mut Vec<u8>) {
        if node_events == 0 {
            out.extend_from_slice(&self.bytes()[..HEADER_BYTES]);
        } else {
            let mut header = *self.header();
            header.events.done &= !node_events;
            let mut progress = header.events.progress;
            for (e, progress) in progress.iter_mut().enumerate() {
                if node_events & 1 << e != 0 {
                    *progress = 0;
                }
            }
            header.events.progress = progress;
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
