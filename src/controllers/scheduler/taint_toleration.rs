//! TaintToleration, as kube-scheduler's plugin
//! (`pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`): untolerated
//! NoSchedule and NoExecute taints filter, untolerated PreferNoSchedule taints score.
//!
//! Which taint types a template does not tolerate is decided once, when the input is read
//! ([`crate::cluster::Toleration::tolerates`]); here the lists are applied to each node's type.
//!
//! Kivi's `taintTolerationFilter` (`schedulerPlugins.pml`) filters NoSchedule taints only, so a
//! pod is scheduled onto a node whose NoExecute taint it does not tolerate and the taint
//! manager then evicts it, again and again: an eviction loop that Kubernetes cannot have.
//! kube-scheduler's `Filter` rejects both effects (`DoNotScheduleTaintsFilterFunc`), and so
//! does this filter. Pods bound by `nodeName` never reach the scheduler (Kivi's C7 is such a
//! loop, and stays one).

use super::Cycle;

/// Rejects nodes with a NoSchedule or NoExecute taint the pod does not tolerate
/// (`Filter`: UnschedulableAndUnresolvable).
pub fn filter(c: &mut Cycle) {
    for &t in c.template.no_schedule.iter().chain(&c.template.no_execute) {
        for n in c.node_ids() {
            if c.spec.node(n).taint_type == t {
                c.score[n] = -1;
                c.tainted[n] = true;
            }
        }
    }
}

/// Counts the untolerated PreferNoSchedule taints of each feasible node (`Score`: a type is
/// listed once per such taint); fewer is better (`NormalizeScore`: reversed default
/// normalisation; the plugin's default weight, 3).
pub fn score(c: &mut Cycle) {
    for &t in &c.template.prefer_no_schedule {
        for n in c.node_ids() {
            if c.spec.node(n).taint_type == t && c.feasible(n) {
                c.plugin_score[n] += 1;
            }
        }
    }
    c.normalize_and_add(true, 3);
}

#[cfg(test)]
mod tests {
    use super::super::{Buffers, Cycle, CycleNodes};
    use super::*;
    use crate::cluster::fixture::cases::{self, with_new_pod};
    use crate::cluster::fixture::Fixture;
    use crate::cluster::Toleration;

    /// C3's non-violation variant (three nodes with room for pod 6) with each node's taints,
    /// in Kivi's form, and the pod template's tolerations.
    fn c3_with(taints: [&[&str]; 3], tolerations: &[Toleration]) -> Fixture {
        let mut builder = cases::c3_non_violation_builder();
        for (node, taints) in taints.into_iter().enumerate() {
            for taint in taints {
                builder = builder.taint(node + 1, taint);
            }
        }
        for toleration in tolerations {
            builder = builder.toleration(1, toleration.clone());
        }
        builder.build()
    }

    /// The toleration Kivi writes as `text` (`key=value:Effect`, operator Equal).
    fn kivi(text: &str) -> Toleration {
        Toleration::parse(text).unwrap()
    }

    /// The toleration of every taint with key `key` (of every taint for an empty key).
    fn exists(key: &str) -> Toleration {
        Toleration::new(key, "Exists", "", "").unwrap()
    }

    /// Which of nodes 1–3 the filter lets pod 6 onto.
    fn feasible(cluster: &Fixture) -> [bool; 3] {
        let s = with_new_pod(&cluster.state);
        let nodes = CycleNodes::every_of(&cluster.spec);
        let mut c = Cycle::new(&cluster.spec, &s, 6, &mut Buffers::default(), &nodes, None);
        filter(&mut c);
        [1, 2, 3].map(|n| c.feasible(n))
    }

    /// Each node's TaintToleration score for pod 6, weighted.
    fn scores(cluster: &Fixture) -> [i32; 3] {
        let s = with_new_pod(&cluster.state);
        let nodes = CycleNodes::every_of(&cluster.spec);
        let mut c = Cycle::new(&cluster.spec, &s, 6, &mut Buffers::default(), &nodes, None);
        score(&mut c);
        [1, 2, 3].map(|n| c.score[n])
    }

    fn one_of_each_effect(tolerations: &[Toleration]) -> Fixture {
        c3_with(
            [
                &["dedicated=gpu:NoExecute"],
                &["dedicated=gpu:NoSchedule"],
                &["dedicated=gpu:PreferNoSchedule"],
            ],
            tolerations,
        )
    }

    #[test]
    fn no_execute_and_no_schedule_taints_filter_and_prefer_no_schedule_does_not() {
        assert_eq!(feasible(&one_of_each_effect(&[])), [false, false, true]);
        let no_execute = one_of_each_effect(&[kivi("dedicated=gpu:NoExecute")]);
        assert_eq!(feasible(&no_execute), [true, false, true]);
        let mismatch = one_of_each_effect(&[kivi("dedicated=cpu:NoExecute")]);
        assert_eq!(feasible(&mismatch), [false, false, true], "value mismatch");
        let exists_key = one_of_each_effect(&[exists("dedicated")]);
        assert_eq!(feasible(&exists_key), [true, true, true]);
        let everything = one_of_each_effect(&[exists("")]);
        assert_eq!(feasible(&everything), [true, true, true]);
    }

    #[test]
    fn untolerated_no_execute_taints_mark_the_node_for_spread_policies() {
        let cluster = one_of_each_effect(&[]);
        let s = with_new_pod(&cluster.state);
        let nodes = CycleNodes::every_of(&cluster.spec);
        let mut c = Cycle::new(&cluster.spec, &s, 6, &mut Buffers::default(), &nodes, None);
        filter(&mut c);
        assert_eq!([1, 2, 3].map(|n| c.tainted[n]), [true, true, false]);
    }

    #[test]
    fn the_score_counts_untolerated_prefer_no_schedule_taints_reversed() {
        let taints: [&[&str]; 3] = [
            &["a:PreferNoSchedule", "b=1:PreferNoSchedule"],
            &["a:PreferNoSchedule"],
            &[],
        ];
        // Raw counts 2, 1, 0: normalised to 100, 50, 0 of the largest, reversed, weight 3.
        assert_eq!(scores(&c3_with(taints, &[])), [0, 150, 300]);
        assert_eq!(scores(&c3_with(taints, &[exists("b")])), [0, 0, 300]);
        let all = [kivi("a:PreferNoSchedule"), kivi("b=1:PreferNoSchedule")];
        assert_eq!(scores(&c3_with(taints, &all)), [300, 300, 300]);
    }

    #[test]
    fn the_fit_error_names_the_first_untolerated_taint_of_each_node() {
        let cluster = c3_with(
            [
                &["soft:PreferNoSchedule", "dedicated=gpu:NoExecute"],
                &["dedicated=gpu:NoExecute", "spot:NoSchedule"],
                &["spot:NoSchedule"],
            ],
            &[],
        );
        let s = with_new_pod(&cluster.state);
        assert_eq!(
            super::super::fit_error::message(&cluster.spec, &s, 6).unwrap(),
            "0/3 nodes are available: 1 node(s) had untolerated taint {spot: }, 2 node(s) had \
             untolerated taint {dedicated: gpu}."
        );
    }
}
