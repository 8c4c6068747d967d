//! The order a plugin lists its pods in, chosen lazily and kept for the whole plugin run.
//!
//! `podutil.ListPodsOnNodes` (descheduler `pkg/descheduler/pod/pods.go`) lists the pods node
//! by node, in the order of the `nodes` slice (the node lister's, a Go map order), each node's
//! pods in its informer index's order (a set: a Go map order). Whatever depends on that order
//! must depend on one order for the whole run: when the topology plugin takes pods of equal
//! rank from the back of a domain, a zone and a node of that zone give up the same pod, since
//! both lists were built from the one listing and sorted the same way (`sortDomains` uses
//! `sort.Slice`, which for up to 12 elements is an insertion sort: with its comparator, true
//! for equal pods, equal pods end up in reverse listing order).
//!
//! [`ListingOrder`] decides that order only as far as a question needs: asked which of some
//! pods comes first, it chooses among the nodes that no earlier answer puts behind another of
//! theirs, then likewise among the pods on that node, and remembers each answer as "this one
//! before those". The answers stay consistent with one total order (the remembered relation
//! has no cycle: a choice is always a minimal element), and every total order can be chosen.

use super::choices::{subset, Chooser};
use super::Descheduler;

/// The listing order, as far as decided: the nodes' order and each node's pods' order, from
/// the end the balancing takes pods from.
#[derive(Clone, Debug, Default)]
pub struct ListingOrder {
    nodes: PartialOrder,
    pods: PartialOrder,
}

impl ListingOrder {
    /// The `count` pods of `among` that come first from the taking end of the listing, in
    /// that order.
    pub fn first(
        &mut self,
        descheduler: &Descheduler,
        among: &[usize],
        count: usize,
        chooser: &mut dyn Chooser,
    ) -> Vec<usize> {
        let mut left: Vec<usize> = among.to_vec();
        let mut taken = Vec::with_capacity(count);
        while taken.len() < count && !left.is_empty() {
            let mut nodes: Vec<usize> = left
                .iter()
                .filter_map(|&p| descheduler.node_of[p])
                .collect();
            nodes.sort_unstable();
            nodes.dedup();
            let node = self.nodes.first_of(&nodes, chooser);
            // The listing is node by node: the node's pods of `left` all come before the rest.
            let on_node: Vec<usize> = left
                .iter()
                .copied()
                .filter(|&p| descheduler.node_of[p] == Some(node))
                .collect();
            let wanted = (count - taken.len()).min(on_node.len());
            let pods = self.pods.first_k(&on_node, wanted, chooser);
            left.retain(|p| !pods.contains(p));
            taken.extend(pods);
        }
        taken
    }
}

/// A strict order decided in part: the pairs `(a, b)` known to have `a` before `b`.
#[derive(Clone, Debug, Default)]
struct PartialOrder {
    before: Vec<(usize, usize)>,
}

impl PartialOrder {
    /// Which of `items` (not empty, distinct) comes first: one no known pair puts behind
    /// another of `items`, chosen when several are; remembered before all the others.
    fn first_of(&mut self, items: &[usize], chooser: &mut dyn Chooser) -> usize {
        let candidates: Vec<usize> = items
            .iter()
            .copied()
            .filter(|&c| !items.iter().any(|&x| x != c && self.precedes(x, c)))
            .collect();
        let first = match candidates.len() {
            1 => candidates[0],
            n => candidates[chooser.choose(n)],
        };
        for &other in items {
            if other != first && !self.precedes(first, other) {
                self.before.push((first, other));
            }
        }
        first
    }

    /// The `k` of `items` (distinct) that come first, as a set: when no known pair relates
    /// two of them, any `k` may (each set by one sequence of choices), else they are found one
    /// at a time. Remembered before all the others.
    fn first_k(&mut self, items: &[usize], k: usize, chooser: &mut dyn Chooser) -> Vec<usize> {
        let unrelated = items
            .iter()
            .all(|&a| items.iter().all(|&b| a == b || !self.precedes(a, b)));
        if !unrelated {
            let mut left = items.to_vec();
            let mut firsts = Vec::with_capacity(k);
            for _ in 0..k {
                let first = self.first_of(&left, chooser);
                left.retain(|&x| x != first);
                firsts.push(first);
            }
            return firsts;
        }
        let firsts = subset(chooser, items, k);
        for &first in &firsts {
            for &other in items {
                if !firsts.contains(&other) {
                    self.before.push((first, other));
                }
            }
        }
        firsts
    }

    /// Whether `a` is known to come before `b` (through the pairs, transitively).
    fn precedes(&self, a: usize, b: usize) -> bool {
        let mut reached = vec![a];
        let mut next = 0;
        while next < reached.len() {
            let from = reached[next];
            next += 1;
            for &(x, y) in &self.before {
                if x == from && !reached.contains(&y) {
                    if y == b {
                        return true;
                    }
                    reached.push(y);
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::super::choices::Script;
    use super::*;

    #[test]
    fn answers_stay_consistent_with_earlier_ones() {
        let mut order = PartialOrder::default();
        // 2 first among {1, 2, 3}: then 2 is first among {2, 3} with no choice.
        assert_eq!(order.first_of(&[1, 2, 3], &mut Script(vec![1])), 2);
        assert_eq!(order.first_of(&[3, 2], &mut Script(vec![])), 2);
        // Between 1 and 3 nothing is known yet: either may come first.
        assert_eq!(order.first_of(&[1, 3], &mut Script(vec![1])), 3);
        assert_eq!(order.first_of(&[1, 2, 3], &mut Script(vec![])), 2);
        assert!(order.precedes(2, 1) && order.precedes(3, 1) && !order.precedes(1, 3));
    }

    #[test]
    fn a_set_taken_first_stays_ahead_of_the_rest() {
        let mut order = PartialOrder::default();
        assert_eq!(
            order.first_k(&[1, 2, 3, 4], 2, &mut Script(vec![1, 1])),
            vec![2, 4]
        );
        // 1 and 3 are behind 2 and 4, but not yet ordered between themselves or between 2, 4.
        assert_eq!(order.first_of(&[1, 4], &mut Script(vec![])), 4);
        assert_eq!(order.first_of(&[2, 4], &mut Script(vec![0])), 2);
        assert_eq!(order.first_k(&[1, 3], 1, &mut Script(vec![1])), vec![3]);
        assert_eq!(
            order.first_k(&[4, 3, 1], 2, &mut Script(vec![])),
            vec![4, 3]
        );
    }

    #[test]
    fn every_order_of_three_can_be_chosen() {
        let mut seen = std::collections::BTreeSet::new();
        for a in 0..3 {
            for b in 0..2 {
                let mut order = PartialOrder::default();
                let mut script = Script(vec![a, b]);
                let first = order.first_of(&[0, 1, 2], &mut script);
                let rest: Vec<usize> = [0, 1, 2].into_iter().filter(|&x| x != first).collect();
                let second = order.first_of(&rest, &mut script);
                seen.insert((first, second));
            }
        }
        assert_eq!(seen.len(), 6);
    }
}
