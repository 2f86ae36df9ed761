//! Text made safe for HTML element content and quoted attributes: the one escaping rule the
//! page, its figures and its sampled items share (a leaf module, so they import no circle).

/// Escape text for HTML element content and quoted attributes. Five replacements: not worth a
/// dependency.
pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}
