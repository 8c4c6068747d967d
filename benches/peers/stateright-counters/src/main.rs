//! Benchmark peer: kivi's counters model (`src/engine/synthetic/counters.rs`) checked by
//! Stateright, printing one JSON line with the field names of `kivi bench engine --format json`.
//!
//! The model: N counters, each from 0 to K, one incremented per step: (K+1)^N states. Like
//! kivi's, it has the `sometimes` property "all at max" evaluated on every state; it also has an
//! `always` property ("within range") that never fails, because Stateright stops as soon as
//! every property has a discovery and the search must cover the whole state space.
//!
//! Usage: `stateright-counters [--vars N] [--max K] [--threads T] [--strategy dfs|bfs]`.
//! Exit codes: 0 the whole state space was explored, 1 the state count is not (K+1)^N, 2 bad
//! arguments.

use stateright::{Checker, Model, Property};
use std::process::ExitCode;
use std::time::Instant;

/// The most counters a model may have (as in kivi).
const MAX_COUNTERS: usize = 16;

/// The counters' values; only the first N are used (the same state type as kivi's).
type CounterValues = [u8; MAX_COUNTERS];

/// N independent counters from 0 to K.
struct Counters {
    vars: usize,
    max: u8,
}

impl Model for Counters {
    type State = CounterValues;
    type Action = u8;

    fn init_states(&self) -> Vec<CounterValues> {
        vec![[0; MAX_COUNTERS]]
    }

    fn actions(&self, state: &CounterValues, actions: &mut Vec<u8>) {
        for (index, &value) in state[..self.vars].iter().enumerate() {
            if value < self.max {
                actions.push(index as u8);
            }
        }
    }

    fn next_state(&self, state: &CounterValues, action: u8) -> Option<CounterValues> {
        let mut next = *state;
        next[action as usize] += 1;
        Some(next)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::sometimes("all at max", |model: &Counters, state: &CounterValues| {
                state[..model.vars].iter().all(|&value| value == model.max)
            }),
            Property::always("within range", |model: &Counters, state: &CounterValues| {
                state[..model.vars].iter().all(|&value| value <= model.max)
            }),
        ]
    }
}

/// Which Stateright checker to run.
#[derive(Clone, Copy, Debug)]
enum Strategy {
    Dfs,
    Bfs,
}

/// The parsed command line.
struct Options {
    vars: usize,
    max: u8,
    threads: usize,
    strategy: Strategy,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        vars: 6,
        max: 9,
        threads: 1,
        strategy: Strategy::Dfs,
    };
    let mut args = args.peekable();
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--vars" => options.vars = parse_number(&flag, &value()?)?,
            "--max" => options.max = parse_number(&flag, &value()?)?,
            "--threads" => options.threads = parse_number(&flag, &value()?)?,
            "--strategy" => {
                options.strategy = match value()?.as_str() {
                    "dfs" => Strategy::Dfs,
                    "bfs" => Strategy::Bfs,
                    other => return Err(format!("--strategy {other}: use dfs or bfs")),
                }
            }
            "--format" => {
                let format = value()?;
                if format != "json" {
                    return Err(format!("--format {format}: only json is supported"));
                }
            }
            other => return Err(format!(
                "unknown argument '{other}'; use --vars N --max K --threads T --strategy dfs|bfs"
            )),
        }
    }
    if !(1..=MAX_COUNTERS).contains(&options.vars) {
        return Err(format!("--vars {}: use 1 to {MAX_COUNTERS}", options.vars));
    }
    if options.max == u8::MAX {
        return Err(format!(
            "--max {}: use at most {}",
            options.max,
            u8::MAX - 1
        ));
    }
    if options.threads == 0 {
        return Err("--threads 0: use at least 1".to_string());
    }
    Ok(options)
}

fn parse_number<T: std::str::FromStr>(flag: &str, text: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{flag} {text}: not a number in range"))
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let model = Counters {
        vars: options.vars,
        max: options.max,
    };
    let expected = (u128::from(options.max) + 1).pow(options.vars as u32);
    let builder = model.checker().threads(options.threads);
    let start = Instant::now();
    let (unique, generated) = match options.strategy {
        Strategy::Dfs => {
            let checker = builder.spawn_dfs().join();
            (checker.unique_state_count(), checker.state_count())
        }
        Strategy::Bfs => {
            let checker = builder.spawn_bfs().join();
            (checker.unique_state_count(), checker.state_count())
        }
    };
    let elapsed_s = start.elapsed().as_secs_f64();
    let json = serde_json::json!({
        "tool": "stateright",
        "model": "Counters",
        "vars": options.vars,
        "max": options.max,
        "strategy": format!("{:?}", options.strategy).to_lowercase(),
        "threads": options.threads,
        "states_stored": unique,
        // Stateright's state_count counts the initial state and every generated successor.
        "transitions": generated.saturating_sub(1),
        "elapsed_s": elapsed_s,
        "states_per_s": if elapsed_s > 0.0 { unique as f64 / elapsed_s } else { 0.0 },
        "expected_states": expected,
    });
    println!("{json}");
    if unique as u128 == expected {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: Stateright stored {unique} states, expected (K+1)^N = {expected}");
        ExitCode::from(1)
    }
}
