"""Several processes serving one models folder (``streamnb serve --workers N`` without
``--store``, or two services on one folder): each reads the lessons the others journaled
before it scores, appends its own after them, and nothing acknowledged is lost.

In process: two :class:`UserModel` entries on one model file stand for two processes.
End to end: ``--workers 2`` on one port.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import random
import re
import threading
import time
from pathlib import Path

import pytest

import streamnb
from streamnb.filter.spam_filter import SpamFilter
from streamnb.service import cli, journal, userfiles
from streamnb.service.journal import FORGET, LEARN, Lesson, journal_path, read_journal
from streamnb.service.protocol import SITE_NAME, site_model_path
from streamnb.service.settings import RuleOptions, Settings
from streamnb.service.site import Scored
from streamnb.service.users import ModelCache, UserModel
from tests.service.test_redis_store import checks_together, pids, until
from tests.service.test_serve import SERVE_ARGS, Expected, assert_answers, check, ham, recorded, spam, tell_raw
from tests.service.test_serve_faults import LEARNED, learned, lesson, once_each


def settings_for(models: Path) -> Settings:
    return Settings(models=models, new_model=lambda: cli.build_model(SERVE_ARGS), rule=RuleOptions("logodds"),
                    allow_tell=True, observe=False)


def learn(i: int) -> Lesson:
    """Lesson i of tests/service/test_serve_faults.py (spam when odd, ham when even), to learn."""
    raw, label = lesson(i)
    return Lesson(LEARN, label, raw)


def alice_files(tmp_path: Path) -> tuple[Path, Settings, Path]:
    """A models folder, the settings of a service on it, and alice's model file (not made yet)."""
    models = tmp_path / "models"
    models.mkdir()
    return models, settings_for(models), models / "alice.snb"


def test_a_second_process_reads_the_lessons_the_first_journaled_without_reading_the_model_again(tmp_path):
    """B's check applies what A appended to the journal (the model object B holds stays, the
    file is not rewritten); B's lesson goes after A's in the same journal; A then reads B's;
    a fold by A makes B read the files again; every lesson is in the file once."""
    models, settings, path = alice_files(tmp_path)

    async def scenario() -> None:
        a = UserModel("alice", path, settings)
        b = UserModel("alice", path, settings)
        assert await a.tell(Lesson(LEARN, *reversed(lesson(0)))) is True
        assert await b.classify(ham(50), False) is not None
        held, file_inode = b.model, path.stat().st_ino
        for i in range(1, 5):
            assert await a.tell(learn(i)) is True
            assert await b.classify(ham(50), False) is not None
            assert b.model is held and learned(b.model) == once_each(range(i + 1)), i
        assert await b.tell(learn(5)) is True
        assert await b.tell(Lesson(FORGET, None, lesson(0)[0])) is True
        assert path.stat().st_ino == file_inode, "no process folded the journal meanwhile"
        assert [entry.action for entry in read_journal(journal_path(path)).lessons] == [LEARN] * 6 + [FORGET]
        assert await a.classify(ham(50), False) is not None
        assert learned(a.model) == learned(b.model) == once_each(range(1, 6))
        await a.fold()
        assert not os.path.exists(journal_path(path))
        assert await b.classify(ham(50), False) is not None
        assert b.model is not held and b.pending == 0  # read again from the folded file
        assert await b.tell(learn(6)) is True
        assert await a.close() == 0 and await b.close() == 0

    asyncio.run(scenario())
    assert learned(streamnb.load(path)) == once_each(range(1, 7))
    assert not os.path.exists(journal_path(path))


def test_nothing_is_appended_after_a_record_another_process_left_torn(tmp_path):
    """A's append died halfway (its process killed): B, about to append, saves the model
    (the file plus the whole records) first and starts a new journal, so its lesson is never
    hidden behind the torn record."""
    models, settings, path = alice_files(tmp_path)

    async def scenario() -> None:
        a = UserModel("alice", path, settings)
        b = UserModel("alice", path, settings)
        for i in range(3):
            assert await a.tell(learn(i)) is True
        with open(journal_path(path), "ab") as torn:
            torn.write(b"SNBJL\x04\x00\x00\x10\x00spam" + b"x" * 100)  # a record's start, never finished
        assert await b.classify(ham(50), False) is not None
        assert b.save_first and learned(b.model) == once_each(range(3))
        assert await b.tell(learn(3)) is True
        contents = read_journal(journal_path(path))
        assert len(contents.lessons) == 1 and contents.size == contents.end  # a new journal, whole
        assert learned(streamnb.load(path)) == once_each(range(3))
        await b.close()

    asyncio.run(scenario())
    assert learned(streamnb.load(path)) == once_each(range(4))


def test_the_site_model_is_followed_too(tmp_path):
    """Two processes, each with the user's model and the site model: a lesson told through one
    is in the other's site model at its next check."""
    models = tmp_path / "models"
    models.mkdir()
    settings = settings_for(models)

    async def scenario() -> None:
        site_a, site_b = (UserModel(SITE_NAME, site_model_path(models), settings) for _ in range(2))
        alice_a = UserModel("alice", models / "alice.snb", settings, site_a)
        bob_b = UserModel("bob", models / "bob.snb", settings, site_b)
        assert await bob_b.tell(Lesson(LEARN, "ham", ham(1))) is True
        assert await site_b.classify(ham(50), False) is not None
        for i in range(2, 6):
            raw, label = lesson(i)
            assert await alice_a.tell(Lesson(LEARN, label, raw)) is True
        assert await site_b.classify(ham(50), False) is not None
        assert learned(site_b.model) == {1: {"ham": 1.0}, **once_each(range(2, 6))}
        for entry in (alice_a, bob_b, site_a, site_b):
            assert await entry.close() == 0

    asyncio.run(scenario())
    assert learned(streamnb.load(site_model_path(models))) == {1: {"ham": 1.0}, **once_each(range(2, 6))}


def test_workers_on_a_models_folder_answer_with_every_lesson_and_fold_once(serve, tmp_path):
    """--workers 2 on a models folder: after each lesson told (through either worker), the
    checks both answer are the in-process model's, and the model file is not rewritten
    meanwhile; at the stop the file holds every lesson once, the journal gone."""
    models = tmp_path / "models"
    server = serve(models, "--allow-tell", "--no-observe", "--workers", "2")
    workers = {int(p) for p in re.search(r"with 2 workers \(pids (\d+) (\d+)\)", server.text(wait=0)).groups()}
    site = Expected()
    alice = Expected(site)
    probe = spam(900)
    stamps = set()
    for i in range(12):
        raw, label = lesson(i)
        assert alice.tell(LEARN, label, raw)
        assert tell_raw(server.port, raw, label) == LEARNED
        for reply in checks_together(server.port, probe):
            assert_answers(reply, alice.verdict(probe))  # whichever worker answered knows the lesson
        stamps.add((models / "alice.snb").stat().st_ino)
    assert len(stamps) == 1, "a worker rewrote the model file between lessons"
    until(lambda: pids(r"serve\[(\d+)\] INFO: SYMBOLS ", server.text(wait=0)) == workers)  # both answered
    server.stop()
    assert learned(streamnb.load(models / "alice.snb")) == once_each(range(12))
    assert learned(streamnb.load(site_model_path(models))) == once_each(range(12))
    assert not os.path.exists(journal_path(models / "alice.snb"))


def test_workers_that_observe_lose_no_lesson_told_among_checks(serve, tmp_path):
    """The default, observing workers: lessons told while both workers check and observe mail
    (and save what they observed) are each in the model file once at the stop; every message
    checked after that is observed in the site model's file (each worker observes again, in
    the files the other saved, what it observed since its own last save)."""
    models = tmp_path / "models"
    server = serve(models, "--allow-tell", "--workers", "2", "--snapshot-seconds", "0.2")
    errors: list[BaseException] = []

    def checking() -> None:
        try:
            for i in range(40):
                assert b"EX_OK" in check(server.port, ham(200 + i))
        except BaseException as error:  # noqa: BLE001 (reported below)
            errors.append(error)

    threads = [threading.Thread(target=checking) for _ in range(3)]
    for thread in threads:
        thread.start()
    for i in range(16):
        raw, label = lesson(i)
        assert tell_raw(server.port, raw, label) == LEARNED
    for thread in threads:
        thread.join()
    assert not errors, errors

    def observing(k: int) -> None:  # the models exist now: each check is observed
        try:
            for i in range(k, 120, 3):
                assert b"EX_OK" in check(server.port, ham(300 + i))
        except BaseException as error:  # noqa: BLE001 (reported below)
            errors.append(error)

    threads = [threading.Thread(target=observing, args=(k,)) for k in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    server.stop()
    assert learned(streamnb.load(models / "alice.snb")) == once_each(range(16))
    site = streamnb.load(site_model_path(models))
    assert learned(site) == once_each(range(16))
    assert all(recorded(site, ham(300 + i)).provisional for i in range(120))


def observing(tmp_path: Path) -> tuple[Path, Settings]:
    """alice's model file (not made yet) and the settings of a service that observes checks."""
    _, settings, path = alice_files(tmp_path)
    return path, dataclasses.replace(settings, observe=True)


async def trained_pair(path: Path, settings: Settings) -> tuple[UserModel, UserModel]:
    """Two processes, A and B, serving alice's model, which A taught 12 lessons and saved."""
    a, b = UserModel("alice", path, settings), UserModel("alice", path, settings)
    for i in range(12):
        assert await a.tell(learn(i)) is True
    await a.fold()
    return a, b


async def checked(process: UserModel, raw: bytes, explain: bool = False) -> Scored:
    """A check of raw, which the process's model then observes (as the server does)."""
    scored = await process.classify(raw, explain)
    assert scored is not None
    await process.observe(raw, scored.verdict)
    return scored


def test_what_a_process_observed_outlives_another_processs_save(tmp_path):
    """A and B serve one model and observe the mail each checks. B saves (a snapshot) without
    what A observed; A reads B's file and observes its own messages again in it, so A's save
    holds both; B reads that. A message observed twice is one provisional lesson."""
    path, settings = observing(tmp_path)

    async def scenario() -> None:
        a, b = await trained_pair(path, settings)
        seen_by_a, seen_by_b = [spam(400), ham(401)], [spam(402), ham(403)]
        for raw in seen_by_a:
            await checked(a, raw)
        for raw in seen_by_b + seen_by_a[:1]:
            await checked(b, raw)
        await b.fold()  # the file holds what B observed, not ham(401)
        assert recorded(streamnb.load(path), ham(401)) is None
        await checked(a, spam(404))  # A finds B's file, reads it, and observes its three again
        assert all(recorded(a.model, raw).provisional for raw in seen_by_a + seen_by_b + [spam(404)])
        assert a.observed == 3
        await a.fold()
        saved = streamnb.load(path)
        assert all(recorded(saved, raw).provisional for raw in seen_by_a + seen_by_b + [spam(404)])
        assert await b.classify(ham(50), False) is not None  # B reads A's file: nothing of its own to add
        assert b.observed == 0 and all(recorded(b.model, raw).provisional for raw in seen_by_a + seen_by_b)
        assert await a.close() == 0 and await b.close() == 0

    asyncio.run(scenario())


def test_a_save_that_finds_another_processs_save_reads_it_and_saves_what_it_observed(tmp_path):
    """A's save finds that B saved the files since A read them: A reads B's, observes its own
    messages again in it, and saves (at a stop, nothing observed is left out of the file)."""
    path, settings = observing(tmp_path)

    async def scenario() -> None:
        a, b = await trained_pair(path, settings)
        for process, raw in ((a, spam(410)), (b, ham(411))):
            await checked(process, raw)
        await b.close()
        await a.close()  # its first try finds B's file
        saved = streamnb.load(path)
        assert recorded(saved, spam(410)).provisional and recorded(saved, ham(411)).provisional

    asyncio.run(scenario())


def test_a_model_read_without_the_lock_saves_what_it_observed_once_it_can_take_it(tmp_path):
    """B read the files while another writer held the write lock (a check never waits), and
    observed a message: its save reads the files again under the lock, observes the message
    again in them, and saves it (the snapshot task's try, without waiting, puts it off while
    the lock is held)."""
    path, settings = observing(tmp_path)

    async def scenario() -> None:
        a = UserModel("alice", path, settings)
        for i in range(12):
            assert await a.tell(learn(i)) is True
        assert await a.close() == 0
        b = UserModel("alice", path, settings)
        with journal.write_lock(path):
            scored = await b.classify(spam(430), False)
            assert scored is not None and not b.owner
            await b.observe(spam(430), scored.verdict)
            await b.fold(wait=False)  # the snapshot task: the lock is taken, later will do
            assert recorded(streamnb.load(path), spam(430)) is None and b.observed == 1
        await b.fold(wait=False)
        assert b.owner and b.observed == 0 and recorded(streamnb.load(path), spam(430)).provisional
        assert await b.close() == 0

    asyncio.run(scenario())


def test_what_a_process_keeps_to_observe_again_is_bounded(tmp_path, monkeypatch):
    """Beyond MAX_KEPT_OBSERVED_BYTES, the oldest observed messages are let go: another
    process's save replaces them (observations are not lessons); the newer are observed again."""
    path, settings = observing(tmp_path)
    messages = [spam(420), ham(421), spam(422)]
    kept = len(messages[1]) + len(messages[2]) + 2 * userfiles.KEPT_ENTRY_BYTES
    monkeypatch.setattr(userfiles, "MAX_KEPT_OBSERVED_BYTES", kept)

    async def scenario() -> None:
        a, b = await trained_pair(path, settings)
        for raw in messages:
            await checked(a, raw)
        assert list(a.kept_observed) == messages[1:] and a.kept_observed_bytes == kept
        assert await b.tell(learn(12)) is True
        await b.fold()
        assert await a.classify(ham(50), False) is not None  # reads B's file
        assert recorded(a.model, messages[0]) is None
        assert all(recorded(a.model, raw).provisional for raw in messages[1:])
        assert await a.close() == 0 and await b.close() == 0

    asyncio.run(scenario())


def test_a_message_told_is_not_observed_again(tmp_path):
    """A observed M, then learned and forgot it (lessons told to A): B's save, which folded
    them, does not bring M back as observed when A reads it (nor a lesson B followed)."""
    path, settings = observing(tmp_path)

    async def scenario() -> None:
        a, b = await trained_pair(path, settings)
        told_to_a, told_to_b = spam(460), ham(461)
        for raw in (told_to_a, told_to_b):
            scored = await checked(a, raw, explain=True)  # a REPORT: the verdict comes with its evidence
            assert scored.verdict.evidence
            assert a.kept_observed[raw] == scored.verdict._replace(evidence=[])  # its label is what counts
        assert await a.tell(Lesson(LEARN, "spam", told_to_a)) is True
        assert await a.tell(Lesson(FORGET, None, told_to_a)) is True
        assert recorded(a.model, told_to_a) is None and list(a.kept_observed) == [told_to_b]
        assert await b.tell(Lesson(LEARN, "ham", told_to_b)) is True
        assert await a.classify(ham(50), False) is not None  # follows B's lesson
        assert not a.kept_observed
        await b.fold()
        assert await a.classify(ham(50), False) is not None  # reads B's file: nothing to observe again
        assert recorded(a.model, told_to_a) is None and not recorded(a.model, told_to_b).provisional
        assert await a.close() == 0 and await b.close() == 0
        assert recorded(streamnb.load(path), told_to_a) is None

    asyncio.run(scenario())


def test_a_message_learned_when_checked_is_not_kept(tmp_path):
    """M was learned when A checked it (observing it changed nothing): A does not keep it, so
    B's forget of M, folded before A followed it, does not bring M back as observed."""
    path, settings = observing(tmp_path)

    async def scenario() -> None:
        a, b = await trained_pair(path, settings)
        assert await a.tell(Lesson(LEARN, "spam", spam(490))) is True
        await checked(a, spam(490))
        assert not recorded(a.model, spam(490)).provisional and not a.kept_observed
        assert await b.tell(Lesson(FORGET, None, spam(490))) is True
        await b.fold()
        assert await a.classify(ham(50), False) is not None  # reads B's file
        assert recorded(a.model, spam(490)) is None
        assert await a.close() == 0 and await b.close() == 0

    asyncio.run(scenario())


def test_a_model_file_deleted_is_not_made_again_to_hold_observations(tmp_path):
    """The model file is deleted (a user removed) while the model holds only observations:
    its save makes no new file for them (observations are not lessons to write back)."""
    path, settings = observing(tmp_path)

    async def scenario() -> None:
        a, b = await trained_pair(path, settings)
        assert await b.close() == 0
        await checked(a, spam(480))
        assert a.owner and a.pending == 0 and a.observed == 1
        path.unlink()
        await a.fold(wait=False)  # the snapshot task
        assert not path.exists() and a.observed == 0 and not a.kept_observed
        assert await a.close() == 0
        assert not path.exists()

    asyncio.run(scenario())


def test_the_bytes_of_the_kept_messages_are_counted_whatever_comes(tmp_path, monkeypatch):
    """Kept, let go by a lesson, let go at a save, kept again: the count is always the bytes
    of the messages kept (each with its entry's share) and never passes the cap."""
    monkeypatch.setattr(userfiles, "MAX_KEPT_OBSERVED_BYTES", 5000)
    _, settings, path = alice_files(tmp_path)
    files = userfiles.UserFiles("alice", path, settings)
    rng = random.Random(1)
    messages = [bytes([65 + i]) * rng.randint(1, 3000) for i in range(20)]
    for _ in range(20000):
        draw, message = rng.random(), rng.choice(messages)
        if draw < 0.6:
            files._keep_observed(message, "spam")
        elif draw < 0.95:
            files._lessons_came([Lesson(LEARN, "spam", bytes(message))])
        else:
            files._let_kept_go()
        assert files.kept_observed_bytes == sum(len(m) + userfiles.KEPT_ENTRY_BYTES for m in files.kept_observed)
        assert files.kept_observed_bytes <= 5000


def test_the_snapshot_tasks_save_does_not_wait_for_the_lock_after_another_processs_save(tmp_path):
    """The snapshot task's save (wait=False) finds that another process saved the files, and
    another writer takes the lock before it reads them again: it gives up at once (tried
    again later) rather than hold the model's checks up to --lock-timeout."""
    path, settings = observing(tmp_path)
    settings = dataclasses.replace(settings, limits=dataclasses.replace(settings.limits, lock_timeout=3.0))

    async def scenario() -> None:
        a, b = await trained_pair(path, settings)
        await checked(a, spam(470))
        assert await b.tell(learn(12)) is True
        await b.fold()  # A's next save finds B's file
        held, release = threading.Event(), threading.Event()

        def other_writer() -> None:
            with journal.write_lock(path):
                held.set()
                release.wait(5)

        real_fold_sync = a._fold_sync

        def fold_sync(wait: bool = True) -> bool:
            done = real_fold_sync(wait)
            if not done:  # another writer takes the lock right after
                threading.Thread(target=other_writer, daemon=True).start()
                held.wait(5)
            return done

        a._fold_sync = fold_sync  # type: ignore[method-assign]
        started = time.monotonic()
        await a.fold(wait=False)
        waited = time.monotonic() - started
        release.set()
        assert waited < 1.0, f"the snapshot task's save waited {waited:.1f} s for the write lock"
        assert a.observed == 1  # saved later
        await a.fold()
        assert recorded(streamnb.load(path), spam(470)).provisional
        assert await a.close() == 0 and await b.close() == 0

    asyncio.run(scenario())


def test_messages_that_cannot_be_observed_again_leave_the_files_read_as_they_are(tmp_path, monkeypatch, caplog):
    """Observing again fails (whatever the reason): the files read stand, a warning says so,
    and the check is scored with them."""
    path, settings = observing(tmp_path)

    async def scenario() -> None:
        a, b = await trained_pair(path, settings)
        await checked(a, spam(450))
        assert await b.tell(learn(12)) is True
        await b.fold()

        def failing(self, x, verdict=None):
            raise ValueError("cannot observe this")

        monkeypatch.setattr(SpamFilter, "observe", failing)
        assert await a.classify(ham(50), False) is not None  # reads B's file
        assert a.observed == 0 and not a.kept_observed and a.kept_observed_bytes == 0
        assert learned(a.model) == once_each(range(13)) and recorded(a.model, spam(450)) is None
        assert await a.close() == 0 and await b.close() == 0

    asyncio.run(scenario())
    assert re.search(r"WARNING .*user alice: the 1 messages it observed since its last save could not be observed "
                     r"again in .*alice\.snb: ValueError: cannot observe this", caplog.text), caplog.text


def test_max_memory_counts_the_messages_a_model_keeps_to_observe_again(tmp_path):
    """--max-memory bounds the models' bytes with the messages they observed since their last
    save: a model whose observations pass the cap is folded and let go."""
    models, settings, path = alice_files(tmp_path)

    async def scenario() -> None:
        for user in ("alice", "bob"):
            entry = UserModel(user, models / f"{user}.snb", settings)
            for i in range(4):
                assert await entry.tell(learn(i)) is True
            await entry.close()
        sizes = {user: streamnb.load(models / f"{user}.snb").nbytes for user in ("alice", "bob")}
        cache = ModelCache(dataclasses.replace(settings, observe=True, site=False,
                                               max_memory=sizes["alice"] + sizes["bob"] + 1000))
        for user in ("alice", "bob"):
            assert await cache.get(user).classify(ham(50), False) is not None
        assert list(cache.entries) == ["alice", "bob"]
        alice = cache.entries["alice"]
        await checked(alice, spam(440))
        assert alice.kept_observed_bytes == len(spam(440)) + userfiles.KEPT_ENTRY_BYTES < 1000  # under the cap
        cache.get("alice")  # used last: bob is the least recently used
        assert list(cache.entries) == ["bob", "alice"]
        alice.kept_observed_bytes = sizes["bob"] + 2000  # as if it had observed more
        cache.get("carol")  # not loaded yet: its model counts nothing
        assert list(cache.entries) == ["carol"]  # bob, then alice, let go: the cap counts what alice keeps
        await asyncio.gather(*cache.closing)
        assert recorded(streamnb.load(models / "alice.snb"), spam(440)).provisional  # saved as it went

    asyncio.run(scenario())


def test_a_model_file_replaced_under_two_processes_keeps_every_acknowledged_lesson(tmp_path):
    """A and B each journaled a lesson; the model file is then replaced (a backup put back):
    whichever process reads the files next applies the journal's lessons to the new file, the
    one that never read them (C) too, and the later lessons go after them."""
    models, settings, path = alice_files(tmp_path)

    async def scenario() -> None:
        a, b, c = (UserModel("alice", path, settings) for _ in range(3))
        assert await a.tell(learn(1)) is True
        assert await b.tell(learn(2)) is True
        backup = cli.build_model(SERVE_ARGS)
        backup.learn_one(ham(60), "ham")
        backup.save(path)
        assert await c.tell(learn(3)) is True
        expected = {**once_each([1, 2, 3]), 60: {"ham": 1.0}}
        assert learned(c.model) == expected
        for process in (a, b):
            assert await process.classify(ham(50), False) is not None
            assert learned(process.model) == expected
        for process in (a, b, c):
            await process.close()

    asyncio.run(scenario())
    assert learned(streamnb.load(path)) == {**once_each([1, 2, 3]), 60: {"ham": 1.0}}


def test_a_model_file_deleted_under_a_second_process_keeps_the_journaled_lessons(tmp_path):
    """A folded a lesson into the model file and journaled another; the file is deleted; B,
    which held nothing, is told a third: it makes a new model and applies the journal's
    lesson to it before its own (the folded one went with the file: only A's memory had it)."""
    models, settings, path = alice_files(tmp_path)

    async def scenario() -> None:
        a, b = UserModel("alice", path, settings), UserModel("alice", path, settings)
        assert await a.tell(learn(0)) is True
        await a.fold()
        assert await a.tell(learn(1)) is True
        path.unlink()
        assert await b.tell(learn(2)) is True
        await b.close()
        await a.close()

    asyncio.run(scenario())
    assert learned(streamnb.load(path)) == once_each([1, 2])


def test_a_journal_damaged_in_place_is_made_good_from_memory(tmp_path):
    """The journal's header overwritten under the service: the model in memory (file plus
    every acknowledged lesson) is saved, and the next lesson is journaled after it."""
    models, settings, path = alice_files(tmp_path)

    async def scenario() -> None:
        a = UserModel("alice", path, settings)
        for i in (1, 2):
            assert await a.tell(learn(i)) is True
        with open(journal_path(path), "r+b") as damaged:
            damaged.write(b"garbage!")
        assert await a.classify(ham(50), False) is not None
        assert await a.tell(learn(3)) is True
        await a.close()

    asyncio.run(scenario())
    assert learned(streamnb.load(path)) == once_each([1, 2, 3])


def test_a_fold_cut_short_before_the_journal_is_removed_is_not_taken_for_a_replaced_file(tmp_path, monkeypatch,
                                                                                         caplog):
    """A's fold wrote the model file and died before removing the journal: B, which had read
    the whole journal, reads the files again and finds the journal marked folded into that
    file: nothing is replayed onto it."""
    from streamnb.service import journal

    models, settings, path = alice_files(tmp_path)

    class Crash(Exception):
        pass

    def crash(_path):
        raise Crash("killed")

    async def scenario() -> None:
        a, b = UserModel("alice", path, settings), UserModel("alice", path, settings)
        for i in range(3):
            assert await a.tell(learn(i)) is True
        assert await b.tell(learn(3)) is True
        monkeypatch.setattr(journal, "remove_journal", crash)
        async with a.lock:
            try:
                await asyncio.to_thread(a._fold_sync)
            except Crash:
                pass
        monkeypatch.undo()
        assert os.path.exists(journal_path(path))
        assert await b.tell(learn(4)) is True
        assert learned(b.model) == once_each(range(5)) and b.pending == 1
        await b.close()

    asyncio.run(scenario())
    assert "replaced" not in caplog.text and "lessons acknowledged for a model file" not in caplog.text
    assert learned(streamnb.load(path)) == once_each(range(5))


def damage_header(path: Path) -> None:
    with open(journal_path(path), "r+b") as damaged:
        damaged.write(b"garbage!")


def test_a_journal_damaged_in_place_keeps_the_lessons_another_process_appended(tmp_path):
    """A told L1, B told L2 after it (A never read L2); the journal's header is damaged in place:
    A's repair saves its model with L2 read from where A stopped, and keeps the damaged file."""
    models, settings, path = alice_files(tmp_path)

    async def scenario() -> None:
        a, b = UserModel("alice", path, settings), UserModel("alice", path, settings)
        assert await a.tell(learn(1)) is True
        assert await b.tell(learn(2)) is True
        damage_header(path)
        assert await a.tell(learn(3)) is True
        assert await b.tell(learn(4)) is True
        await a.close()
        await b.close()

    asyncio.run(scenario())
    assert learned(streamnb.load(path)) == once_each([1, 2, 3, 4])
    assert list(models.glob("alice.snb.journal.damaged-*"))


def test_a_journal_set_aside_by_one_process_loses_nothing_another_told(tmp_path):
    """B told L2; the header is damaged; A (nothing pending) sets the journal aside and
    journals L3 in a new one; B's next lesson first saves its model with L2 and the new
    journal's L3."""
    models, settings, path = alice_files(tmp_path)

    async def scenario() -> None:
        a, b = UserModel("alice", path, settings), UserModel("alice", path, settings)
        assert await a.tell(learn(0)) is True
        await a.fold()
        assert await b.tell(learn(2)) is True
        damage_header(path)
        assert await a.tell(learn(3)) is True
        assert await b.tell(learn(4)) is True
        await a.close()
        await b.close()

    asyncio.run(scenario())
    assert learned(streamnb.load(path)) == once_each([0, 2, 3, 4])


def test_a_journal_written_before_fold_marks_is_folded_before_anything_is_appended(tmp_path):
    """A v1 journal (no fold marks) left for the model: its lessons are applied, and the
    model is saved before the next lesson, which starts a v2 journal."""
    models, settings, path = alice_files(tmp_path)

    async def scenario() -> None:
        a = UserModel("alice", path, settings)
        assert await a.tell(learn(1)) is True
        a._close_journal()
        written = journal_path(path)
        header, rest = open(written, "rb").read().split(b"\n", 1)
        open(written, "wb").write(header.split(b" id ")[0].replace(b" v2 ", b" v1 ") + b"\n" + rest)
        b = UserModel("alice", path, settings)
        assert await b.tell(learn(2)) is True
        assert open(written, "rb").read(20) == b"streamnb-journal v2 "
        assert len(read_journal(written).lessons) == 1
        await b.close()

    asyncio.run(scenario())
    assert learned(streamnb.load(path)) == once_each([1, 2])


def test_an_older_copy_of_the_journal_put_back_replays_nothing(tmp_path):
    """A copy of the journal taken before a lesson moved a message, put back (a new file, the
    same journal): the repair applies none of its records again, the move stands."""
    models, settings, path = alice_files(tmp_path)

    async def scenario() -> None:
        a = UserModel("alice", path, settings)
        assert await a.tell(Lesson(LEARN, "spam", spam(1))) is True
        copy = Path(journal_path(path)).read_bytes()
        assert await a.tell(Lesson(LEARN, "ham", spam(1))) is True  # moved
        put_back = tmp_path / "copy"
        put_back.write_bytes(copy)
        os.replace(put_back, journal_path(path))
        assert await a.tell(learn(2)) is True
        await a.close()

    asyncio.run(scenario())
    model = streamnb.load(path)
    assert learned(model) == {1: {"ham": 1.0}, **once_each([2])}


def test_a_copy_put_back_and_appended_to_by_another_process_loses_nothing(tmp_path):
    """A told L0-L4; a copy of the journal taken after L2 is put back; C, new, tells L6, L8
    after it: A's repair skips the records it applied (the copy's) and applies C's."""
    models, settings, path = alice_files(tmp_path)

    async def scenario() -> None:
        a = UserModel("alice", path, settings)
        copy = b""
        for i in range(5):
            assert await a.tell(learn(i)) is True
            if i == 2:
                copy = Path(journal_path(path)).read_bytes()
        put_back = tmp_path / "copy"
        put_back.write_bytes(copy)
        os.replace(put_back, journal_path(path))
        c = UserModel("alice", path, settings)
        for i in (6, 8):
            assert await c.tell(learn(i)) is True
        assert await a.classify(ham(50), False) is not None
        assert await a.tell(learn(9)) is True
        await a.close()
        await c.close()

    asyncio.run(scenario())
    assert learned(streamnb.load(path)) == once_each([0, 1, 2, 3, 4, 6, 8, 9])


def cut_short(path: Path) -> None:
    """The journal cut in place after its third record (the same file, the same id)."""
    from streamnb.service import journal

    os.truncate(journal_path(path), sorted(end for end, _ in journal.read_journal(journal_path(path)).keys)[2])


@pytest.mark.parametrize("change", [damage_header, lambda path: os.unlink(journal_path(path)), cut_short],
                         ids=["damaged", "deleted", "cut short"])
def test_a_check_without_the_lock_keeps_lessons_whose_journal_changed(change, tmp_path):
    """A journaled L0-L4; the journal is damaged, deleted or cut short in place while another
    writer holds the lock: the check reads without the lock and keeps the model it has (the
    only place every lesson is now); the next lesson, under the lock, writes them back."""
    from streamnb.service import journal

    models, settings, path = alice_files(tmp_path)

    async def scenario() -> None:
        a = UserModel("alice", path, settings)
        for i in range(5):
            assert await a.tell(learn(i)) is True
        held = a.model
        change(path)
        with journal.write_lock(path):
            assert await a.classify(ham(50), False) is not None
        assert a.model is held and a.pending == 5
        assert await a.tell(learn(5)) is True
        await a.close()

    asyncio.run(scenario())
    assert learned(streamnb.load(path)) == once_each(range(6))
