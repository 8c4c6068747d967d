//! The visited set's growth protocol under load: every check starts from the smallest table
//! (one page), so it grows many times while its workers search, and must still store exactly
//! the model's states — at 1, 2, 3, 7, 16 and 64 threads, with every strategy, many times
//! over. Each thread count runs on a pool of exactly that many threads, so all workers really
//! run at once (on a 2-core machine, 64 of them).

use kivi::engine::synthetic::{Counters, OrderedCounters, TwoPhaseCommit};
use kivi::engine::visited::{FingerprintTable, Insertion, StateKey, VisitedPin, VisitedSet};
use kivi::engine::{check, CheckOptions, Model, Strategy};
use std::collections::HashSet;

const THREADS: [usize; 6] = [1, 2, 3, 7, 16, 64];
const STRATEGIES: [Strategy; 3] = [Strategy::Dfs, Strategy::Bfs, Strategy::Swarm];

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a pool")
}

/// Checks `model` from a one-page table and returns the states stored.
fn stored<M: Model>(
    model: &M,
    threads: usize,
    strategy: Strategy,
    seed: u64,
    pool: &rayon::ThreadPool,
) -> u64 {
    let options = CheckOptions {
        threads,
        strategy,
        seed,
        expected_states: 0,
        ..CheckOptions::default()
    };
    pool.install(|| check(model, &options))
        .expect("replays")
        .stats
        .states_stored
}

#[test]
fn exact_counts_while_the_table_grows_at_every_thread_count_and_strategy() {
    let counters = Counters::new(4, 9);
    let ordered = OrderedCounters::new(6, 9);
    let commit = TwoPhaseCommit::new(5);
    for threads in THREADS {
        let pool = pool(threads);
        for strategy in STRATEGIES {
            for repetition in 0..8 {
                let seed = repetition as u64;
                assert_eq!(
                    stored(&counters, threads, strategy, seed, &pool),
                    counters.state_count(),
                    "counters, {threads} threads, {strategy:?}, run {repetition}"
                );
                assert_eq!(
                    stored(&ordered, threads, strategy, seed, &pool),
                    ordered.state_count(),
                    "ordered counters, {threads} threads, {strategy:?}, run {repetition}"
                );
                assert_eq!(
                    stored(&commit, threads, strategy, seed, &pool),
                    8_832,
                    "two-phase commit, {threads} threads, {strategy:?}, run {repetition}"
                );
            }
        }
    }
}

#[test]
fn a_million_states_from_one_page_at_sixteen_threads() {
    // About 20 growths, each while 16 workers search at full speed.
    let model = Counters::new(6, 9);
    let pool = pool(16);
    for strategy in STRATEGIES {
        assert_eq!(
            stored(&model, 16, strategy, 7, &pool),
            1_000_000,
            "{strategy:?}"
        );
    }
}

#[test]
fn pins_come_and_go_while_the_table_grows() {
    // Workers take and drop pins at random moments (as depth-first workers do when they run
    // out of work and steal more) while others insert; every key is stored exactly once.
    let table = FingerprintTable::new(1 << 28);
    let threads = 12;
    let keys_per_thread = 60_000u64;
    let news: Vec<u64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let table = &table;
                scope.spawn(move || {
                    let mut new = 0;
                    let mut pin = Some(table.pin());
                    for i in 0..keys_per_thread {
                        // Overlapping key ranges: each key is inserted by two threads.
                        let key = (t as u64 / 2) * keys_per_thread + i;
                        let pinned = pin.get_or_insert_with(|| table.pin());
                        if pinned.insert_if_new(StateKey::new(&key.to_le_bytes())) == Insertion::New
                        {
                            new += 1;
                        }
                        match (i + t as u64 * 7) % 997 {
                            0 => pin = None,
                            1..=3 => pinned.sync(),
                            _ => {}
                        }
                    }
                    new
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    let distinct: HashSet<u64> = (0..threads)
        .flat_map(|t| (0..keys_per_thread).map(move |i| (t as u64 / 2) * keys_per_thread + i))
        .collect();
    assert_eq!(news.iter().sum::<u64>(), distinct.len() as u64);
    assert_eq!(table.stats().stored, distinct.len() as u64);
}
