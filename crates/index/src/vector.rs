//! Exact cosine top-k over vectors in memory: every stored vector is scored against the query,
//! so results are exact and deterministic (ties broken by id). Vectors are normalised once when
//! added, so a search is one dot product per vector. Fine for a benchmark's chunks (tens of
//! thousands of vectors); not an approximate nearest-neighbour index.

/// Why a vector was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VectorError {
    #[error("vector `{id}` has {got} dimensions, the index {want}")]
    Dimension { id: String, got: usize, want: usize },
    #[error("vector `{id}` holds a NaN or an infinity")]
    NotFinite { id: String },
}

/// One ranked vector.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorHit {
    pub id: String,
    /// Cosine similarity with the query, in -1..=1 (0 for a zero vector).
    pub score: f32,
}

/// Vectors of one dimension, by id.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorIndex {
    dim: usize,
    ids: Vec<String>,
    /// Unit vectors (or zeros), row after row.
    data: Vec<f32>,
}

/// `v` scaled to unit length (a zero vector stays zero: it is similar to nothing).
fn normalised(v: &[f32]) -> Vec<f32> {
    let norm = v
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    if norm == 0.0 {
        return vec![0.0; v.len()];
    }
    v.iter().map(|x| (f64::from(*x) / norm) as f32).collect()
}

/// Dot product of two vectors (pairs up to the shorter length): the cosine of unit vectors, and
/// the score exact search ranks by, so callers rescoring candidates agree with it to the bit.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Cosine similarity of two vectors of the same length (0 when either is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    dot(&normalised(a), &normalised(b)).clamp(-1.0, 1.0)
}

impl VectorIndex {
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            ids: Vec::new(),
            data: Vec::new(),
        }
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    fn checked(&self, id: &str, v: &[f32]) -> Result<Vec<f32>, VectorError> {
        if v.len() != self.dim {
            return Err(VectorError::Dimension {
                id: id.to_string(),
                got: v.len(),
                want: self.dim,
            });
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(VectorError::NotFinite { id: id.to_string() });
        }
        Ok(normalised(v))
    }

    /// Add a vector under `id` (ids need not be unique; each vector is its own entry).
    pub fn add(&mut self, id: impl Into<String>, vector: &[f32]) -> Result<(), VectorError> {
        let id = id.into();
        let unit = self.checked(&id, vector)?;
        self.ids.push(id);
        self.data.extend(unit);
        Ok(())
    }

    /// The `k` vectors most similar to `query` by cosine, best first, ties by id.
    pub fn search(&self, query: &[f32], k: usize) -> Result<Vec<VectorHit>, VectorError> {
        let q = self.checked("query", query)?;
        let mut scored: Vec<(f32, &str)> = self
            .ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let row = &self.data[i * self.dim..(i + 1) * self.dim];
                (dot(&q, row).clamp(-1.0, 1.0), id.as_str())
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        Ok(scored
            .into_iter()
            .take(k)
            .map(|(score, id)| VectorHit {
                id: id.to_string(),
                score,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ranks_by_cosine_and_refuses_bad_vectors() {
        let mut index = VectorIndex::new(2);
        index.add("east", &[1.0, 0.0]).unwrap();
        index.add("north", &[0.0, 3.0]).unwrap();
        index.add("north-east", &[2.0, 2.0]).unwrap();
        index.add("zero", &[0.0, 0.0]).unwrap();
        let hits = index.search(&[1.0, 0.1], 3).unwrap();
        let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["east", "north-east", "north"]);
        assert!((hits[0].score - cosine(&[1.0, 0.0], &[1.0, 0.1])).abs() < 1e-6);
        assert_eq!(index.search(&[0.0, 0.0], 1).unwrap()[0].score, 0.0);
        assert!(matches!(
            index.add("bad", &[1.0]),
            Err(VectorError::Dimension {
                got: 1,
                want: 2,
                ..
            })
        ));
        assert!(index.add("nan", &[f32::NAN, 0.0]).is_err());
        assert!(index.search(&[1.0, 2.0, 3.0], 1).is_err());
        assert_eq!(index.len(), 4);
    }

    proptest! {
        /// The top k is the brute-force top k, whatever the insertion order.
        #[test]
        fn top_k_is_exact_and_order_free(
            vectors in proptest::collection::vec(proptest::collection::vec(-4i8..=4, 3), 1..30),
            query in proptest::collection::vec(-4i8..=4, 3),
            k in 0usize..10,
        ) {
            let as_f32 = |v: &Vec<i8>| v.iter().map(|x| f32::from(*x)).collect::<Vec<f32>>();
            let q = as_f32(&query);
            let mut forward = VectorIndex::new(3);
            let mut backward = VectorIndex::new(3);
            for (i, v) in vectors.iter().enumerate() {
                forward.add(format!("v{i:02}"), &as_f32(v)).unwrap();
            }
            for (i, v) in vectors.iter().enumerate().rev() {
                backward.add(format!("v{i:02}"), &as_f32(v)).unwrap();
            }
            let got = forward.search(&q, k).unwrap();
            prop_assert_eq!(&got, &backward.search(&q, k).unwrap());
            let mut want: Vec<(f32, String)> = vectors
                .iter()
                .enumerate()
                .map(|(i, v)| (cosine(&q, &as_f32(v)), format!("v{i:02}")))
                .collect();
            want.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            prop_assert_eq!(got.len(), k.min(vectors.len()));
            for (h, (score, _)) in got.iter().zip(&want) {
                prop_assert!((h.score - score).abs() < 1e-5);
                prop_assert!((-1.0..=1.0).contains(&h.score));
            }
        }
    }
}
