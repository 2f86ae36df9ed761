//! The loop both reference systems run, written once: each model step is one `run_batch` over
//! the asks still alive (or those of them a step picks), in ask order, so a step's calls run
//! concurrently; a failed call fails its ask only, and later steps pass it by. [`start`] opens
//! each ask's state from the first step's answer, [`step`] advances the states a step picks,
//! [`finish`] turns each state still alive and its last answer into the ask's [`Generated`].

use std::collections::BTreeMap;

use noisebench_llm::{Answer, Llm, LlmError, Task};

use crate::generate::{Ask, Generated};

/// Each ask's state on its way through the steps, or the error that failed it.
pub(crate) type States<S> = Vec<Result<S, LlmError>>;

/// The first step, over every ask: `input` asks, `open` makes the ask's state of the answer.
pub(crate) fn start<T: Task, S>(
    llm: &Llm,
    stage: &str,
    asks: &[Ask],
    input: impl Fn(&Ask) -> T::Input,
    open: impl Fn(&Ask, Answer<T::Output>) -> S,
) -> States<S> {
    let inputs = asks.iter().map(input).collect();
    llm.run_batch::<T>(stage, inputs)
        .into_iter()
        .zip(asks)
        .map(|(r, ask)| r.map(|a| open(ask, a)))
        .collect()
}

/// A step over the asks alive whose state `picks` takes: `input` asks, `apply` takes the answer
/// into the state; a failed call fails the ask.
pub(crate) fn step<T: Task, S>(
    llm: &Llm,
    stage: &str,
    asks: &[Ask],
    states: &mut States<S>,
    picks: impl Fn(&S) -> bool,
    input: impl Fn(&Ask, &S) -> T::Input,
    mut apply: impl FnMut(&mut S, Answer<T::Output>),
) {
    let picked: Vec<usize> = (0..asks.len())
        .filter(|&i| states[i].as_ref().is_ok_and(&picks))
        .collect();
    let inputs = picked
        .iter()
        .filter_map(|&i| states[i].as_ref().ok().map(|s| input(&asks[i], s)))
        .collect();
    let results = llm.run_batch::<T>(stage, inputs);
    for (i, r) in picked.into_iter().zip(results) {
        match r {
            Ok(a) => {
                if let Ok(s) = &mut states[i] {
                    apply(s, a);
                }
            }
            Err(e) => states[i] = Err(e),
        }
    }
}

/// The last step, over every ask alive: `input` asks, `done` makes the ask's result of its
/// state and the answer. `call` names the step in the (unreachable) error of an ask left out.
pub(crate) fn finish<T: Task, S>(
    llm: &Llm,
    stage: &str,
    asks: &[Ask],
    states: States<S>,
    call: &str,
    input: impl Fn(&Ask, &S) -> T::Input,
    done: impl Fn(&Ask, S, Answer<T::Output>) -> Generated,
) -> Vec<Result<Generated, LlmError>> {
    let alive: Vec<usize> = (0..asks.len()).filter(|&i| states[i].is_ok()).collect();
    let inputs = alive
        .iter()
        .filter_map(|&i| states[i].as_ref().ok().map(|s| input(&asks[i], s)))
        .collect();
    let mut answers: BTreeMap<usize, Result<Answer<T::Output>, LlmError>> = alive
        .iter()
        .copied()
        .zip(llm.run_batch::<T>(stage, inputs))
        .collect();
    states
        .into_iter()
        .zip(asks)
        .enumerate()
        .map(|(i, (state, ask))| {
            let s = state?;
            // Invariant: every ask alive before the last step was in its batch.
            let a = answers
                .remove(&i)
                .unwrap_or_else(|| Err(LlmError::Internal(format!("no {call} call"))))?;
            Ok(done(ask, s, a))
        })
        .collect()
}

/// What every system's last step gives: the answer's JSON as `raw`, its request hash, the calls
/// made (the last one included) and the steps.
pub(crate) fn generated<O: serde::Serialize>(
    a: &Answer<O>,
    answer: String,
    calls: usize,
    steps: Vec<String>,
) -> Generated {
    Generated {
        raw: serde_json::to_string(&a.value).unwrap_or_default(),
        answer,
        prompt_hash: a.request_hash.clone(),
        calls: calls + 1,
        steps,
    }
}
