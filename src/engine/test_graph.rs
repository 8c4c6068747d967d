//! An explicit graph as a [`Model`], for the unit tests of the lasso searches (`cndfs`,
//! `shortest`): states are node numbers, actions edge numbers, node 0 is initial, and each
//! edge may be marked (the transitions an accepting cycle must take).

use super::model::{Model, Property, WorkerBounds};
use super::rng::SplitMix64;

/// An explicit graph: states are node numbers, actions edge numbers; node 0 is initial.
pub(crate) struct Graph {
    /// Per node: its edges (target, marked).
    pub(crate) edges: Vec<Vec<(u32, bool)>>,
}

impl Model for Graph {
    type State = u32;
    type Action = u32;
    type Worker = ();

    fn worker(&self, _: WorkerBounds) {}
    fn init_states(&self) -> Vec<u32> {
        vec![0]
    }
    fn actions(&self, _: &mut (), s: &u32, out: &mut Vec<u32>) {
        out.extend(0..self.edges[*s as usize].len() as u32);
    }
    fn next_state(&self, _: &mut (), s: &u32, a: &u32) -> Option<u32> {
        Some(self.edges[*s as usize][*a as usize].0)
    }
    fn encode(&self, _: &mut (), s: &u32, out: &mut Vec<u8>) {
        out.extend_from_slice(&s.to_le_bytes());
    }
    fn properties(&self) -> Vec<Property> {
        Vec::new()
    }
    fn holds(&self, _: &mut (), _: usize, _: &u32) -> bool {
        true
    }
}

impl Graph {
    /// Whether a transition takes a marked edge, as the lasso searches ask it.
    pub(crate) fn marked(&self) -> impl Fn(&u32, &u32, &u32) -> bool + Sync + '_ {
        |s, a, _| self.edges[*s as usize][*a as usize].1
    }

    /// A random graph of `nodes` nodes, between `least` and `most` edges each, an edge marked
    /// with probability 1 in `rarity`.
    pub(crate) fn random(
        rng: &mut SplitMix64,
        nodes: usize,
        (least, most): (usize, usize),
        rarity: usize,
    ) -> Graph {
        let edges = (0..nodes)
            .map(|_| {
                (0..least + rng.below(most - least + 1))
                    .map(|_| (rng.below(nodes) as u32, rng.below(rarity) == 0))
                    .collect()
            })
            .collect();
        Graph { edges }
    }
}
