//! Grounding: whether a triplet the model returned rests on its window's text.
//!
//! Text is compared after [`noisebench_text::normalize`] (lowercase words joined by single
//! spaces), which removes what models change when they copy a sentence: case, spacing, curly or
//! straight quotes, dashes, Markdown table pipes and other punctuation. A triplet is kept when
//! its source sentence is found in the chunk it names, or else in another chunk of the window
//! (it is then re-pointed there), and both entities are found in that sentence.

use noisebench_core::Chunk;
use noisebench_text::normalize;

use super::task::ExtractedTriplet;

/// Longest entity kept, in characters: longer is a paragraph, not a name.
pub(crate) const MAX_ENTITY_CHARS: usize = 200;
/// Longest relation kept, in characters.
pub(crate) const MAX_RELATION_CHARS: usize = 100;
/// Longest source sentence kept, in characters: longer is a passage, not a sentence.
pub(crate) const MAX_SENTENCE_CHARS: usize = 1500;

/// Why a returned triplet was not kept: the drop reason codes of the `triplets` stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rejection {
    /// A field is empty or blank (or missing from the answer).
    EmptyField,
    /// A field is longer than its limit.
    OversizeField,
    /// The chunk id is not one of the window's chunks.
    UnknownChunk,
    /// The source sentence is in none of the window's chunks.
    Ungrounded,
    /// An entity is not in the source sentence.
    EntityNotInSentence,
    /// The same triplet, in the same chunk, was kept already.
    Duplicate,
}

impl Rejection {
    pub fn reason(self) -> &'static str {
        match self {
            Rejection::EmptyField => "empty_field",
            Rejection::OversizeField => "oversize_field",
            Rejection::UnknownChunk => "unknown_chunk",
            Rejection::Ungrounded => "ungrounded",
            Rejection::EntityNotInSentence => "entity_not_in_sentence",
            Rejection::Duplicate => "duplicate",
        }
    }
}

/// A window's chunks with their normalised texts, prepared once for every triplet of it.
pub struct GroundingWindow<'a> {
    chunks: Vec<(&'a Chunk, String)>,
}

/// A triplet that passed grounding: which of the window's chunks holds its sentence, and
/// whether that is another chunk than the one the model named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grounded {
    pub chunk: usize,
    pub repointed: bool,
}

/// ` <normalised words> `: padded, so that containment is of whole words.
fn padded(s: &str) -> String {
    format!(" {} ", normalize(s))
}

impl<'a> GroundingWindow<'a> {
    pub fn new(chunks: &[&'a Chunk]) -> Self {
        Self {
            chunks: chunks.iter().map(|c| (*c, padded(&c.text))).collect(),
        }
    }

    /// Ground one triplet, or say why not.
    pub fn ground(&self, t: &ExtractedTriplet) -> Result<Grounded, Rejection> {
        let fields = [
            (&t.entity_1, MAX_ENTITY_CHARS),
            (&t.relation, MAX_RELATION_CHARS),
            (&t.entity_2, MAX_ENTITY_CHARS),
            (&t.chunk_id, usize::MAX),
            (&t.source_sentence, MAX_SENTENCE_CHARS),
        ];
        // A field of punctuation only normalises to nothing: as empty as a blank one.
        if fields
            .iter()
            .any(|(f, _)| f.trim().is_empty() || normalize(f).is_empty())
        {
            return Err(Rejection::EmptyField);
        }
        if fields.iter().any(|(f, max)| f.chars().count() > *max) {
            return Err(Rejection::OversizeField);
        }
        let named = self
            .chunks
            .iter()
            .position(|(c, _)| c.id == t.chunk_id.trim())
            .ok_or(Rejection::UnknownChunk)?;
        let sentence = padded(&t.source_sentence);
        let found = if self.chunks[named].1.contains(&sentence) {
            Grounded {
                chunk: named,
                repointed: false,
            }
        } else {
            let other = self
                .chunks
                .iter()
                .position(|(_, text)| text.contains(&sentence))
                .ok_or(Rejection::Ungrounded)?;
            Grounded {
                chunk: other,
                repointed: true,
            }
        };
        if !sentence.contains(&padded(&t.entity_1)) || !sentence.contains(&padded(&t.entity_2)) {
            return Err(Rejection::EntityNotInSentence);
        }
        Ok(found)
    }
}

/// What makes two triplets the same: their chunk and their normalised entities and relation.
pub(crate) fn dedupe_key(chunk_id: &str, t: &ExtractedTriplet) -> [String; 4] {
    [
        chunk_id.to_string(),
        normalize(&t.entity_1),
        normalize(&t.relation),
        normalize(&t.entity_2),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: &str, text: &str) -> Chunk {
        Chunk {
            id: id.into(),
            report_id: "r".into(),
            text: text.into(),
            ..Chunk::default()
        }
    }

    fn triplet(e1: &str, rel: &str, e2: &str, chunk: &str, sentence: &str) -> ExtractedTriplet {
        ExtractedTriplet {
            entity_1: e1.into(),
            relation: rel.into(),
            entity_2: e2.into(),
            chunk_id: chunk.into(),
            source_sentence: sentence.into(),
        }
    }

    #[test]
    fn sentences_are_found_whatever_the_case_spacing_quotes_dashes_and_pipes() {
        let a = chunk(
            "c1",
            "The board met twice.\nNorthwind Logistics\u{a0} acquired “Baltic   Freight”—Lines in 2023.",
        );
        let b = chunk(
            "c2",
            "| Programme | Allocation |\n| --- | --- |\n| Small Rental Repair | 14,460,000 |",
        );
        let w = GroundingWindow::new(&[&a, &b]);
        let ok = |t: &ExtractedTriplet| w.ground(t);
        assert_eq!(
            ok(&triplet(
                "Northwind Logistics",
                "acquired",
                "Baltic Freight Lines",
                "c1",
                "northwind logistics acquired \"Baltic Freight\" - Lines in 2023"
            )),
            Ok(Grounded {
                chunk: 0,
                repointed: false
            })
        );
        // A table row copied without its pipes, named with the wrong chunk: re-pointed.
        assert_eq!(
            ok(&triplet(
                "Small Rental Repair",
                "has allocation",
                "14,460,000",
                "c1",
                "Small Rental Repair 14,460,000"
            )),
            Ok(Grounded {
                chunk: 1,
                repointed: true
            })
        );
        let reject = |t: ExtractedTriplet| w.ground(&t).unwrap_err().reason();
        assert_eq!(
            reject(triplet(
                "Northwind",
                "sold",
                "Baltic",
                "c1",
                "Northwind sold Baltic."
            )),
            "ungrounded"
        );
        assert_eq!(
            reject(triplet(
                "Northwind Logistics",
                "acquired",
                "Riga Harbour",
                "c1",
                "Northwind Logistics acquired Baltic Freight Lines in 2023."
            )),
            "entity_not_in_sentence"
        );
        // Whole words only: "Freigh" is not an entity of the sentence.
        assert_eq!(
            reject(triplet(
                "Northwind Logistics",
                "acquired",
                "Freigh",
                "c1",
                "Northwind Logistics acquired Baltic Freight Lines in 2023."
            )),
            "entity_not_in_sentence"
        );
        assert_eq!(
            reject(triplet("A", "b", "C", "c9", "The board met twice.")),
            "unknown_chunk"
        );
        assert_eq!(
            reject(triplet(" ", "b", "C", "c1", "The board met twice.")),
            "empty_field"
        );
        assert_eq!(
            reject(triplet("--", "b", "C", "c1", "The board met twice.")),
            "empty_field"
        );
        assert_eq!(
            reject(triplet(
                "board",
                "met",
                "twice",
                "c1",
                &"The board met twice. ".repeat(100)
            )),
            "oversize_field"
        );
    }

    #[test]
    fn duplicates_compare_normalised_fields_within_a_chunk() {
        let a = triplet("Calder Port", "Operates", "Eastgate", "c1", "x");
        let b = triplet("calder  port", "operates", "EASTGATE.", "c1", "y");
        assert_eq!(dedupe_key("c1", &a), dedupe_key("c1", &b));
        assert_ne!(dedupe_key("c1", &a), dedupe_key("c2", &b));
    }
}
