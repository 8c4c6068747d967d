//! NodeAffinity: required terms filter (ORed), preferred terms score by weight.

use super::Cycle;

/// Rejects nodes matched by no required term; without required terms every node passes.
/// Passing nodes are remembered for the spread constraints' node inclusion policy.
pub fn filter(c: &mut Cycle) {
    if !c.template.affinity.iter().any(|t| t.required) {
        for n in c.node_ids() {
            c.affinity[n] = c.feasible(n);
        }
        return;
    }
    for term in c.template.affinity.iter().filter(|t| t.required) {
        for n in c.node_ids() {
            if term.matches(n) && c.feasible(n) {
                c.score[n] = 1;
                c.affinity[n] = true;
            }
        }
    }
    c.settle_marks();
}

/// Adds the weights of matching preferred terms, normalised, with weight 2 (nothing to add
/// without preferred terms).
pub fn score(c: &mut Cycle) {
    if c.template.affinity.iter().all(|t| t.required) {
        return;
    }
    for term in c.template.affinity.iter().filter(|t| !t.required) {
        for n in c.node_ids() {
            if term.matches(n) && c.feasible(n) {
                c.plugin_score[n] += term.weight;
            }
        }
    }
    c.normalize_and_add(false, 2);
}
