//! What the user calls the nodes and deployments of a topology a front-end built from named
//! objects (manifests with a cluster description, a live cluster). Traces print ids, as Kivi's
//! do; a legend under them says which node and deployment each id is.

use super::description::ClusterDescription;
use std::collections::BTreeSet;

/// Node and deployment names by id (index = id - 1).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Names {
    /// Node names: a node group's name, or `NAME #k` for the k-th node (from 1) of a group of
    /// several, in the order the single topology numbers them; then the cluster autoscaler's
    /// nodes to add, `new node #k of group NAME`.
    pub nodes: Vec<String>,
    /// Deployment names (`metadata.name`).
    pub deployments: Vec<String>,
    /// Where each deployment's manifest is (file, line), when it came from one.
    pub deployment_places: Vec<Option<(String, usize)>>,
}

impl Names {
    /// The same names with the manifests' paths under `read` (the input as it was read) moved
    /// under `shown` (the input as reports name it, `--report-as`).
    pub fn relocate(&mut self, read: &str, shown: &str) {
        for (file, _) in self.deployment_places.iter_mut().flatten() {
            if let Some(rest) = file.strip_prefix(read) {
                *file = format!("{shown}{rest}");
            }
        }
    }

    /// The names of `cluster`'s single topology.
    pub fn of(cluster: &ClusterDescription) -> Self {
        let mut nodes = Vec::new();
        for group in &cluster.nodes {
            for copy in 0..group.count {
                nodes.push(if group.count == 1 {
                    group.name.clone()
                } else {
                    format!("{} #{}", group.name, copy + 1)
                });
            }
        }
        // The cluster autoscaler's slots follow the input's nodes, group by group, as
        // `uniform::node_groups::with_slots` appends them.
        for group in cluster.cluster_autoscaler.iter().flat_map(|a| &a.groups) {
            let adds = (group.max_size as usize).saturating_sub(group.members.len());
            nodes.extend((1..=adds).map(|k| format!("new node #{k} of group {}", group.name)));
        }
        Self {
            nodes,
            deployments: cluster.deployments.iter().map(|d| d.name.clone()).collect(),
            deployment_places: cluster
                .deployments
                .iter()
                .map(|d| d.place.clone())
                .collect(),
        }
    }

    /// The names a scaling template's topologies share: its deployments (one per deployment
    /// type, in order); nodes are numbered anew in each topology.
    pub fn deployments_only(mut self) -> Self {
        self.nodes.clear();
        self
    }

    /// The nodes and deployments that `lines` mention by id (`node 3`, `deployment 1`), with
    /// their names, in id order: `("node", 3, "zone-b-0")`.
    pub fn mentioned<'a>(
        &self,
        lines: impl IntoIterator<Item = &'a str>,
    ) -> Vec<(&'static str, usize, &str)> {
        let mut found = BTreeSet::new();
        for line in lines {
            let words: Vec<&str> = line.split_whitespace().collect();
            for pair in words.windows(2) {
                let id = pair[1].trim_end_matches([',', '.', ':', ';']);
                let Ok(id) = id.parse::<usize>() else {
                    continue;
                };
                match pair[0].to_ascii_lowercase().as_str() {
                    "node" => found.insert((0, id)),
                    "deployment" => found.insert((1, id)),
                    _ => false,
                };
            }
        }
        found
            .into_iter()
            .filter_map(|(kind, id)| {
                let (what, names) = if kind == 0 {
                    ("node", &self.nodes)
                } else {
                    ("deployment", &self.deployments)
                };
                let name = names.get(id.checked_sub(1)?)?;
                Some((what, id, name.as_str()))
            })
            .collect()
    }

    /// One line naming what `lines` mention, or `None` when they mention nothing named.
    pub fn legend<'a>(&self, lines: impl IntoIterator<Item = &'a str>) -> Option<String> {
        let mentioned = self.mentioned(lines);
        (!mentioned.is_empty()).then(|| {
            let entries: Vec<String> = mentioned
                .iter()
                .map(|(what, id, name)| format!("{what} {id} = {name}"))
                .collect();
            format!("Names in the trace: {}", entries.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_names_what_the_trace_mentions() {
        let names = Names {
            nodes: vec!["cp-1".into(), "zone-a-0".into(), "zone-a-1".into()],
            deployments: vec!["php-apache".into()],
            deployment_places: vec![None],
        };
        let lines = [
            "[7][Scheduler] Pod 1 is scheduled on node 3",
            "[12][Kubelet] Created pod 1 on node 3, deployment 1 now have 1 replicas",
            "[13][nodeFailure] Node 2 failed",
            "[14][Kubelet] Deleted pod 9 on node 0, deployment 7 now have 0 replicas",
        ];
        assert_eq!(
            names.legend(lines).unwrap(),
            "Names in the trace: node 2 = zone-a-0, node 3 = zone-a-1, deployment 1 = php-apache"
        );
        assert_eq!(names.legend(["[0][HPA] nothing named"]), None);
    }
}
