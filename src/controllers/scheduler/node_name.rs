//! NodeName filter: a pod that names a node may only go there.

use super::Cycle;

/// Rejects every node but the one the template names (no-op when it names none).
pub fn filter(c: &mut Cycle) {
    let wanted = c.template.node_name;
    for n in c.node_ids() {
        if (wanted == 0 || c.spec.node(n).name == wanted) && c.feasible(n) {
            c.score[n] = 1;
        }
    }
    c.settle_marks();
}
