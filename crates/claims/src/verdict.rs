//! Ratings to binary verdicts.
//!
//! A fact-checker's rating is first normalised to a slug (`"Pants on Fire!"` -> `pants-fire`,
//! `"Not Enough Evidence"` -> `not-enough-evidence`), then mapped by a preset:
//!
//! | preset        | true                            | false                                         | excluded |
//! |---------------|---------------------------------|-----------------------------------------------|----------|
//! | `raguard`     | true, mostly-true, half-true    | mostly-false, barely-true, false, pants-fire  | Flip-O-Meter rulings |
//! | `strict`      | true, mostly-true               | mostly-false, barely-true, false, pants-fire  | half-true, Flip-O-Meter |
//! | `averitec`    | supported                       | refuted                                       | not-enough-evidence, conflicting-evidence/cherrypicking |
//! | `factcheckqa` | true                            | false                                         | other |
//!
//! `raguard` reproduces the RAGuard release, which counts half-true as true (1,333 "True" claims =
//! true + mostly-true + half-true). `raguard` and `strict` also exclude `not-enough-evidence`
//! (unproven: not a truth verdict). A rating no preset entry names is unknown, and the row is
//! dropped.
//!
//! ## Ratings of other publishers and languages
//!
//! Fact-checkers name their ratings in their own words and languages ("Falso", "Faux", "錯誤",
//! "Misleading"). `resolve_rating_name` maps such a name onto the normalised ratings (the
//! Truth-O-Meter `true`, `mostly-true`, `half-true`, `mostly-false`, `false`, `pants-fire`, and
//! `not-enough-evidence`), following PolitiFact's definitions: half-true "is partially accurate but
//! leaves out important details or takes things out of context" (half true, partly false, missing
//! context, mixture, "não é bem assim"); mostly-false "contains an element of truth but ignores
//! critical facts that would give a different impression" (misleading, engañoso, trompeur,
//! irreführend, भ्रामक, مضلل, 誤導); false: false, fake, altered (falso, faux, falsch, गलत, মিথ্যা,
//! زائف, 錯誤); not-enough-evidence: unproven, insufficient evidence (證據不足, unbelegt). The table
//! covers English, Portuguese, Spanish, French, German, Hindi, Bengali, Arabic and Chinese; names
//! are compared without case, spaces, hyphens, underscores or punctuation (Devanagari nukta
//! folded). A rating sentence whose head names a rating ("FALSO: As imagens foram...") resolves by
//! that head. Names that are ambiguous (exaggerated, out of context, satire) are not in the table.
//!
//! `rating_on_scale` reads ClaimReview's numeric rating (`ratingValue` on the
//! `worstRating`..`bestRating` scale) when the page states both ends, they differ and the value lies
//! between them: the value's position on the scale, `(value - worst) / (best - worst)`, is rounded to
//! the nearest of five points, 0 `false`, 1/4 `mostly-false`, 1/2 `half-true`, 3/4 `mostly-true`,
//! 1 `true` (on the usual 1..5 scale: 1 false, 2 mostly-false, 3 half-true, 4 mostly-true, 5 true).
//! A scale with an end missing is not used: publishers that omit `worstRating` number their
//! categories instead (Lupa's "Falso" is 4 of 6, Aos Fatos' "não é bem assim" 5 of 6). A named
//! rating wins over the number (AFP rates "Misleading" 2 on one page and 3 on another).
//!
//! ## `verdict_map` entries
//!
//! An entry is keyed by a site's own rating word ("Unproven", "證據不足") or a normalised rating
//! (`not-enough-evidence`), compared once normalised. [`VerdictMap::map_word`] looks the word the
//! page gives up first, then the resolved rating, so a key in the site's words decides for that
//! word alone and a normalised key for every word resolving to it. A key the preset and the table
//! do not know but that is one letter off a known word of up to six letters, or two off a longer
//! one ("Unprovn", "Mostly Flase"), is refused, with the words it could be. Other unknown words
//! are a site's own ("Satire", "Truth!"), kept as keys and listed ([`VerdictMap::own_words`]):
//! `claims-import` refuses at `check` each one that no row of its file has as its rating;
//! `claims-scrape` sees its ratings only as it fetches pages, so it keeps them.

use std::collections::BTreeMap;

use noisebench_core::Verdict;

/// What a rating maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mapped {
    Verdict(Verdict),
    /// A known rating that is not a truth verdict under this preset (the reason says why).
    Excluded(String),
    Unknown,
}

/// A rating -> verdict table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerdictMap {
    pub name: String,
    entries: BTreeMap<String, Entry>,
    /// Keys noisebench knows no rating word for (a site's or file's own: "Satire", "Truth!"),
    /// as given: the caller checks them against the ratings it can see ([`Self::own_words`]).
    own_words: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Verdict(Verdict),
    Excluded(String),
}

/// Flip-O-Meter rulings judge consistency, not truth.
const FLIP_O_METER: [&str; 3] = ["full-flop", "half-flip", "no-flip"];

/// The preset names [`VerdictMap::preset`] accepts.
pub const PRESETS: [&str; 4] = ["raguard", "strict", "averitec", "factcheckqa"];

impl VerdictMap {
    pub fn preset(name: &str) -> Option<VerdictMap> {
        use Verdict::{False, True};
        let mut map = VerdictMap {
            name: name.into(),
            entries: BTreeMap::new(),
            own_words: Vec::new(),
        };
        match name {
            "raguard" | "strict" => {
                for slug in ["true", "mostly-true"] {
                    map.set(slug, True);
                }
                for slug in ["mostly-false", "barely-true", "false", "pants-fire"] {
                    map.set(slug, False);
                }
                if name == "raguard" {
                    map.set("half-true", True);
                } else {
                    map.exclude(
                        "half-true",
                        "half-true is neither true nor false under the strict preset",
                    );
                }
                for slug in FLIP_O_METER {
                    map.exclude(slug, "a Flip-O-Meter ruling is not a truth rating");
                }
                map.exclude(
                    "not-enough-evidence",
                    "not enough evidence is neither true nor false",
                );
            }
            "averitec" => {
                map.set("supported", True);
                map.set("refuted", False);
                map.exclude("not-enough-evidence", "not a binary verdict");
                map.exclude("conflicting-evidence/cherrypicking", "not a binary verdict");
            }
            "factcheckqa" => {
                map.set("true", True);
                map.set("false", False);
                map.exclude("other", "not a binary verdict");
            }
            _ => return None,
        }
        Some(map)
    }

    fn set(&mut self, slug: &str, verdict: Verdict) {
        self.entries.insert(slug.into(), Entry::Verdict(verdict));
    }

    fn exclude(&mut self, slug: &str, why: &str) {
        self.entries
            .insert(slug.into(), Entry::Excluded(why.into()));
    }

    /// Add or override an entry: `to` is `true`, `false` or `exclude`. `rating` is a site's own
    /// word ("Unproven", "Falso", "Satire") or a normalised rating (`not-enough-evidence`); a word
    /// that is not one noisebench knows but is spelled like one (one or two letters off:
    /// "Mostly Flase", "Unprovn") is refused, naming the words it could be.
    pub(crate) fn with_entry(mut self, rating: &str, to: &str) -> Result<Self, String> {
        let slug = normalise_rating(rating);
        if slug.is_empty() {
            return Err("an empty rating word".into());
        }
        match self.known_word(rating) {
            Ok(true) => {}
            Ok(false) => self.own_words.push(rating.to_string()),
            Err(near) => {
                return Err(format!(
                    "`{rating}` is not a rating word of the `{}` preset or the rating table; it \
                     could be: {}",
                    self.name,
                    near.join(", ")
                ));
            }
        }
        match to {
            "true" => self.set(&slug, Verdict::True),
            "false" => self.set(&slug, Verdict::False),
            "exclude" => self.exclude(&slug, "excluded by the verdict_map configuration"),
            other => return Err(format!("`{other}` is not one of true, false, exclude")),
        }
        Ok(self)
    }

    /// The keys that are no rating word noisebench knows and are spelled unlike any (a site's or
    /// file's own word, "Satire", "Truth!"), as given. `claims-import` refuses each one no row of
    /// its file rates with.
    pub fn own_words(&self) -> &[String] {
        &self.own_words
    }

    /// Whether `word` is one this map can be keyed by: `Ok(true)` for a word the preset or the
    /// rating table knows, `Ok(false)` for a word spelled unlike any of them (a site's own word
    /// noisebench has never seen, "Satire", "Truth!"); `Err` with the known words it is one or
    /// two letters away from (a misspelling, which would silently match nothing).
    fn known_word(&self, word: &str) -> Result<bool, Vec<String>> {
        let slug = normalise_rating(word);
        let known = self.entries.contains_key(&slug)
            || NORMALISED_RATINGS.contains(&slug.as_str())
            || resolve_rating_name(word).is_some()
            || matches!(
                crate::politifact::classify_slug(&slug),
                crate::politifact::Rating::FlipOMeter(_)
            )
            || matches!(
                crate::politifact::classify_slug(&slug),
                crate::politifact::Rating::Slug(s) if crate::politifact::TRUTH_SLUGS.contains(&s.as_str())
            );
        if known {
            return Ok(true);
        }
        let key = compact(word);
        let mut near: Vec<(usize, String)> = self
            .entries
            .keys()
            .map(String::as_str)
            .chain(NORMALISED_RATINGS)
            .chain(
                RATING_NAMES
                    .iter()
                    .flat_map(|(_, names)| names.iter().copied()),
            )
            .filter_map(|candidate| {
                let distance = strsim::damerau_levenshtein(&key, &compact(candidate));
                // One letter off a short word, two off a longer one: "truth" is not "true".
                let allowed = if key.chars().count() <= 6 { 1 } else { 2 };
                (distance <= allowed).then(|| (distance, candidate.to_string()))
            })
            .collect();
        if near.is_empty() {
            return Ok(false);
        }
        near.sort();
        near.dedup_by(|a, b| a.1 == b.1);
        Err(near.into_iter().map(|(_, w)| w).take(5).collect())
    }

    /// Map a rating as the site words it (`word`: a ClaimReview's name, a `sites` entry's rating
    /// text) and as resolved (`rating`: a normalised rating or a PolitiFact slug): an entry keyed
    /// by the site's own word first, then [`VerdictMap::map`] of the resolved rating.
    pub fn map_word(&self, word: Option<&str>, rating: &str) -> Mapped {
        if let Some(entry) = word.and_then(|w| self.entries.get(&normalise_rating(w))) {
            return entry.mapped();
        }
        self.map(rating)
    }

    /// Map a raw rating (normalised first; a name the preset does not hold is looked up in the
    /// multilingual table, `resolve_rating_name`).
    pub fn map(&self, rating: &str) -> Mapped {
        let entry = self.entries.get(&normalise_rating(rating)).or_else(|| {
            resolve_rating_name(rating).and_then(|normalised| self.entries.get(normalised))
        });
        entry.map_or(Mapped::Unknown, Entry::mapped)
    }
}

impl Entry {
    fn mapped(&self) -> Mapped {
        match self {
            Entry::Verdict(v) => Mapped::Verdict(*v),
            Entry::Excluded(why) => Mapped::Excluded(why.clone()),
        }
    }
}

/// Normalise a rating to a slug: lower case, trimmed, trailing `!`/`.` removed, spaces and
/// underscores to hyphens; PolitiFact's spellings of Pants on Fire become `pants-fire`.
pub(crate) fn normalise_rating(raw: &str) -> String {
    let lowered = raw
        .trim()
        .trim_end_matches(['!', '.'])
        .trim()
        .to_lowercase();
    let slug: String = lowered
        .split(|c: char| c.is_whitespace() || c == '_')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    match slug.as_str() {
        "pants-on-fire" | "pants-fire" | "pof" => "pants-fire".into(),
        _ => slug,
    }
}

/// The normalised ratings a rating name or number resolves to.
pub const NORMALISED_RATINGS: [&str; 7] = [
    "true",
    "mostly-true",
    "half-true",
    "mostly-false",
    "false",
    "pants-fire",
    "not-enough-evidence",
];

/// Rating names in the languages of the fact-check corpus, by the normalised rating they mean
/// (see the module documentation for the reasons).
const RATING_NAMES: [(&str, &[&str]); 7] = [
    (
        "true",
        &[
            // en, pt, es, fr, de
            "true",
            "correct",
            "accurate",
            "verdadeiro",
            "verdade",
            "correto",
            "verdadero",
            "cierto",
            "verdad",
            "vrai",
            "richtig",
            "wahr",
            "stimmt",
            // hi, bn, ar, zh
            "सच",
            "सही",
            "সত্য",
            "صحيح",
            "正確",
            "正确",
        ],
    ),
    (
        "mostly-true",
        &[
            "mostly true",
            "mostly correct",
            "mostly accurate",
            "verdadeiro, mas",
            "mayormente verdadero",
            "casi verdadero",
            "plutôt vrai",
            "größtenteils richtig",
            "überwiegend richtig",
            "ज्यादातर सच",
        ],
    ),
    (
        "half-true",
        &[
            "half true",
            "half truth",
            "mixture",
            "mixed",
            "partly true",
            "partly false",
            "partially true",
            "partially false",
            "missing context",
            "needs context",
            "meia verdade",
            "parcialmente falso",
            "parcialmente verdadeiro",
            "impreciso",
            "não é bem assim",
            "nao e bem assim",
            "sem contexto",
            "verdad a medias",
            "sin contexto",
            "falta contexto",
            "partiellement faux",
            "partiellement vrai",
            "manque de contexte",
            "teilweise falsch",
            "teilweise richtig",
            "halbwahr",
            "fehlender kontext",
            "आधा सच",
            "आंशिक रूप से सच",
            "আংশিক সত্য",
            "صحيح جزئيا",
            "部分錯誤",
            "部分错误",
        ],
    ),
    (
        "mostly-false",
        &[
            "mostly false",
            "barely true",
            "misleading",
            "distorted",
            "enganoso",
            "enganador",
            "distorcido",
            "engañoso",
            "mayormente falso",
            "casi falso",
            "trompeur",
            "plutôt faux",
            "irreführend",
            "größtenteils falsch",
            "überwiegend falsch",
            "भ्रामक",
            "বিভ্রান্তিকর",
            "مضلل",
            "誤導",
            "误导",
        ],
    ),
    (
        "false",
        &[
            "false",
            "incorrect",
            "fake",
            "fabricated",
            "altered",
            "manipulated",
            "really false",
            "wrong",
            "inaccurate",
            "hoax",
            "falso",
            "falsa",
            "bulo",
            "faux",
            "fausse",
            "infox",
            "falsch",
            "frei erfunden",
            "manipuliert",
            "गलत",
            "झूठ",
            "फर्जी",
            "মিথ্যা",
            "ভুয়া",
            "زائف",
            "كاذب",
            "خطأ",
            "مفبرك",
            "錯誤",
            "错误",
        ],
    ),
    ("pants-fire", &["pants on fire", "pants fire"]),
    (
        "not-enough-evidence",
        &[
            "not enough evidence",
            "insufficient evidence",
            "unproven",
            "unverified",
            "unsupported",
            "no evidence",
            "insustentável",
            "sem provas",
            "sin evidencia",
            "sin pruebas",
            "inverificable",
            "non prouvé",
            "invérifiable",
            "unbelegt",
            "nicht belegt",
            "證據不足",
            "证据不足",
        ],
    ),
];

/// A rating name compared without case, spaces, hyphens, underscores and punctuation, Devanagari
/// nukta folded (`ग़लत` written with or without it, precomposed or not, is `गलत`).
fn compact(name: &str) -> String {
    name.to_lowercase()
        .chars()
        .filter(|c| {
            !c.is_whitespace() && !c.is_ascii_punctuation() && !"¡¿«»“”‘’…–—।\u{93c}".contains(*c)
        })
        .map(|c| match c {
            '\u{958}' => 'क',
            '\u{959}' => 'ख',
            '\u{95a}' => 'ग',
            '\u{95b}' => 'ज',
            '\u{95c}' => 'ड',
            '\u{95d}' => 'ढ',
            '\u{95e}' => 'फ',
            '\u{95f}' => 'य',
            other => other,
        })
        .collect()
}

static RATING_TABLE: std::sync::LazyLock<std::collections::HashMap<String, &'static str>> =
    std::sync::LazyLock::new(|| {
        RATING_NAMES
            .iter()
            .flat_map(|(normalised, names)| names.iter().map(|n| (compact(n), *normalised)))
            .collect()
    });

/// The normalised rating a fact-checker's rating name means, in any language of the table: the
/// whole name, else the head of a rating sentence (the text before its first `:`, ` - `, ` – `,
/// ` — `, `|` or `. `). `None` when the table does not know it.
pub(crate) fn resolve_rating_name(name: &str) -> Option<&'static str> {
    let lookup = |s: &str| {
        let key = compact(s.trim().trim_end_matches(['!', '.']));
        (!key.is_empty())
            .then(|| RATING_TABLE.get(&key).copied())
            .flatten()
    };
    lookup(name).or_else(|| {
        let head_end = [":", " - ", " – ", " — ", "|", ". "]
            .iter()
            .filter_map(|sep| name.find(sep))
            .min()?;
        lookup(&name[..head_end])
    })
}

/// The normalised rating of a numeric ClaimReview rating: `value` placed on the
/// `worst`..`best` scale and rounded to the nearest of false, mostly-false, half-true,
/// mostly-true, true. `None` unless both ends are given, are numbers, differ, and the value is a
/// number between them.
pub(crate) fn rating_on_scale(
    value: &str,
    worst: Option<&str>,
    best: Option<&str>,
) -> Option<&'static str> {
    let number = |s: &str| s.trim().parse::<f64>().ok().filter(|n| n.is_finite());
    let (value, worst, best) = (number(value)?, number(worst?)?, number(best?)?);
    if best == worst {
        return None;
    }
    let position = (value - worst) / (best - worst);
    if !(-1e-9..=1.0 + 1e-9).contains(&position) {
        return None;
    }
    const POINTS: [&str; 5] = ["false", "mostly-false", "half-true", "mostly-true", "true"];
    POINTS
        .get((position.clamp(0.0, 1.0) * 4.0).round() as usize)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raguard_counts_half_true_as_true_and_strict_excludes_it() {
        let raguard = VerdictMap::preset("raguard").unwrap();
        let strict = VerdictMap::preset("strict").unwrap();
        assert_eq!(raguard.map("half-true"), Mapped::Verdict(Verdict::True));
        assert!(matches!(strict.map("Half True"), Mapped::Excluded(_)));
        for map in [&raguard, &strict] {
            assert_eq!(map.map("Pants on Fire!"), Mapped::Verdict(Verdict::False));
            assert_eq!(map.map("barely-true"), Mapped::Verdict(Verdict::False));
            assert_eq!(map.map("Mostly True"), Mapped::Verdict(Verdict::True));
            assert!(matches!(map.map("full-flop"), Mapped::Excluded(_)));
            assert_eq!(map.map("sort-of-true"), Mapped::Unknown);
        }
    }

    #[test]
    fn averitec_and_factcheckqa() {
        let a = VerdictMap::preset("averitec").unwrap();
        assert_eq!(a.map("Supported"), Mapped::Verdict(Verdict::True));
        assert_eq!(a.map("Refuted "), Mapped::Verdict(Verdict::False));
        assert!(matches!(
            a.map("Conflicting Evidence/Cherrypicking"),
            Mapped::Excluded(_)
        ));
        let f = VerdictMap::preset("factcheckqa").unwrap();
        assert!(matches!(f.map("other"), Mapped::Excluded(_)));
        assert_eq!(f.map("maybe"), Mapped::Unknown);
        assert!(VerdictMap::preset("nope").is_none());
    }

    #[test]
    fn rating_names_in_the_corpus_languages() {
        for (name, want) in [
            ("Falso", "false"),
            ("FALSO", "false"),
            ("Falso.", "false"),
            ("Faux", "false"),
            ("Falsch", "false"),
            ("really_false", "false"),
            ("錯誤", "false"),
            ("زائف", "false"),
            ("ग़लत", "false"),
            ("ग\u{93c}लत", "false"),
            ("गलत", "false"),
            ("মিথ্যা", "false"),
            ("Engañoso", "mostly-false"),
            ("Misleading", "mostly-false"),
            ("Trompeur", "mostly-false"),
            ("não_é_bem_assim", "half-true"),
            ("Half true", "half-true"),
            ("Verdadeiro, mas", "mostly-true"),
            ("證據不足", "not-enough-evidence"),
            ("FALSO: As imagens foram retiradas do canal", "false"),
            ("Misleading - the photo is from 2019", "mostly-false"),
            ("sort-of-true", ""),
            ("maybe", ""),
            ("Satire", ""),
            ("The Health Desk Experts said Current data shows", ""),
            ("", ""),
        ] {
            assert_eq!(resolve_rating_name(name).unwrap_or(""), want, "{name:?}");
        }
        for (_, names) in RATING_NAMES {
            for n in names {
                assert!(!compact(n).is_empty(), "{n}");
            }
        }
    }

    #[test]
    fn numeric_ratings_on_a_stated_scale() {
        fn s(v: &str, w: Option<&str>, b: Option<&str>) -> &'static str {
            rating_on_scale(v, w, b).unwrap_or("")
        }
        let scale = |w, b| (1..=6).map(|v| s(&v.to_string(), w, b)).collect::<Vec<_>>();
        assert_eq!(
            scale(Some("1"), Some("5")),
            [
                "false",
                "mostly-false",
                "half-true",
                "mostly-true",
                "true",
                ""
            ]
        );
        assert_eq!(
            scale(Some("1"), Some("6")),
            [
                "false",
                "mostly-false",
                "half-true",
                "half-true",
                "mostly-true",
                "true"
            ]
        );
        assert_eq!(s("1", Some("1"), Some("2")), "false");
        assert_eq!(s("2", Some("1"), Some("2")), "true");
        // A missing end, an empty one, a degenerate or out-of-range scale: not used.
        assert_eq!(s("4", None, Some("6")), "");
        assert_eq!(s("1", Some("1"), Some("")), "");
        assert_eq!(s("-1", Some("-1"), Some("-1")), "");
        assert_eq!(s("", Some("1"), Some("5")), "");
        assert_eq!(s("7", Some("1"), Some("5")), "");
        assert_eq!(s("False", Some("1"), Some("5")), "");
    }

    #[test]
    fn presets_read_names_of_other_languages() {
        let raguard = VerdictMap::preset("raguard").unwrap();
        assert_eq!(raguard.map("Falso"), Mapped::Verdict(Verdict::False));
        assert_eq!(raguard.map("Engañoso"), Mapped::Verdict(Verdict::False));
        assert_eq!(raguard.map("Verdadero"), Mapped::Verdict(Verdict::True));
        assert!(matches!(raguard.map("證據不足"), Mapped::Excluded(_)));
        assert_eq!(raguard.map("Satire"), Mapped::Unknown);
        let f = VerdictMap::preset("factcheckqa").unwrap();
        assert_eq!(f.map("Faux"), Mapped::Verdict(Verdict::False));
        // An explicit entry wins over the table.
        let m = raguard.with_entry("Falso", "exclude").unwrap();
        assert!(matches!(m.map("Falso"), Mapped::Excluded(_)));
    }

    #[test]
    fn entries_keyed_by_the_sites_own_word() {
        // "Unproven" resolves to not-enough-evidence, which raguard excludes; keyed by the site's
        // word, the entry decides for that word only.
        let m = VerdictMap::preset("raguard")
            .unwrap()
            .with_entry("Unproven", "true")
            .unwrap();
        let nee = "not-enough-evidence";
        assert_eq!(
            m.map_word(Some("Unproven"), nee),
            Mapped::Verdict(Verdict::True)
        );
        assert_eq!(m.map("Unproven"), Mapped::Verdict(Verdict::True));
        assert!(matches!(
            m.map_word(Some("證據不足"), nee),
            Mapped::Excluded(_)
        ));
        assert!(matches!(m.map_word(None, nee), Mapped::Excluded(_)));
        // Keyed by the normalised word, every site word resolving to it follows.
        let m = VerdictMap::preset("raguard")
            .unwrap()
            .with_entry("not-enough-evidence", "false")
            .unwrap();
        for word in ["Unproven", "證據不足", "Sin pruebas"] {
            assert_eq!(
                m.map_word(Some(word), nee),
                Mapped::Verdict(Verdict::False),
                "{word}"
            );
        }
        // A site's own word the table does not know (it passes through as its slug).
        let m = VerdictMap::preset("raguard")
            .unwrap()
            .with_entry("Satire", "exclude")
            .unwrap();
        assert!(matches!(
            m.map_word(Some("Satire"), "satire"),
            Mapped::Excluded(_)
        ));
    }

    #[test]
    fn misspelled_keys_are_refused_naming_the_words_they_could_be() {
        let raguard = || VerdictMap::preset("raguard").unwrap();
        for (key, near) in [
            ("Unprovn", "unproven"),
            ("Mostly Flase", "mostly false"),
            ("pants-on-fir", "pants on fire"),
            ("half_tru", "half-true"),
            ("Misleding", "misleading"),
        ] {
            let err = raguard().with_entry(key, "false").unwrap_err();
            assert!(
                err.contains(&format!("`{key}`")) && err.contains(near),
                "{key}: {err}"
            );
        }
        // Known words in any spelling the table compares, and words far from every known one.
        for key in [
            "Unproven",
            "UNPROVEN",
            "not-enough-evidence",
            "Pants on Fire!",
            "barely-true",
            "full-flop",
            "Falso",
            "Sin pruebas",
            "Satire",
            "Truth!",
            "Fiction!",
            "In-between",
        ] {
            assert!(raguard().with_entry(key, "exclude").is_ok(), "{key}");
        }
        assert!(raguard().with_entry("  ", "true").is_err());
        // The averitec preset's own words.
        let a = VerdictMap::preset("averitec").unwrap();
        assert!(
            a.with_entry("Conflicting Evidence/Cherrypicking", "false")
                .is_ok()
        );
    }

    #[test]
    fn overrides() {
        let m = VerdictMap::preset("strict")
            .unwrap()
            .with_entry("Half True", "true")
            .unwrap();
        assert_eq!(m.map("half-true"), Mapped::Verdict(Verdict::True));
        assert!(
            VerdictMap::preset("strict")
                .unwrap()
                .with_entry("x", "maybe")
                .is_err()
        );
    }
}
