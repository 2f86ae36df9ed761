//! Borrowed texts made distinct, each with its place: what a stage embeds or sends once however
//! many rows share a text.

/// Distinct texts in order of first appearance. Keyed by whole texts (often thousands of bytes)
/// through foldhash, randomly seeded so crafted texts cannot aim at collisions; only looked up,
/// never iterated, so the order is the texts' own.
#[derive(Debug, Default)]
pub struct DistinctTexts<'a> {
    texts: Vec<&'a str>,
    at: foldhash::HashMap<&'a str, usize>,
}

impl<'a> DistinctTexts<'a> {
    /// The place of `text` among the distinct texts, added at the end when new.
    pub fn place(&mut self, text: &'a str) -> usize {
        let texts = &mut self.texts;
        *self.at.entry(text).or_insert_with(|| {
            texts.push(text);
            texts.len() - 1
        })
    }

    /// The distinct texts, in order of first appearance.
    pub fn into_texts(self) -> Vec<&'a str> {
        self.texts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_text_keeps_the_place_of_its_first_appearance() {
        let mut d = DistinctTexts::default();
        let places: Vec<usize> = ["b", "a", "b", "c", "a"]
            .iter()
            .map(|t| d.place(t))
            .collect();
        assert_eq!(places, [0, 1, 0, 2, 1]);
        assert_eq!(d.into_texts(), ["b", "a", "c"]);
    }
}
