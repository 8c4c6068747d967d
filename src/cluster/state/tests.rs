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
        (92, 14, 16, 88)
    );
    assert_eq!(
        ClusterState::new(5_000, 150_000, 1).heap_bytes(|requested| requested),
        2_470_180
    );
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

#[test]
fn a_pod_moved_to_the_head_is_dequeued_first_and_the_others_keep_their_order() {
    let mut s = ClusterState::new(0, 5, 0);
    for p in [4, 2, 5, 1] {
        s.enqueue(Queue::Scheduler, p);
    }
    assert!(s.move_to_head(Queue::Scheduler, 5));
    assert_eq!(s.pending(Queue::Scheduler), &[5, 4, 2, 1]);
    assert!(!s.move_to_head(Queue::Scheduler, 3), "3 is not queued");
    assert_eq!(s.dequeue(Queue::Scheduler), Some(5));
    assert_eq!(s.pending(Queue::Scheduler), &[4, 2, 1]);
}

#[test]
fn nominations_are_kept_after_the_views_and_tell_states_apart() {
    let plain = ClusterState::new(2, 3, 1);
    let mut s = plain.clone();
    assert!(!s.keeps_nominations());
    s.nominate(2, 1);
    assert_eq!(
        (s.nominated_node(2), &s),
        (0, &plain),
        "no table: nothing kept"
    );
    s.keep_nominations();
    s.nominate(2, 1);
    s.keep_views(2);
    assert_eq!(
        s.nominated_node(2),
        1,
        "the views keep the table after them"
    );
    s.pod_mut(3).loc = 2;
    s.save_view(0);
    assert_eq!(s.view(0), s.records_as_bytes());
    let mut other = s.clone();
    other.nominate(2, 2);
    assert_eq!(s.nominations().collect::<Vec<_>>(), [0, 1, 0]);
    assert_eq!(other.nominations().collect::<Vec<_>>(), [0, 2, 0]);
    assert_ne!(s, other);
    let (mut a, mut b, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
    s.encode(&mut a);
    other.encode(&mut b);
    assert_ne!(a, b);
    assert_ne!(s.fingerprint(&mut scratch), other.fingerprint(&mut scratch));
    other.nominate(2, 1);
    assert_eq!(s, other);
    assert_eq!(s.fingerprint(&mut scratch), other.fingerprint(&mut scratch));
}

#[test]
fn the_taint_bits_of_a_node_are_set_and_cleared_apart_and_the_no_execute_taint_is_the_old_byte() {
    let mut node = NodeState::default();
    node.set_no_execute_taint(true);
    assert_eq!(node.taints, 1, "the byte a `true` held");
    node.set_deletion_candidate(true);
    assert!(node.no_execute_taint() && node.deletion_candidate());
    node.set_no_execute_taint(false);
    assert!(!node.no_execute_taint() && node.deletion_candidate());
    assert_eq!(node.taints, node_taint::DELETION_CANDIDATE);
    node.set_deletion_candidate(false);
    assert_eq!(node, NodeState::default());
    assert_eq!(
        std::mem::size_of::<NodeState>(),
        14,
        "no byte added to a node's record"
    );
}

/// Two copies of one state hold the same node and pod records outside the ranges each wrote
/// since (what the fingerprint's comparison with the last state skips, and what a copy over a
/// sibling copies); a write to the source gives its later copies another source, and a state
/// never copied knows nothing.
#[test]
fn copies_of_one_state_differ_only_in_the_records_they_wrote() {
    let mut parent = ClusterState::new(4, 8, 1);
    assert_eq!(parent.writes_since_copy(), None);
    parent.pod_mut(3).cpu = 5;
    let (mut a, mut b) = (parent.clone(), parent.clone());
    a.pod_mut(2).cpu = 1;
    a.node_mut(4).cpu_left = 9;
    b.pod_mut(6).cpu = 2;
    b.pod_mut(7).memory = 3;
    let (wa, wb) = (a.writes_since_copy(), b.writes_since_copy());
    let (wa, wb) = (wa.expect("a copy"), wb.expect("a copy"));
    assert_eq!(wa.from, wb.from, "copied from one state");
    assert_eq!(
        (wa.written.clone(), wb.written.clone()),
        (
            Differing {
                nodes: 3..4,
                pods: 1..2
            },
            Differing {
                nodes: 0..0,
                pods: 5..7
            }
        )
    );
    let hull = wa.written.hull(&wb.written);
    assert_eq!(
        hull,
        Differing {
            nodes: 3..4,
            pods: 1..7
        }
    );
    for i in (0..8).filter(|i| !hull.pods.contains(i)) {
        assert_eq!(
            bytemuck::bytes_of(&a.pods()[i]),
            bytemuck::bytes_of(&b.pods()[i])
        );
    }
    // A copy over a sibling copies what differs (checked against the whole buffer in tests).
    let mut over = b.clone();
    over.clone_from(&a);
    assert_eq!(over, a);
    let mut child = a.clone();
    child.pod_mut(8).cpu = 4;
    child.clone_from(&a);
    assert_eq!(child, a);
    parent.pod_mut(4).cpu = 7;
    let later = parent.clone();
    let written = later.writes_since_copy().expect("a copy");
    assert_ne!(written.from, wa.from);
    assert_eq!(
        written.written,
        Differing {
            nodes: 0..0,
            pods: 0..0
        }
    );
    let mut whole = a.clone();
    whole.pods_mut();
    whole.nodes_mut();
    assert_eq!(
        whole.writes_since_copy().map(|w| w.written),
        Some(Differing {
            nodes: 0..4,
            pods: 0..8
        })
    );
}
