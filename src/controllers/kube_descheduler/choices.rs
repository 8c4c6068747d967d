//! Where the real descheduler's decision depends on Go's randomised map iteration (the pod
//! index per node, the node lister, the plugins' own maps) or on an unstable sort, the model
//! asks a [`Chooser`]. One chooser always takes the first option (a canonical cycle, for
//! `kivi deschedule`), one takes them at random (a sample of the possible cycles), and the
//! search in [`super::possible`] walks every sequence of choices.

use super::outcome::Event;

/// A search branch that cannot lead to the outcome looked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pruned;

/// Decides the descheduler's nondeterministic choices, and may stop a cycle whose events
/// already rule out what is looked for.
pub trait Chooser {
    /// One of `options` (at least 1) alternatives, `0..options`.
    fn choose(&mut self, options: usize) -> usize;

    /// Sees each eviction and refusal as the cycle makes it.
    fn observe(&mut self, _event: &Event) -> Result<(), Pruned> {
        Ok(())
    }

    /// Sees the pods a plugin has chosen to evict before it tries them in some order:
    /// every one is tried (evicted or refused) unless `may_skip` (an eviction limit may
    /// end the tries early).
    fn chosen(&mut self, _plugin: &str, _pods: &[usize], _may_skip: bool) -> Result<(), Pruned> {
        Ok(())
    }

    /// Sees that `plugin` has made all its evictions and refusals of the cycle (it does not
    /// run again in it).
    fn finished(&mut self, _plugin: &str) -> Result<(), Pruned> {
        Ok(())
    }

    /// Sees a pod a plugin adds to the pods it will try to evict later; `node_limit` and
    /// `total_limit` say which limits the policy sets (either may end the tries early).
    fn selected(
        &mut self,
        _plugin: &str,
        _pod: usize,
        _node_limit: bool,
        _total_limit: bool,
    ) -> Result<(), Pruned> {
        Ok(())
    }
}

/// Takes `items[index]` out, chosen by `chooser` (no choice when there is one item).
pub fn take<T>(chooser: &mut dyn Chooser, items: &mut Vec<T>) -> T {
    let index = if items.len() == 1 {
        0
    } else {
        chooser.choose(items.len())
    };
    items.remove(index)
}

/// `count` of the `items`, as a set (in their order in `items`): every subset can be chosen,
/// each by one sequence of choices.
pub fn subset<T: Copy>(chooser: &mut dyn Chooser, items: &[T], count: usize) -> Vec<T> {
    let mut chosen = Vec::with_capacity(count);
    let mut from = 0;
    for left in (1..=count).rev() {
        let options = items.len() - from - (left - 1);
        let index = from
            + if options == 1 {
                0
            } else {
                chooser.choose(options)
            };
        chosen.push(items[index]);
        from = index + 1;
    }
    chosen
}

/// Reorders `items` in place, every permutation reachable.
pub fn shuffle<T>(chooser: &mut dyn Chooser, items: &mut Vec<T>) {
    let mut rest = std::mem::take(items);
    while !rest.is_empty() {
        let next = take(chooser, &mut rest);
        items.push(next);
    }
}

/// Always the first option: the cycle in the snapshot's order.
#[derive(Clone, Copy, Debug, Default)]
pub struct FirstOption;

impl Chooser for FirstOption {
    fn choose(&mut self, _options: usize) -> usize {
        0
    }
}

/// Options drawn by a seeded generator (xorshift64*), for sampling cycles.
#[derive(Clone, Debug)]
pub struct RandomOptions {
    state: u64,
}

impl RandomOptions {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        }
    }
}

impl Chooser for RandomOptions {
    fn choose(&mut self, options: usize) -> usize {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let value = self.state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (value % options as u64) as usize
    }
}

/// Replays a fixed list of choices (for tests).
#[cfg(test)]
pub(super) struct Script(pub Vec<usize>);

#[cfg(test)]
impl Chooser for Script {
    fn choose(&mut self, options: usize) -> usize {
        let choice = self.0.remove(0);
        assert!(choice < options);
        choice
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsets_are_chosen_in_order_without_repeats() {
        let items = [10, 11, 12, 13];
        assert_eq!(subset(&mut Script(vec![0, 0]), &items, 2), vec![10, 11]);
        assert_eq!(subset(&mut Script(vec![2]), &items, 1), vec![12]);
        assert_eq!(subset(&mut Script(vec![1, 1]), &items, 2), vec![11, 13]);
        assert_eq!(subset(&mut Script(vec![]), &items, 4), vec![10, 11, 12, 13]);
    }

    #[test]
    fn random_options_stay_in_range_and_vary() {
        let mut random = RandomOptions::new(7);
        let drawn: Vec<usize> = (0..100).map(|_| random.choose(3)).collect();
        assert!(drawn.iter().all(|d| *d < 3));
        assert!((0..3).all(|v| drawn.contains(&v)));
    }
}
