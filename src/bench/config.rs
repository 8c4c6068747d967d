//! Sweep definitions: the JSON files in `bench-configs/`, read strictly (unknown fields are
//! errors) and expanded into the list of measurements to take.

use crate::cases;
use crate::engine::parse_memory;
use crate::scaler::Topology;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// A sweep: what to measure, how often, and what to print beside the results.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepConfig {
    /// Heading of the result file.
    pub title: String,
    /// A paragraph under the heading: what the sweep shows and how to read it.
    #[serde(default)]
    pub description: Option<String>,
    /// Runs per measurement; the results are medians over them.
    #[serde(default = "one")]
    pub repetitions: usize,
    /// The groups of measurements, each a table of its own in the result file.
    pub runs: Vec<RunConfig>,
    /// Reference figures (the paper's, Kivi + SPIN's) by name, shown beside a run's table.
    #[serde(default)]
    pub references: BTreeMap<String, ReferenceTable>,
    /// Charts drawn from the CSV, one SVG file each.
    #[serde(default)]
    pub plots: Vec<PlotConfig>,
}

fn one() -> usize {
    1
}

/// One group of measurements: a mode over some inputs, at some thread counts and fast-find
/// levels.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Name of the group: the table's heading and the `run` column of the CSV.
    pub name: String,
    /// What each measurement runs.
    pub mode: Mode,
    /// Built-in cases (`c1` … `c8`).
    #[serde(default)]
    pub cases: Vec<String>,
    /// Input files (uniform JSON, manifests, dumps), relative to the working directory.
    #[serde(default)]
    pub inputs: Vec<PathBuf>,
    /// Which variant of the built-in cases.
    #[serde(default)]
    pub variant: Variant,
    /// Thread counts: numbers, or "all" for every core of the machine.
    #[serde(default = "all_cores")]
    pub threads: Vec<ThreadCount>,
    /// Fast-find levels of the scaling modes (`--fast-find`).
    #[serde(default = "level_zero")]
    pub fast_find: Vec<u8>,
    /// Nodes per node type up to which sweeps go (`--scale`).
    #[serde(default)]
    pub scale: Option<u64>,
    /// Confident size: nodes per node type (`--confident-nodes`).
    #[serde(default)]
    pub confident_nodes: Option<u64>,
    /// Confident size: pods per node (`--confident-ratio`).
    #[serde(default)]
    pub confident_ratio: Option<u64>,
    /// The topology of `single` mode (`--topology`, e.g. "4,4:24"); without it, the input's
    /// own single topology (`--original`).
    #[serde(default)]
    pub topology: Option<String>,
    /// How `scale-up` grows the topology.
    #[serde(default)]
    pub grow: Option<Grow>,
    /// Runs per measurement of this run, instead of the sweep's `repetitions` (e.g. 1 for a
    /// run that takes minutes).
    #[serde(default)]
    pub repetitions: Option<usize>,
    /// Time limit of each check (`--timeout`; per topology in sweeps).
    #[serde(default)]
    pub timeout_s: Option<u64>,
    /// Visited-set memory cap (`--memory`, e.g. "8G").
    #[serde(default)]
    pub memory: Option<String>,
    /// Name of an entry of `references` to show beside this run's table.
    #[serde(default)]
    pub reference: Option<String>,
    /// A reference time for the sum of this run's wall times (e.g. Kivi + SPIN's 297 s for
    /// the eight scaling runs).
    #[serde(default)]
    pub total_reference: Option<TotalReference>,
    /// The synthetic model of `engine` mode.
    #[serde(default)]
    pub engine: Option<EngineRun>,
    /// The search strategy (`--strategy`: dfs, bfs or swarm) of single and engine modes.
    #[serde(default)]
    pub strategy: Option<String>,
    /// `--expect-states` of single and engine modes (0: the visited set grows from a page).
    #[serde(default)]
    pub expect_states: Option<u64>,
    /// Single mode only: search for an eviction loop (`--loop`) instead of intent violations.
    #[serde(default, rename = "loop")]
    pub eviction_loop: bool,
    /// Measure thread counts above the machine's cores too (an oversubscription benchmark)
    /// instead of leaving them out.
    #[serde(default)]
    pub oversubscribe: bool,
}

/// A synthetic model for `engine` mode.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineRun {
    /// `counters`, `ordered-counters` or `two-phase-commit`.
    pub model: String,
    /// Counters (resource managers for two-phase commit).
    pub vars: u64,
    /// Largest counter value.
    #[serde(default = "nine")]
    pub max: u64,
}

fn nine() -> u64 {
    9
}

fn all_cores() -> Vec<ThreadCount> {
    vec![ThreadCount::All]
}

fn level_zero() -> Vec<u8> {
    vec![0]
}

/// What one measurement runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// A scaling sweep to the minimal violating topology (through every topology when none
    /// violates).
    Scaling,
    /// A scaling sweep that checks every topology and reports each violating one (`-a`).
    AllViolations,
    /// One topology.
    Single,
    /// One topology at a time, growing, until a check runs out of time or the model's size
    /// limits are reached.
    ScaleUp,
    /// A synthetic model of the engine (`kivi bench engine`), with a known state count.
    Engine,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Scaling => "scaling",
            Mode::AllViolations => "all-violations",
            Mode::Single => "single",
            Mode::ScaleUp => "scale-up",
            Mode::Engine => "engine",
        })
    }
}

/// Which variant of a built-in case.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// The configuration with the bug (Kivi's default).
    #[default]
    Violation,
    /// The fixed configuration (Kivi's `-cn`).
    NonViolation,
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Variant::Violation => "violation",
            Variant::NonViolation => "non-violation",
        })
    }
}

/// A thread count of the config: a number, or every core (written "all").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadCount {
    /// Exactly this many threads.
    Exactly(usize),
    /// As many threads as the machine has cores.
    All,
}

impl<'de> Deserialize<'de> for ThreadCount {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(word) if word == "all" => Ok(ThreadCount::All),
            Value::Number(number) if number.as_u64().is_some() => Ok(ThreadCount::Exactly(
                number.as_u64().expect("checked") as usize,
            )),
            other => Err(serde::de::Error::custom(format!(
                "thread count {other}: write a number or \"all\""
            ))),
        }
    }
}

impl ThreadCount {
    /// The number of threads on a machine with `cores` cores.
    pub fn resolve(self, cores: usize) -> usize {
        match self {
            ThreadCount::Exactly(threads) => threads,
            ThreadCount::All => cores,
        }
    }
}

/// How `scale-up` grows a topology: every node type gets the same node count, taken in turn
/// from `nodes_per_type`, and the deployment types share `pods_per_node` replicas per node
/// (fewer where the model's pod limit requires).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grow {
    /// Node counts per node type, smallest first.
    pub nodes_per_type: Vec<u64>,
    /// Replicas per node, shared by the deployment types.
    pub pods_per_node: u64,
}

/// Reference figures: named columns, one row of values per input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceTable {
    /// Where the figures come from.
    pub source: String,
    /// Column headings.
    pub columns: Vec<String>,
    /// Values per input name (a case name such as `c3`, or an input path).
    pub rows: BTreeMap<String, Vec<Value>>,
}

/// A reference time for a run's total.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TotalReference {
    /// Whose time it is, e.g. "Kivi + SPIN, 2-core machine".
    pub label: String,
    /// The time in seconds.
    pub seconds: f64,
}

/// A chart of two CSV columns, one line per distinct value of the series columns.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotConfig {
    /// The SVG file is `NAME-<suffix>.svg` beside the CSV.
    pub suffix: String,
    /// Title above the chart.
    pub title: String,
    /// Column of the x values.
    pub x: String,
    /// Column of the y values.
    pub y: String,
    /// Columns whose values, joined, name a line.
    pub series: Vec<String>,
    /// Only rows of these runs (all runs when empty).
    #[serde(default)]
    pub runs: Vec<String>,
    /// A logarithmic y axis.
    #[serde(default)]
    pub log_y: bool,
    /// Adds the line of linear speedup: y = x / (the smallest x).
    #[serde(default)]
    pub ideal: bool,
}

/// What a measurement checks: a built-in case or an input file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Input {
    /// A built-in case, by name.
    Case(String),
    /// A file or directory.
    File(PathBuf),
    /// A synthetic model: its name, counters and largest value.
    Synthetic(String),
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Case(name) => f.write_str(name),
            Input::File(path) => write!(f, "{}", path.display()),
            Input::Synthetic(model) => f.write_str(model),
        }
    }
}

/// An invalid sweep definition: where and how to fix it.
#[derive(Debug)]
pub struct ConfigError(String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl SweepConfig {
    /// Reads and validates the sweep definition in `path`.
    pub fn load(path: &Path) -> Result<SweepConfig, ConfigError> {
        let name = path.display();
        let text = std::fs::read_to_string(path)
            .map_err(|error| ConfigError(format!("{name}: cannot read: {error}")))?;
        let config: SweepConfig = serde_json::from_str(&text).map_err(|error| {
            ConfigError(format!(
                "{name}:{}:{}: {error}; see bench-configs/README.md for the fields",
                error.line(),
                error.column()
            ))
        })?;
        config
            .validate()
            .map_err(|(place, problem)| ConfigError(format!("{name}: {place}: {problem}")))?;
        Ok(config)
    }

    /// Runs per measurement of run `index`: its own `repetitions`, or the sweep's.
    pub fn repetitions_of(&self, index: usize) -> usize {
        self.runs[index].repetitions.unwrap_or(self.repetitions)
    }

    /// Checks what the JSON types cannot: names exist, lists are not empty, each mode has
    /// the fields it needs and none it would ignore.
    fn validate(&self) -> Result<(), (String, String)> {
        let top = |problem: &str| Err(("(top level)".to_string(), problem.to_string()));
        if self.repetitions == 0 {
            return top("repetitions is 0: use 1 or more");
        }
        if self.runs.is_empty() {
            return top("runs is empty: give at least one run");
        }
        for (index, run) in self.runs.iter().enumerate() {
            run.validate(self)
                .map_err(|(field, problem)| (format!("runs[{index}].{field}"), problem))?;
        }
        for (index, plot) in self.plots.iter().enumerate() {
            let place = |field: &str| format!("plots[{index}].{field}");
            if plot.series.is_empty() {
                return Err((place("series"), "give at least one column".into()));
            }
            if !plot
                .suffix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
            {
                return Err((place("suffix"), "use letters, digits and '-' only".into()));
            }
            if let Some(unknown) = plot
                .runs
                .iter()
                .find(|name| !self.runs.iter().any(|run| &&run.name == name))
            {
                return Err((place("runs"), format!("no run is named \"{unknown}\"")));
            }
        }
        Ok(())
    }
}

impl RunConfig {
    fn validate(&self, sweep: &SweepConfig) -> Result<(), (String, String)> {
        let fail = |field: &str, problem: String| Err((field.to_string(), problem));
        if self.repetitions == Some(0) {
            return fail("repetitions", "0: use 1 or more, or leave it out".into());
        }
        match (&self.engine, self.mode) {
            (None, Mode::Engine) => {
                return fail(
                    "engine",
                    "engine mode needs engine: model, vars, max".into(),
                )
            }
            (Some(_), mode) if mode != Mode::Engine => {
                return fail("engine", "only engine mode runs a synthetic model".into())
            }
            (Some(engine), _) => {
                if !["counters", "ordered-counters", "two-phase-commit"]
                    .contains(&engine.model.as_str())
                {
                    return fail(
                        "engine.model",
                        format!(
                            "unknown model \"{}\": use counters, ordered-counters or \
                             two-phase-commit",
                            engine.model
                        ),
                    );
                }
                if !self.cases.is_empty() || !self.inputs.is_empty() {
                    return fail(
                        "cases",
                        "engine mode measures its model: leave cases and inputs out".into(),
                    );
                }
            }
            (None, _) => {}
        }
        if self.mode != Mode::Engine && self.cases.is_empty() && self.inputs.is_empty() {
            return fail("cases", "give cases or inputs to measure".into());
        }
        if let Some(strategy) = &self.strategy {
            if !["dfs", "bfs", "swarm"].contains(&strategy.as_str()) {
                return fail("strategy", format!("\"{strategy}\": use dfs, bfs or swarm"));
            }
        }
        if (self.strategy.is_some() || self.expect_states.is_some())
            && !matches!(self.mode, Mode::Single | Mode::Engine)
        {
            return fail(
                "strategy",
                "strategy and expect_states apply to single and engine modes".into(),
            );
        }
        if let Some(unknown) = self.cases.iter().find(|name| cases::find(name).is_none()) {
            return fail(
                "cases",
                format!("unknown case \"{unknown}\": the built-in cases are c1 to c8"),
            );
        }
        if self.threads.is_empty() || self.threads.contains(&ThreadCount::Exactly(0)) {
            return fail(
                "threads",
                "give thread counts of 1 or more, or \"all\"".into(),
            );
        }
        if self.fast_find.is_empty() || self.fast_find.iter().any(|&level| level > 3) {
            return fail("fast_find", "give levels from 0 to 3".into());
        }
        let sweeps = matches!(self.mode, Mode::Scaling | Mode::AllViolations);
        if !sweeps && self.fast_find != [0] {
            return fail(
                "fast_find",
                format!(
                    "{} mode checks single topologies: leave fast_find out",
                    self.mode
                ),
            );
        }
        if !sweeps
            && (self.scale.is_some()
                || self.confident_nodes.is_some()
                || self.confident_ratio.is_some())
        {
            return fail(
                "scale",
                format!(
                    "{} mode does not sweep: leave scale, confident_nodes and confident_ratio out",
                    self.mode
                ),
            );
        }
        if self.eviction_loop && self.mode != Mode::Single {
            return fail(
                "loop",
                "only single mode searches for eviction loops".into(),
            );
        }
        if let Some(topology) = &self.topology {
            if self.mode != Mode::Single {
                return fail("topology", "only single mode takes a topology".into());
            }
            topology
                .parse::<Topology>()
                .map_err(|error| ("topology".to_string(), error.to_string()))?;
        }
        match (&self.grow, self.mode) {
            (None, Mode::ScaleUp) => {
                return fail(
                    "grow",
                    "scale-up mode needs grow: nodes_per_type and pods_per_node".into(),
                )
            }
            (Some(_), mode) if mode != Mode::ScaleUp => {
                return fail("grow", "only scale-up mode grows topologies".into())
            }
            (Some(grow), _) if grow.nodes_per_type.is_empty() || grow.pods_per_node == 0 => {
                return fail(
                    "grow",
                    "give node counts and a positive pods_per_node".into(),
                )
            }
            _ => {}
        }
        if let Some(memory) = &self.memory {
            parse_memory(memory).map_err(|error| ("memory".to_string(), error))?;
        }
        if let Some(reference) = &self.reference {
            if !sweep.references.contains_key(reference) {
                return fail(
                    "reference",
                    format!("no entry \"{reference}\" in references"),
                );
            }
        }
        Ok(())
    }

    /// The inputs of this run, cases first.
    pub fn all_inputs(&self) -> Vec<Input> {
        self.cases
            .iter()
            .map(|name| Input::Case(name.clone()))
            .chain(self.inputs.iter().map(|path| Input::File(path.clone())))
            .chain(self.engine.iter().map(|engine| {
                Input::Synthetic(format!("{} {} {}", engine.model, engine.vars, engine.max))
            }))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<SweepConfig, String> {
        let config: SweepConfig = serde_json::from_str(text).map_err(|e| e.to_string())?;
        config
            .validate()
            .map_err(|(place, problem)| format!("{place}: {problem}"))?;
        Ok(config)
    }

    #[test]
    fn reads_a_minimal_sweep_with_defaults() {
        let config =
            parse(r#"{"title": "t", "runs": [{"name": "r", "mode": "scaling", "cases": ["c3"]}]}"#)
                .unwrap();
        let run = &config.runs[0];
        assert_eq!(config.repetitions, 1);
        assert_eq!(run.threads, vec![ThreadCount::All]);
        assert_eq!(run.fast_find, vec![0]);
        assert_eq!(run.variant, Variant::Violation);
        assert_eq!(run.all_inputs(), vec![Input::Case("c3".into())]);
    }

    #[test]
    fn reads_thread_lists_with_all() {
        let config = parse(
            r#"{"title": "t", "runs": [{"name": "r", "mode": "scaling", "cases": ["c1"], "threads": [1, 2, "all"]}]}"#,
        )
        .unwrap();
        let threads: Vec<usize> = config.runs[0]
            .threads
            .iter()
            .map(|t| t.resolve(16))
            .collect();
        assert_eq!(threads, vec![1, 2, 16]);
    }

    #[test]
    fn refuses_what_would_be_ignored_or_cannot_run() {
        let cases = [
            (
                r#"{"title": "t", "runs": [{"name": "r", "mode": "scaling", "cases": ["c9"]}]}"#,
                "unknown case \"c9\"",
            ),
            (
                r#"{"title": "t", "runs": [{"name": "r", "mode": "scaling", "cases": ["c1"], "colour": 1}]}"#,
                "unknown field `colour`",
            ),
            (
                r#"{"title": "t", "runs": [{"name": "r", "mode": "sweep", "cases": ["c1"]}]}"#,
                "unknown variant `sweep`",
            ),
            (
                r#"{"title": "t", "runs": [{"name": "r", "mode": "single", "cases": ["c1"], "fast_find": [2]}]}"#,
                "leave fast_find out",
            ),
            (
                r#"{"title": "t", "runs": [{"name": "r", "mode": "scale-up", "cases": ["c1"]}]}"#,
                "needs grow",
            ),
            (
                r#"{"title": "t", "runs": [{"name": "r", "mode": "single", "cases": ["c1"], "topology": "3"}]}"#,
                "e.g. `1,2:6`",
            ),
            (
                r#"{"title": "t", "runs": [{"name": "r", "mode": "scaling", "cases": ["c1"], "threads": [0]}]}"#,
                "1 or more",
            ),
            (
                r#"{"title": "t", "runs": [{"name": "r", "mode": "scaling", "cases": ["c1"], "threads": ["many"]}]}"#,
                "write a number or \"all\"",
            ),
            (
                r#"{"title": "t", "runs": [{"name": "r", "mode": "scaling", "cases": ["c1"], "reference": "paper"}]}"#,
                "no entry \"paper\"",
            ),
            (r#"{"title": "t", "runs": []}"#, "runs is empty"),
        ];
        for (text, expected) in cases {
            let error = parse(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }
}
