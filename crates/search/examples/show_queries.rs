//! Print the offline backend's queries for a few claims (used when recording fixtures/search).
use noisebench_llm::Llm;
use noisebench_search::{ClaimToQuestion, ClaimToQuestionInput, Keywords, KeywordsInput};

fn main() {
    let llm = Llm::offline();
    for line in std::io::stdin().lines().map_while(Result::ok) {
        let k = llm.run::<Keywords>(
            "x",
            KeywordsInput {
                claim: line.clone(),
                max_keywords: 5,
            },
        );
        let q = llm.run::<ClaimToQuestion>(
            "x",
            ClaimToQuestionInput {
                claim: line.clone(),
                claim_date: None,
                speaker: None,
            },
        );
        println!(
            "{line}\n  K: {:?}\n  Q: {:?}",
            k.map(|a| a.value.keywords.join(" ")),
            q.map(|a| a.value.question)
        );
    }
}
