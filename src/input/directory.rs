//! The front door of the front-ends: turns a path (a directory in Kivi's layout, a live-cluster
//! dump, a YAML file, or a uniform-JSON file) into a uniform-JSON document plus diagnostics.
//!
//! Directory layout, as Kivi's: manifests in `DIR/yaml/` or `DIR` itself (`*.yaml`, `*.yml`,
//! `*.json`), `DIR/user_input/cluster_configs.json` and `DIR/user_input/intents.json`; a dump
//! in `DIR/setup/` or `DIR` (files named after the kubectl command that produced them).
//! Deployments in `DIR/apply/` are new versions that the user applies (`kubectl apply`) once
//! the cluster is stable.

use super::cluster_dump::{self, DumpFiles};
use super::description::ClusterDescription;
use super::diagnostics::{Diagnostics, InputError};
use super::emit::{self, Units};
use super::manifests::ManifestSet;
use super::names::Names;
use super::origins::Origins;
use super::yaml_documents;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// How to translate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputOptions {
    /// Build the single topology the cluster description gives (Kivi's `--original`) rather
    /// than a scaling template over the node types' sizes.
    pub original: bool,
    /// Read the directory as a live-cluster dump (also detected from the file names).
    pub from_cluster_dump: bool,
    /// The input is to be verified (`check`, `simulate`), so a cluster without nodes is an
    /// error; `dump` shows the translation of whatever was given.
    pub verify: bool,
    /// Keys of a uniform-JSON input that Kivi's format does not have are errors, not
    /// warnings (`--strict`).
    pub strict: bool,
}

/// The result of a translation.
#[derive(Debug, Clone)]
pub struct Translation {
    /// The uniform JSON: a single topology, or a template with `userDefined`.
    pub document: Value,
    /// Warnings and ignored objects.
    pub diagnostics: Diagnostics,
    /// The units chosen, when the input was not already uniform JSON.
    pub units: Option<Units>,
    /// Where the user wrote the document's events, commands and intents.
    pub origins: Origins,
    /// What the user calls the single topology's nodes and deployments (`None` for a scaling
    /// template, whose topologies number their nodes by type).
    pub names: Option<Names>,
}

/// Whether `path` needs a front-end: a directory, a YAML file, or a JSON file holding
/// Kubernetes objects (`kubectl get -o json`) rather than uniform JSON.
pub fn needs_translation(path: &Path) -> bool {
    if path.is_dir() {
        return true;
    }
    match extension(path).as_str() {
        "yaml" | "yml" => true,
        "json" => std::fs::read_to_string(path)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .is_some_and(|value| value.get("kind").is_some() && value.get("setup").is_none()),
        _ => false,
    }
}

fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

fn read(path: &Path) -> Result<String, InputError> {
    std::fs::read_to_string(path).map_err(|error| {
        InputError::new(
            path.display().to_string(),
            None,
            format!("cannot read: {error}"),
        )
    })
}

/// Manifest files directly in `dir`, sorted by name.
fn manifest_files(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    let entries = std::fs::read_dir(dir).map_err(|error| {
        InputError::new(
            dir.display().to_string(),
            None,
            format!("cannot list: {error}"),
        )
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|p| p.is_file() && matches!(extension(p).as_str(), "yaml" | "yml" | "json"))
        .collect();
    files.sort();
    Ok(files)
}

/// Every file of `dir` and of its `setup/` folder, with contents, for dump detection.
fn dump_candidates(dir: &Path) -> Result<Vec<(String, String)>, InputError> {
    let mut found = Vec::new();
    for folder in [dir.join("setup"), dir.to_path_buf()] {
        if !folder.is_dir() {
            continue;
        }
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&folder)
            .map_err(|error| {
                InputError::new(
                    folder.display().to_string(),
                    None,
                    format!("cannot list: {error}"),
                )
            })?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|p| p.is_file())
            .collect();
        paths.sort();
        for path in paths {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().to_lowercase())
                .unwrap_or_default();
            if cluster_dump::FILE_NAME_KEYS
                .iter()
                .any(|key| name.contains(key))
            {
                found.push((path.display().to_string(), read(&path)?));
            }
        }
    }
    Ok(found)
}

/// Translates `path` into uniform JSON.
pub fn translate(path: &Path, options: InputOptions) -> Result<Translation, InputError> {
    let name = path.display().to_string();
    if path.is_dir() {
        let mut diagnostics = Diagnostics::default();
        let (cluster, has_config) = read_directory(path, options, &mut diagnostics)?;
        return finish(&name, cluster, has_config, options, diagnostics);
    }
    translate_stream(&name, &read(path)?, None, options)
}

/// Translates one YAML stream (`---`-separated documents, as `helm template` and `kustomize
/// build` print them, or a JSON object) named `name` in messages: Kubernetes objects, and the
/// cluster description in a `kivi:` document of its own.
pub fn translate_stream(
    name: &str,
    text: &str,
    cluster_config: Option<&Path>,
    options: InputOptions,
) -> Result<Translation, InputError> {
    let mut diagnostics = Diagnostics::default();
    let mut set = ManifestSet::default();
    set.add_file(name, text, &mut diagnostics)?;
    if let Some(path) = cluster_config {
        add_cluster_config(&mut set, path, &mut diagnostics)?;
    }
    let has_config = set.has_cluster_config;
    let cluster = set.finish(&mut diagnostics)?;
    finish(name, cluster, has_config, options, diagnostics)
}

/// `error` from the stream `name` whose text is `text`, with the number of the document its
/// place is in: a stream read from standard input has no file names to tell its manifests
/// apart.
pub fn in_stream(mut error: InputError, name: &str, text: &str) -> InputError {
    if error.file == name {
        error.document = error
            .place
            .map(|place| yaml_documents::document_number(text, place.line));
    }
    error
}

/// The uniform JSON of a cluster read from the input `name`: a scaling template when it has a
/// cluster description (and `--original` is not given), else its single topology.
fn finish(
    name: &str,
    cluster: ClusterDescription,
    has_config: bool,
    options: InputOptions,
    mut diagnostics: Diagnostics,
) -> Result<Translation, InputError> {
    let name = name.to_string();
    require_something_to_verify(&cluster, &name, options.verify)?;
    emit::warn_unknown_topology_keys(&cluster, &mut diagnostics);
    if cluster.intents.is_empty() {
        diagnostics.warn(format!(
            "{name}: no intents listed; checking pod_always_schedulable only, Kivi's default \
             (list intents in user_input/intents.json or under `intents:` in the `kivi:` document)"
        ));
    }
    let units = Units::choose(&cluster, &mut diagnostics);
    let scaling = !options.original && !cluster.live && has_config;
    if scaling && options.verify {
        require_replicas_to_sweep(&cluster, &name)?;
    }
    let document = if scaling {
        emit::template(&cluster, &units, &name, &mut diagnostics)?
    } else {
        emit::single_topology(&cluster, &units, &name)?
    };
    let origins = Origins::of(&cluster, &document);
    Ok(Translation {
        document,
        diagnostics,
        units: Some(units),
        origins,
        names: Some(if scaling {
            Names::of(&cluster).deployments_only()
        } else {
            Names::of(&cluster)
        }),
    })
}

/// Refuses an input that describes no cluster: with nothing in it, or (when it is to be
/// verified) with workloads but no node to run them on, any verdict would be about an empty
/// cluster, not the user's.
fn require_something_to_verify(
    cluster: &ClusterDescription,
    name: &str,
    verify: bool,
) -> Result<(), InputError> {
    let no_nodes = cluster
        .nodes
        .iter()
        .all(|group| group.count == 0 && group.max_size == 0);
    let no_workloads = cluster.deployments.is_empty() && cluster.standalone_pods.is_empty();
    if no_nodes && no_workloads {
        return Err(InputError::new(
            name,
            None,
            "nothing to verify: no Kubernetes objects and no cluster description were found \
             (an empty file, or only comments); give Deployments and Nodes, or a directory with \
             yaml/ and user_input/cluster_configs.json",
        ));
    }
    if no_nodes && verify {
        return Err(InputError::new(
            name,
            None,
            "no nodes: the workloads have nowhere to run; add Node objects, or node types \
             (`nodesTypes` with `num`, `minSize`, `maxSize`) in user_input/cluster_configs.json \
             or in a `kivi:` document",
        ));
    }
    if no_workloads && verify {
        return Err(InputError::new(
            name,
            None,
            "nothing to verify: the cluster has nodes but no workloads (no Deployment or Pod), \
             so no pod is ever scheduled and every intent holds vacuously; add the Deployments \
             (or Pods) to check, with `dTypes` in the cluster description to size them",
        ));
    }
    Ok(())
}

/// Refuses a sweep in which a deployment never has a replica: its manifest gives it none and
/// no `dTypes` entry sizes it, so no swept topology would run a pod of it.
fn require_replicas_to_sweep(cluster: &ClusterDescription, name: &str) -> Result<(), InputError> {
    let Some(idle) = cluster
        .deployments
        .iter()
        .find(|d| d.max_size.unwrap_or(d.replicas.max(0) as u64) == 0)
    else {
        return Ok(());
    };
    let (file, line) = idle.place.clone().unwrap_or((name.to_string(), 0));
    let place = (line > 0).then_some(super::diagnostics::Place { line, column: 1 });
    Err(InputError::new(
        file,
        place,
        format!(
            "nothing to verify for Deployment/{}: it has 0 replicas and no `dTypes` entry sizes \
             it, so no swept topology runs a pod of it; give it a `dTypes` entry with maxSize 1 \
             or more, or check the single topology with --original",
            idle.name
        ),
    ))
}

fn read_directory(
    dir: &Path,
    options: InputOptions,
    diagnostics: &mut Diagnostics,
) -> Result<(ClusterDescription, bool), InputError> {
    let user_input = dir.join("user_input");
    let dump = DumpFiles::find(&dump_candidates(dir)?);
    if options.from_cluster_dump || dump.is_some() {
        let dump = dump.ok_or_else(|| {
            InputError::new(
                dir.display().to_string(),
                None,
                "--from-cluster-dump: no kubectl output found (files named getnode, getpod, \
                 getdeployment, gethpa, toppod, topnode or getpriorityclass, in the directory \
                 or its setup/)",
            )
        })?;
        let mut cluster = cluster_dump::read(&dump, diagnostics)?;
        let mut set = ManifestSet::default();
        add_user_input(&mut set, &user_input, diagnostics)?;
        let extra = set.finish(diagnostics)?;
        cluster.intents.extend(extra.intents);
        cluster.events.extend(extra.events);
        cluster.commands.extend(extra.commands);
        return Ok((cluster, false));
    }
    let mut set = ManifestSet::default();
    let mut files = manifest_files(dir)?;
    if dir.join("yaml").is_dir() {
        files.extend(manifest_files(&dir.join("yaml"))?);
    }
    if files.is_empty() {
        return Err(InputError::new(
            dir.display().to_string(),
            None,
            "no manifests: expected *.yaml files in the directory or in its yaml/ folder",
        ));
    }
    for file in files {
        set.add_file(&file.display().to_string(), &read(&file)?, diagnostics)?;
    }
    if dir.join("apply").is_dir() {
        for file in manifest_files(&dir.join("apply"))? {
            set.add_applied_file(&file.display().to_string(), &read(&file)?, diagnostics)?;
        }
    }
    add_user_input(&mut set, &user_input, diagnostics)?;
    let has_config = set.has_cluster_config;
    Ok((set.finish(diagnostics)?, has_config))
}

/// Adds the cluster description at `path` (`--cluster-config`): a `user_input/` folder
/// (`cluster_configs.json` and `intents.json`), Kivi's `cluster_configs.json` itself, or a YAML
/// file with a `kivi:` document.
fn add_cluster_config(
    set: &mut ManifestSet,
    path: &Path,
    diagnostics: &mut Diagnostics,
) -> Result<(), InputError> {
    let name = path.display().to_string();
    if path.is_dir() {
        if !path.join("cluster_configs.json").is_file() {
            return Err(InputError::new(
                name,
                None,
                "--cluster-config: no cluster_configs.json in this folder; give a user_input/ \
                 folder, its cluster_configs.json, or a YAML file with a `kivi:` document",
            ));
        }
        return add_user_input(set, path, diagnostics);
    }
    let text = read(path)?;
    match extension(path).as_str() {
        "json" => set.add_cluster_config(&name, &text, diagnostics),
        "yaml" | "yml" => set.add_file(&name, &text, diagnostics),
        _ => Err(InputError::new(
            name,
            None,
            "--cluster-config: expected a user_input/ folder, a .json cluster description or a \
             .yaml file with a `kivi:` document",
        )),
    }
}

fn add_user_input(
    set: &mut ManifestSet,
    user_input: &Path,
    diagnostics: &mut Diagnostics,
) -> Result<(), InputError> {
    let config = user_input.join("cluster_configs.json");
    if config.is_file() {
        set.add_cluster_config(&config.display().to_string(), &read(&config)?, diagnostics)?;
    }
    let intents = user_input.join("intents.json");
    if intents.is_file() {
        set.add_intents(
            &intents.display().to_string(),
            &read(&intents)?,
            diagnostics,
        )?;
    }
    Ok(())
}
