//! The Kubernetes manifest that runs a sharded sweep (`kivi job`): an Indexed Job whose pod `I`
//! runs `kivi check … --shard I/N`, with the input from a ConfigMap and each shard's journal on
//! a shared PersistentVolumeClaim, for `kivi merge` to read afterwards.
//!
//! Kubernetes does the distribution: `completionMode: Indexed` starts `N` pods, each with its
//! index in `JOB_COMPLETION_INDEX`; `backoffLimitPerIndex` retries a failed index on its own
//! (a rerun resumes from the shard's journal); `parallelism` bounds how many run at once. A
//! shard's exit code says what it found, but a Job counts only 0 as done, so the container's
//! shell maps kivi's answers (0 none, 1 a violation, 3 a check cut short by a bound — each
//! recorded in the journal) to 0, and the pod failure policy fails the whole Job on exit 2 (the
//! input or the command line is wrong: every retry would fail the same way) and does not count
//! disruptions (preemption, node drain) against the index's retries. The objects are built
//! with the k8s-openapi types, so they are what the API server reads.

use crate::engine::process_overhead;
use k8s_openapi::api::batch::v1::{
    Job, JobSpec, PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
};
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapVolumeSource, Container, KeyToPath, PersistentVolumeClaim,
    PersistentVolumeClaimSpec, PersistentVolumeClaimVolumeSource, PodSecurityContext, PodSpec,
    PodTemplateSpec, ResourceRequirements, Volume, VolumeMount, VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;
use std::path::Path;

/// Where the input is mounted in the container.
pub const INPUT_DIR: &str = "/input";
/// Where the shards' journals are written in the container.
pub const RESULTS_DIR: &str = "/results";
/// The user the image runs kivi as (and the group that owns the results volume).
pub const KIVI_USER: i64 = 65532;
/// The most input bytes a ConfigMap holds (Kubernetes caps a ConfigMap at 1 MiB, metadata
/// included).
pub const MAX_INPUT_BYTES: usize = 1_000_000;

/// One file of the input, as the container sees it under [`INPUT_DIR`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputFile {
    /// Its path under [`INPUT_DIR`] (`template.json`, or `shop/deploy.yaml` for a directory).
    pub path: String,
    /// Its text.
    pub text: String,
}

/// What the Job should run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRequest {
    /// The Job's name (and the prefix of the ConfigMap's and the claim's).
    pub name: String,
    /// The container image with kivi in it.
    pub image: String,
    /// How many shards (the Job's completions).
    pub shards: u32,
    /// How many shards run at once.
    pub parallelism: u32,
    /// How many times a failed shard is retried.
    pub backoff_limit_per_index: u32,
    /// An existing claim for the results; none: the manifest creates `NAME-results`.
    pub volume_claim: Option<String>,
    /// The size of the claim the manifest creates.
    pub claim_size: String,
    /// The arguments of `kivi check`, the input already named under [`INPUT_DIR`], without
    /// `--shard` and `--journal` (each pod adds its own).
    pub check_args: Vec<String>,
    /// The input files to mount (none for a built-in case).
    pub input: Vec<InputFile>,
    /// Worker threads of each shard: the CPU it requests.
    pub threads: u32,
    /// The memory budget of each shard (`--memory`), in bytes.
    pub memory: u64,
}

/// The objects of the manifest, in the order to apply them.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// The input, unless the check runs a built-in case.
    pub config_map: Option<ConfigMap>,
    /// The results claim, unless an existing one was named.
    pub claim: Option<PersistentVolumeClaim>,
    /// The Indexed Job.
    pub job: Job,
}

impl Manifest {
    /// The manifest for `request`; an error when its input is too big for a ConfigMap.
    pub fn new(request: &JobRequest) -> Result<Self, String> {
        let input_bytes: usize = request.input.iter().map(|f| f.text.len()).sum();
        if input_bytes > MAX_INPUT_BYTES {
            return Err(format!(
                "the input is {input_bytes} bytes, more than a ConfigMap holds \
                 ({MAX_INPUT_BYTES}); build an image with the input in it and run a path \
                 inside the image instead"
            ));
        }
        let config_map = (!request.input.is_empty()).then(|| config_map(request));
        let claim = request.volume_claim.is_none().then(|| claim(request));
        Ok(Self {
            config_map,
            claim,
            job: job(request),
        })
    }

    /// The manifest as YAML documents, ready for `kubectl apply -f -`.
    pub fn to_yaml(&self) -> String {
        let mut documents = Vec::new();
        if let Some(config_map) = &self.config_map {
            documents.push(serde_yaml_ng::to_string(config_map));
        }
        if let Some(claim) = &self.claim {
            documents.push(serde_yaml_ng::to_string(claim));
        }
        documents.push(serde_yaml_ng::to_string(&self.job));
        documents
            .into_iter()
            .map(|document| document.expect("Kubernetes objects serialise"))
            .collect::<Vec<_>>()
            .join("---\n")
    }
}

impl InputFile {
    /// The files of the input at `path` (a file, or a directory's files at any depth, not
    /// hidden ones), in path order, and the input's path inside the container.
    pub fn read_input(path: &Path) -> Result<(Vec<InputFile>, String), String> {
        let base = path
            .canonicalize()
            .map_err(|error| format!("{}: {error}", path.display()))?;
        let name = base
            .file_name()
            .map_or_else(|| "input".to_string(), |n| n.to_string_lossy().into_owned());
        let mut files = Vec::new();
        let mut pending = vec![(base.clone(), name.clone())];
        while let Some((at, inside)) = pending.pop() {
            if at.is_dir() {
                let listing = std::fs::read_dir(&at)
                    .map_err(|error| format!("{}: cannot list: {error}", at.display()))?;
                for entry in listing {
                    let entry = entry.map_err(|error| format!("{}: {error}", at.display()))?;
                    let file_name = entry.file_name().to_string_lossy().into_owned();
                    if !file_name.starts_with('.') {
                        pending.push((entry.path(), format!("{inside}/{file_name}")));
                    }
                }
            } else {
                let text = std::fs::read_to_string(&at).map_err(|error| {
                    format!(
                        "{}: cannot read it as text for the Job's ConfigMap: {error}",
                        at.display()
                    )
                })?;
                files.push(InputFile { path: inside, text });
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok((files, format!("{INPUT_DIR}/{name}")))
    }
}

fn labels(request: &JobRequest) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), "kivi".to_string()),
        (
            "app.kubernetes.io/instance".to_string(),
            request.name.clone(),
        ),
    ])
}

fn metadata(request: &JobRequest, name: String) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        labels: Some(labels(request)),
        ..ObjectMeta::default()
    }
}

fn config_map_name(request: &JobRequest) -> String {
    format!("{}-input", request.name)
}

fn claim_name(request: &JobRequest) -> String {
    request
        .volume_claim
        .clone()
        .unwrap_or_else(|| format!("{}-results", request.name))
}

/// A ConfigMap key for the `index`-th file: keys are flat and limited to `[-._a-zA-Z0-9]`, so
/// the file's path is mapped back by the volume's items.
fn key(index: usize, path: &str) -> String {
    let name: String = path
        .rsplit('/')
        .next()
        .unwrap_or(path)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-._".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(200)
        .collect();
    format!("{index:04}-{name}")
}

fn config_map(request: &JobRequest) -> ConfigMap {
    let data = request
        .input
        .iter()
        .enumerate()
        .map(|(index, file)| (key(index, &file.path), file.text.clone()))
        .collect();
    ConfigMap {
        metadata: metadata(request, config_map_name(request)),
        data: Some(data),
        ..ConfigMap::default()
    }
}

fn claim(request: &JobRequest) -> PersistentVolumeClaim {
    PersistentVolumeClaim {
        metadata: metadata(request, claim_name(request)),
        spec: Some(PersistentVolumeClaimSpec {
            // Shards run on any node, each writing its own journal.
            access_modes: Some(vec!["ReadWriteMany".to_string()]),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([(
                    "storage".to_string(),
                    Quantity(request.claim_size.clone()),
                )])),
                ..VolumeResourceRequirements::default()
            }),
            ..PersistentVolumeClaimSpec::default()
        }),
        ..PersistentVolumeClaim::default()
    }
}

/// `text` quoted for the POSIX shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The container's script: the shard's check, and kivi's answers mapped to success.
pub fn shard_script(request: &JobRequest) -> String {
    let args: Vec<String> = request.check_args.iter().map(|a| shell_quote(a)).collect();
    format!(
        "kivi check {} --shard \"$JOB_COMPLETION_INDEX/{shards}\" \
         --journal \"{RESULTS_DIR}/shard-$JOB_COMPLETION_INDEX.jsonl\" --quiet\n\
         code=$?\n\
         # 0 no violation, 1 a violation, 3 a check cut short by a bound: the shard's share is\n\
         # decided and in its journal, for kivi merge. 2 (bad input) fails the Job; the rest\n\
         # (a crash, OOM) is retried and resumes from the journal.\n\
         case $code in 0|1|3) exit 0 ;; *) exit $code ;; esac\n",
        args.join(" "),
        shards = request.shards,
    )
}

/// The memory a shard requests, and its limit: its budget (`--memory`, which caps everything
/// its checks hold) and the fixed overhead of a process with `threads` workers
/// ([`process_overhead`]).
fn memory_request(memory: u64, threads: u32) -> Quantity {
    let bytes = memory + process_overhead(u64::from(threads));
    Quantity(format!("{}Mi", bytes.div_ceil(1 << 20)))
}

fn job(request: &JobRequest) -> Job {
    let mut mounts = vec![VolumeMount {
        name: "results".to_string(),
        mount_path: RESULTS_DIR.to_string(),
        ..VolumeMount::default()
    }];
    let mut volumes = vec![Volume {
        name: "results".to_string(),
        persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
            claim_name: claim_name(request),
            read_only: None,
        }),
        ..Volume::default()
    }];
    if !request.input.is_empty() {
        mounts.push(VolumeMount {
            name: "input".to_string(),
            mount_path: INPUT_DIR.to_string(),
            read_only: Some(true),
            ..VolumeMount::default()
        });
        let items = request
            .input
            .iter()
            .enumerate()
            .map(|(index, file)| KeyToPath {
                key: key(index, &file.path),
                path: file.path.clone(),
                mode: None,
            })
            .collect();
        volumes.push(Volume {
            name: "input".to_string(),
            config_map: Some(ConfigMapVolumeSource {
                name: config_map_name(request),
                items: Some(items),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        });
    }
    let memory = memory_request(request.memory, request.threads);
    let container = Container {
        name: "kivi".to_string(),
        image: Some(request.image.clone()),
        command: Some(vec![
            "/bin/sh".to_string(),
            "-c".to_string(),
            shard_script(request),
        ]),
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_string(), Quantity(request.threads.to_string())),
                ("memory".to_string(), memory.clone()),
            ])),
            limits: Some(BTreeMap::from([("memory".to_string(), memory)])),
            ..ResourceRequirements::default()
        }),
        volume_mounts: Some(mounts),
        ..Container::default()
    };
    let on_exit = |action: &str, code: i32| PodFailurePolicyRule {
        action: action.to_string(),
        on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement {
            container_name: Some("kivi".to_string()),
            operator: "In".to_string(),
            values: vec![code],
        }),
        on_pod_conditions: None,
    };
    let disruption = PodFailurePolicyRule {
        action: "Ignore".to_string(),
        on_exit_codes: None,
        on_pod_conditions: Some(vec![PodFailurePolicyOnPodConditionsPattern {
            type_: "DisruptionTarget".to_string(),
            status: "True".to_string(),
        }]),
    };
    Job {
        metadata: metadata(request, request.name.clone()),
        spec: Some(JobSpec {
            completion_mode: Some("Indexed".to_string()),
            completions: Some(clamp(request.shards)),
            parallelism: Some(clamp(request.parallelism)),
            backoff_limit_per_index: Some(clamp(request.backoff_limit_per_index)),
            pod_failure_policy: Some(PodFailurePolicy {
                rules: vec![on_exit("FailJob", 2), disruption],
            }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(request)),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    restart_policy: Some("Never".to_string()),
                    security_context: Some(PodSecurityContext {
                        run_as_non_root: Some(true),
                        run_as_user: Some(KIVI_USER),
                        run_as_group: Some(KIVI_USER),
                        fs_group: Some(KIVI_USER),
                        ..PodSecurityContext::default()
                    }),
                    containers: vec![container],
                    volumes: Some(volumes),
                    ..PodSpec::default()
                }),
            },
            ..JobSpec::default()
        }),
        ..Job::default()
    }
}

/// A count as the API's 32-bit integers hold it.
fn clamp(count: u32) -> i32 {
    i32::try_from(count).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> JobRequest {
        JobRequest {
            name: "kivi-sweep".into(),
            image: "example.com/kivi:1".into(),
            shards: 4,
            parallelism: 2,
            backoff_limit_per_index: 3,
            volume_claim: None,
            claim_size: "1Gi".into(),
            check_args: vec![
                "/input/my template.json".into(),
                "--scale".into(),
                "6".into(),
            ],
            input: vec![InputFile {
                path: "my template.json".into(),
                text: "{}".into(),
            }],
            threads: 2,
            memory: 1 << 30,
        }
    }

    #[test]
    fn the_manifest_round_trips_through_the_kubernetes_types() {
        let manifest = Manifest::new(&request()).expect("a manifest");
        let yaml = manifest.to_yaml();
        let documents: Vec<&str> = yaml.split("---\n").collect();
        assert_eq!(documents.len(), 3);
        let config_map: ConfigMap = serde_yaml_ng::from_str(documents[0]).expect("a ConfigMap");
        let claim: PersistentVolumeClaim = serde_yaml_ng::from_str(documents[1]).expect("a PVC");
        let job: Job = serde_yaml_ng::from_str(documents[2]).expect("a batch/v1 Job");
        assert_eq!(Some(config_map), manifest.config_map);
        assert_eq!(Some(claim), manifest.claim);
        assert_eq!(job, manifest.job);
        assert!(documents[2].starts_with("apiVersion: batch/v1\nkind: Job\n"));
    }

    #[test]
    fn the_job_is_indexed_and_each_pod_runs_its_shard() {
        let job = Manifest::new(&request()).expect("a manifest").job;
        let spec = job.spec.expect("a spec");
        assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
        assert_eq!(
            (
                spec.completions,
                spec.parallelism,
                spec.backoff_limit_per_index
            ),
            (Some(4), Some(2), Some(3))
        );
        let pod = spec.template.spec.expect("a pod");
        assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
        let container = &pod.containers[0];
        let script = &container.command.as_ref().expect("a command")[2];
        assert!(script.starts_with(
            "kivi check '/input/my template.json' '--scale' '6' --shard \"$JOB_COMPLETION_INDEX/4\" \
             --journal \"/results/shard-$JOB_COMPLETION_INDEX.jsonl\""
        ));
        let resources = container.resources.as_ref().expect("resources");
        let requests = resources.requests.as_ref().expect("requests");
        assert_eq!(requests["cpu"], Quantity("2".into()));
        assert_eq!(
            requests["memory"],
            Quantity("1136Mi".into()),
            "1 GiB and the overhead of 2 threads"
        );
        let volumes = pod.volumes.expect("volumes");
        let input = volumes[1].config_map.as_ref().expect("the input");
        assert_eq!(input.name, "kivi-sweep-input");
        let items = input.items.as_ref().expect("items");
        assert_eq!(
            (items[0].key.as_str(), items[0].path.as_str()),
            ("0000-my_template.json", "my template.json")
        );
        let claim = volumes[0]
            .persistent_volume_claim
            .as_ref()
            .expect("results");
        assert_eq!(claim.claim_name, "kivi-sweep-results");
    }

    #[test]
    fn a_named_claim_is_used_and_not_created_and_big_inputs_are_refused() {
        let mut named = request();
        named.volume_claim = Some("shared".into());
        let manifest = Manifest::new(&named).expect("a manifest");
        assert!(manifest.claim.is_none());
        let mut big = request();
        big.input[0].text = "x".repeat(MAX_INPUT_BYTES + 1);
        assert!(Manifest::new(&big)
            .expect_err("too big")
            .contains("more than a ConfigMap holds"));
    }

    #[test]
    fn arguments_are_quoted_for_the_shell() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
