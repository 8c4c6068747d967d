use super::*;

fn key(bytes: &[u8]) -> StateKey<'_> {
    StateKey::new(bytes)
}

#[test]
fn an_array_built_in_a_spent_ones_memory_starts_empty() {
    let spent = SlotArray::zeroed(300_000);
    for (i, slot) in spent.iter().enumerate() {
        slot.store(i as u64 + 1, Ordering::Relaxed);
    }
    let grown = SlotArray::zeroed_reusing(450_000, Some(spent));
    assert_eq!(grown.len(), 450_000);
    assert!(grown
        .iter()
        .all(|slot| slot.load(Ordering::Relaxed) == EMPTY));
    grown[449_999].store(7, Ordering::Relaxed);
    let small = SlotArray::zeroed_reusing(1_024, Some(grown));
    assert!(small
        .iter()
        .all(|slot| slot.load(Ordering::Relaxed) == EMPTY));
}

#[test]
fn inserts_each_key_once_across_growth() {
    let table = FingerprintTable::new(1 << 30);
    let mut pin = table.pin();
    for round in 0..2 {
        for i in 0u32..100_000 {
            let bytes = i.to_le_bytes();
            let expected = if round == 0 {
                Insertion::New
            } else {
                Insertion::Seen
            };
            assert_eq!(
                pin.insert_if_new(key(&bytes)),
                expected,
                "key {i} in round {round}"
            );
            pin.sync();
        }
    }
    drop(pin);
    let stats = table.stats();
    assert_eq!(stats.stored, 100_000);
    assert!(stats.load <= GROW_AT_LOAD + 0.01, "load {}", stats.load);
}

#[test]
fn one_pin_fills_the_first_table_and_it_grows_under_it() {
    // A state with thousands of successors: one pin inserts them all without a state
    // boundary in between.
    let table = FingerprintTable::new(1 << 30);
    let mut pin = table.pin();
    for i in 0u32..10 * MIN_SLOTS as u32 {
        let bytes = i.to_le_bytes();
        assert_eq!(pin.insert_if_new(key(&bytes)), Insertion::New, "key {i}");
    }
    for i in 0u32..10 * MIN_SLOTS as u32 {
        let bytes = i.to_le_bytes();
        assert_eq!(pin.insert_if_new(key(&bytes)), Insertion::Seen, "key {i}");
    }
    drop(pin);
    assert_eq!(table.stats().stored, 10 * MIN_SLOTS as u64);
}

#[test]
fn a_table_sized_for_its_states_never_grows() {
    let table = FingerprintTable::with_expected_states(&MemoryBudget::new(1 << 30), 100_000);
    let before = table.memory_bytes();
    let mut pin = table.pin();
    for i in 0u32..100_000 {
        assert_eq!(pin.insert_if_new(key(&i.to_le_bytes())), Insertion::New);
        pin.sync();
    }
    drop(pin);
    assert_eq!(table.memory_bytes(), before);
    assert_eq!(table.stats().stored, 100_000);
}

#[test]
fn a_growth_waits_only_for_registered_pins() {
    // A pin taken and dropped before the growth, and a growth whose requester's pin is
    // the only one: the table grows and nobody waits forever.
    let table = FingerprintTable::new(1 << 30);
    drop(table.pin());
    let mut pin = table.pin();
    for i in 0u32..5_000 {
        pin.insert_if_new(key(&i.to_le_bytes()));
    }
    drop(pin);
    let mut again = table.pin();
    for i in 0u32..5_000 {
        assert_eq!(again.insert_if_new(key(&i.to_le_bytes())), Insertion::Seen);
    }
}

#[test]
fn reports_full_at_the_memory_cap() {
    let table = FingerprintTable::new(64 * 1024);
    let mut pin = table.pin();
    let mut full_at = None;
    for i in 0u32..100_000 {
        let bytes = i.to_le_bytes();
        if pin.insert_if_new(key(&bytes)) == Insertion::Full {
            full_at = Some(i);
            break;
        }
        pin.sync();
    }
    drop(pin);
    let full_at = full_at.expect("a 64 KiB table cannot hold 100,000 states");
    // 8 bytes a state at 90 % load in a third of the budget at least: the old array and
    // the new one, half as big again, share it during the last growth.
    assert!(full_at > 3_000, "full too early, at {full_at}");
    assert!(table.bytes_needed_to_continue() > 64 * 1024);
}

#[test]
fn zero_fingerprint_is_stored() {
    let table = FingerprintTable::new(1 << 20);
    let zero = StateKey {
        fingerprint: 0,
        bytes: &[],
    };
    let mut pin = table.pin();
    assert_eq!(pin.insert_if_new(zero), Insertion::New);
    assert_eq!(pin.insert_if_new(zero), Insertion::Seen);
}
