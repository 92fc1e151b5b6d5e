//! Online logistic regression (binary and multiclass) over a model's feature space: the
//! discriminative side of the log-linear family whose generative side is naive Bayes (`nb`).
//!
//! Classes c = 0 .. K-1 in the order they were first learned; class 0 is the reference
//! (baseline-category logit), so a model holds K-1 weight vectors and a binary model is the
//! classic logistic regression with one weight per feature:
//!
//!   s_0 = 0,   s_c = b_c + sum_i x_i w_{i,c}   (c >= 1)
//!   P(c | x) = exp(s_c) / sum_k exp(s_k)
//!
//! A document's values may first be transformed (`Settings`): sublinear, x -> sign(x) ln(1 + |x|)
//! (a word said ten times is not ten times the evidence), then multiplied by a power p of
//! each feature's inverse document frequency, idf_i^p with
//!
//!   idf_i = ln((1 + N) / (1 + D_i)) + 1
//!
//! (`weighting::idf`; N the documents counted, D_i those holding feature i, both by sample
//! weight as the class counts are: a word in every document says little), then divided by
//! the document's L2 norm (long and short documents step alike). With p = 1 this is
//! scikit-learn's TfidfTransformer (smooth_idf, norm="l2") but for its sublinear tf (1 + ln x
//! there) and its IDF (fitted on a whole corpus there, counted online here); p = 2 weighs
//! rare words more still, which a linear model on word counts profits from (measured on 20
//! Newsgroups: benchmarks/bench_logistic.py). N and D_i are counted as documents are
//! learned, each right before its first step, so every feature a step reads has D_i > 0.
//! An unlearn takes out what it is given: a document never learned may leave some D_i above
//! N, so the IDF reads N as at least D_i (it stays >= 1). A feature no learned
//! document held (D_i = 0) is left out of a prediction: it has no weight, and its IDF would
//! be the largest of all, so it would only shrink the others by the norm (measured on 20
//! Newsgroups, leaving such words out gains about 0.4 points of accuracy). Below, x is the
//! document so transformed.
//!
//! One learning step on a document x of class y with weight omega (the sample weight times
//! the class weight) follows the gradient of omega * log P(y | x):
//!
//!   g_c = omega * ([y = c] - P(c | x)),   w_{i,c} += eta_{i,c} * g_c * x_i,   b_c += eta_{b,c} * g_c
//!
//! with eta = `rate` (schedule `Constant`) or, with AdaGrad (Duchi et al. 2011), one rate per
//! weight, rate / sqrt(G0 + sum of the squared gradients that weight has had), G0 =
//! `ADAGRAD_G0`. L2 regularisation is weight decay: before every step each weight (not the
//! biases) is multiplied by (1 - rate * l2). It is applied lazily, through one global scale
//! (true weight = scale * stored weight), so a step costs O(|x| K) whatever |V|. With a
//! margin (train on error, as the TREC spam filters did), a document whose true class
//! already beats every other by at least the margin in score is not learned.
//!
//! `undo` takes a step back exactly, given what the step used (`Step`, which `learn`
//! returns). A step on x (prepared as above) with gradient g changed, in this order: with
//! L2, the scale by the factor d = 1 - rate * l2; then per feature i of x and class c >= 1,
//! with AdaGrad, the sum G_{i,c} += (g_c x_i)^2, then w_{i,c} += eta_{i,c} g_c x_i with
//! eta_{i,c} = rate / sqrt(G0 + G_{i,c}) (the new sum) or `rate`; the biases alike with
//! x = 1. `undo` runs it backwards: eta_{i,c} from the sum as it stands (the step's square
//! still in it), w_{i,c} -= eta_{i,c} g_c x_i, then G_{i,c} -= (g_c x_i)^2; the biases
//! alike; the scale divided by d; then the document taken out of the IDF's counts. x is
//! prepared from the counts as they stand, which right after the learn are the counts the
//! step read (the document was counted before its step). So right after a learn, `undo`
//! gives back every weight, sum, the scale and the counts to rounding, and every score with
//! them. With other steps in between it takes back the same move at the rate each weight
//! has now (no larger: AdaGrad's sums only grow), while the steps after it were taken on
//! weights that held it; what is left is of the order of those later steps' change in
//! gradient (measured on the spam filter: benchmarks/bench_corrections.py).
//!
//! `unlearn` is the fallback when no `Step` was kept (a caller's record evicted, or a model
//! file saved before steps were kept): the step `learn` would take on the document now,
//! undone as above. It is not an exact inverse (the gradient depends on the weights, which
//! moved since), but learning then unlearning a document leaves the scores within
//! O(rate^2 |x|^2) of where they were.
//!
//! `merge` is parameter mixing (Mann et al. 2009, McDonald et al. 2010): the weights
//! averaged, each model weighing by the documents it learned; the AdaGrad sums add up.

use crate::nb::logsumexp;
use crate::weighting::idf;
use std::borrow::Cow;

/// AdaGrad's starting sum of squared gradients: the first step of a weight moves it by
/// rate * g / sqrt(G0 + g^2), at most `rate / sqrt(G0)`... and about `rate` when |g| >> 0.1.
pub const ADAGRAD_G0: f64 = 0.01;
/// Below this global scale the stored weights are folded back into true weights.
const MIN_SCALE: f64 = 1e-100;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Schedule {
    /// One rate for every weight and every step.
    Constant,
    /// AdaGrad: per weight, rate / sqrt(G0 + its squared gradients so far).
    AdaGrad,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    pub rate: f64,
    pub schedule: Schedule,
    /// Weight decay per step (L2 regularisation), >= 0; rate * l2 < 1.
    pub l2: f64,
    /// Train on error: skip documents whose true class wins by at least this score margin.
    pub margin: Option<f64>,
    /// Values x -> sign(x) ln(1 + |x|) first.
    pub sublinear: bool,
    /// Then multiplied by idf^`idf_power` (0: no IDF, and no document frequencies kept).
    pub idf_power: f64,
    /// Then divided by the document's L2 norm.
    pub normalize: bool,
}

/// Check the parameters of a model: `rate` finite and > 0, `l2` finite and >= 0 with
/// rate * l2 < 1, `margin` (if any) finite and >= 0, `idf_power` finite and >= 0. Err
/// names the first one wrong.
pub fn check_parameters(rate: f64, l2: f64, margin: Option<f64>, idf_power: f64) -> Result<(), String> {
    if !(rate.is_finite() && rate > 0.0) {
        return Err(format!("learning_rate must be a finite number > 0, got {rate}"));
    }
    if !(l2.is_finite() && l2 >= 0.0 && rate * l2 < 1.0) {
        return Err(format!(
            "l2 must be a finite number >= 0 with learning_rate * l2 < 1, got {l2}"
        ));
    }
    if let Some(m) = margin {
        if !(m.is_finite() && m >= 0.0) {
            return Err(format!("margin must be a finite number >= 0 or None, got {m}"));
        }
    }
    if !(idf_power.is_finite() && idf_power >= 0.0) {
        return Err(format!("idf_power must be a finite number >= 0, got {idf_power}"));
    }
    Ok(())
}

/// The weights of one online logistic regression model.
#[derive(Clone, Debug)]
pub struct Logistic {
    pub settings: Settings,
    n_classes: usize,
    /// Rows allocated (features); each row holds K-1 cells.
    rows: usize,
    /// The cells, row-major (rows x (K-1)): a stored weight (true weight = scale * stored)
    /// and, with AdaGrad, its sum of squared gradients beside it (one cache line for both:
    /// a step reads and writes the two together).
    cells: Vec<f64>,
    pub scale: f64,
    /// Biases of classes 1..K-1 (not decayed) and their AdaGrad sums.
    bias: Vec<f64>,
    bias_squares: Vec<f64>,
    /// Learning steps taken (documents learned, skipped ones included).
    pub steps: u64,
    /// With an IDF (`idf_power` > 0): N, the documents counted, and per row D_i, those
    /// holding the feature, both by sample weight (empty without an IDF).
    pub docs: f64,
    doc_freq: Vec<f64>,
}

/// What a learning step used (`Logistic::learn`): enough for `Logistic::undo` to take it
/// back exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// g_c = omega ([y = c] - P(c | x)) of the classes 1..K-1 as the step had them; empty
    /// when the weights did not move (the margin was met, or a single class is known). A
    /// class added since has g = 0 here.
    pub g: Vec<f64>,
    /// The factor the weights decayed by before the step: 1 - rate * l2, or 1 without L2.
    pub decay: f64,
}

impl Step {
    /// Did the weights move (else the margin was met, or a single class was known)?
    pub fn moved(&self) -> bool {
        !self.g.is_empty()
    }
}

impl Logistic {
    pub fn new(settings: Settings) -> Self {
        Logistic {
            settings,
            n_classes: 0,
            rows: 0,
            cells: Vec::new(),
            scale: 1.0,
            bias: Vec::new(),
            bias_squares: Vec::new(),
            steps: 0,
            docs: 0.0,
            doc_freq: Vec::new(),
        }
    }

    fn has_idf(&self) -> bool {
        self.settings.idf_power > 0.0
    }

    /// A document's values as the model reads them (see the module docstring).
    pub fn prepared<'v>(&self, ids: &[u32], values: &'v [f64]) -> Cow<'v, [f64]> {
        let Settings {
            sublinear,
            normalize,
            idf_power,
            ..
        } = self.settings;
        if !sublinear && !normalize && idf_power == 0.0 {
            return Cow::Borrowed(values);
        }
        let mut out: Vec<f64> = if sublinear {
            values.iter().map(|&v| v.signum() * v.abs().ln_1p()).collect()
        } else {
            values.to_vec()
        };
        if idf_power > 0.0 {
            for (v, &id) in out.iter_mut().zip(ids) {
                // a feature at or beyond the rows was never counted either
                let d = self.doc_freq.get(id as usize).copied().unwrap_or(0.0);
                *v = if d > 0.0 {
                    *v * idf(self.docs.max(d), d, 1.0).powf(idf_power)
                } else {
                    0.0
                };
            }
        }
        if normalize {
            let norm = out.iter().map(|v| v * v).sum::<f64>().sqrt();
            if norm > 0.0 {
                out.iter_mut().for_each(|v| *v /= norm);
            }
        }
        Cow::Owned(out)
    }

    /// Count a document learned with sample weight `weight` (> 0) in the document
    /// frequencies, or take it out (< 0); nothing without an IDF. The ids have rows (an id
    /// beyond them counts nothing); a document lists each id once. Counts stop at 0.
    pub fn count(&mut self, ids: &[u32], weight: f64) {
        if !self.has_idf() {
            return;
        }
        self.docs = (self.docs + weight).max(0.0);
        for &id in ids {
            if let Some(d) = self.doc_freq.get_mut(id as usize) {
                *d = (*d + weight).max(0.0);
            }
        }
    }

    /// The document frequencies of some rows (zeros without an IDF).
    pub fn doc_freqs(&self, ids: &[u32]) -> Vec<f64> {
        ids.iter()
            .map(|&id| self.doc_freq.get(id as usize).copied().unwrap_or(0.0))
            .collect()
    }

    /// Set N and the document frequencies of some rows (the rows exist; nothing without an IDF).
    pub fn import_doc_freqs(&mut self, docs: f64, ids: &[u32], freqs: &[f64]) {
        if !self.has_idf() {
            return;
        }
        self.docs = docs;
        for (&id, &d) in ids.iter().zip(freqs) {
            if let Some(slot) = self.doc_freq.get_mut(id as usize) {
                *slot = d;
            }
        }
    }

    fn adagrad(&self) -> bool {
        self.settings.schedule == Schedule::AdaGrad
    }

    /// Values per cell: the weight, and AdaGrad's sum.
    fn stride(&self) -> usize {
        if self.adagrad() {
            2
        } else {
            1
        }
    }

    pub fn n_classes(&self) -> usize {
        self.n_classes
    }

    /// Weight vectors per row: K-1.
    fn cols(&self) -> usize {
        self.n_classes.saturating_sub(1)
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Add a class (its weights start at zero); returns its index.
    pub fn add_class(&mut self) -> usize {
        let c = self.n_classes;
        self.n_classes += 1;
        if c == 0 {
            return c;
        }
        let stride = self.stride();
        let (old, new) = ((c - 1) * stride, c * stride);
        let mut wider = vec![0.0; self.rows * new];
        for r in 0..self.rows {
            wider[r * new..r * new + old].copy_from_slice(&self.cells[r * old..(r + 1) * old]);
        }
        self.cells = wider;
        self.bias.push(0.0);
        self.bias_squares.push(0.0);
        c
    }

    /// Make room for feature ids below `rows`.
    pub fn reserve_rows(&mut self, rows: usize) {
        if rows <= self.rows {
            return;
        }
        self.cells.resize(rows * self.cols() * self.stride(), 0.0);
        if self.has_idf() {
            self.doc_freq.resize(rows, 0.0);
        }
        self.rows = rows;
    }

    /// The stored dot products sum_i x_i w'_{i,c} for c >= 1 (ids at or beyond the rows
    /// count nothing): the scores up to the scale and the biases, which a step may change
    /// before it uses them (decay), so a prediction's can serve the learning that follows.
    pub fn dots(&self, ids: &[u32], values: &[f64]) -> Vec<f64> {
        self.dots_of_prepared(ids, &self.prepared(ids, values))
    }

    /// `dots` of values already `prepared`.
    fn dots_of_prepared(&self, ids: &[u32], values: &[f64]) -> Vec<f64> {
        let cols = self.cols();
        let stride = self.stride();
        let mut dots = vec![0.0; cols];
        if cols == 0 {
            return dots;
        }
        let width = cols * stride;
        for (&id, &x) in ids.iter().zip(values) {
            let r = id as usize;
            if r >= self.rows {
                continue;
            }
            let row = &self.cells[r * width..(r + 1) * width];
            for (acc, cell) in dots.iter_mut().zip(row.chunks_exact(stride)) {
                *acc += x * cell[0];
            }
        }
        dots
    }

    /// The scores split by feature: for each feature with a weight, its terms x'_i w_{i,c}
    /// over every class (row by row, n x K; the reference class's 0), then the rest, the
    /// biases (s_c = rest_c + sum_i terms_ic, to rounding; x' the values as `prepared`).
    /// Returns (the positions in `ids` of the features split, terms, rest).
    pub fn contributions(&self, ids: &[u32], values: &[f64]) -> (Vec<usize>, Vec<f64>, Vec<f64>) {
        let (k, cols, stride) = (self.n_classes, self.cols(), self.stride());
        let prepared = self.prepared(ids, values);
        let (mut positions, mut terms) = (Vec::new(), Vec::new());
        for (i, (&id, &x)) in ids.iter().zip(prepared.iter()).enumerate() {
            let r = id as usize;
            if r >= self.rows || x == 0.0 || cols == 0 {
                continue;
            }
            let row = &self.cells[r * cols * stride..(r + 1) * cols * stride];
            positions.push(i);
            terms.push(0.0);
            terms.extend(row.chunks_exact(stride).map(|cell| x * cell[0] * self.scale));
        }
        let mut rest = vec![0.0; k];
        rest.iter_mut().skip(1).zip(&self.bias).for_each(|(r, &b)| *r = b);
        (positions, terms, rest)
    }

    /// Scores s_c of every class (s_0 = 0) from the stored dot products.
    pub fn scores_of(&self, dots: &[f64]) -> Vec<f64> {
        let mut s = vec![0.0; self.n_classes];
        for ((score, &dot), &b) in s.iter_mut().skip(1).zip(dots).zip(&self.bias) {
            *score = dot * self.scale + b;
        }
        s
    }

    /// Scores s_c of every class (s_0 = 0).
    pub fn scores(&self, ids: &[u32], values: &[f64]) -> Vec<f64> {
        self.scores_of(&self.dots(ids, values))
    }

    /// log P(c | x) for every class (empty while no class is known).
    pub fn log_posterior(&self, ids: &[u32], values: &[f64]) -> Vec<f64> {
        self.log_posterior_of(&self.dots(ids, values))
    }

    /// log P(c | x) from the document's `dots`: the scores minus their log-sum-exp.
    pub fn log_posterior_of(&self, dots: &[f64]) -> Vec<f64> {
        let mut s = self.scores_of(dots);
        let norm = logsumexp(&s);
        s.iter_mut().for_each(|v| *v -= norm);
        s
    }

    /// g_c = [y = c] - P(c | x) for c >= 1, from the scores of the classes the step knows
    /// (times `omega`).
    fn gradient(&self, scores: &[f64], y: usize, omega: f64) -> Vec<f64> {
        let norm = logsumexp(scores);
        (1..scores.len())
            .map(|c| omega * (f64::from(u8::from(c == y)) - (scores[c] - norm).exp()))
            .collect()
    }

    /// Is the margin met: does class y beat every other class by at least `margin`?
    fn margin_met(&self, scores: &[f64], y: usize) -> bool {
        let Some(margin) = self.settings.margin else {
            return false;
        };
        let best_other = scores
            .iter()
            .enumerate()
            .filter(|&(c, _)| c != y)
            .map(|(_, &s)| s)
            .fold(f64::NEG_INFINITY, f64::max);
        scores[y] - best_other >= margin
    }
}

/// The steps: a lesson's, its undo, a provisional one's, the reverse step.
impl Logistic {
    /// The document counted in the IDF with its sample weight `count` (0: an earlier pass
    /// counted it), then one learning step on it (ids, values) as class y with weight
    /// omega, the sample weight times the class weight (> 0). The ids must have rows
    /// (`reserve_rows`). `dots`: the document's `dots`, when the caller has them from a
    /// prediction on the model as it stands (unused with an IDF: the counts moved since).
    pub fn learn(
        &mut self,
        ids: &[u32],
        values: &[f64],
        y: usize,
        omega: f64,
        dots: Option<Vec<f64>>,
        count: f64,
    ) -> Step {
        let dots = if self.has_idf() { None } else { dots };
        self.counted_step(ids, values, y, omega, dots, count, self.n_classes)
    }

    /// The document counted (`count` > 0), then one step over the first `classes` classes
    /// (the softmax, the margin and the gradient of the others left out: as a model that did
    /// not know them yet; a replay takes a step again as it was taken, before later classes
    /// came: src/replay.rs).
    #[allow(clippy::too_many_arguments)]
    pub fn counted_step(
        &mut self,
        ids: &[u32],
        values: &[f64],
        y: usize,
        omega: f64,
        dots: Option<Vec<f64>>,
        count: f64,
        classes: usize,
    ) -> Step {
        debug_assert!(y < classes && classes <= self.n_classes);
        if count > 0.0 {
            self.count(ids, count);
        }
        let values = self.prepared(ids, values);
        let mut dots = dots.unwrap_or_else(|| self.dots_of_prepared(ids, &values));
        self.steps += 1;
        let decay = self.decay();
        if decay != 1.0 {
            self.scale *= decay;
            if self.scale < MIN_SCALE {
                self.fold();
                dots = self.dots_of_prepared(ids, &values); // the stored weights changed
            }
        }
        let mut scores = self.scores_of(&dots);
        scores.truncate(classes);
        if classes <= 1 || self.margin_met(&scores, y) {
            return Step { g: Vec::new(), decay };
        }
        let g = self.gradient(&scores, y, omega);
        self.apply(ids, &values, &g, 1.0);
        Step { g, decay }
    }

    /// The factor a step decays the weights by: 1 - rate * l2 (1 without L2).
    pub fn decay(&self) -> f64 {
        if self.settings.l2 > 0.0 {
            1.0 - self.settings.rate * self.settings.l2
        } else {
            1.0
        }
    }

    /// Is `step` one this model's `learn` could have returned: g finite with at most K-1
    /// values, the decay this model's (1 - rate * l2, or 1 without L2)? Err says what is not.
    pub fn check_step(&self, step: &Step) -> Result<(), String> {
        if step.g.len() > self.cols() || !step.g.iter().all(|g| g.is_finite()) {
            return Err(format!(
                "a step's gradient holds at most {} finite numbers (one per class but the first), got {:?}",
                self.cols(),
                step.g
            ));
        }
        if step.decay != self.decay() {
            return Err(format!(
                "a step's decay must be this model's, {}, got {}",
                self.decay(),
                step.decay
            ));
        }
        Ok(())
    }

    /// Take back exactly the step `learn` took on the document (ids, values) and returned
    /// (see the module docstring), then take the document out of the IDF's counts with its
    /// sample weight `count`. `step` passes `check_step`.
    pub fn undo(&mut self, ids: &[u32], values: &[f64], step: &Step, count: f64) {
        if step.moved() && self.cols() > 0 {
            let values = self.prepared(ids, values);
            self.apply(ids, &values, &step.g, -1.0);
        }
        if step.decay != 1.0 {
            self.scale /= step.decay;
            if self.scale > 1.0 {
                self.fold(); // the scale stays in (0, 1], as a model file holds it
            }
        }
        self.count(ids, -count);
    }

    /// A provisional step on the document (ids, values) as class y with weight omega: a
    /// message the filter saw without a label, learned as the class it was given
    /// (`crate::feedback`). One step of the constant rate `rate` along the gradient, outside
    /// the schedule: AdaGrad's sums, the decay, the margin, the step count and the IDF's
    /// counts are left as they are, so it makes no later lesson's step smaller, and
    /// `undo_provisional` takes it back exactly whatever came after (the move was rate g x
    /// and is taken back as such; with L2 the steps in between have decayed it, and the
    /// undo takes back the move undecayed). The ids must have rows (`reserve_rows`).
    pub fn provisional(&mut self, ids: &[u32], values: &[f64], y: usize, omega: f64, rate: f64) -> Step {
        self.provisional_within(ids, values, y, omega, rate, self.n_classes)
    }

    /// `provisional` as it was when the model knew only its first `classes` classes.
    pub fn provisional_within(
        &mut self,
        ids: &[u32],
        values: &[f64],
        y: usize,
        omega: f64,
        rate: f64,
        classes: usize,
    ) -> Step {
        let classes = classes.min(self.n_classes);
        debug_assert!(y < classes);
        if classes <= 1 {
            return Step {
                g: Vec::new(),
                decay: 1.0,
            };
        }
        let values = self.prepared(ids, values);
        let mut scores = self.scores_of(&self.dots_of_prepared(ids, &values));
        scores.truncate(classes);
        let g = self.gradient(&scores, y, omega);
        self.apply_at(ids, &values, &g, 1.0, Some(rate));
        Step { g, decay: 1.0 }
    }

    /// Take back the provisional step that returned `step`, taken at `rate`. The document
    /// is prepared from the IDF's counts as they stand (as they were, while no document was
    /// learned since: a provisional step does not count).
    pub fn undo_provisional(&mut self, ids: &[u32], values: &[f64], step: &Step, rate: f64) {
        if step.moved() && self.cols() > 0 {
            let values = self.prepared(ids, values);
            self.apply_at(ids, &values, &step.g, -1.0, Some(rate));
        }
    }

    /// The reverse step, when the step `learn` took was not kept (see the module
    /// docstring): the step learning the document as class y with weight omega would take
    /// now, undone, and the document taken out of the IDF's counts with its sample `weight`.
    pub fn unlearn(&mut self, ids: &[u32], values: &[f64], y: usize, omega: f64, weight: f64) {
        let g = if self.cols() > 0 {
            self.gradient(&self.scores(ids, values), y, omega)
        } else {
            Vec::new()
        };
        self.undo(ids, values, &Step { g, decay: 1.0 }, weight);
    }

    /// Move every weight of the document along the gradient g (`direction` +1: learn, -1: unlearn).
    fn apply(&mut self, ids: &[u32], values: &[f64], g: &[f64], direction: f64) {
        self.apply_at(ids, values, g, direction, None);
    }

    /// `apply`, at the constant rate `fixed` when given (AdaGrad's sums then stay as they are).
    fn apply_at(&mut self, ids: &[u32], values: &[f64], g: &[f64], direction: f64, fixed: Option<f64>) {
        let rate = fixed.unwrap_or(self.settings.rate);
        let inverse_scale = 1.0 / self.scale;
        let adagrad = self.adagrad() && fixed.is_none();
        let stride = self.stride();
        let width = self.cols() * stride;
        for (&id, &x) in ids.iter().zip(values) {
            let r = id as usize;
            debug_assert!(r < self.rows);
            let row = &mut self.cells[r * width..(r + 1) * width];
            for (cell, &gc) in row.chunks_exact_mut(stride).zip(g) {
                let step = gc * x;
                let eta = if adagrad {
                    adagrad_rate(rate, &mut cell[1], step, direction)
                } else {
                    rate
                };
                cell[0] += direction * eta * step * inverse_scale;
            }
        }
        for (c, &gc) in g.iter().enumerate() {
            let eta = if adagrad {
                adagrad_rate(rate, &mut self.bias_squares[c], gc, direction)
            } else {
                rate
            };
            self.bias[c] += direction * eta * gc;
        }
    }
}

/// The model's state: the scale folded, rows read and set, mixing with another model.
impl Logistic {
    /// Fold the global scale into the stored weights (true weights unchanged).
    pub fn fold(&mut self) {
        let scale = self.scale;
        let stride = self.stride();
        self.cells.iter_mut().step_by(stride).for_each(|w| *w *= scale);
        self.scale = 1.0;
    }

    /// The true weights of a row (K-1 values; zeros beyond the rows).
    pub fn row(&self, id: u32) -> Vec<f64> {
        let cols = self.cols();
        let r = id as usize;
        if r >= self.rows {
            return vec![0.0; cols];
        }
        let stride = self.stride();
        let width = cols * stride;
        self.cells[r * width..(r + 1) * width]
            .iter()
            .step_by(stride)
            .map(|w| w * self.scale)
            .collect()
    }

    /// The biases of classes 1..K-1.
    pub fn bias(&self) -> &[f64] {
        &self.bias
    }

    /// Rows holding a nonzero weight or AdaGrad sum.
    pub fn nonzero_rows(&self) -> Vec<u32> {
        self.rows_where(false)
    }

    /// The rows a model file keeps: those holding a nonzero weight, AdaGrad sum or
    /// document frequency.
    pub fn saved_rows(&self) -> Vec<u32> {
        self.rows_where(true)
    }

    fn rows_where(&self, or_counted: bool) -> Vec<u32> {
        let width = self.cols() * self.stride();
        (0..self.rows)
            .filter(|&r| {
                (width > 0 && self.cells[r * width..(r + 1) * width].iter().any(|&v| v != 0.0))
                    || (or_counted && self.doc_freq.get(r).is_some_and(|&d| d != 0.0))
            })
            .map(|r| r as u32)
            .collect()
    }

    /// The stored state of some rows: (stored weights, AdaGrad sums), row-major (n x (K-1)).
    pub fn export_rows(&self, ids: &[u32]) -> (Vec<f64>, Vec<f64>) {
        let stride = self.stride();
        let width = self.cols() * stride;
        let mut weights = Vec::with_capacity(ids.len() * self.cols());
        let mut squares = Vec::new();
        for &id in ids {
            let row = &self.cells[id as usize * width..(id as usize + 1) * width];
            for cell in row.chunks_exact(stride) {
                weights.push(cell[0]);
                if stride == 2 {
                    squares.push(cell[1]);
                }
            }
        }
        (weights, squares)
    }

    /// (biases, their AdaGrad sums)
    pub fn export_bias(&self) -> (Vec<f64>, Vec<f64>) {
        (self.bias.clone(), self.bias_squares.clone())
    }

    /// Set the stored state of some rows (the rows exist); `squares` empty with a constant rate.
    pub fn import_rows(&mut self, ids: &[u32], weights: &[f64], squares: &[f64]) {
        let cols = self.cols();
        let stride = self.stride();
        for (i, &id) in ids.iter().enumerate() {
            let at = id as usize * cols * stride;
            for c in 0..cols {
                self.cells[at + c * stride] = weights[i * cols + c];
                if stride == 2 {
                    self.cells[at + c * stride + 1] = squares[i * cols + c];
                }
            }
        }
    }

    pub fn import_bias(&mut self, bias: &[f64], squares: &[f64]) {
        self.bias.copy_from_slice(bias);
        self.bias_squares.copy_from_slice(squares);
    }

    /// Parameter mixing: self becomes the average of self and other, weighted by the
    /// documents each learned (`mine`, `theirs`). `rows[i]` is self's row of other's row i
    /// (u32::MAX: none; the caller made room for the others), `classes[k]` self's class of
    /// other's class k (self has every class of other). Weights are compared as scores:
    /// other's class k, against its reference class, becomes self's class classes[k]
    /// against self's reference.
    pub fn mix(&mut self, other: &Logistic, rows: &[u32], classes: &[usize], mine: f64, theirs: f64) {
        if self.has_idf() && other.has_idf() {
            // the documents of both, counted exactly
            self.docs += other.docs;
            for (&to, &d) in rows.iter().zip(&other.doc_freq) {
                if let Some(slot) = self.doc_freq.get_mut(to as usize) {
                    *slot += d; // u32::MAX (no row here) finds none
                }
            }
        }
        let total = mine + theirs;
        if total <= 0.0 {
            return;
        }
        let (a, b) = (mine / total, theirs / total);
        self.fold();
        let cols = self.cols();
        // other's weights of self's classes: full vectors (other's reference at 0), re-pivoted
        // so that self's class 0 is at 0
        let mut theirs_of = vec![usize::MAX; self.n_classes]; // self class -> other class
        for (k, &c) in classes.iter().enumerate() {
            theirs_of[c] = k;
        }
        let full = |values: &[f64], k: usize| if k == 0 || k == usize::MAX { 0.0 } else { values[k - 1] };
        let other_cols = other.cols();
        let pivot = |values: &[f64]| -> Vec<f64> {
            let base = full(values, theirs_of[0]);
            (1..self.n_classes)
                .map(|c| {
                    if theirs_of[c] == usize::MAX {
                        0.0
                    } else {
                        full(values, theirs_of[c]) - base
                    }
                })
                .collect()
        };
        let stride = self.stride();
        self.cells.iter_mut().step_by(stride).for_each(|w| *w *= a);
        for (i, &to) in rows.iter().enumerate() {
            if to == u32::MAX || other_cols == 0 {
                continue;
            }
            let values: Vec<f64> = other.row(i as u32);
            let at = to as usize * cols * stride;
            for (c, v) in pivot(&values).into_iter().enumerate() {
                self.cells[at + c * stride] += b * v;
            }
            if stride == 2 && other.stride() == 2 {
                let (_, sums) = other.export_rows(&[i as u32]);
                for (k, &s) in sums.iter().enumerate() {
                    let c = classes[k + 1];
                    if c >= 1 {
                        self.cells[at + (c - 1) * stride + 1] += s;
                    }
                }
            }
        }
        let their_bias = pivot(&other.bias);
        for (c, v) in their_bias.into_iter().enumerate() {
            self.bias[c] = a * self.bias[c] + b * v;
        }
        for (k, &s) in other.bias_squares.iter().enumerate() {
            let c = classes[k + 1];
            if c >= 1 {
                self.bias_squares[c - 1] += s;
            }
        }
        self.steps += other.steps;
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        (self.cells.capacity() + self.bias.capacity() + self.bias_squares.capacity() + self.doc_freq.capacity()) * 8
    }
}

/// omega of a document of class c with sample weight `weight` under balanced class weights
/// (scikit-learn's "balanced", online): weight N / (K N_c), N and N_c the documents learned
/// so far (`class_docs`, this one counted), K the classes that have any: a rare class weighs
/// as much in total as a common one.
pub fn balanced_omega(class_docs: &[f64], c: usize, weight: f64) -> f64 {
    let total: f64 = class_docs.iter().sum();
    let k = class_docs.iter().filter(|&&n| n > 0.0).count() as f64;
    weight * total / (k * class_docs[c])
}

/// AdaGrad's rate for a step of gradient `step` on a weight whose sum of squared gradients
/// is `sum`: the sum is updated first (learning adds step^2, unlearning takes it out), and
/// the rate is that of the learning step, rate / sqrt(G0 + the sum with step^2 in it).
#[inline]
fn adagrad_rate(rate: f64, sum: &mut f64, step: f64, direction: f64) -> f64 {
    let squared = step * step;
    if direction > 0.0 {
        *sum += squared;
        rate / (ADAGRAD_G0 + *sum).sqrt()
    } else {
        let with_step = *sum;
        *sum = (*sum - squared).max(0.0);
        rate / (ADAGRAD_G0 + with_step).sqrt()
    }
}

/// Check the arrays of a saved model (`LogisticCore.load`) against its `k` classes and
/// `n_rows` feature ids: one weight per row and class but the first (and, with AdaGrad, one
/// sum per weight), one bias and bias sum per class but the first, weights finite, sums
/// finite and >= 0, the scale in (0, 1]. Err names the first thing wrong.
pub fn check_state(
    schedule: Schedule,
    k: usize,
    n_rows: usize,
    weights: &[f64],
    squares: &[f64],
    bias: &(Vec<f64>, Vec<f64>),
    scale: f64,
) -> Result<(), &'static str> {
    let cols = k.saturating_sub(1);
    if weights.len() != n_rows * cols
        || (schedule == Schedule::AdaGrad && squares.len() != weights.len())
        || (schedule == Schedule::Constant && !squares.is_empty())
    {
        return Err("the weight arrays do not match the feature ids and classes");
    }
    if bias.0.len() != cols || bias.1.len() != cols {
        return Err("one bias (and AdaGrad sum) per class but the first");
    }
    let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
    if !(finite(weights) && finite(&bias.0) && squares.iter().chain(&bias.1).all(|s| s.is_finite() && *s >= 0.0)) {
        return Err("weights must be finite and AdaGrad sums finite and >= 0");
    }
    if !(scale.is_finite() && scale > 0.0 && scale <= 1.0) {
        return Err("scale must be in (0, 1]");
    }
    Ok(())
}

/// Check a saved IDF (`LogisticCore.load`): N finite and >= 0, one document frequency per
/// saved row, each finite and >= 0 (above N after an unlearn of a document never learned:
/// see the module docstring). Err names what is wrong.
pub fn check_doc_freqs(docs: f64, freqs: &[f64], n_rows: usize) -> Result<(), &'static str> {
    if !(docs.is_finite() && docs >= 0.0) {
        return Err("the documents counted must be a finite number >= 0");
    }
    if freqs.len() != n_rows {
        return Err("one document frequency per saved row");
    }
    if !freqs.iter().all(|&d| d.is_finite() && d >= 0.0) {
        return Err("document frequencies must be finite and >= 0");
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A model of `classes` classes with rows for features 0..rows (also src/replay.rs's tests).
    pub(crate) fn with_classes(settings: Settings, classes: usize, rows: usize) -> Logistic {
        let mut m = Logistic::new(settings);
        for _ in 0..classes {
            m.add_class();
        }
        m.reserve_rows(rows);
        m
    }

    fn settings(schedule: Schedule) -> Settings {
        Settings {
            rate: 0.5,
            schedule,
            l2: 0.0,
            margin: None,
            sublinear: false,
            idf_power: 0.0,
            normalize: false,
        }
    }

    #[test]
    fn saved_arrays_and_parameters_are_checked() {
        let bias = (vec![0.0], vec![0.0]);
        assert_eq!(
            check_state(Schedule::AdaGrad, 2, 2, &[1.0, 2.0], &[0.0, 1.0], &bias, 1.0),
            Ok(())
        );
        assert!(check_state(Schedule::AdaGrad, 2, 2, &[1.0, 2.0], &[], &bias, 1.0).is_err());
        assert!(check_state(Schedule::Constant, 2, 1, &[f64::NAN], &[], &bias, 1.0).is_err());
        assert!(check_state(Schedule::Constant, 2, 1, &[1.0], &[], &bias, 0.0).is_err());
        assert!(check_parameters(0.5, 0.0, None, 2.0).is_ok());
        assert!(check_parameters(0.5, 2.0, None, 0.0).is_err());
        assert!(check_parameters(0.5, 0.0, Some(-1.0), 0.0).is_err());
        assert!(check_parameters(0.5, 0.0, None, -1.0).is_err());
        assert!(check_parameters(0.5, 0.0, None, f64::NAN).is_err());
    }

    fn binary(schedule: Schedule) -> Logistic {
        with_classes(settings(schedule), 2, 4)
    }

    #[test]
    fn documents_are_transformed_before_scoring_and_stepping() {
        let mut m = binary(Schedule::Constant);
        m.settings.sublinear = true;
        m.settings.normalize = true;
        let prepared = m.prepared(&[0, 1], &[3.0, -4.0]);
        let (a, b) = (4f64.ln(), -(5f64.ln()));
        let norm = (a * a + b * b).sqrt();
        assert!((prepared[0] - a / norm).abs() < 1e-15 && (prepared[1] - b / norm).abs() < 1e-15);
        m.learn(&[0, 1], &[3.0, -4.0], 1, 1.0, None, 1.0);
        assert!((m.row(0)[0] - 0.25 * a / norm).abs() < 1e-15);
        assert_eq!(m.prepared(&[0, 1], &[0.0, 0.0]).as_ref(), &[0.0, 0.0]); // no norm to divide by
    }

    #[test]
    fn the_idf_counts_documents_before_their_step_and_leaves_out_features_never_counted() {
        let idf = Settings {
            idf_power: 2.0,
            ..settings(Schedule::Constant)
        };
        let mut m = with_classes(idf, 2, 4);
        m.learn(&[0, 1], &[1.0, 1.0], 1, 1.0, None, 1.0);
        m.learn(&[0], &[1.0], 0, 1.0, None, 1.0);
        assert_eq!((m.docs, m.doc_freqs(&[0, 1, 2, 9])), (2.0, vec![2.0, 1.0, 0.0, 0.0]));
        // idf = ln((1 + N) / (1 + D)) + 1: N = 2, D = 2 for feature 0 and 1 for feature 1
        let idf1 = (3f64 / 2.0).ln() + 1.0;
        let prepared = m.prepared(&[0, 1, 2, 9], &[2.0, 3.0, 5.0, 7.0]);
        let want = [2.0, 3.0 * idf1 * idf1, 0.0, 0.0];
        for (got, want) in prepared.iter().zip(want) {
            assert!((got - want).abs() < 1e-14, "{got} vs {want}");
        }
        // the second pass of a batch does not count again; unlearning takes the document out
        m.learn(&[0], &[1.0], 0, 1.0, None, 0.0);
        assert_eq!(m.docs, 2.0);
        m.unlearn(&[0, 1], &[1.0, 1.0], 1, 1.0, 1.0);
        assert_eq!((m.docs, m.doc_freqs(&[0, 1])), (1.0, vec![1.0, 0.0]));
        assert!(m.nonzero_rows().contains(&0));
    }

    #[test]
    fn a_constant_step_is_the_textbook_update() {
        let mut m = binary(Schedule::Constant);
        // w = 0: P(1|x) = 1/2, so g = 1 - 1/2 for a document of class 1
        m.learn(&[0, 2], &[1.0, 2.0], 1, 1.0, None, 1.0);
        assert_eq!(m.row(0), vec![0.5 * 0.5 * 1.0]);
        assert_eq!(m.row(2), vec![0.5 * 0.5 * 2.0]);
        assert_eq!(m.row(1), vec![0.0]);
        assert_eq!(m.bias(), &[0.25]);
        let s = m.scores(&[0, 2], &[1.0, 2.0]);
        assert!((s[1] - (0.25 + 0.25 + 1.0)).abs() < 1e-15);
        let lp = m.log_posterior(&[0, 2], &[1.0, 2.0]);
        assert!((lp[1] - -(1.0 + (-1.5f64).exp()).ln()).abs() < 1e-15);
    }

    #[test]
    fn adagrad_scales_each_weight_by_its_own_history() {
        let mut m = binary(Schedule::AdaGrad);
        m.learn(&[0], &[1.0], 1, 1.0, None, 1.0);
        let g: f64 = 0.5;
        let first = 0.5 * g / (ADAGRAD_G0 + g * g).sqrt();
        assert!((m.row(0)[0] - first).abs() < 1e-15);
        // a second step on feature 0 and a first on feature 1 move by different rates
        let p = 1.0 / (1.0 + (-(first + first)).exp()); // weight + bias
        m.learn(&[0, 1], &[1.0, 1.0], 1, 1.0, None, 1.0);
        let g2 = 1.0 - p;
        let expect0 = first + 0.5 * g2 / (ADAGRAD_G0 + g * g + g2 * g2).sqrt();
        let expect1 = 0.5 * g2 / (ADAGRAD_G0 + g2 * g2).sqrt();
        assert!((m.row(0)[0] - expect0).abs() < 1e-15);
        assert!((m.row(1)[0] - expect1).abs() < 1e-15);
    }

    #[test]
    fn decay_through_the_global_scale_equals_decaying_every_weight() {
        let mut lazy = binary(Schedule::Constant);
        lazy.settings.l2 = 0.1;
        let mut eager = [0.0f64; 4];
        let mut bias = 0.0;
        let docs: [(&[u32], usize); 4] = [(&[0, 1], 1), (&[1, 2], 0), (&[0, 3], 1), (&[2], 0)];
        for _ in 0..50 {
            for &(ids, y) in &docs {
                let values = vec![1.0; ids.len()];
                lazy.learn(ids, &values, y, 1.0, None, 1.0);
                eager.iter_mut().for_each(|w| *w *= 1.0 - 0.5 * 0.1);
                let s: f64 = ids.iter().map(|&i| eager[i as usize]).sum::<f64>() + bias;
                let g = f64::from(u8::from(y == 1)) - 1.0 / (1.0 + (-s).exp());
                for &i in ids {
                    eager[i as usize] += 0.5 * g;
                }
                bias += 0.5 * g;
            }
        }
        for i in 0..4 {
            assert!((lazy.row(i)[0] - eager[i as usize]).abs() < 1e-12);
        }
        assert!((lazy.bias()[0] - bias).abs() < 1e-12);
    }

    #[test]
    fn the_margin_skips_documents_already_right() {
        let mut m = binary(Schedule::Constant);
        m.settings.margin = Some(1.0);
        for _ in 0..20 {
            m.learn(&[0], &[1.0], 1, 1.0, None, 1.0);
        }
        let before = m.row(0);
        assert!(m.scores(&[0], &[1.0])[1] >= 1.0);
        assert!(!m.learn(&[0], &[1.0], 1, 1.0, None, 1.0).moved());
        assert_eq!(m.row(0), before);
        assert_eq!(m.steps, 21);
        assert!(m.learn(&[0], &[1.0], 0, 1.0, None, 1.0).moved());
    }

    #[test]
    fn softmax_over_three_classes_sums_to_one_and_learns_each() {
        let mut m = Logistic::new(settings(Schedule::AdaGrad));
        m.add_class();
        m.reserve_rows(3);
        m.add_class();
        m.learn(&[0], &[1.0], 1, 1.0, None, 1.0);
        m.add_class(); // a third class arrives later: its weights start at zero
        for _ in 0..30 {
            m.learn(&[0], &[1.0], 1, 1.0, None, 1.0);
            m.learn(&[1], &[1.0], 2, 1.0, None, 1.0);
            m.learn(&[2], &[1.0], 0, 1.0, None, 1.0);
        }
        for (id, want) in [(0u32, 1usize), (1, 2), (2, 0)] {
            let lp = m.log_posterior(&[id], &[1.0]);
            let total: f64 = lp.iter().map(|v| v.exp()).sum();
            assert!((total - 1.0).abs() < 1e-12);
            assert_eq!(crate::nb::argmax(&lp), want);
        }
    }

    #[test]
    fn unlearning_right_after_learning_nearly_restores_the_scores() {
        let mut m = binary(Schedule::Constant);
        m.settings.rate = 0.01;
        for i in 0..40u32 {
            m.learn(&[i % 4], &[1.0], (i % 2) as usize, 1.0, None, 1.0);
        }
        let x = ([0u32, 1, 2], [1.0, 1.0, 1.0]);
        let before = m.scores(&x.0, &x.1)[1];
        m.learn(&x.0, &x.1, 1, 1.0, None, 1.0);
        let moved = m.scores(&x.0, &x.1)[1] - before;
        m.unlearn(&x.0, &x.1, 1, 1.0, 1.0);
        let left = m.scores(&x.0, &x.1)[1] - before;
        assert!(moved > 0.01);
        // the gradient changed by at most p(1-p) * moved <= moved / 4 between the two steps
        assert!(left.abs() <= moved * moved, "{left} vs {moved}");
    }

    /// Everything a score reads: true weights and AdaGrad sums of every row, biases and
    /// their sums, and the IDF's counts.
    fn state(m: &Logistic) -> Vec<f64> {
        let ids: Vec<u32> = (0..m.rows() as u32).collect();
        let mut out: Vec<f64> = ids.iter().flat_map(|&id| m.row(id)).collect();
        out.extend(m.export_rows(&ids).1);
        let (bias, squares) = m.export_bias();
        out.extend(bias);
        out.extend(squares);
        out.push(m.docs);
        out.extend(m.doc_freqs(&ids));
        out
    }

    #[test]
    fn undo_right_after_learn_gives_every_weight_back() {
        for schedule in [Schedule::Constant, Schedule::AdaGrad] {
            for (l2, idf_power, margin) in [
                (0.0, 0.0, None),
                (0.2, 0.0, None),
                (0.0, 2.0, None),
                (0.1, 1.0, Some(0.3)),
            ] {
                let settings = Settings {
                    l2,
                    margin,
                    idf_power,
                    sublinear: true,
                    normalize: true,
                    ..settings(schedule)
                };
                let mut m = with_classes(settings, 3, 6);
                for i in 0..40u32 {
                    m.learn(&[i % 6, (i + 1) % 6], &[1.0, 2.0], (i % 3) as usize, 1.0, None, 1.0);
                }
                let x = ([0u32, 2, 5], [1.0, 3.0, 0.5]);
                for y in 0..3 {
                    let before = state(&m);
                    let scores = m.scores(&x.0, &x.1);
                    let step = m.learn(&x.0, &x.1, y, 0.7, None, 0.7);
                    assert!(m.check_step(&step).is_ok());
                    assert_eq!(step.decay, 1.0 - 0.5 * l2);
                    m.undo(&x.0, &x.1, &step, 0.7);
                    for (a, b) in state(&m).iter().zip(&before) {
                        assert!(
                            (a - b).abs() <= 1e-12 * b.abs().max(1.0),
                            "{schedule:?} {l2} {idf_power}: {a} vs {b}"
                        );
                    }
                    for (a, b) in m.scores(&x.0, &x.1).iter().zip(&scores) {
                        assert!((a - b).abs() <= 1e-12, "{a} vs {b}");
                    }
                    assert!(m.scale > 0.0 && m.scale <= 1.0);
                }
            }
        }
    }

    #[test]
    fn a_provisional_step_leaves_the_schedule_alone_and_undoes_exactly_later() {
        for schedule in [Schedule::Constant, Schedule::AdaGrad] {
            let mut provisional = settings(schedule);
            (provisional.margin, provisional.idf_power, provisional.normalize) = (Some(0.1), 1.0, true);
            let mut m = with_classes(provisional, 2, 6);
            for i in 0..30u32 {
                m.learn(&[i % 6, (i + 2) % 6], &[1.0, 1.0], (i % 2) as usize, 1.0, None, 1.0);
            }
            let x = ([1u32, 3, 4], [1.0, 1.0, 1.0]);
            let (steps, docs) = (m.steps, m.docs);
            let squares = m.export_rows(&x.0).1;
            let before = state(&m);
            let step = m.provisional(&x.0, &x.1, 1, 0.3, 0.002);
            assert!(step.moved() && step.decay == 1.0);
            assert_eq!((m.steps, m.docs), (steps, docs));
            assert_eq!(m.export_rows(&x.0).1, squares, "{schedule:?}: AdaGrad's sums moved");
            // the move is rate * g * x on every weight of the document (x prepared: IDF, norm)
            let prepared = m.prepared(&x.0, &x.1).into_owned();
            let stored = m.export_rows(&x.0).0;
            let mut m2 = m.clone();
            m2.undo_provisional(&x.0, &x.1, &step, 0.002);
            for ((w, w0), v) in stored.iter().zip(m2.export_rows(&x.0).0).zip(&prepared) {
                assert!((w - w0 - 0.002 * step.g[0] * v).abs() < 1e-15);
            }
            // lessons after it, then its undo: the same as those lessons' moves alone
            let mut alone = m.clone();
            alone.undo_provisional(&x.0, &x.1, &step, 0.002);
            assert!(state(&alone).iter().zip(&before).all(|(a, b)| (a - b).abs() <= 1e-15));
            let later = ([2u32, 3], [1.0, 1.0]);
            let s1 = m.learn(&later.0, &later.1, 0, 1.0, None, 1.0);
            m.undo(&later.0, &later.1, &s1, 1.0);
            m.undo_provisional(&x.0, &x.1, &step, 0.002);
            for (a, b) in state(&m).iter().zip(&before) {
                assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{schedule:?}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn undo_survives_a_fold_of_the_scale() {
        let mut m = binary(Schedule::AdaGrad);
        m.settings.l2 = 1.0; // decay 1/2 per step: 2^-333 < MIN_SCALE, so the 333rd folds
        for i in 0..332u32 {
            m.learn(&[i % 4], &[1.0], (i % 2) as usize, 1.0, None, 1.0);
        }
        let before = state(&m);
        let step = m.learn(&[0, 1], &[1.0, 1.0], 1, 1.0, None, 1.0);
        assert_eq!(m.scale, 1.0); // folded within the step
        m.undo(&[0, 1], &[1.0, 1.0], &step, 1.0);
        for (a, b) in state(&m).iter().zip(&before) {
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1e-300), "{a} vs {b}");
        }
    }

    #[test]
    fn a_step_this_model_could_not_have_taken_is_refused() {
        let mut m = binary(Schedule::Constant);
        let step = m.learn(&[0], &[1.0], 1, 1.0, None, 1.0);
        assert!(m.check_step(&step).is_ok());
        assert!(m
            .check_step(&Step {
                g: vec![0.1, 0.2],
                decay: 1.0
            })
            .is_err()); // two classes: one g
        assert!(m
            .check_step(&Step {
                g: vec![f64::NAN],
                decay: 1.0
            })
            .is_err());
        assert!(m
            .check_step(&Step {
                g: vec![0.1],
                decay: 0.5
            })
            .is_err()); // no L2: no decay
        assert!(m
            .check_step(&Step {
                g: Vec::new(),
                decay: 1.0
            })
            .is_ok()); // the margin was met
    }

    #[test]
    fn mixing_two_halves_weighs_by_documents() {
        let mut a = binary(Schedule::Constant);
        let mut b = binary(Schedule::Constant);
        a.learn(&[0], &[1.0], 1, 1.0, None, 1.0);
        b.learn(&[0], &[1.0], 0, 1.0, None, 1.0);
        b.learn(&[1], &[1.0], 0, 1.0, None, 1.0);
        b.learn(&[1], &[1.0], 0, 1.0, None, 1.0);
        let (wa, wb) = (a.row(0)[0], b.row(0)[0]);
        a.mix(&b, &[0, 1, 2, 3], &[0, 1], 1.0, 3.0);
        assert!((a.row(0)[0] - (wa + 3.0 * wb) / 4.0).abs() < 1e-15);
        assert_eq!(a.steps, 4);
    }

    #[test]
    fn mixing_repivots_another_class_order() {
        // b learned the classes in the other order: its weights are the negatives
        let mut a = binary(Schedule::Constant);
        let mut b = binary(Schedule::Constant);
        a.learn(&[0], &[1.0], 1, 1.0, None, 1.0);
        b.learn(&[0], &[1.0], 0, 1.0, None, 1.0);
        let (wa, wb) = (a.row(0)[0], b.row(0)[0]);
        assert!((wa + wb).abs() < 1e-15);
        a.mix(&b, &[0, 1, 2, 3], &[1, 0], 1.0, 1.0);
        assert!((a.row(0)[0] - wa).abs() < 1e-15);
        assert!((a.bias()[0] - 0.25).abs() < 1e-15);
    }
}
