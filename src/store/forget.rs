//! Forgetting: decay as one multiplication of the global scale, and the rescale that folds
//! the scale into the counts.

use super::{move_in_histogram, Histogram, Store, MIN_SCALE};

impl Store {
    /// Will `decay(factor)` fold the scale into the counts (`rescale`)?
    pub fn decay_folds(&self, factor: f64) -> bool {
        factor != 1.0 && self.scale * factor < MIN_SCALE
    }

    /// Multiply every count by `factor` (0 <= factor <= 1) in O(1): only the scale changes.
    /// Below MIN_SCALE the scale is folded into the counts (`rescale`, O(cells)); with a
    /// factor gamma per document that happens once every log(MIN_SCALE)/log(gamma)
    /// documents, so the amortised cost stays O(1). Returns the features that left V.
    pub fn decay(&mut self, factor: f64) -> Vec<u32> {
        if factor == 1.0 {
            return Vec::new();
        }
        self.scale *= factor;
        self.version += 1;
        if self.scale < MIN_SCALE {
            return self.rescale();
        }
        Vec::new()
    }

    /// Fold the global scale into the stored counts (O(cells)). Counts that underflow to
    /// zero are gone: a feature left with no cell leaves V, and a class whose N_c
    /// underflows loses its cells too. Returns the features that left V.
    pub fn rescale(&mut self) -> Vec<u32> {
        if self.scale == 1.0 {
            return Vec::new();
        }
        let scale = self.scale;
        self.scale = 1.0;
        self.version += 1;
        for c in 0..self.n_classes() {
            self.class_docs[c] *= scale;
            self.class_tokens[c] *= scale;
            self.class_version[c] += 1;
        }
        let k = self.n_classes();
        let mut live_cells = vec![0usize; k];
        let mut emptied = Vec::new();
        if let Some(h) = self.histograms.as_mut() {
            h.iter_mut().for_each(Histogram::clear);
        }
        for id in 0..self.rows as u32 {
            let mut cells = Vec::new();
            self.for_each_cell(id, |c, t, d| cells.push((c, t, d)));
            if cells.is_empty() {
                continue;
            }
            for (c, t, d) in cells {
                let (mut t, mut d) = (t * scale, d * scale);
                if self.class_docs[c] == 0.0 {
                    t = 0.0;
                    d = 0.0;
                }
                self.set_cell(id, c, t, d);
                if t != 0.0 || d != 0.0 {
                    live_cells[c] += 1;
                    if let Some(h) = self.histograms.as_mut() {
                        move_in_histogram(&mut h[c], 0.0, d);
                    }
                }
            }
            if !self.has_cells(id) {
                emptied.push(id);
            }
        }
        for (tokens, &live) in self.class_tokens.iter_mut().zip(&live_cells) {
            if live == 0 {
                *tokens = 0.0;
            }
        }
        self.bury(&emptied)
    }
}
