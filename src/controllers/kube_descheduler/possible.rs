//! Which outcomes the descheduler can reach: [`is_possible`] searches the sequences of choices
//! (depth first, replaying each sequence from the start of the cycle) for one whose cycle gives
//! exactly a given outcome, pruning a sequence as soon as it evicts or refuses something the
//! outcome does not hold; [`sample`] collects the outcomes of cycles with random choices.

use super::choices::{Chooser, Pruned, RandomOptions};
use super::outcome::{Cycle, Event};
use super::Descheduler;
use std::collections::{BTreeMap, BTreeSet};

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
    /// The choices of the current sequence: (taken, options).
    stack: Vec<(usize, usize)>,
    depth: usize,
}

impl Search<'_> {
    /// Moves to the next sequence; false when every sequence has been tried.
    fn advance(&mut self) -> bool {
        self.stack.truncate(self.depth);
        while let Some((taken, options)) = self.stack.pop() {
            if taken + 1 < options {
                self.stack.push((taken + 1, options));
                return true;
            }
        }
        false
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
        let choice = match self.stack.get(self.depth) {
            Some((taken, _)) => *taken,
            None => {
                self.stack.push((0, options));
                0
            }
        };
        self.depth += 1;
        choice
    }

    fn observe(&mut self, event: &Event) -> Result<(), Pruned> {
        let pod = &self.names[event.pod];
        let allowed = match event.refusal {
            None => self.holds(event.plugin, pod),
            Some(refusal) => self.target.refused.contains(&format!(
                "{}:{pod}:{}",
                event.plugin,
                refusal.reason()
            )),
        };
        if allowed {
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
    };
    for runs in 1..=budget {
        search.depth = 0;
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
