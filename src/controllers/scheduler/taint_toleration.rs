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
    use super::super::{Buffers, Cycle};
    use super::*;
    use crate::input::uniform::load_uniform;
    use crate::model::test_cases::with_new_pod;
    use crate::model::ClusterModel;
    use serde_json::{json, Value};

    /// C3's non-violation variant (three nodes with room for pod 6) with each node's taints
    /// and the pod template's tolerations replaced.
    fn c3_with(taints: [Value; 3], tolerations: Value) -> ClusterModel {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/cases/c3/original-non-violation.json"
        );
        let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for (node, taint) in taints.into_iter().enumerate() {
            if taint != json!([]) {
                doc["setup"]["nodes"][node]["taint"] = taint;
            }
        }
        doc["setup"]["podTemplates"][0]["toleration"] = tolerations;
        load_uniform(&doc).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Which of nodes 1–3 the filter lets pod 6 onto.
    fn feasible(model: &ClusterModel) -> [bool; 3] {
        let s = with_new_pod(model);
        let mut c = Cycle::new(model.spec(), &s, 6, &mut Buffers::default());
        filter(&mut c);
        [1, 2, 3].map(|n| c.feasible(n))
    }

    /// Each node's TaintToleration score for pod 6, weighted.
    fn scores(model: &ClusterModel) -> [i32; 3] {
        let s = with_new_pod(model);
        let mut c = Cycle::new(model.spec(), &s, 6, &mut Buffers::default());
        score(&mut c);
        [1, 2, 3].map(|n| c.score[n])
    }

    fn one_of_each_effect(tolerations: Value) -> ClusterModel {
        c3_with(
            [
                json!(["dedicated=gpu:NoExecute"]),
                json!(["dedicated=gpu:NoSchedule"]),
                json!(["dedicated=gpu:PreferNoSchedule"]),
            ],
            tolerations,
        )
    }

    #[test]
    fn no_execute_and_no_schedule_taints_filter_and_prefer_no_schedule_does_not() {
        assert_eq!(
            feasible(&one_of_each_effect(json!([]))),
            [false, false, true]
        );
        let no_execute = one_of_each_effect(json!(["dedicated=gpu:NoExecute"]));
        assert_eq!(feasible(&no_execute), [true, false, true]);
        let mismatch = one_of_each_effect(json!(["dedicated=cpu:NoExecute"]));
        assert_eq!(feasible(&mismatch), [false, false, true], "value mismatch");
        let exists = one_of_each_effect(json!([{"key": "dedicated", "operator": "Exists"}]));
        assert_eq!(feasible(&exists), [true, true, true]);
        let everything = one_of_each_effect(json!({"operator": "Exists"}));
        assert_eq!(feasible(&everything), [true, true, true]);
    }

    #[test]
    fn untolerated_no_execute_taints_mark_the_node_for_spread_policies() {
        let model = one_of_each_effect(json!([]));
        let s = with_new_pod(&model);
        let mut c = Cycle::new(model.spec(), &s, 6, &mut Buffers::default());
        filter(&mut c);
        assert_eq!([1, 2, 3].map(|n| c.tainted[n]), [true, true, false]);
    }

    #[test]
    fn the_score_counts_untolerated_prefer_no_schedule_taints_reversed() {
        let taints = [
            json!(["a:PreferNoSchedule", "b=1:PreferNoSchedule"]),
            json!(["a:PreferNoSchedule"]),
            json!([]),
        ];
        // Raw counts 2, 1, 0: normalised to 100, 50, 0 of the largest, reversed, weight 3.
        assert_eq!(scores(&c3_with(taints.clone(), json!([]))), [0, 150, 300]);
        let b = json!([{"key": "b", "operator": "Exists"}]);
        assert_eq!(scores(&c3_with(taints.clone(), b)), [0, 0, 300]);
        let all = json!(["a:PreferNoSchedule", "b=1:PreferNoSchedule"]);
        assert_eq!(scores(&c3_with(taints, all)), [300, 300, 300]);
    }

    #[test]
    fn the_fit_error_names_the_first_untolerated_taint_of_each_node() {
        let model = c3_with(
            [
                json!(["soft:PreferNoSchedule", "dedicated=gpu:NoExecute"]),
                json!(["dedicated=gpu:NoExecute", "spot:NoSchedule"]),
                json!(["spot:NoSchedule"]),
            ],
            json!([]),
        );
        let s = with_new_pod(&model);
        assert_eq!(
            super::super::fit_error::message(model.spec(), &s, 6).unwrap(),
            "0/3 nodes are available: 1 node(s) had untolerated taint {spot: }, 2 node(s) had \
             untolerated taint {dedicated: gpu}."
        );
    }
}
