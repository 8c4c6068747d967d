//! Many small checks share one pool of threads, and concurrent inserts are exact.

use kivi::engine::synthetic::Counters;
use kivi::engine::visited::{FingerprintTable, Insertion, StateKey, VisitedPin, VisitedSet};
use kivi::engine::{check, CheckOptions};
use proptest::prelude::*;
use rayon::prelude::*;
use std::collections::HashSet;

#[test]
fn ten_thousand_small_checks_run_concurrently_on_the_shared_pool() {
    let model = Counters::new(3, 7);
    let counts: Vec<u64> = (0..10_000usize)
        .into_par_iter()
        .map(|job| {
            let options = CheckOptions::with_threads(1 + job % 2);
            check(&model, &options)
                .expect("replays")
                .stats
                .states_stored
        })
        .collect();
    assert!(
        counts.iter().all(|&count| count == 512),
        "every check stores 8^3 states"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn concurrent_inserts_store_each_key_exactly_once(
        keys in proptest::collection::vec(any::<u64>(), 1..400_000),
        threads in 2usize..6,
    ) {
        let table = FingerprintTable::new(1 << 26);
        let news: Vec<u64> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    let (keys, table) = (&keys, &table);
                    scope.spawn(move || {
                        let mut new = 0u64;
                        let mut pin = table.pin();
                        for key in keys {
                            let bytes = key.to_le_bytes();
                            if pin.insert_if_new(StateKey::new(&bytes)) == Insertion::New {
                                new += 1;
                            }
                            pin.sync();
                        }
                        drop(pin);
                        new
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let distinct = keys.iter().collect::<HashSet<_>>().len() as u64;
        prop_assert_eq!(news.iter().sum::<u64>(), distinct);
        prop_assert_eq!(table.stats().stored, distinct);
    }
}
