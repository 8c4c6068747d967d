//! Merging the journals of a sharded sweep (`kivi merge`) into the answer a single run gives.
//!
//! Each shard's journal starts with a header ([`JournalHeader`]) that holds the template, its
//! sizes and the options, so the merge needs nothing but the journals: it checks that they
//! belong to one sweep (the same fingerprint of input and verdict-changing options, the same
//! fast-find level and `--all-violations`, the same shard count, no shard twice), rebuilds the
//! sweep's candidates and the deal of [`super::shard`], and decides the sweep from the
//! recorded verdicts: the first violation in the mode's order (every violation with
//! `--all-violations`), provided that every topology before it was decided. A violating
//! topology is checked once more to rebuild its counterexample, as a resumed sweep does.
//!
//! The merged report is the one a single run on one thread prints: a row for every topology up
//! to the answer (every topology without a violation, or with `--all-violations`), with the
//! numbers the shards recorded. Topologies a shard decided past the answer are left out, as
//! the single run never checks them. Topologies before the answer that no journal decides make
//! the merge incomplete; their owners are named, as missing (no journal given) or partial
//! (stopped before deciding its share).

use super::enumeration::{EnumerationOptions, FastFind};
use super::jobs::{JobContext, JobReport};
use super::journal::{self, JournalContents, JournalEntry, JournalHeader, JOURNAL_VERSION};
use super::search::{passed_before, JobVerdict};
use super::shard::{owners, Shard};
use super::sweep::{
    assemble, check_topology, level0_order, level0_positions, sizes, sweep_candidates, SweepError,
    SweepInput, SweepResult, SweepSettings, TopologyCheck,
};
use super::template::Template;
use super::topology::Topology;
use crate::engine::{CancelToken, CheckOptions, VisitedKind};
use crate::model::liveness::LoopKind;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A merged sweep.
pub struct Merged {
    /// The sweep's answer, as a single run reports it.
    pub result: SweepResult,
    /// The header of the first journal: the input's name, URI and names.
    pub header: JournalHeader,
    /// How many shards the sweep was split into.
    pub shards: u32,
    /// Why the merge is not the sweep's answer (missing or partial shards), if so.
    pub missing: Option<String>,
}

impl Merged {
    /// The exit code, the single run's: a violation found in the shards given (1) stands
    /// whatever shards are missing, which only leave its minimality open; without one,
    /// missing or partial shards make the merge incomplete (3).
    pub fn exit_code(&self) -> i32 {
        self.result.verdict().exit_code()
    }
}

/// One journal given to the merge.
struct ShardJournal {
    path: PathBuf,
    header: JournalHeader,
    contents: JournalContents,
}

/// Merges the journals at `paths` (files; see [`journal_files`] for directories), re-checking
/// violating topologies on `pool` with `threads` workers.
pub fn merge(
    paths: &[PathBuf],
    threads: usize,
    pool: &rayon::ThreadPool,
) -> Result<Merged, SweepError> {
    let journals = paths
        .iter()
        .map(|path| read_shard(path))
        .collect::<Result<Vec<_>, _>>()?;
    let first = journals.first().ok_or_else(|| {
        SweepError::Input("no journal to merge; give the shards' journal files".into())
    })?;
    let count = shard_count(&first.header);
    let mut by_index: BTreeMap<u32, &Path> = BTreeMap::new();
    for journal in &journals {
        same_sweep(first, journal)?;
        let index = journal.header.shard.map_or(0, |shard| shard.index);
        if let Some(other) = by_index.insert(index, &journal.path) {
            return Err(SweepError::Input(format!(
                "shard {} is in both {} and {}; give each shard's journal once",
                Shard { index, count },
                other.display(),
                journal.path.display()
            )));
        }
    }
    let header = first.header.clone();
    let template = rebuild_template(&first.path, &header)?;
    let settings = settings_of(&header, threads);
    let mut entries: HashMap<Topology, &JournalEntry> = HashMap::new();
    for entry in journals.iter().flat_map(|j| &j.contents.entries) {
        if entry.input == header.sweep {
            entries.insert(entry.topology(), entry);
        }
    }
    let order = level0_order(&template, &settings);
    let candidates = sweep_candidates(&template, &settings, &order);
    let owner = owners(&candidates, &template, count);
    let verdict = |t: &Topology| entries.get(t).map(|entry| entry.verdict);
    let answer = (!settings.all_violations)
        .then(|| {
            candidates
                .iter()
                .position(|t| verdict(t) == Some(JobVerdict::Violation))
        })
        .flatten();
    let needed = answer.map_or(candidates.len(), |index| index + 1);
    let mut undecided: BTreeMap<u32, usize> = BTreeMap::new();
    let mut reports = Vec::new();
    for (index, topology) in candidates[..needed].iter().enumerate() {
        let Some(entry) = entries.get(topology) else {
            *undecided.entry(owner[index]).or_default() += 1;
            continue;
        };
        let mut output = TopologyCheck {
            states: entry.states,
            transitions: entry.transitions,
            elapsed_s: entry.elapsed_s,
            from_journal: false,
            violation: None,
            error: None,
            incomplete: entry.incomplete.clone(),
        };
        if entry.verdict == JobVerdict::Violation {
            output.violation = Some(recheck(&template, &settings, topology, pool)?);
        }
        reports.push(JobReport {
            topology: topology.clone(),
            verdict: entry.verdict,
            threads: entry.threads,
            elapsed: Duration::try_from_secs_f64(entry.elapsed_s).unwrap_or_default(),
            output,
        });
    }
    let positions = level0_positions(&order, reports.iter().map(|report| &report.topology));
    let first_violation = answer.map(|index| candidates[index].clone());
    let mut result = assemble(reports, &positions, &template, &settings, first_violation);
    result.candidates = candidates.len();
    result.guaranteed_minimal = settings.all_violations
        || passed_before(&order, answer.map(|i| &candidates[i]), |t| {
            verdict(t) == Some(JobVerdict::NoViolation)
        });
    result.undecided = undecided.values().sum();
    result.threads = journals.iter().map(|j| j.header.threads).max().unwrap_or(1);
    result.elapsed_s = slowest_shard(&candidates, &owner, &entries);
    result
        .warnings
        .extend(journals.iter().filter_map(|j| j.contents.cut_off.clone()));
    let missing = missing_message(&undecided, &by_index, count);
    if let (Some(message), true) = (&missing, result.violations.is_empty()) {
        result.incomplete = Some(match result.incomplete.take() {
            Some(earlier) => format!("{message}; and {earlier}"),
            None => message.clone(),
        });
    }
    result.missing_shards = missing.clone();
    Ok(Merged {
        result,
        header,
        shards: count,
        missing,
    })
}

/// The journal files `path` names: itself, or the files of a directory (not hidden ones), in
/// name order.
pub fn journal_files(path: &Path) -> Result<Vec<PathBuf>, String> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let listing = std::fs::read_dir(path)
        .map_err(|e| format!("{}: cannot list the directory: {e}", path.display()))?;
    let mut files = Vec::new();
    for entry in listing {
        let entry = entry.map_err(|e| format!("{}: cannot list: {e}", path.display()))?;
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if !hidden && entry.path().is_file() {
            files.push(entry.path());
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "{}: no journal files in this directory; give the shards' --journal files",
            path.display()
        ));
    }
    Ok(files)
}

fn read_shard(path: &Path) -> Result<ShardJournal, SweepError> {
    let contents = journal::read(path).map_err(SweepError::Input)?;
    let header = contents.headers.last().cloned().ok_or_else(|| {
        SweepError::Input(format!(
            "{}: no journal header: not a journal written by `kivi check --journal` of this \
             kivi; rerun its shard with this kivi",
            path.display()
        ))
    })?;
    if header.version != JOURNAL_VERSION {
        return Err(SweepError::Input(format!(
            "{}: journal format {} (this kivi reads format {JOURNAL_VERSION}); merge it with \
             the kivi that wrote it, or rerun its shard",
            path.display(),
            header.version
        )));
    }
    if let Err(error) = FastFind::from_level(header.options.fast_find) {
        return Err(SweepError::Input(format!(
            "{}: the header's {error}; rerun its shard with this kivi",
            path.display()
        )));
    }
    Ok(ShardJournal {
        path: path.to_path_buf(),
        header,
        contents,
    })
}

/// How many shards the run of `header` belongs to (1 for a whole sweep).
fn shard_count(header: &JournalHeader) -> u32 {
    header.shard.map_or(1, |shard| shard.count)
}

/// An error unless `other` is a shard of the same sweep as `first`.
fn same_sweep(first: &ShardJournal, other: &ShardJournal) -> Result<(), SweepError> {
    let (a, b) = (&first.header, &other.header);
    let semantics_differ = a.options.model.semantics != b.options.model.semantics;
    let differs = if a.sweep != b.sweep || semantics_differ {
        let options = differing_options(a, b);
        Some(if options.is_empty() {
            format!(
                "input {} (hash {}) and input {} (hash {}), or their verdict-changing options, \
                 differ",
                a.input, a.input_hash, b.input, b.input_hash
            )
        } else {
            options.join("; ")
        })
    } else if a.options.fast_find != b.options.fast_find {
        Some(format!(
            "fast-find {} and {}",
            a.options.fast_find, b.options.fast_find
        ))
    } else if a.options.all_violations != b.options.all_violations {
        Some("one was run with --all-violations, the other without".to_string())
    } else if shard_count(a) != shard_count(b) {
        Some(format!(
            "split into {} and {} shards",
            shard_count(a),
            shard_count(b)
        ))
    } else {
        None
    };
    match differs {
        None => Ok(()),
        Some(what) => Err(SweepError::Input(format!(
            "{} and {} are journals of different sweeps: {what}; merge the journals of one sweep",
            first.path.display(),
            other.path.display()
        ))),
    }
}

/// What differs between two journals' sweeps, among what their fingerprints hold: the input,
/// the sizes (`--scale`) and each option that changes verdicts, named as its flag with both
/// values (first journal's, then the other's). Empty when the headers show no difference (the
/// journals were written by different versions of kivi).
fn differing_options(a: &JournalHeader, b: &JournalHeader) -> Vec<String> {
    let mut found = Vec::new();
    let mut differ = |what: &str, first: String, other: String| {
        if first != other {
            found.push(format!("{what}: {first} and {other}"));
        }
    };
    let flag = |given: bool| if given { "given" } else { "not given" }.to_string();
    let (x, y) = (&a.options, &b.options);
    differ(
        "the input",
        format!("{} (hash {})", a.input, a.input_hash),
        format!("{} (hash {})", b.input, b.input_hash),
    );
    differ(
        "the types' sizes (--scale), (min, max) per type",
        format!("{:?}", a.sizes),
        format!("{:?}", b.sizes),
    );
    differ(
        "--confident-nodes",
        x.confident_nodes.to_string(),
        y.confident_nodes.to_string(),
    );
    differ(
        "--confident-ratio",
        x.confident_ratio.to_string(),
        y.confident_ratio.to_string(),
    );
    let depth = |d: Option<u32>| d.map_or("none".to_string(), |d| d.to_string());
    differ("--depth", depth(x.depth), depth(y.depth));
    differ(
        "--exact",
        flag(x.visited == VisitedKind::Exact),
        flag(y.visited == VisitedKind::Exact),
    );
    differ(
        "--tie-break",
        format!("{:?}", x.model.tie_break).to_lowercase(),
        format!("{:?}", y.model.tie_break).to_lowercase(),
    );
    differ(
        "--semantics",
        x.model.semantics.name().to_string(),
        y.model.semantics.name().to_string(),
    );
    differ(
        "--no-symmetry",
        flag(!x.model.symmetry),
        flag(!y.model.symmetry),
    );
    differ(
        "--perturb",
        format!("{:?}", x.model.perturbations),
        format!("{:?}", y.model.perturbations),
    );
    let liveness = |l: Option<LoopKind>| match l {
        None => "the safety intents",
        Some(LoopKind::Eviction) => "eviction loops (--loop)",
        Some(LoopKind::UnstableReconciliation) => "unstable reconciliation (--intent esr)",
        Some(LoopKind::DrainNeverCompletes) => "drains that never complete (--intent drain)",
    };
    differ(
        "what each topology is searched for",
        liveness(x.liveness).to_string(),
        liveness(y.liveness).to_string(),
    );
    found
}

/// The template the header records, with its sizes.
fn rebuild_template(path: &Path, header: &JournalHeader) -> Result<Template, SweepError> {
    let wrong = |why: String| {
        SweepError::Input(format!(
            "{}: the header's template {why}; rerun the shard with this kivi",
            path.display()
        ))
    };
    let mut template = Template::from_json(&header.template).map_err(|e| wrong(e.to_string()))?;
    if header.sizes.len() != sizes(&template).len() {
        return Err(wrong("does not match its sizes".to_string()));
    }
    let (nodes, deployments) = header.sizes.split_at(template.node_types.len());
    for (node_type, &(min, max)) in template.node_types.iter_mut().zip(nodes) {
        (node_type.min_size, node_type.max_size) = (min, max);
    }
    for (deployment_type, &(min, max)) in template.deployment_types.iter_mut().zip(deployments) {
        (deployment_type.min_size, deployment_type.max_size) = (min, max);
    }
    Ok(template)
}

/// The sweep settings the header records, checking on `threads` workers.
fn settings_of(header: &JournalHeader, threads: usize) -> SweepSettings {
    let options = &header.options;
    SweepSettings {
        enumeration: EnumerationOptions {
            confident_nodes: options.confident_nodes,
            pods_per_node: options.confident_ratio,
            fast_find: FastFind::from_level(options.fast_find)
                .expect("read_shard admits known levels only"),
        },
        check: CheckOptions {
            strategy: options.strategy,
            visited: options.visited,
            depth_limit: options.depth,
            timeout: options
                .timeout_s
                .and_then(|s| Duration::try_from_secs_f64(s).ok()),
            memory: crate::engine::MemoryBudget::new(options.memory),
            seed: options.seed,
            all_violations: options.all_violations,
            ..CheckOptions::with_threads(threads)
        },
        all_violations: options.all_violations,
        journal: None,
        model: options.model,
        liveness: options.liveness,
        shard: None,
        input: SweepInput {
            name: header.input.clone(),
            uri: header.uri.clone(),
            names: header.names.clone(),
        },
    }
}

/// Checks a topology a shard found violating once more, for its counterexample.
fn recheck(
    template: &Template,
    settings: &SweepSettings,
    topology: &Topology,
    pool: &rayon::ThreadPool,
) -> Result<(crate::model::ClusterModel, super::sweep::Finding), SweepError> {
    let context = JobContext {
        threads: settings.check.threads,
        cancel: CancelToken::new(),
    };
    let (verdict, check) = pool.install(|| {
        check_topology(
            template,
            &settings.check,
            (settings.model, settings.liveness),
            &HashMap::new(),
            topology,
            context,
        )
    });
    if let Some(error) = check.error {
        return Err(error);
    }
    match (verdict, check.violation) {
        (JobVerdict::Violation, Some(violation)) => Ok(violation),
        _ => Err(SweepError::Internal(format!(
            "topology {topology}: a shard recorded a violation that checking it again does not \
             find"
        ))),
    }
}

/// The check time of the slowest shard: what the sweep took with its shards side by side.
fn slowest_shard(
    candidates: &[Topology],
    owner: &[u32],
    entries: &HashMap<Topology, &JournalEntry>,
) -> f64 {
    let mut time: HashMap<u32, f64> = HashMap::new();
    for (topology, &shard) in candidates.iter().zip(owner) {
        if let Some(entry) = entries.get(topology) {
            *time.entry(shard).or_default() += entry.elapsed_s;
        }
    }
    time.into_values().fold(0.0, f64::max)
}

/// What is missing before the answer, by shard: shards without a journal, and shards whose
/// journal stops short.
fn missing_message(
    undecided: &BTreeMap<u32, usize>,
    given: &BTreeMap<u32, &Path>,
    count: u32,
) -> Option<String> {
    if undecided.is_empty() {
        return None;
    }
    let shard = |index: u32| Shard { index, count }.to_string();
    let absent: Vec<String> = undecided
        .keys()
        .filter(|index| !given.contains_key(index))
        .map(|&index| shard(index))
        .collect();
    let partial: Vec<String> = undecided
        .iter()
        .filter_map(|(index, &n)| {
            given.get(index).map(|path| {
                format!(
                    "{} ({}: {n} topologies undecided)",
                    shard(*index),
                    path.display()
                )
            })
        })
        .collect();
    let mut parts = Vec::new();
    if !absent.is_empty() {
        parts.push(format!("shard(s) missing: {}", absent.join(", ")));
    }
    if !partial.is_empty() {
        parts.push(format!("shard(s) partial: {}", partial.join(", ")));
    }
    let undecided: usize = undecided.values().sum();
    Some(format!(
        "{}; {undecided} topologies before the answer are undecided — run the missing shards, \
         rerun the partial ones with the same --journal to resume, and merge again",
        parts.join("; ")
    ))
}
