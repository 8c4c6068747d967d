//! A set of pod ids for one controller step.

/// A set of pod ids as a bit set over a cluster's pod slots: the controllers' scratch for one
/// step (never part of a state).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodSet(Vec<u64>);

impl PodSet {
    /// An empty set for pod ids 1 to `pods`.
    pub fn new(pods: usize) -> Self {
        Self(vec![0; pods.div_ceil(64)])
    }

    /// Whether pod `id` is a member.
    pub fn contains(&self, id: usize) -> bool {
        self.0[(id - 1) / 64] & (1 << ((id - 1) % 64)) != 0
    }

    /// Adds pod `id`.
    pub fn insert(&mut self, id: usize) {
        self.0[(id - 1) / 64] |= 1 << ((id - 1) % 64);
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// The members in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(i, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    i * 64 + bit + 1
                })
            })
        })
    }
}
