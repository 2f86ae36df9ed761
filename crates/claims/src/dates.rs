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
/// RFC 3339 instants, "March 3, 2020", AVeriTeC's "25-8-2020", "03/25/2020", "3 March 2020"),
/// `Err` naming the value otherwise, including impossible dates such as 31-2-2021.
pub fn parse_date(raw: &str) -> Result<Option<String>, String> {
    let value = raw.trim();
    if value.is_empty() {
        return Ok(None);
    }
    // Instants: keep the calendar date as written.
    let date_part = match value.find('T') {
        Some(i) if value.len() >= 10 && value.as_bytes()[4] == b'-' => &value[..i],
        _ => value,
    };
    let cleaned = date_part.replace('.', "").replace("Sept ", "Sep ");
    for format in FORMATS {
        if let Ok(date) = NaiveDate::parse_from_str(&cleaned, format) {
            return Ok(Some(date.format("%Y-%m-%d").to_string()));
        }
    }
    Err(format!("`{value}` is not a date in a known form"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(parse_date("  ").unwrap(), None);
        assert!(parse_date("31-2-2021").is_err());
        assert!(parse_date("not a date").is_err());
    }
}
