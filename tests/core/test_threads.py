"""The core without the GIL: a model's predictions count a raw message (parse, tokenize)
with the GIL released and without holding the model (src/python/reader.rs, `counted_apart`),
so threads classify at once, and a thread may learn meanwhile. What is checked: the GIL is
really released; predictions made by many threads are those made by one, to the last bit;
learning while others classify neither fails nor changes what is learned; a prediction's
reading still serves the lesson that follows when other threads read in between."""

from __future__ import annotations

import random
import threading
import time

import pytest

from streamnb import EmailNB, LogisticRegression, MultinomialNB, Tokenizer
from streamnb.features.ngrams import ByteNgrams
from streamnb.filter.decision import SpamFilter
from streamnb.filter.evidence import evidence
from streamnb.models import Fusion

WORDS = ("cheap pills offer buy now winner prize meeting report noon lunch project budget invoice "
         "schedule viagra casino loan credit urgent account verify password friday agenda notes").split()


def message(rng: random.Random, label: str, words: int = 80) -> bytes:
    """A raw email whose body leans to its label's half of WORDS."""
    half = WORDS[:13] if label == "spam" else WORDS[13:]
    body = " ".join(rng.choice(half if rng.random() < 0.7 else WORDS) for _ in range(words))
    subject = " ".join(rng.choice(half) for _ in range(4))
    return (f"From: someone{rng.randrange(50)}@example.{rng.choice(['com', 'net', 'org'])}\r\n"
            f"To: you@example.org\r\nSubject: {subject}\r\nMessage-ID: <{rng.getrandbits(64):x}@example>\r\n"
            f"Content-Type: text/plain\r\n\r\n{body}\r\n").encode()


def stream(n: int, seed: int = 0) -> list[tuple[bytes, str]]:
    rng = random.Random(seed)
    return [(message(rng, label), label) for label in (rng.choice(["spam", "ham"]) for _ in range(n))]


MODELS = {
    "fusion": lambda: Fusion(EmailNB(), LogisticRegression(0.05, tokenizer=ByteNgrams(4), n_buckets=1 << 16)),
    "email": EmailNB,
    "multinomial": lambda: MultinomialNB(tokenizer=Tokenizer()),
    "logistic": lambda: LogisticRegression(0.05, tokenizer=ByteNgrams(4), n_buckets=1 << 16),
}


def trained(kind: str, messages):
    model = MODELS[kind]()
    for raw, label in messages:
        model.learn_one(raw.decode() if kind == "multinomial" else raw, label)
    return model


def as_input(kind: str, raw: bytes):
    return raw.decode() if kind == "multinomial" else raw


def in_threads(work, threads: int):
    """Run work(i) for i in range(threads) at once; re-raise the first error."""
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def run(i):
        try:
            start.wait()
            work(i)
        except BaseException as error:  # handed to the test
            errors.append(error)

    pool = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    if errors:
        raise errors[0]


def test_a_prediction_releases_the_gil_while_it_reads_the_message():
    model = trained("email", stream(40))
    warm_up, big = (message(random.Random(seed), "spam", words=400_000) for seed in (1, 2))  # some 3 MB each
    inside, counted, done = threading.Event(), [0], threading.Event()

    def count():
        while not done.is_set():
            if inside.is_set():
                counted[0] += 1

    other = threading.Thread(target=count)
    other.start()
    try:
        model.predict_proba_one(warm_up)
        inside.set()
        start = time.perf_counter()
        model.predict_proba_one(big)
        seconds = time.perf_counter() - start
        inside.clear()
    finally:
        done.set()
        other.join()
    assert seconds > 0.005
    # held throughout, the GIL would let the other thread count only between the two calls
    assert counted[0] > 1000, (counted[0], seconds)


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_predictions_of_many_threads_are_those_of_one(kind):
    messages = stream(120)
    model = trained(kind, messages[:80])
    checked = [as_input(kind, raw) for raw, _ in messages[80:]]
    expected = [model.predict_log_proba_one(x) for x in checked]
    seen: dict[int, list] = {}

    def work(i):
        order = list(range(len(checked)))
        random.Random(i).shuffle(order)
        seen[i] = [(j, model.predict_log_proba_one(checked[j])) for j in order]

    in_threads(work, 6)
    for results in seen.values():
        for j, log_proba in results:
            assert log_proba == expected[j]  # to the last bit


@pytest.mark.parametrize("kind", ["fusion", "email", "logistic"])
def test_a_thread_learns_while_others_classify(kind):
    messages = stream(200, seed=2)
    first, lessons, checked = messages[:40], messages[40:120], [raw for raw, _ in messages[120:]]
    model = trained(kind, first)
    spam_filter = SpamFilter(model)
    verdicts: list[str] = []

    def work(i):
        if i == 0:
            for raw, label in lessons:
                model.learn_one(raw, label)
        else:
            for raw in checked:
                verdicts.append(spam_filter.classify(raw, explain=i % 2 == 0).label)

    in_threads(work, 5)
    assert len(verdicts) == 4 * len(checked)
    # what was learned is what one thread learns alone
    alone = trained(kind, first + lessons)
    assert [model.predict_log_proba_one(raw) for raw in checked] == \
        [alone.predict_log_proba_one(raw) for raw in checked]


def test_a_lesson_after_its_prediction_is_the_same_when_other_messages_are_read_in_between():
    """Logistic regression reuses a prediction's reading (and dot products) for the lesson that
    follows; with other threads' messages read in between, the lesson is still exact."""
    messages = stream(60, seed=3)
    plain, interleaved = MODELS["logistic"](), MODELS["logistic"]()
    for raw, label in messages:
        plain.learn_one(raw, label)
    for i, (raw, label) in enumerate(messages):
        interleaved.predict_proba_one(raw)
        interleaved.predict_proba_one(messages[(i * 7 + 3) % len(messages)][0])  # another thread's
        interleaved.predict_many([m for m, _ in messages[:3]])
        interleaved.learn_one(raw, label)
    assert interleaved.log_linear().weights.tolist() == plain.log_linear().weights.tolist()


def test_logistic_regression_explains_a_verdict_with_its_own_weights():
    messages = stream(100, seed=4)
    model = LogisticRegression(0.05, tokenizer=ByteNgrams(4), n_buckets=1 << 16, idf_power=0)
    for message_, label in messages:
        model.learn_one(message_, label)
    raw = messages[0][0]
    split = model.contributions_one(raw)
    log_proba = model.predict_log_proba_one(raw)
    spam, ham = split.classes.index("spam"), split.classes.index("ham")
    log_odds = split.rest[spam] - split.rest[ham] + float((split.terms[:, spam] - split.terms[:, ham]).sum())
    assert log_odds == pytest.approx(log_proba["spam"] - log_proba["ham"], abs=1e-9)
    # feature by feature, the log-linear view's weights times the document's value as the
    # model reads it (binary byte n-grams, no IDF, L2-normalised: one value for every feature)
    view = model.log_linear()
    rows = {feature: i for i, feature in enumerate(view.features)}
    pos, neg = view.classes.index("spam"), view.classes.index("ham")
    clues = evidence(model, raw, k=10)
    assert len(clues) == 10
    values = [weight / (view.weights[rows[feature], pos] - view.weights[rows[feature], neg]) for feature, weight in clues]
    assert values[0] > 0 and values == pytest.approx([values[0]] * len(values), rel=1e-9)


def test_a_message_read_with_the_gil_released_gives_the_document_read_with_it_held():
    """The same documents as a batch (read on several threads) and as a mapping of the same
    features: counting apart, then looking up, changes nothing of what a model sees."""
    messages = stream(60, seed=5)
    model = trained("multinomial", messages[:40])
    texts = [raw.decode() for raw, _ in messages[40:]]
    one_by_one = [model.predict_log_proba_one(text) for text in texts]
    assert one_by_one == model.predict_log_proba_many(texts)
    assert one_by_one == [model.predict_log_proba_one(dict(model.tokenizer(text))) for text in texts]
