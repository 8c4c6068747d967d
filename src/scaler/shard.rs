//! Sharding a sweep over processes (`kivi check --shard I/N`): which topologies each shard
//! decides.
//!
//! A sweep's candidates (the topologies its mode may hand out, in Kivi's order) are dealt to
//! `N` shards so that each gets about the same expected work and a share of every size:
//! walking the candidates in order, each goes to the shard with the least expected work so
//! far (the lowest index on a tie). A topology's expected cost is the square of its cluster's
//! size (nodes plus pod slots), since bigger topologies store more states; consecutive
//! topologies in Kivi's order have similar sizes, so the deal interleaves them rather than
//! cutting the order into contiguous ranges, and the shards that run side by side finish at
//! about the same time. The deal depends only on the template and the options, so every shard
//! computes the same one on its own and `kivi merge` computes it again to name the shard that
//! owes a missing topology.
//!
//! What a shard checks: the fast-find mode runs over the shard's share alone. Levels 0–2 check
//! the share in order and stop at the share's first violation; level 3 gallops over the share
//! and backfills below its first violating probe, so each shard still ends with the first
//! violation of its share. The first violation of the whole sweep is the smallest of the
//! shards' first violations, and every topology before it is decided by its shard, so the
//! merged answer is the one a single run gives. `--all-violations` checks every topology of the
//! share. A shard may go on past the sweep's answer (it cannot know another shard's
//! violation): that is the price of shards that never talk to each other.

use super::template::Template;
use super::topology::Topology;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::str::FromStr;

/// The most shards a sweep may be split into (far more than any sweep has topologies to
/// spread; a bound keeps the deal's bookkeeping small).
pub const MAX_SHARDS: u32 = 100_000;

/// One shard of a sweep: `index` of `count` (from 0 to `count - 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shard {
    /// Which shard, from 0.
    pub index: u32,
    /// How many shards the sweep is split into.
    pub count: u32,
}

impl Shard {
    /// The topologies of `candidates` (a sweep's candidates, in order) that this shard decides,
    /// in order.
    pub fn share(&self, candidates: &[Topology], template: &Template) -> Vec<Topology> {
        owners(candidates, template, self.count)
            .into_iter()
            .zip(candidates)
            .filter(|&(owner, _)| owner == self.index)
            .map(|(_, topology)| topology.clone())
            .collect()
    }
}

/// For each topology of `candidates` (in order), the index of the shard of `count` that
/// decides it; see the module documentation for the deal.
pub fn owners(candidates: &[Topology], template: &Template, count: u32) -> Vec<u32> {
    // The least loaded shard first, the lowest index among equals.
    let mut load: BinaryHeap<Reverse<(u128, u32)>> =
        (0..count.max(1)).map(|index| Reverse((0, index))).collect();
    candidates
        .iter()
        .map(|topology| {
            let size = u128::from(topology.total_nodes() + template.pod_count(topology));
            let Reverse((work, owner)) = load.pop().expect("at least one shard");
            load.push(Reverse((work + size * size + 1, owner)));
            owner
        })
        .collect()
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Why a `--shard` argument is not `I/N`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardSyntaxError(String);

impl fmt::Display for ShardSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ShardSyntaxError {}

impl FromStr for Shard {
    type Err = ShardSyntaxError;

    /// `I/N`: shard `I` (from 0) of `N`, as a Kubernetes Indexed Job numbers its pods.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wrong = |why: &str| {
            ShardSyntaxError(format!(
                "'{text}': {why}; give I/N, shard I (from 0 to N-1) of N, e.g. 0/4"
            ))
        };
        let (index, count) = text.split_once('/').ok_or_else(|| wrong("no '/'"))?;
        let number = |part: &str| {
            part.trim()
                .parse::<u32>()
                .map_err(|_| wrong("not a number"))
        };
        let (index, count) = (number(index)?, number(count)?);
        if count == 0 || count > MAX_SHARDS {
            return Err(wrong(&format!("N must be from 1 to {MAX_SHARDS}")));
        }
        if index >= count {
            return Err(wrong("I must be below N"));
        }
        Ok(Self { index, count })
    }
}

impl Serialize for Shard {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Shard {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaler::{enumerate, EnumerationOptions};

    fn c3() -> Template {
        let text = include_str!("../../cases/c3/template-non-violation.json");
        Template::from_json(&serde_json::from_str(text).expect("JSON")).expect("template")
    }

    #[test]
    fn shards_are_read_as_index_of_count() {
        assert_eq!("2/4".parse(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(Shard { index: 0, count: 1 }.to_string(), "0/1");
        for wrong in ["4/4", "1", "a/2", "0/0", "-1/3", "0/100001"] {
            let error = wrong.parse::<Shard>().expect_err(wrong).to_string();
            assert!(error.contains("give I/N"), "{error}");
        }
    }

    #[test]
    fn every_candidate_goes_to_one_shard_and_the_work_is_balanced() {
        let template = c3();
        let order = enumerate(&template, &EnumerationOptions::default());
        let cost = |t: &Topology| {
            let size = u128::from(t.total_nodes() + template.pod_count(t));
            size * size + 1
        };
        let total: u128 = order.iter().map(cost).sum();
        let shards: Vec<Vec<Topology>> = (0..4)
            .map(|index| Shard { index, count: 4 }.share(&order, &template))
            .collect();
        let mut all: Vec<Topology> = shards.concat();
        all.sort();
        let mut expected = order.clone();
        expected.sort();
        assert_eq!(all, expected, "each candidate exactly once");
        for share in &shards {
            let work: u128 = share.iter().map(cost).sum();
            let largest = order.iter().map(cost).max().unwrap();
            assert!(work.abs_diff(total / 4) <= largest, "{work} of {total}");
        }
        // Interleaved: the first four candidates go to four different shards.
        let first: Vec<u32> = owners(&order[..4], &template, 4);
        assert_eq!(first, vec![0, 1, 2, 3]);
    }
}
