//! NodeName filter: a pod that names a node may only go there.

use super::Cycle;

/// Rejects every node but the one the template names (nothing to do when it names none).
pub fn filter(c: &mut Cycle) {
    let wanted = c.template.node_name;
    if wanted == 0 {
        return;
    }
    for n in c.node_ids() {
        if (wanted == 0 || c.spec.node(n).name == wanted) && c.feasible(n) {
            c.score[n] = 1;
        }
    }
    c.settle_marks();
}
