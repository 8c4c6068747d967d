//! One cluster topology: how many nodes of each node type and how many
//! replicas of each deployment type.

use std::fmt;
use std::str::FromStr;

/// A point of the scaling space: one count per node type and one per deployment type,
/// indexed like the template's `nodesTypes` and `dTypes`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Topology {
    nodes: Vec<u64>,
    replicas: Vec<u64>,
}

impl Topology {
    /// A topology with the given node counts (per node type) and replica counts
    /// (per deployment type).
    pub fn new(nodes: Vec<u64>, replicas: Vec<u64>) -> Topology {
        Topology { nodes, replicas }
    }

    /// Node count per node type.
    pub fn nodes(&self) -> &[u64] {
        &self.nodes
    }

    /// Replica count per deployment type, as enumerated (before instantiation
    /// clamps it to the type's bounds and the per-node cap).
    pub fn replicas(&self) -> &[u64] {
        &self.replicas
    }

    /// Number of nodes over all node types.
    pub fn total_nodes(&self) -> u64 {
        self.nodes.iter().sum()
    }

    /// Number of replicas over all deployment types.
    pub fn total_replicas(&self) -> u64 {
        self.replicas.iter().sum()
    }

    /// The command-line form `N0,N1,…:R0,R1,…` that [`FromStr`] reads back
    /// (`kivi check --topology`).
    pub fn argument(&self) -> String {
        let list = |counts: &[u64]| {
            counts
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        format!("{}:{}", list(&self.nodes), list(&self.replicas))
    }

    /// Kivi's sort key: total nodes plus a thousandth of each type's replicas,
    /// summed in floating point in Kivi's order so that ties break identically.
    pub(crate) fn kivi_sort_key(&self) -> f64 {
        let mut key = self.total_nodes() as f64;
        for &replicas in &self.replicas {
            key += replicas as f64 / 1000.0;
        }
        key
    }

    pub(crate) fn nodes_mut(&mut self) -> &mut Vec<u64> {
        &mut self.nodes
    }

    pub(crate) fn replicas_mut(&mut self) -> &mut Vec<u64> {
        &mut self.replicas
    }
}

/// Kivi's words: `{node type 0: 1, node type 1: 2, deployment type 0: 3}`.
impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nodes = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, count)| format!("node type {i}: {count}"));
        let replicas = self
            .replicas
            .iter()
            .enumerate()
            .map(|(i, count)| format!("deployment type {i}: {count}"));
        let parts: Vec<String> = nodes.chain(replicas).collect();
        write!(f, "{{{}}}", parts.join(", "))
    }
}

/// Why a `--topology` argument could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopologySyntaxError(String);

impl fmt::Display for TopologySyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}; write the node count of each node type, a colon, then the replica count of \
             each deployment type, e.g. `1,2:6`",
            self.0
        )
    }
}

impl std::error::Error for TopologySyntaxError {}

/// The command-line form `N0,N1,…:R0,R1,…`: node counts per node type, then replica counts
/// per deployment type.
impl FromStr for Topology {
    type Err = TopologySyntaxError;

    fn from_str(text: &str) -> Result<Topology, TopologySyntaxError> {
        let (nodes, replicas) = text
            .split_once(':')
            .ok_or_else(|| TopologySyntaxError(format!("'{text}' has no ':'")))?;
        let counts = |part: &str, what: &str| -> Result<Vec<u64>, TopologySyntaxError> {
            part.split(',')
                .map(|count| {
                    count.trim().parse::<u64>().map_err(|_| {
                        TopologySyntaxError(format!(
                            "'{count}' in '{text}' is not a {what} count (a whole number)"
                        ))
                    })
                })
                .collect()
        };
        Ok(Topology::new(
            counts(nodes, "node")?,
            counts(replicas, "replica")?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_command_line_form() {
        let topology: Topology = "1, 2:6".parse().unwrap();
        assert_eq!(topology, Topology::new(vec![1, 2], vec![6]));
        assert_eq!(
            topology.argument().parse::<Topology>(),
            Ok(topology.clone())
        );
        assert_eq!(
            topology.to_string(),
            "{node type 0: 1, node type 1: 2, deployment type 0: 6}"
        );
    }

    #[test]
    fn refuses_malformed_forms() {
        for text in ["12", "1,:3", "a:3", "1:-3", ":"] {
            let error = text.parse::<Topology>().unwrap_err().to_string();
            assert!(error.contains("e.g. `1,2:6`"), "{text}: {error}");
        }
    }
}
