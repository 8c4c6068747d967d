//! Which outcomes the descheduler can reach: [`is_possible`] searches the sequences of choices
//! (depth first, replaying each sequence from the start of the cycle) for one whose cycle gives
//! exactly a given outcome, pruning a sequence as soon as it evicts or refuses something the
//! outcome does not hold or a plugin finishes without all of its part of the outcome;
//! [`sample`] collects the outcomes of cycles with random choices.
//!
//! A depth-first walk varies the last choices first: where an early choice already rules the
//! outcome out but only the end of the cycle shows it, the walk can spend any budget below
//! that choice. So after [`FIRST_WALK`] cycles the search restarts, again and again, each time
//! with the options of every choice point rotated by a random offset (a walk still covers all
//! sequences, in another order), for [`RESTART_UNIT`] cycles times the next term of Luby's
//! sequence (1, 1, 2, 1, 1, 2, 4, …): a mix of short and long walks that needs no restart
//! length tuned to the outcome. The answer stays exact: an outcome is reached only by a cycle
//! that gives it, and ruled out only by a walk that has tried every sequence.

use super::choices::{Chooser, Pruned, RandomOptions};
use super::outcome::{Cycle, Event};
use super::Descheduler;
use std::collections::{BTreeMap, BTreeSet};

/// Cycles of the first walk, options in their own order, before the first restart.
const FIRST_WALK: usize = 300;
/// Cycles of a restart per term of Luby's sequence.
const RESTART_UNIT: usize = 20;

/// An outcome as the recorded files compare them: the pods evicted (by plugin, when the
/// plugins are told apart) and the refusals as `plugin:pod:reason`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Outcome {
    /// Pod names evicted.
    pub evicted: BTreeSet<String>,
    /// Plugin → pod names it evicted; empty when the outcome does not tell plugins apart.
    pub by_plugin: BTreeMap<String, BTreeSet<String>>,
    /// `plugin:pod:reason` of every refusal.
    pub refused: BTreeSet<String>,
}

impl Outcome {
    /// The outcome of `cycle`; `by_plugin` is filled when more than one plugin ran.
    pub fn of(cycle: &Cycle, descheduler: &Descheduler) -> Self {
        let mut outcome = Self::default();
        let split = cycle.plugins_run.len() > 1;
        if split {
            for plugin in &cycle.plugins_run {
                outcome.by_plugin.entry(plugin.to_string()).or_default();
            }
        }
        for event in &cycle.events {
            let pod = descheduler.pod_name(event.pod);
            match event.refusal {
                None => {
                    if split {
                        outcome
                            .by_plugin
                            .entry(event.plugin.to_string())
                            .or_default()
                            .insert(pod.clone());
                    }
                    outcome.evicted.insert(pod);
                }
                Some(refusal) => {
                    outcome
                        .refused
                        .insert(format!("{}:{pod}:{}", event.plugin, refusal.reason()));
                }
            }
        }
        outcome
    }
}

/// The answer of [`is_possible`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Possibility {
    /// Some sequence of choices gives the outcome; the number of cycles run to find it.
    Reached(usize),
    /// No sequence gives it.
    Impossible,
    /// The search stopped after the given number of cycles without an answer.
    Undecided(usize),
}

/// A depth-first walk over choice sequences, looking for `target`.
struct Search<'t> {
    target: &'t Outcome,
    names: &'t [String],
    /// Each pod's node name.
    nodes: &'t [String],
    /// The choices of the current sequence: (taken, options, offset); the option chosen is
    /// `(taken + offset) % options`.
    stack: Vec<(usize, usize, usize)>,
    depth: usize,
    /// Draws each new choice point's offset; none in the first walk (every offset 0).
    rotation: Option<RandomOptions>,
    /// The evictions (plugin, pod) and refusals (as the outcome writes them) of the current
    /// cycle so far.
    evicted: BTreeSet<(String, String)>,
    refused: BTreeSet<String>,
}

impl Search<'_> {
    /// Moves to the next sequence; false when every sequence has been tried.
    fn advance(&mut self) -> bool {
        self.stack.truncate(self.depth);
        while let Some((taken, options, offset)) = self.stack.pop() {
            if taken + 1 < options {
                self.stack.push((taken + 1, options, offset));
                return true;
            }
        }
        false
    }

    /// Starts a new walk whose options are rotated by offsets drawn from `seed`.
    fn restart(&mut self, seed: u64) {
        self.stack.clear();
        self.rotation = Some(RandomOptions::new(seed));
    }

    fn holds(&self, plugin: &str, pod: &str) -> bool {
        if self.target.by_plugin.is_empty() {
            self.target.evicted.contains(pod)
        } else {
            self.target
                .by_plugin
                .get(plugin)
                .is_some_and(|pods| pods.contains(pod))
        }
    }
}

impl Chooser for Search<'_> {
    fn choose(&mut self, options: usize) -> usize {
        let (taken, offset) = match self.stack.get(self.depth) {
            Some((taken, _, offset)) => (*taken, *offset),
            None => {
                let offset = self.rotation.as_mut().map_or(0, |r| r.choose(options));
                self.stack.push((0, options, offset));
                (0, offset)
            }
        };
        self.depth += 1;
        (taken + offset) % options
    }

    fn observe(&mut self, event: &Event) -> Result<(), Pruned> {
        let pod = &self.names[event.pod];
        let allowed = match event.refusal {
            None => {
                self.evicted.insert((event.plugin.to_string(), pod.clone()));
                self.holds(event.plugin, pod)
            }
            Some(refusal) => {
                let refused = format!("{}:{pod}:{}", event.plugin, refusal.reason());
                let allowed = self.target.refused.contains(&refused);
                self.refused.insert(refused);
                allowed
            }
        };
        if allowed {
            Ok(())
        } else {
            Err(Pruned)
        }
    }

    /// Prunes a cycle whose finished plugin has left out a refusal of the target's, or (where
    /// the target tells plugins apart) an eviction.
    fn finished(&mut self, plugin: &str) -> Result<(), Pruned> {
        let prefix = format!("{plugin}:");
        let refusals = self
            .target
            .refused
            .iter()
            .filter(|r| r.starts_with(&prefix))
            .all(|r| self.refused.contains(r));
        let evictions = self
            .target
            .by_plugin
            .get(plugin)
            .into_iter()
            .flatten()
            .all(|pod| self.evicted.contains(&(plugin.to_string(), pod.clone())));
        if refusals && evictions {
            Ok(())
        } else {
            Err(Pruned)
        }
    }

    fn chosen(&mut self, plugin: &str, pods: &[usize], may_skip: bool) -> Result<(), Pruned> {
        let chosen: BTreeSet<&str> = pods.iter().map(|&p| self.names[p].as_str()).collect();
        let wanted = self.wanted(plugin);
        if wanted.is_subset(&chosen) && (may_skip || chosen.is_subset(&wanted)) {
            Ok(())
        } else {
            Err(Pruned)
        }
    }

    fn selected(
        &mut self,
        plugin: &str,
        pod: usize,
        node_limit: bool,
        total_limit: bool,
    ) -> Result<(), Pruned> {
        let name = self.names[pod].as_str();
        if self.wanted(plugin).contains(name) {
            return Ok(());
        }
        let prefix = format!("{plugin}:");
        let skippable = self.target.refused.iter().any(|r| {
            let Some(rest) = r.strip_prefix(&prefix) else {
                return false;
            };
            (total_limit && rest.ends_with(":total_limit"))
                || (node_limit
                    && rest.strip_suffix(":node_limit").is_some_and(|other| {
                        self.names
                            .iter()
                            .position(|n| n == other)
                            .is_some_and(|o| self.nodes[o] == self.nodes[pod])
                    }))
        });
        if skippable {
            Ok(())
        } else {
            Err(Pruned)
        }
    }
}

impl Search<'_> {
    /// The pods `plugin` must try in the target: those it evicts and those whose eviction it
    /// has refused (topologyBalanceNodeFit skips aside: those are never tried).
    fn wanted(&self, plugin: &str) -> BTreeSet<&str> {
        let prefix = format!("{plugin}:");
        let mut wanted: BTreeSet<&str> = self
            .target
            .refused
            .iter()
            .filter_map(|r| r.strip_prefix(&prefix))
            .filter(|r| !r.ends_with(":topologyBalanceNodeFit"))
            .filter_map(|r| r.rsplit_once(':').map(|(pod, _)| pod))
            .collect();
        if self.target.by_plugin.is_empty() {
            wanted.extend(self.target.evicted.iter().map(String::as_str));
        } else {
            wanted.extend(
                self.target
                    .by_plugin
                    .get(plugin)
                    .into_iter()
                    .flatten()
                    .map(String::as_str),
            );
        }
        wanted
    }
}

/// The `i`-th term (from 1) of Luby's sequence: 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8, …
fn luby(i: usize) -> usize {
    let mut i = i;
    loop {
        let mut k = 1;
        while (1 << k) - 1 < i {
            k += 1;
        }
        if (1 << k) - 1 == i {
            return 1 << (k - 1);
        }
        i -= (1 << (k - 1)) - 1;
    }
}

/// Whether some cycle of `descheduler` gives exactly `target`, trying at most `budget` cycles.
pub fn is_possible(descheduler: &Descheduler, target: &Outcome, budget: usize) -> Possibility {
    let names: Vec<String> = (0..descheduler.snapshot.pods.len())
        .map(|p| descheduler.pod_name(p))
        .collect();
    let nodes: Vec<String> = descheduler
        .snapshot
        .pods
        .iter()
        .map(|p| p.node_name.clone().unwrap_or_default())
        .collect();
    let mut search = Search {
        target,
        names: &names,
        nodes: &nodes,
        stack: Vec::new(),
        depth: 0,
        rotation: None,
        evicted: BTreeSet::new(),
        refused: BTreeSet::new(),
    };
    let (mut restarts, mut next_restart) = (0, FIRST_WALK);
    for runs in 1..=budget {
        if runs == next_restart {
            restarts += 1;
            search.restart(1 + restarts as u64);
            next_restart = runs + RESTART_UNIT * luby(restarts);
        }
        search.depth = 0;
        search.evicted.clear();
        search.refused.clear();
        if let Ok(cycle) = descheduler.run(&mut search) {
            if Outcome::of(&cycle, descheduler) == *target {
                return Possibility::Reached(runs);
            }
        }
        if !search.advance() {
            return Possibility::Impossible;
        }
    }
    Possibility::Undecided(budget)
}

/// The distinct outcomes of `runs` cycles with random choices from `seed`, with how often each
/// came up.
pub fn sample(descheduler: &Descheduler, runs: usize, seed: u64) -> BTreeMap<Outcome, usize> {
    let mut random = RandomOptions::new(seed);
    let mut seen = BTreeMap::new();
    for _ in 0..runs {
        if let Ok(cycle) = descheduler.run(&mut random) {
            *seen.entry(Outcome::of(&cycle, descheduler)).or_default() += 1;
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::luby;

    #[test]
    fn restart_lengths_follow_lubys_sequence() {
        let terms: Vec<usize> = (1..=15).map(luby).collect();
        assert_eq!(terms, [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]);
    }
}
