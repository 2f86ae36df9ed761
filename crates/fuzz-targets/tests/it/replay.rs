//! CI's replay of the fuzz corpora: every file of `fuzz/corpus/<target>/` (the seeds, what
//! campaigns kept, and every input that once crashed a parser) through its target on stable,
//! without the nightly cargo-fuzz build. Also checks that `fuzz/` wraps exactly these targets.

use std::path::{Path, PathBuf};

use noisebench_fuzz_targets::TARGETS;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

#[test]
fn every_corpus_file_replays_without_a_failure() {
    let mut total = 0;
    for (name, target) in TARGETS {
        let dir = fuzz_dir().join("corpus").join(name);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{}: no seeds", dir.display());
        for file in &files {
            let data = std::fs::read(file).expect("read a corpus file");
            let outcome = std::panic::catch_unwind(|| target(&data));
            assert!(outcome.is_ok(), "{name}: {} fails", file.display());
        }
        total += files.len();
    }
    eprintln!(
        "replayed {total} corpus files over {} targets",
        TARGETS.len()
    );
}

#[test]
fn the_cargo_fuzz_crate_wraps_every_target() {
    let dir = fuzz_dir().join("fuzz_targets");
    let mut wrapped: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .collect();
    wrapped.sort();
    let mut names: Vec<String> = TARGETS.iter().map(|(n, _)| n.to_string()).collect();
    names.sort();
    assert_eq!(wrapped, names);
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for name in &names {
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "fuzz/Cargo.toml has no [[bin]] {name}"
        );
    }
}

#[test]
fn every_task_accepts_the_offline_answer_to_its_example() {
    // The llm_answer seeds are these: each must pass its task's parse and check, so the fuzzer
    // starts inside the accepted region of every task. Built here from the tasks themselves, so a
    // task added to its stage's list is checked before any seed file is written.
    use noisebench_fuzz_targets::answers;
    let tasks = noisebench_fuzz_targets::llm_tasks();
    // At least every stage crate's tasks and the evaluation's of today (from the `impl Task for`
    // blocks of those crates): 5 label, 1 kg, 3 search, 3 qa, 3 perturb, 8 eval.
    for name in [
        "label::exam_verdict",
        "label::stance_url",
        "label::stance_text",
        "label::stance_reasoned",
        "label::credibility",
        "kg::triplets",
        "search::keywords",
        "search::claim_to_question",
        "search::exam_verdict",
        "qa::qa_single",
        "qa::qa_multi",
        "qa::qa_judge",
        "perturb::query_grammar",
        "perturb::query_irrelevant",
        "perturb::back_translate",
        "eval::answer_judge",
        "eval::eval_answer",
        "eval::confact_ensemble",
        "eval::counterrefine_draft",
        "eval::counterrefine_refine",
        "eval::astute_generate",
        "eval::astute_consolidate",
        "eval::astute_answer",
    ] {
        assert!(
            tasks.iter().any(|t| t.name == name),
            "{name} is not fuzzed: {tasks:?}"
        );
    }
    let mut names: Vec<&str> = tasks.iter().map(|t| t.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(
        names.len(),
        tasks.len(),
        "a task is listed twice: {tasks:?}"
    );
    for (i, task) in tasks.iter().enumerate() {
        let seed = answers::seed(task);
        let nul = seed
            .iter()
            .position(|&b| b == 0)
            .expect("a NUL after the input");
        let input: serde_json::Value = serde_json::from_slice(&seed[..nul]).expect("JSON input");
        let reply = std::str::from_utf8(&seed[nul + 1..]).expect("a UTF-8 reply");
        assert!(
            answers::accepts(task, &input, reply),
            "{} (pick {i}): the offline answer is refused:\n{reply}",
            task.name
        );
        let mut data = vec![i as u8];
        data.extend(&seed);
        noisebench_fuzz_targets::llm_answer(&data);
        eprintln!("llm_answer task {i}: {}", task.name);
    }
}

#[test]
fn every_task_has_a_prompt_its_example_renders() {
    // The prompt of every task (`pipelines/prompts/<name>.md`) renders the task's example with no
    // placeholder left, and the offline rule answers it the same twice, passing its checks.
    let prompts = noisebench_llm::prompt::Prompts::in_dir(&fuzz_dir().join("../pipelines/prompts"));
    let failures: Vec<String> = noisebench_fuzz_targets::llm_tasks()
        .iter()
        .filter_map(|t| t.task.self_check(&prompts).err())
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Writes `fuzz/corpus/llm_answer/seed-<crate>-<task>` (`scripts/fuzz-campaign.sh` runs it before
/// a campaign).
#[test]
#[ignore = "writes the llm_answer seeds into fuzz/corpus; run by scripts/fuzz-campaign.sh"]
fn write_llm_answer_seeds() {
    let dir = fuzz_dir().join("corpus/llm_answer");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, seed) in noisebench_fuzz_targets::llm_answer_seeds() {
        std::fs::write(dir.join(name), seed).unwrap();
    }
}
