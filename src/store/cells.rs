//! Reading and writing the (feature, class) cells: a feature's row in every class (dense or
//! sparse), one cell, and setting one.

use super::{Cell, Cells, Store};

impl Store {
    /// Stored (tokens, docs) of every class for feature `id` into the two slices (length K).
    #[inline]
    pub fn gather(&self, id: u32, tokens: &mut [f64], docs: &mut [f64]) {
        let k = tokens.len();
        match &self.cells {
            Cells::Dense { k_cap, rows } => match rows.get(id as usize) {
                Some(row) => {
                    tokens.copy_from_slice(&row[..k]);
                    docs.copy_from_slice(&row[*k_cap..*k_cap + k]);
                }
                None => {
                    tokens.fill(0.0);
                    docs.fill(0.0);
                }
            },
            Cells::Sparse { rows } => {
                tokens.fill(0.0);
                docs.fill(0.0);
                if let Some(row) = rows.get(id as usize) {
                    for cell in row {
                        tokens[cell.class as usize] = cell.tokens;
                        docs[cell.class as usize] = cell.docs;
                    }
                }
            }
        }
    }

    /// Start loading feature `id`'s row into the cache (a hint, no effect on results): a loop
    /// over a document's features asks a few ids ahead, so that the row's cache miss, the
    /// main cost of reading counts from a large store, overlaps the work on the ids before.
    #[inline]
    pub fn prefetch(&self, id: u32) {
        if let Cells::Dense { rows, .. } = &self.cells {
            rows.prefetch(id as usize);
        }
    }

    /// Stored (tokens, docs) of every class of feature `id` as slices of a dense row, or
    /// None (sparse layout, or a row never written: use `gather`).
    #[inline]
    pub fn dense_row(&self, id: u32, k: usize) -> Option<(&[f64], &[f64])> {
        match &self.cells {
            Cells::Dense { k_cap, rows } => rows.get(id as usize).map(|row| (&row[..k], &row[*k_cap..*k_cap + k])),
            Cells::Sparse { .. } => None,
        }
    }

    /// Stored (tokens, docs) of one cell.
    #[inline]
    pub fn cell(&self, id: u32, c: usize) -> (f64, f64) {
        match &self.cells {
            Cells::Dense { k_cap, rows } => rows.get(id as usize).map_or((0.0, 0.0), |row| (row[c], row[k_cap + c])),
            Cells::Sparse { rows } => rows
                .get(id as usize)
                .and_then(|row| row.iter().find(|cell| cell.class as usize == c))
                .map_or((0.0, 0.0), |cell| (cell.tokens, cell.docs)),
        }
    }

    /// The nonzero cells of a feature, by increasing class: f(class, tokens, docs).
    pub fn for_each_cell(&self, id: u32, mut f: impl FnMut(usize, f64, f64)) {
        match &self.cells {
            Cells::Dense { k_cap, rows } => {
                if let Some(row) = rows.get(id as usize) {
                    for c in 0..self.class_docs.len() {
                        let (t, d) = (row[c], row[k_cap + c]);
                        if t != 0.0 || d != 0.0 {
                            f(c, t, d);
                        }
                    }
                }
            }
            Cells::Sparse { rows } => {
                if let Some(row) = rows.get(id as usize) {
                    for cell in row {
                        f(cell.class as usize, cell.tokens, cell.docs);
                    }
                }
            }
        }
    }

    pub(super) fn set_cell(&mut self, id: u32, c: usize, tokens: f64, docs: f64) {
        let id = id as usize;
        if id >= self.rows {
            self.rows = id + 1;
        }
        match &mut self.cells {
            Cells::Dense { k_cap, rows } => {
                let row = rows.get_mut(id);
                row[c] = tokens;
                row[*k_cap + c] = docs;
            }
            Cells::Sparse { rows } => {
                if id >= rows.len() {
                    rows.resize_with(id + 1, Vec::new);
                }
                let row = &mut rows[id];
                let at = row.binary_search_by_key(&(c as u32), |cell| cell.class);
                match (at, tokens != 0.0 || docs != 0.0) {
                    (Ok(i), true) => {
                        row[i].tokens = tokens;
                        row[i].docs = docs;
                    }
                    (Ok(i), false) => {
                        row.remove(i);
                        if row.is_empty() {
                            *row = Vec::new(); // memory follows the nonzero cells
                        }
                    }
                    (Err(i), true) => row.insert(
                        i,
                        Cell {
                            class: c as u32,
                            tokens,
                            docs,
                        },
                    ),
                    (Err(_), false) => {}
                }
            }
        }
    }

    pub(super) fn has_cells(&self, id: u32) -> bool {
        let mut any = false;
        self.for_each_cell(id, |_, _, _| any = true);
        any
    }
}
