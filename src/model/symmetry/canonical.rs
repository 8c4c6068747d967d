//! The canonical form ([`Symmetry::encode`]): the state renamed so that its nodes are sorted
//! within their classes by what they hold and its pods by their new node (the one each counts
//! on: [`counted_on`]) and what they are.
//! Equal forms exactly for renamings but where nodes tie on every sort key (then a state may
//! keep two forms); the search fingerprints by [`Symmetry::fingerprint`] instead, and the form
//! is what the tests compare it with.

use super::keys::{counted_on, node_prefix, NodeKey};
use super::scratch::Scratch;
use super::Symmetry;
use crate::cluster::{ClusterState, Renaming};

impl Symmetry {
    /// Appends the canonical encoding of `state` to `out`: the state renamed to its canonical
    /// order (see the module documentation).
    pub fn encode(&self, state: &ClusterState, scratch: &mut Scratch, out: &mut Vec<u8>) {
        self.canonical_order(state, scratch);
        let renaming = Renaming {
            node_order: &scratch.node_order,
            node_new: &scratch.node_new,
            pod_order: &scratch.pod_order,
            pod_new: &scratch.pod_new,
            node_events: self.node_classes.failure_events(),
            queues_as_sets: self.queues_as_sets,
        };
        self.encode_renamed(state, &renaming, out);
    }

    /// Appends `state` renamed by `renaming` ([`ClusterState::encode_renamed`]) and, where pods
    /// are permuted, the input-label class of each pod in its new order
    /// ([`Symmetry::input_label_class`]): a record does not say which input labels its pod
    /// carries, and two pods of alike records but different input labels are not renamings.
    pub(super) fn encode_renamed(
        &self,
        state: &ClusterState,
        renaming: &Renaming,
        out: &mut Vec<u8>,
    ) {
        state.encode_renamed(renaming, out);
        if self.pod_slot_classes.is_some() {
            for &old in renaming.pod_order {
                let pod = state.pod(old as usize).settled();
                let class = self.input_label_class(old as usize, &pod);
                out.extend_from_slice(&class.to_le_bytes());
            }
        }
    }

    /// Fills the scratch's orders and renamings for `state`: nodes sorted by their keys, then
    /// pods by their new node and content hash. Any order gives a renaming of the state, so the
    /// encoding never merges states that are not permutations of each other; sorting by keys
    /// makes permutations of a state give one order (pods that tie on node and hash are alike,
    /// bar a hash collision, which would only keep two forms of one state).
    fn canonical_order(&self, state: &ClusterState, scratch: &mut Scratch) {
        let (nodes, pods) = (state.nodes().len(), state.pods().len());
        self.place_pods(state, scratch, false);
        let mut node_keys = std::mem::take(&mut scratch.node_keys);
        node_keys.clear();
        let mut last: Option<(NodeKey, u128)> = None;
        for n in 1..=nodes {
            let inputs = self.node_key(state, n, scratch, scratch.node_sum[n]);
            let prefix = match last {
                Some((seen, prefix)) if seen == inputs => prefix,
                _ => {
                    let prefix = node_prefix(inputs);
                    last = Some((inputs, prefix));
                    prefix
                }
            };
            node_keys.push(prefix | n as u128);
        }
        order_by_prefix(
            &mut node_keys,
            &mut scratch.prefix_groups,
            &mut scratch.node_order,
        );
        scratch.node_keys = node_keys;
        for (k, &old) in scratch.node_order.iter().enumerate() {
            scratch.node_new[old as usize] = k as u32 + 1;
        }
        if self.pod_slot_classes.is_some() {
            // By new node, then content hash, then id: the pods are dealt into one bucket per
            // new node (0: on none) in one pass, and each bucket is sorted by hash and id, which
            // is the order of sorting the (node, hash, id) keys whole, for a sort of each
            // node's few pods and of the unplaced ones instead of one of every pod slot.
            let node_new = &scratch.node_new;
            let new_node = |p: usize| match counted_on(state, p) {
                0 => 0,
                node => node_new[node] as usize,
            };
            let ends = &mut scratch.pod_buckets;
            ends.clear();
            ends.resize(nodes + 2, 0);
            for p in 1..=pods {
                ends[new_node(p) + 1] += 1;
            }
            for b in 1..ends.len() {
                ends[b] += ends[b - 1];
            }
            let mut pod_keys = std::mem::take(&mut scratch.pod_keys);
            pod_keys.clear();
            pod_keys.resize(pods, 0);
            for p in 1..=pods {
                let next = &mut ends[new_node(p)];
                pod_keys[*next as usize] = u128::from(scratch.pod_hash[p]) << 32 | p as u128;
                *next += 1;
            }
            let mut start = 0;
            for &end in &ends[..=nodes] {
                order_bucket(
                    &mut pod_keys[start..end as usize],
                    &mut scratch.prefix_groups,
                    &mut scratch.bucket_order,
                    &mut scratch.pod_order,
                );
                start = end as usize;
            }
            scratch.pod_keys = pod_keys;
        } else {
            scratch.pod_order.extend(1..=pods as u32);
        }
        for (k, &old) in scratch.pod_order.iter().enumerate() {
            scratch.pod_new[old as usize] = k as u32 + 1;
        }
    }
}

/// Fills `order` with the ids in `keys` (each key a prefix in its high 96 bits and a distinct
/// id in its low 32, given in ascending id order) sorted by key: by prefix, then by id.
///
/// A large cluster's nodes share few prefixes (alike nodes in alike states), so the ids are
/// dealt into one bucket per distinct prefix, in one pass; a few keys, or keys with more than
/// [`MAX_BUCKETS`] distinct prefixes, are sorted (in place). `buckets` is scratch.
pub(super) fn order_by_prefix(
    keys: &mut [u128],
    buckets: &mut Vec<(u128, u32)>,
    order: &mut Vec<u32>,
) {
    const PREFIX: u128 = !0 << 32;
    if keys.len() <= MAX_BUCKETS {
        return order_by_sorting(keys, order);
    }
    buckets.clear();
    let mut last = 0;
    let mut too_many = false;
    for &key in keys.iter() {
        let prefix = key & PREFIX;
        if buckets.get(last).is_none_or(|&(seen, _)| seen != prefix) {
            match buckets.iter().position(|&(seen, _)| seen == prefix) {
                Some(at) => last = at,
                None if buckets.len() == MAX_BUCKETS => {
                    too_many = true;
                    break;
                }
                None => {
                    last = buckets.len();
                    buckets.push((prefix, 0));
                }
            }
        }
        buckets[last].1 += 1;
    }
    if too_many {
        return order_by_sorting(keys, order);
    }
    buckets.sort_unstable();
    let mut start = 0;
    for bucket in buckets.iter_mut() {
        let count = bucket.1;
        bucket.1 = start;
        start += count;
    }
    order.clear();
    order.resize(keys.len(), 0);
    let mut last = 0;
    for &key in keys.iter() {
        let prefix = key & PREFIX;
        if buckets[last].0 != prefix {
            last = buckets
                .binary_search_by_key(&prefix, |&(seen, _)| seen)
                .expect("every prefix has a bucket");
        }
        order[buckets[last].1 as usize] = key as u32;
        buckets[last].1 += 1;
    }
}

/// Appends to `order` the ids in one bucket of pod `keys` (each a content hash above a distinct
/// id, dealt in ascending id order) sorted by key. A bucket is mostly alike pods, so it is
/// often sorted already (checked in one pass) or holds few distinct hashes, which
/// [`order_by_prefix`] deals out in one pass instead of sorting (the unplaced pod slots of a
/// large cluster are thousands of alike idle slots). `groups` and `dealt` are scratch.
fn order_bucket(
    keys: &mut [u128],
    groups: &mut Vec<(u128, u32)>,
    dealt: &mut Vec<u32>,
    order: &mut Vec<u32>,
) {
    if !keys.is_sorted() {
        order_by_prefix(keys, groups, dealt);
        order.extend_from_slice(dealt);
        return;
    }
    order.extend(keys.iter().map(|&key| key as u32));
}

/// [`order_by_prefix`] by sorting `keys` in place.
fn order_by_sorting(keys: &mut [u128], order: &mut Vec<u32>) {
    keys.sort_unstable();
    order.clear();
    order.extend(keys.iter().map(|&key| key as u32));
}

/// Most distinct prefixes [`order_by_prefix`] deals into buckets before it sorts instead (and
/// fewest keys it deals at all: a small cluster's keys are sorted).
const MAX_BUCKETS: usize = 16;
