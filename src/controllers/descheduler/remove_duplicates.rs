//! RemoveDuplicates: when several pods of one owner share a node, evicts the ones above the
//! owner's average per feasible node.
//!
//! As in Kivi, per owner (a deployment; Kivi compares owners only) the pods on ready nodes that
//! pass the evictor's filter are counted, and on each node every such pod after the first is a
//! duplicate. The feasible nodes are the ready nodes that the owner's template may land on by
//! node name, required node affinity and NoSchedule taints. With fewer than two, nothing is
//! evicted; otherwise, on each node holding `n` duplicates with `n + 1` above the average
//! (rounded up), the first `n + 1 - average` duplicates are evicted (under `--tie-break any`,
//! any `n + 1 - average` of the node's `n + 1` pods: the real plugin keeps whichever it lists
//! first). Like the real plugin it does not check that the evicted pods fit anywhere else —
//! one of the bugs Kivi reports.

use super::evictor;
use crate::cluster::{
    ClusterSpec, ClusterState, DeschedulerProfile, NodeStatus, Recorder, Why, WriteBudget,
};
use crate::controllers::ties::Ties;

/// Runs the plugin for every deployment.
pub fn run(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    profile: &DeschedulerProfile,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
    ties: &mut Ties,
) {
    for d in 1..=spec.deployments.len() {
        if writes.crashed() || ties.stopped() {
            return;
        }
        balance_owner(spec, state, profile, d, rec, writes, ties);
    }
}

/// One owner's evictable pods on ready nodes: per node (index = node id), ascending; on each
/// node every pod after the first is a duplicate.
struct Duplicates {
    pods: Vec<Vec<usize>>,
    occurrences: i32,
}

/// One pass over the pod slots: the owner's evictable pods on ready nodes, grouped by node.
fn duplicates(
    spec: &ClusterSpec,
    state: &ClusterState,
    profile: &DeschedulerProfile,
    d: usize,
) -> Duplicates {
    let mut dup = Duplicates {
        pods: vec![Vec::new(); spec.nodes.len() + 1],
        occurrences: 0,
    };
    for pod in 1..=spec.pods.len() {
        let p = state.pod(pod);
        let n = p.loc as usize;
        if n == 0
            || n > spec.nodes.len()
            || p.deployment as usize != d
            || state.node(n).status != NodeStatus::Ready
            || !evictor::passes_filter(spec, state, profile, pod)
        {
            continue;
        }
        dup.occurrences += 1;
        dup.pods[n].push(pod);
    }
    dup
}

/// Ready nodes the owner's pods may land on, or 0 when there are fewer than two.
fn target_nodes(spec: &ClusterSpec, state: &ClusterState, d: usize) -> i32 {
    let template = spec.template_or_none(state.deployment(d).template);
    let has_required = template.affinity.iter().any(|t| t.required);
    let count = (1..=spec.nodes.len())
        .filter(|&n| {
            let node = spec.node(n);
            state.node(n).status == NodeStatus::Ready
                && !template.no_schedule.contains(&node.taint_type)
                && (template.node_name == 0 || template.node_name == node.name)
                && (!has_required || template.affinity.iter().any(|t| t.required && t.matches(n)))
        })
        .count() as i32;
    if count > 1 {
        count
    } else {
        0
    }
}

fn balance_owner(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    profile: &DeschedulerProfile,
    d: usize,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
    ties: &mut Ties,
) {
    let dup = duplicates(spec, state, profile, d);
    if dup.pods.iter().all(|pods| pods.len() < 2) {
        return;
    }
    let targets = target_nodes(spec, state, d);
    if targets < 2 {
        return;
    }
    let upper_avg = (dup.occurrences + targets - 1) / targets;
    for n in 1..=spec.nodes.len() {
        let count = dup.pods[n].len().saturating_sub(1) as i32;
        if count == 0 || count < upper_avg {
            continue;
        }
        let excess = (count - (upper_avg - 1)) as usize;
        let victims = match ties.explores() {
            false => dup.pods[n][1..=excess].to_vec(),
            true => match ties.combination(&dup.pods[n], excess) {
                Some(victims) => victims,
                None => return,
            },
        };
        for pod in victims {
            if writes.crashed() {
                return;
            }
            let status = state.pod(pod).phase as u8;
            rec.log(Some("Descheduler"), || {
                format!("Duplicated Pod {pod} (status {status}) on node {n} pending for deletion!")
            });
            rec.because(|| Why {
                reason: format!(
                    "RemoveDuplicates: node {n} runs {} pods of deployment {d}, more than its \
                     share of the {} nodes that can take them",
                    count + 1,
                    targets
                ),
                detail: format!(
                    "{occurrences} pods of deployment {d} over {targets} feasible nodes: at \
                     most ceil({occurrences} / {targets}) = {upper_avg} per node; node {n} \
                     holds {} (1 + {count} duplicates), so the first {excess} duplicate(s) are \
                     evicted",
                    count + 1,
                    occurrences = dup.occurrences,
                ),
            });
            if !evictor::evict(spec, state, pod, rec, writes) {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::fixture::cases;
    use crate::cluster::{PodPhase, Queue, Recorder};
    use crate::controllers::descheduler;

    fn terminating(state: &crate::cluster::ClusterState) -> Vec<usize> {
        (1..=state.pods().len())
            .filter(|&p| state.pod(p).phase == PodPhase::Terminating)
            .collect()
    }

    #[test]
    fn evicts_duplicates_above_the_rounded_up_average_even_without_room_elsewhere() {
        let cluster = cases::c5();
        let mut state = cluster.state.clone();
        let mut rec = Recorder::on();
        descheduler::run(&cluster.spec, &mut state, &mut rec);
        assert_eq!(
            terminating(&state),
            [4],
            "5 pods on 3 nodes: average 2, node 3 holds 3"
        );
        assert_eq!(state.pending(Queue::Kubelet), [4]);
        assert_eq!({ state.deployment(1).in_deletion }, 1);
        assert!(state.queue_is_empty(Queue::Descheduler));
        let lines: Vec<_> = rec.into_lines().into_iter().map(|l| l.message).collect();
        assert_eq!(
            lines,
            [
                "Duplicated Pod 4 (status 1) on node 3 pending for deletion!",
                "Pod 4 on node 3 pending for deletion!"
            ]
        );
    }

    #[test]
    fn needs_two_feasible_nodes() {
        let cluster = cases::c5();
        let mut state = cluster.state.clone();
        state.node_mut(2).status = crate::cluster::NodeStatus::NotReady;
        state.node_mut(1).status = crate::cluster::NodeStatus::NotReady;
        descheduler::run(&cluster.spec, &mut state, &mut Recorder::off());
        assert!(terminating(&state).is_empty());
    }
}
