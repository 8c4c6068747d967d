use kivi::engine::Model;
#[test]
fn scratch() {
    let model = kivi::input::load_uniform_file(std::path::Path::new("/tmp/c2i.json")).unwrap();
    let mut s = model.init_states().remove(0);
    for step in 0..40 {
        let mut acts = Vec::new();
        model.actions(&s, &mut acts);
        println!("{step}: {:?}", acts);
        if acts.is_empty() { break; }
        let a = acts[0];
        println!("   {:?}", model.describe_action(&s, &a));
        s = model.next_state(&s, &a).unwrap();
        for i in 0..model.properties().len() { if !model.holds(i, &s) { println!("   violates {i}"); } }
    }
}
