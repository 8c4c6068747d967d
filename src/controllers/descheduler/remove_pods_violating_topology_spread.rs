//! RemovePodsViolatingTopologySpreadConstraint: for each topology spread constraint of each pod
//! template, evicts pods from domains that hold too many matching pods.
//!
//! Only constraints of the kinds selected by the profile's `constraintsTopologySpread` are
//! balanced. A constraint's domains are the values of its topology key on ready nodes; its pods
//! are the pods on ready nodes that pass the evictor's filter and carry the constraint's labels.
//! A constraint is unbalanced when its fullest and emptiest domains differ by more than
//! `maxSkew`. Kivi's balancing then sorts the domains by pod count (stable) and moves pods from
//! the fullest towards the emptiest domain, never past the ideal average, and at most half the
//! excess skew at a time; each domain's first pods by id are evicted. Under `--tie-break any`
//! the real plugin's unstable sort and pod order are explored instead: equally full domains
//! take the evictions of their sorted places in every distinct way, and a domain's evictions
//! are any of its pods. Each constraint is
//! balanced on its own, without regard to the template's other constraints — the plugin bug
//! Kivi reports, which lets the descheduler undo what the scheduler's scoring prefers.
//!
//! Nodes without the topology key form domain 0: as in Kivi it counts towards the number of
//! domains and pods (and so the averages), but is never compared, sorted or evicted from.

use super::evictor;
use crate::cluster::{
    label_value, ClusterSpec, ClusterState, DeschedulerProfile, NodeStatus, PodSet, Recorder,
    TopologySpreadConstraint, Why, WriteBudget,
};
use crate::controllers::ties::Ties;

/// Runs the plugin: marks the pods to move for every covered constraint, then evicts them in
/// pod id order.
pub fn run(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    profile: &DeschedulerProfile,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
    ties: &mut Ties,
) {
    if writes.crashed() {
        return;
    }
    let mut marked = PodSet::new(spec.pods.len());
    for template in &spec.pod_templates {
        for con in &template.spread {
            if profile
                .constraints_topology_spread
                .covers(con.when_unsatisfiable)
                && !mark_pods_to_move(spec, state, profile, con, &mut marked, rec, ties)
            {
                return;
            }
        }
    }
    for pod in marked.iter() {
        evictor::evict(spec, state, pod, rec, writes);
    }
}

/// One domain in Kivi's sorted list.
#[derive(Clone, Copy, Default)]
struct Domain {
    value: u16,
    pods: i32,
    evict: i32,
}

/// Ceiling of `a / b` for positive `b`, as Kivi's `ceil` inline.
fn ceil_div(a: i32, b: i32) -> i32 {
    if a % b == 0 {
        a / b
    } else {
        a / b + 1
    }
}

/// Adds the pods the constraint `con` would move to `marked`; `false` when the picker of
/// `ties` ended the step.
fn mark_pods_to_move(
    spec: &ClusterSpec,
    state: &ClusterState,
    profile: &DeschedulerProfile,
    con: &TopologySpreadConstraint,
    marked: &mut PodSet,
    rec: &mut Recorder,
    ties: &mut Ties,
) -> bool {
    let key = con.topology_key;
    let values = spec.label_value_counts.get(key).copied().unwrap_or(0) as usize;
    let domain_of = |n: usize| label_value(&spec.node(n).labels, key) as usize;
    let ready = |n: usize| state.node(n).status == NodeStatus::Ready;

    let mut exists = vec![false; values + 1];
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); values + 1];
    let mut domains = 0usize;
    for n in (1..=spec.nodes.len()).filter(|&n| ready(n)) {
        let v = domain_of(n);
        if !exists[v] {
            exists[v] = true;
            domains += 1;
        }
    }
    let mut total = 0i32;
    for pod in 1..=spec.pods.len() {
        let loc = state.pod(pod).loc as usize;
        if loc == 0 || !ready(loc) || !evictor::passes_filter(spec, state, profile, pod) {
            continue;
        }
        let labels = spec.pod_labels(state, pod);
        if con
            .match_labels
            .iter()
            .all(|&(k, v)| label_value(labels, k) == v)
        {
            members[domain_of(loc)].push(pod);
            total += 1;
        }
    }

    let counted = || (1..=values).filter(|&v| exists[v]);
    let min = counted()
        .map(|v| members[v].len() as i32)
        .fold(spec.pods.len() as i32, i32::min);
    let max = counted().map(|v| members[v].len() as i32).fold(0, i32::max);
    if max - min <= con.max_skew {
        return true;
    }

    let mut sorted = vec![Domain::default(); values + 1];
    for (slot, v) in counted().enumerate() {
        sorted[slot] = Domain {
            value: v as u16,
            pods: members[v].len() as i32,
            evict: 0,
        };
    }
    let sorted = &mut sorted[..domains];
    sorted.sort_by_key(|d| d.pods);
    let counts: Vec<i32> = sorted.iter().map(|d| d.pods).collect();
    balance(sorted, total, con.max_skew);
    if ties.explores() && !assign_equal_domains(sorted, &counts, ties) {
        return false;
    }

    for d in sorted.iter().filter(|d| d.value != 0) {
        let Some(victims) = ties.combination(&members[d.value as usize], d.evict.max(0) as usize)
        else {
            return false;
        };
        for pod in victims {
            marked.insert(pod);
            rec.log(Some("DeScheduler"), || {
                format!(
                    "Pod violating TopoSpread constraints (topoKey {key}), Pod {pod} pending for \
                     deletion"
                )
            });
            rec.because(|| {
                let key_name = spec.label_keys.get(key).map_or("?", String::as_str);
                let counts: Vec<String> = counted()
                    .map(|v| format!("{key_name}={v}: {}", members[v].len()))
                    .collect();
                Why {
                    reason: format!(
                        "RemovePodsViolatingTopologySpreadConstraint: the domains of topology \
                         key {key_name} differ by {} matching pods, more than maxSkew {}",
                        max - min,
                        con.max_skew
                    ),
                    detail: format!(
                        "matching pods per domain [{}]: skew {} - {} = {} > maxSkew {}; \
                         balancing towards the average of {total} pods over {domains} domains \
                         evicts {} from {key_name}={}",
                        counts.join(", "),
                        max,
                        min,
                        max - min,
                        con.max_skew,
                        d.evict,
                        d.value
                    ),
                }
            });
        }
    }
    true
}

/// Under `--tie-break any`: the domains of each run of equally full places of the sorted list
/// (`counts`, as sorted, before balancing) take those places' evictions in whichever distinct
/// way `ties` picks — the largest eviction first, to any of the run's domains, and equal
/// evictions to domains in the run's order, so that each way is picked once; a domain left
/// over evicts nothing. `false` when the picker ended the step.
fn assign_equal_domains(sorted: &mut [Domain], counts: &[i32], ties: &mut Ties) -> bool {
    let mut start = 0;
    while start < sorted.len() {
        let end = start
            + counts[start..]
                .iter()
                .take_while(|&&c| c == counts[start])
                .count();
        let run = &mut sorted[start..end];
        let mut evictions: Vec<i32> = run.iter().map(|d| d.evict).filter(|&e| e > 0).collect();
        evictions.sort_unstable_by(|a, b| b.cmp(a));
        let mut open: Vec<usize> = (0..run.len()).collect();
        let mut assigned = vec![0; run.len()];
        for same in evictions.chunk_by(|a, b| a == b) {
            let Some(taken) = ties.combination(&open, same.len()) else {
                return false;
            };
            for &place in &taken {
                assigned[place] = same[0];
            }
            open.retain(|place| !taken.contains(place));
        }
        for (d, evict) in run.iter_mut().zip(assigned) {
            d.evict = evict;
        }
        start = end;
    }
    true
}

/// Kivi's `balanceDomains`: moves pods from the fullest towards the emptiest domains of the
/// sorted list, recording in each domain how many pods to evict.
fn balance(sorted: &mut [Domain], total: i32, max_skew: i32) {
    let n = sorted.len() as i32;
    let floor = total / n;
    let ceil = ceil_div(total, n);
    let (mut low, mut high) = (0usize, sorted.len() - 1);
    while low < high {
        if sorted[high].pods <= ceil {
            high -= 1;
        }
        let skew = sorted[high].pods - sorted[low].pods;
        if skew <= max_skew {
            low += 1;
            continue;
        }
        let moved = (sorted[high].pods - floor)
            .min(ceil - sorted[low].pods)
            .min(ceil_div(skew - max_skew, 2));
        if moved <= 0 {
            low += 1;
            continue;
        }
        sorted[high].evict += moved;
        sorted[high].pods -= moved;
        sorted[low].pods += moved;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::cases;

    fn domains(pods: &[i32]) -> Vec<Domain> {
        pods.iter()
            .enumerate()
            .map(|(i, &pods)| Domain {
                value: i as u16 + 1,
                pods,
                evict: 0,
            })
            .collect()
    }

    #[test]
    fn moves_half_the_excess_skew_towards_the_average() {
        let mut d = domains(&[1, 2, 3]);
        balance(&mut d, 6, 1);
        let evict: Vec<_> = d.iter().map(|d| d.evict).collect();
        assert_eq!(evict, [0, 0, 1]);
    }

    #[test]
    fn fills_the_emptiest_domains_one_after_another() {
        let mut d = domains(&[0, 0, 6]);
        balance(&mut d, 6, 1);
        let evict: Vec<_> = d.iter().map(|d| d.evict).collect();
        let after: Vec<_> = d.iter().map(|d| d.pods).collect();
        assert_eq!(evict, [0, 0, 4]);
        assert_eq!(after, [2, 2, 2]);
    }

    #[test]
    fn a_skew_within_max_skew_moves_nothing() {
        let mut d = domains(&[2, 3, 3]);
        balance(&mut d, 8, 1);
        assert!(d.iter().all(|d| d.evict == 0));
    }

    #[test]
    fn constraints_topology_spread_selects_the_constraints() {
        use crate::cluster::ConstraintsTopologySpread as C;
        use crate::cluster::WhenUnsatisfiable as W;
        assert!(C::DoNotSchedule.covers(W::DoNotSchedule));
        assert!(!C::DoNotSchedule.covers(W::ScheduleAnyway));
        assert!(C::ScheduleAnyway.covers(W::ScheduleAnyway));
        assert!(!C::ScheduleAnyway.covers(W::DoNotSchedule));
        assert!(C::Both.covers(W::ScheduleAnyway) && C::Both.covers(W::DoNotSchedule));
    }

    #[test]
    fn c8_evicts_the_first_pod_of_the_fullest_hostname_domain() {
        let cluster = cases::c8();
        let spec = &cluster.spec;
        let mut state = cluster.state.clone();
        for (pod, node) in [(1, 1), (2, 2), (3, 3), (4, 1), (5, 2), (6, 1)] {
            let p = state.pod_mut(pod);
            p.phase = crate::cluster::PodPhase::Running;
            p.loc = node;
            p.template = 1;
            p.template_labels = true;
        }
        let profile = &spec.descheduler.as_ref().unwrap().profiles[0];
        let mut rec = Recorder::on();
        run(
            spec,
            &mut state,
            profile,
            &mut rec,
            &mut WriteBudget::unlimited(),
            &mut Ties::lowest(),
        );
        let moved: Vec<_> = (1..=6)
            .filter(|&p| state.pod(p).phase == crate::cluster::PodPhase::Terminating)
            .collect();
        assert_eq!(
            moved,
            [1],
            "hostname: 3/2/1 pods, maxSkew 1; lifecycle: 3/3"
        );
        let tags: Vec<_> = rec.into_lines().iter().map(|l| l.controller).collect();
        assert_eq!(tags, [Some("DeScheduler"), Some("Descheduler")]);
    }
}
