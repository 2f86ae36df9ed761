//! The speaker, date and rating filters, applied twice: leniently to a listing entry (an unknown
//! value passes, since the article may still tell, and a drop there spares the fetch) and strictly
//! to the claim built from its article.

use super::config::{Resolved, rating_key, slug};

/// Apply the speaker, date and rating filters. `lenient`: unknown values pass (listing level, where
/// the article may still tell).
pub(super) fn filters(
    r: &Resolved,
    speaker: Option<&str>,
    date: Option<&str>,
    rating: Option<&str>,
    lenient: bool,
) -> Result<(), (&'static str, String)> {
    if !r.speakers.is_empty() {
        match speaker {
            Some(s) if r.speakers.contains(&slug(s)) => {}
            None if lenient => {}
            other => {
                return Err((
                    "filtered_speaker",
                    format!("speaker {other:?} not in the filter"),
                ));
            }
        }
    }
    if r.date_from.is_some() || r.date_to.is_some() {
        match date {
            Some(d) => {
                if r.date_from.as_deref().is_some_and(|f| d < f)
                    || r.date_to.as_deref().is_some_and(|t| d > t)
                {
                    return Err(("filtered_date", format!("date {d} outside the range")));
                }
            }
            None if lenient => {}
            None => return Err(("filtered_date", "no date to compare with the range".into())),
        }
    }
    if !r.ratings.is_empty() {
        match rating {
            Some(s) if r.ratings.contains(&rating_key(s)) => {}
            None if lenient => {}
            other => {
                return Err((
                    "filtered_rating",
                    format!("rating {other:?} not in the filter"),
                ));
            }
        }
    }
    Ok(())
}
