//! Strict parsing of a model's answer, with one bounded repair.
//!
//! First the whole reply must parse as the task's JSON. If not, one repair is tried: take the
//! first balanced JSON object in the reply (skipping code fences and prose around it) and drop
//! trailing commas before `}` or `]`. Nothing else is guessed: no regex scraping of labels, no
//! defaults for missing fields. What still fails is re-asked by the caller, quoting the error.

use crate::task::Task;

/// How an answer was obtained from the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    Strict,
    Repaired,
}

/// Parse and check `content` as `T`'s answer.
pub fn parse_answer<T: Task>(
    input: &T::Input,
    content: &str,
) -> Result<(T::Output, Parsed), String> {
    let strict = serde_json::from_str::<T::Output>(content.trim());
    let strict_err = match strict {
        Ok(out) => {
            return crate::task::check_answer::<T>(input, &out)
                .map(|()| (out, Parsed::Strict))
                .map_err(|e| format!("answer fails a check: {e}"));
        }
        Err(e) => e,
    };
    let Some(object) = first_object(content) else {
        return Err(format!("no JSON object in the reply ({strict_err})"));
    };
    let repaired = remove_trailing_commas(object);
    match serde_json::from_str::<T::Output>(&repaired) {
        Ok(out) => crate::task::check_answer::<T>(input, &out)
            .map(|()| (out, Parsed::Repaired))
            .map_err(|e| format!("answer fails a check: {e}")),
        Err(e) => Err(format!("JSON does not match the schema: {e}")),
    }
}

/// The first balanced `{...}` in `s`, string- and escape-aware.
pub fn first_object(s: &str) -> Option<&str> {
    let start = s.find('{')?;
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for (i, c) in s[start..].char_indices() {
        if in_str {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&s[start..start + i + 1]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Drop commas directly followed (after whitespace) by `}` or `]`, outside strings.
pub fn remove_trailing_commas(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut in_str = false;
    let mut escaped = false;
    for (i, &c) in chars.iter().enumerate() {
        if in_str {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        if c == '"' {
            in_str = true;
        }
        if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    /// A task whose answer is a keyword list and whose check wants one keyword at least.
    struct Words;
    #[derive(Debug, Clone, Serialize, Deserialize)]
    struct WordsOutput {
        keywords: Vec<String>,
    }
    impl Task for Words {
        const NAME: &'static str = "words";
        const OFFLINE_VERSION: &'static str = "test";
        type Input = ();
        type Output = WordsOutput;
        fn check(_: &(), o: &WordsOutput) -> Result<(), String> {
            if o.keywords.is_empty() {
                return Err("`keywords` is empty".into());
            }
            Ok(())
        }
        fn offline(_: &()) -> WordsOutput {
            WordsOutput { keywords: vec![] }
        }
    }

    fn kw(s: &str) -> Result<(Vec<String>, Parsed), String> {
        parse_answer::<Words>(&(), s).map(|(o, p)| (o.keywords, p))
    }

    #[test]
    fn strict_then_repair_then_error() {
        assert_eq!(
            kw(r#" {"keywords": ["a", "b"]} "#).unwrap(),
            (vec!["a".into(), "b".into()], Parsed::Strict)
        );
        assert_eq!(
            kw("Sure! ```json\n{\"keywords\": [\"a\", \"b\",],}\n``` hope that helps {").unwrap(),
            (vec!["a".into(), "b".into()], Parsed::Repaired)
        );
        assert_eq!(
            kw(r#"{"keywords": ["a, }", "b"]}"#).unwrap().0,
            vec!["a, }".to_string(), "b".into()]
        );
        let e = kw(r#"{"keywords": ["a", "b""#).unwrap_err();
        assert!(e.starts_with("no JSON object"), "{e}");
        let e = kw(r#"{"keyword": ["a"]}"#).unwrap_err();
        assert!(e.contains("missing field `keywords`"), "{e}");
        let e = kw(r#"{"keywords": []}"#).unwrap_err();
        assert!(e.contains("fails a check"), "{e}");
        // Checks apply after a repair too.
        let e = kw(r#"Here: {"keywords": [],}"#).unwrap_err();
        assert!(e.contains("fails a check"), "{e}");
    }
}
