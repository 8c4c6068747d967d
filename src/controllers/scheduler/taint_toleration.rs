//! TaintToleration: untolerated NoSchedule taints filter, PreferNoSchedule taints score.

use super::Cycle;

/// Rejects nodes with a NoSchedule taint type the pod does not tolerate.
pub fn filter(c: &mut Cycle) {
    for &t in &c.template.no_schedule {
        for n in c.node_ids() {
            if c.spec.node(n).taint_type == t {
                c.score[n] = -1;
                c.tainted[n] = true;
            }
        }
    }
}

/// Counts untolerated PreferNoSchedule taint types per node; fewer is better (reversed
/// normalisation, weight 3).
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
