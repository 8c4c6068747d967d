//! TaintToleration (`pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`):
//! the filter rejects a node with a NoSchedule or NoExecute taint the pod does not tolerate,
//! naming the first; the score counts the PreferNoSchedule taints not tolerated by the pod's
//! tolerations of effect PreferNoSchedule or of every effect, and normalises reversed (fewer
//! is better).

use super::normalize::default_normalize;
use super::plugin::{Code, Plugin, Rejection};
use crate::cluster::kube::{Node, Pod};
use crate::cluster::taints::Toleration;
use crate::cluster::taints::{first_untolerated, intolerable_prefer_no_schedule, TaintEffect};

/// The effects the filter enforces (`helper.DoNotScheduleTaintsFilterFunc`).
pub const FILTERED_EFFECTS: [TaintEffect; 2] = [TaintEffect::NoSchedule, TaintEffect::NoExecute];

/// The filter (`TaintToleration.Filter`).
pub fn filter(pod: &Pod, node: &Node) -> Option<Rejection> {
    first_untolerated(&node.taints, &pod.tolerations, &FILTERED_EFFECTS).map(|taint| {
        Rejection::new(
            Plugin::TaintToleration,
            Code::UnschedulableAndUnresolvable,
            format!("node(s) had untolerated taint {}", taint.in_braces()),
        )
    })
}

/// The tolerations the score uses (`getAllTolerationPreferNoSchedule`): effect
/// PreferNoSchedule or none.
pub fn pre_score(pod: &Pod) -> Vec<Toleration> {
    pod.tolerations
        .iter()
        .filter(|t| t.effect.is_none_or(|e| e == TaintEffect::PreferNoSchedule))
        .cloned()
        .collect()
}

/// The raw score: untolerated PreferNoSchedule taints (`TaintToleration.Score`).
pub fn score(tolerations: &[Toleration], node: &Node) -> i64 {
    intolerable_prefer_no_schedule(&node.taints, tolerations) as i64
}

/// `TaintToleration.NormalizeScore`: `100 - 100·count/max`.
pub fn normalize(scores: &mut [i64]) {
    default_normalize(scores, true);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::taints::Taint;

    #[test]
    fn fewer_untolerated_prefer_no_schedule_taints_score_higher() {
        let mut scores = [0, 1, 3];
        normalize(&mut scores);
        assert_eq!(scores, [100, 67, 0], "100 - 100*1/3 = 100 - 33");
        let mut none = [0, 0];
        normalize(&mut none);
        assert_eq!(none, [100, 100]);
    }

    #[test]
    fn only_prefer_no_schedule_or_effectless_tolerations_count_for_the_score() {
        let mut pod = Pod::new("default", "p");
        pod.tolerations = vec![
            Toleration::new("spot", "Exists", "", "NoSchedule").unwrap(),
            Toleration::new("soon", "Exists", "", "").unwrap(),
        ];
        let mut node = Node::new("n");
        node.taints = vec![
            Taint::parse("spot=true:PreferNoSchedule").unwrap(),
            Taint::parse("soon=x:PreferNoSchedule").unwrap(),
        ];
        assert_eq!(score(&pre_score(&pod), &node), 1);
    }
}
