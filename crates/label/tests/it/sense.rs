//! The labels tasks' categories, which feed the run-wide flag for a stance or verdict that
//! never changes: read from the reply as the stage reads it.

use noisebench_label::{ExamVerdict, StanceReasoned, StanceText, StanceUrl};
use noisebench_llm::Task;
use serde_json::json;

#[test]
fn stances_and_verdicts_have_categories() {
    assert_eq!(
        StanceUrl::category(&json!({"stance": "support"})).as_deref(),
        Some("support")
    );
    assert_eq!(
        StanceText::category(&json!({"stance": "reject"})).as_deref(),
        Some("reject")
    );
    assert_eq!(
        StanceReasoned::category(&json!({"reasoning": "...", "stance": "not enough evidence"}))
            .as_deref(),
        Some("not enough evidence")
    );
    assert_eq!(
        ExamVerdict::category(&json!({"verdict": "false"})).as_deref(),
        Some("false")
    );
    assert_eq!(StanceUrl::category(&json!({"stance": "perhaps"})), None);
}
