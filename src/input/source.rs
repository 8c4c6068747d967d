//! Where an input comes from, read into uniform JSON: a built-in case of the paper, a uniform
//! JSON file, or anything the front-ends translate (a directory of manifests and cluster
//! description, a YAML file, a live-cluster dump).

use super::diagnostics::Diagnostics;
use super::directory::{
    in_stream, needs_translation, translate, translate_stream, InputOptions, Translation,
};
use super::emit::Units;
use super::names::Names;
use super::origins::Origins;
use super::uniform;
use crate::cases;
use crate::cluster::Semantics;
use serde_json::Value;
use std::path::Path;

/// An input to read.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// A built-in case (`c1` … `c8`): its single topology or scaling template, in either
    /// variant.
    Case {
        /// `c1` … `c8`.
        name: &'a str,
        /// The single topology at scale 3 rather than the scaling template.
        original: bool,
        /// The variant without a violation.
        non_violation: bool,
    },
    /// Standard input (`-`): uniform JSON, or one YAML stream of Kubernetes objects with the
    /// cluster description in a `kivi:` document, as `helm template` or `kustomize build`
    /// print them; messages name it `<stdin>`.
    Stdin {
        /// How to translate it (`from_cluster_dump` does not apply: a dump is a directory).
        options: InputOptions,
        /// The cluster description, when the stream does not carry it (`--cluster-config`).
        cluster_config: Option<&'a Path>,
    },
    /// A file or directory, translated by the front-ends unless it is uniform JSON.
    Path {
        /// Where it is.
        path: &'a Path,
        /// How to translate it.
        options: InputOptions,
    },
}

impl<'a> Source<'a> {
    /// The input a command-line argument names: standard input for `-` (with the cluster
    /// description at `cluster_config`, if given), else the path.
    pub fn argument(
        path: &'a Path,
        cluster_config: Option<&'a Path>,
        options: InputOptions,
    ) -> Result<Self, String> {
        match (path.as_os_str() == "-", cluster_config) {
            (true, _) => Ok(Source::Stdin {
                options,
                cluster_config,
            }),
            (false, None) => Ok(Source::Path { path, options }),
            (false, Some(_)) => Err(format!(
                "{}: --cluster-config goes with input from standard input (`-`); a directory \
                 has its user_input/ folder and a YAML file its `kivi:` document",
                path.display()
            )),
        }
    }
}

/// An input read into uniform JSON.
#[derive(Clone, Debug)]
pub struct Opened {
    /// How messages name the input: `case c3`, or the path.
    pub name: String,
    /// The uniform JSON: a single topology, or a scaling template (with `userDefined`).
    pub document: Value,
    /// What the front-ends warned about; for uniform JSON, its unknown keys, and for a
    /// built-in case, its contradictions (kept as Kivi wrote them).
    pub diagnostics: Diagnostics,
    /// The units the front-ends chose, when they translated.
    pub units: Option<Units>,
    /// Where the user wrote the document's events, commands and intents (empty for uniform
    /// JSON and cases, whose paths are the user's own).
    pub origins: Origins,
    /// What the user calls the single topology's nodes and deployments (a template's
    /// deployments only), when a front-end built it from named objects.
    pub names: Option<Names>,
    /// Whether a Kubernetes front-end translated it (manifests, a directory, standard input
    /// that is not uniform JSON, a dump, a List), rather than it being Kivi's format.
    pub from_kubernetes: bool,
}

impl Opened {
    /// The input `name` as the front-ends translated it.
    fn translated(name: String, translation: Translation) -> Self {
        Self {
            name,
            document: translation.document,
            diagnostics: translation.diagnostics,
            units: translation.units,
            origins: translation.origins,
            names: translation.names,
            from_kubernetes: true,
        }
    }

    /// The semantics a check of this input follows unless `--semantics` says otherwise:
    /// Kivi's for Kivi's own format (the cases and uniform JSON, whose verdicts are Kivi's),
    /// kube-scheduler's for Kubernetes inputs, which describe a real cluster.
    pub fn default_semantics(&self) -> Semantics {
        if self.from_kubernetes {
            Semantics::Kubernetes
        } else {
            Semantics::Kivi
        }
    }

    /// What the input gives that a check under `semantics` does not use: an HPA's
    /// `spec.behavior` under Kivi's semantics (Kivi's HPA has none), PodDisruptionBudgets,
    /// which no eviction of Kivi's semantics checks, and DaemonSets (Kivi has none).
    pub fn unused_under(&self, semantics: Semantics) -> Vec<String> {
        if semantics != Semantics::Kivi {
            return Vec::new();
        }
        let mut unused = Vec::new();
        if crate::input::uniform::hpa_behavior::any_in(&self.document) {
            unused.push(format!(
                "{}: an HPA's spec.behavior is modelled under --semantics kubernetes only; \
                 under kivi the HPA scales as Kivi's, without it",
                self.name
            ));
        }
        if self.document["pdbs"]
            .as_array()
            .is_some_and(|p| !p.is_empty())
        {
            unused.push(format!(
                "{}: PodDisruptionBudgets are honoured under --semantics kubernetes only; \
                 Kivi's semantics have none, so under kivi no eviction checks them \
                 (pdb_never_violated still watches them)",
                self.name
            ));
        }
        if self.document["daemonSets"]
            .as_array()
            .is_some_and(|d| !d.is_empty())
        {
            unused.push(format!(
                "{}: DaemonSets are modelled under --semantics kubernetes only; under kivi \
                 their pods are not placed and take no room",
                self.name
            ));
        }
        unused
    }

    /// Why a check under `--semantics kubernetes` cannot run the input's DeschedulerPolicy:
    /// the front-end could not carry it (`controllers.descheduler.policyError`), and running
    /// Kivi's part of it instead would check another policy.
    fn policy_refused(&self) -> Option<String> {
        let why = self.document["controllers"]["descheduler"]["policyError"].as_str()?;
        Some(format!(
            "{why}; under --semantics kubernetes the descheduler runs the manifest's whole \
             policy, so kivi cannot check this one: change it as the message says, or check \
             with --semantics kivi (Kivi's descheduler: RemoveDuplicates and \
             RemovePodsViolatingTopologySpreadConstraint only)"
        ))
    }

    /// Why a check under `semantics` cannot take this input: under Kivi's semantics, a `drain`
    /// event (Kivi's scheduler reads no cordon and its evictions ask no Eviction API, as
    /// PodDisruptionBudgets are honoured under kubernetes only), pod templates of different
    /// priorities or a `no_preemption_of` intent (Kivi's scheduler has no priorities, no
    /// priority queue and no preemption); under kubernetes, a DeschedulerPolicy the front-end
    /// could not carry whole; `None` when it can, and for a single topology that does not
    /// load, whose errors the load names first.
    pub fn refused_under(&self, semantics: Semantics) -> Option<String> {
        if semantics != Semantics::Kivi {
            return self.policy_refused();
        }
        let loads =
            || self.is_template() || crate::input::uniform::load_uniform(&self.document).is_ok();
        let drain = ["events", "userCommand"]
            .iter()
            .flat_map(|key| self.document[*key].as_array().into_iter().flatten())
            .find_map(|event| match event["name"].as_str() {
                Some("drain") => Some("a `drain` event (kubectl drain"),
                Some("upgrade") => Some("an `upgrade` event (a rolling node upgrade"),
                _ => None,
            });
        if let Some(event) = drain.filter(|_| loads()) {
            return Some(format!(
                "{}: {event}: cordon, then evict through the Eviction API and its \
                 PodDisruptionBudgets) is modelled under --semantics kubernetes only; check it \
                 with --semantics kubernetes, or use `maintenance` for Kivi's node maintenance",
                self.name
            ));
        }
        if self.has_cluster_autoscaler() && loads() {
            return Some(format!(
                "{}: the cluster autoscaler (controllers.clusterAutoscaler) is modelled under \
                 --semantics kubernetes only (Kivi has no autoscaler adding or removing nodes); \
                 check it with --semantics kubernetes",
                self.name
            ));
        }
        if self.uses_priorities() && loads() {
            return Some(format!(
                "{}: pod priorities (PriorityClasses of different values) and the \
                 no_preemption_of intent are modelled under --semantics kubernetes only \
                 (kube-scheduler's priority queue and DefaultPreemption; Kivi's scheduler has \
                 neither); check it with --semantics kubernetes",
                self.name
            ));
        }
        None
    }

    /// Whether the document's pod templates differ in priority, or it lists
    /// `no_preemption_of`.
    fn uses_priorities(&self) -> bool {
        let templates = self.document["setup"]["podTemplates"].as_array();
        let mut priorities = templates
            .into_iter()
            .flatten()
            .map(|template| template["priority"].as_i64().unwrap_or(0));
        let first = priorities.next();
        let differ = priorities.any(|p| Some(p) != first);
        let intent = self.document["intents"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|i| {
                matches!(
                    i["name"].as_str(),
                    Some("no_preemption_of" | "checkNoPreemptionOf")
                )
            });
        differ || intent
    }

    /// Whether the document configures the cluster autoscaler.
    pub fn has_cluster_autoscaler(&self) -> bool {
        !self.document["controllers"]["clusterAutoscaler"].is_null()
    }

    /// The position of the first of the cluster autoscaler's node groups that lists its own
    /// nodes (or a template node) rather than a node type (`nodeType`): a sweep, which
    /// replaces the document's nodes with each topology's, cannot keep it.
    pub fn node_group_by_position(&self) -> Option<usize> {
        let groups = self.document["controllers"]["clusterAutoscaler"]["nodeGroups"].as_array();
        groups
            .into_iter()
            .flatten()
            .position(|group| group.get("nodeType").is_none())
    }

    /// Whether the document is a scaling template, to be swept.
    pub fn is_template(&self) -> bool {
        self.document.get("userDefined").is_some()
    }
}

/// Reads `source`; an error names the input, the place and the fix.
pub fn open(source: &Source<'_>) -> Result<Opened, String> {
    // `verify`: whether a uniform document's contradictions are errors (`Some(true)`: an input
    // to check), passed over (`Some(false)`: `dump` shows what it was given) or warnings
    // (`None`: a built-in case, kept as Kivi wrote it).
    let (name, text, strict, verify) = match *source {
        Source::Case {
            name,
            original,
            non_violation,
        } => {
            let case = cases::find(name)
                .ok_or_else(|| format!("unknown case '{name}': the built-in cases are c1 to c8"))?;
            (
                format!("case {}", case.name),
                case.document(original, non_violation).to_string(),
                true,
                None,
            )
        }
        Source::Path { path, options } => {
            if needs_translation(path) || options.from_cluster_dump {
                let translation = translate(path, options).map_err(|error| error.to_string())?;
                translation.diagnostics.strict_error(options.strict)?;
                return Ok(Opened::translated(path.display().to_string(), translation));
            }
            let text = std::fs::read_to_string(path)
                .map_err(|error| format!("{}: cannot read: {error}", path.display()))?;
            (
                path.display().to_string(),
                text,
                options.strict,
                Some(options.verify),
            )
        }
        Source::Stdin {
            options,
            cluster_config,
        } => {
            if options.from_cluster_dump {
                return Err(format!(
                    "{STDIN}: a live-cluster dump is a directory of files; give its path \
                     instead of -"
                ));
            }
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .map_err(|error| format!("{STDIN}: cannot read: {error}"))?;
            if !is_uniform_json(&text) {
                let translation = translate_stream(STDIN, &text, cluster_config, options)
                    .map_err(|error| in_stream(error, STDIN, &text).to_string())?;
                translation.diagnostics.strict_error(options.strict)?;
                return Ok(Opened::translated(STDIN.to_string(), translation));
            }
            (
                STDIN.to_string(),
                text,
                options.strict,
                Some(options.verify),
            )
        }
    };
    let document = serde_json::from_str(&text).map_err(|error| {
        format!(
            "{name}:{}:{}: not valid JSON: {error}; fix the syntax at that place",
            error.line(),
            error.column()
        )
    })?;
    let mut diagnostics = unknown_key_warnings(&name, &document, strict)?;
    if let Err(error) = uniform::consistency::check(&document) {
        match verify {
            Some(true) => return Err(error.in_file(&name).to_string()),
            Some(false) => {}
            None => {
                for problem in error.all() {
                    diagnostics.warn(format!(
                        "{name}: {}: {}; kept, as the built-in cases are Kivi's files as they \
                         are",
                        problem.path, problem.message
                    ));
                }
            }
        }
    }
    Ok(Opened {
        name,
        document,
        diagnostics,
        units: None,
        origins: Origins::default(),
        names: None,
        from_kubernetes: false,
    })
}

/// How messages name standard input.
pub const STDIN: &str = "<stdin>";

/// Whether `text` is a uniform-JSON document (a JSON object with `setup`) rather than
/// Kubernetes objects or YAML.
fn is_uniform_json(text: &str) -> bool {
    serde_json::from_str::<Value>(text).is_ok_and(|value| value.get("setup").is_some())
}

/// Every key of a uniform-JSON `document` that Kivi's format does not have (a typo Kivi would
/// ignore without a word): warnings, or with `strict` an error listing them.
fn unknown_key_warnings(name: &str, document: &Value, strict: bool) -> Result<Diagnostics, String> {
    let unknown =
        uniform::unknown_keys(document).map_err(|error| error.in_file(name).to_string())?;
    let mut diagnostics = Diagnostics::default();
    for path in unknown {
        diagnostics.unknown_field(format!(
            "{name}: {path}: not a field of Kivi's uniform JSON"
        ));
    }
    diagnostics.strict_error(strict)?;
    Ok(diagnostics)
}
