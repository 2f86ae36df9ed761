//! Dates as fact-checkers write them, to ISO `YYYY-MM-DD`.

use chrono::NaiveDate;

const FORMATS: [&str; 6] = [
    "%Y-%m-%d",
    "%B %d, %Y",
    "%b %d, %Y",
    "%d-%m-%Y",
    "%m/%d/%Y",
    "%d %B %Y",
];

/// `Ok(None)` for an empty field, `Ok(Some(iso))` for a date in one of the known forms (ISO,
/// RFC 3339 instants, ISO dates with a time after a space as publishers write them in JSON-LD
/// ("2020-06-24 00:03"), "March 3, 2020", AVeriTeC's "25-8-2020", "03/25/2020", "3 March 2020"),
/// `Err` naming the value otherwise, including impossible dates such as 31-2-2021.
pub fn parse_date(raw: &str) -> Result<Option<String>, String> {
    let value = raw.trim();
    if value.is_empty() {
        return Ok(None);
    }
    // Instants (`T` or a space before the time): keep the calendar date as written.
    let bytes = value.as_bytes();
    let date_part = if value.len() > 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && matches!(bytes[10], b'T' | b' ')
    {
        &value[..10]
    } else {
        value
    };
    let cleaned = date_part.replace('.', "").replace("Sept ", "Sep ");
    for format in FORMATS {
        if let Ok(date) = NaiveDate::parse_from_str(&cleaned, format) {
            return Ok(Some(date.format("%Y-%m-%d").to_string()));
        }
    }
    Err(format!("`{value}` is not a date in a known form"))
}

/// Dates as scraped ("Tuesday, January 10th, 2012", "Jan. 5, 2024", RFC 3339) to ISO.
pub fn scraped_date(raw: &str) -> Option<String> {
    let mut s = raw.trim().to_string();
    // A leading weekday ("Tuesday, ").
    if let Some((head, rest)) = s.split_once(", ")
        && head.ends_with("day")
        && !head.contains(' ')
    {
        s = rest.to_string();
    }
    // Ordinals: "10th," -> "10,".
    let s: String = s
        .split(' ')
        .map(|w| {
            let core = w.trim_end_matches(',');
            let digits = core.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            if !digits.is_empty()
                && digits.chars().all(|c| c.is_ascii_digit())
                && matches!(&core[digits.len()..], "st" | "nd" | "rd" | "th")
            {
                w.replacen(core, digits, 1)
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    parse_date(&s).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scraped_dates() {
        assert_eq!(
            scraped_date("Tuesday, January 10th, 2012").as_deref(),
            Some("2012-01-10")
        );
        assert_eq!(scraped_date("Jan. 5, 2024").as_deref(), Some("2024-01-05"));
        assert_eq!(
            scraped_date("Sept. 21, 2019").as_deref(),
            Some("2019-09-21")
        );
        assert_eq!(
            scraped_date("2024-02-01T10:00:00-05:00").as_deref(),
            Some("2024-02-01")
        );
        assert_eq!(scraped_date("someday"), None);
    }

    #[test]
    fn known_forms() {
        assert_eq!(
            parse_date("2021-03-04").unwrap().as_deref(),
            Some("2021-03-04")
        );
        assert_eq!(
            parse_date("2021-03-04T10:00:00Z").unwrap().as_deref(),
            Some("2021-03-04")
        );
        assert_eq!(
            parse_date("March 3, 2020").unwrap().as_deref(),
            Some("2020-03-03")
        );
        assert_eq!(
            parse_date("25-8-2020").unwrap().as_deref(),
            Some("2020-08-25")
        );
        assert_eq!(
            parse_date("Sept. 9, 2021").unwrap().as_deref(),
            Some("2021-09-09")
        );
        // JSON-LD dates with a space before the time (AFP, Lupa, Snopes).
        assert_eq!(
            parse_date("2020-06-24 00:03").unwrap().as_deref(),
            Some("2020-06-24")
        );
        assert_eq!(
            parse_date("2020-08-31 17:22:16").unwrap().as_deref(),
            Some("2020-08-31")
        );
        assert_eq!(
            parse_date("2023-01-24T13:32:06.838Z").unwrap().as_deref(),
            Some("2023-01-24")
        );
        assert_eq!(parse_date("  ").unwrap(), None);
        assert!(parse_date("31-2-2021").is_err());
        assert!(parse_date("not a date").is_err());
    }
}
