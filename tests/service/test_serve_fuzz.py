"""The hostile-client fuzzer of benchmarks/serve_fuzz.py (issue 28), short: the full run
(10^5 requests) is ``python -m benchmarks.serve_fuzz``."""

from __future__ import annotations

from benchmarks import serve_fuzz
from benchmarks.serve_fuzz import Case


def test_the_judge_refuses_what_a_spamd_client_cannot_take():
    check = Case("valid", b"CHECK SPAMC/1.5\r\n\r\n", "whole")
    assert serve_fuzz.judge(check, b"SPAMD/1.5 76 Bad header line: (x)\r\n") is None
    assert serve_fuzz.judge(check, b"SPAMD/1.5 0 EX_OK\r\nSpam: False ; 0.0 / 9.0\r\n\r\n") is None
    assert serve_fuzz.judge(check, b"") == "no reply"
    assert serve_fuzz.judge(Case("valid", b"SKIP SPAMC/1.5\r\n\r\n", "whole"), b"") is None
    assert serve_fuzz.judge(check, b"SPAMD/1.5 70 Internal error: (KeyError)\r\n") == "EX_SOFTWARE: an internal error"
    assert serve_fuzz.judge(check, b"SPAMD/1.5 12 What\r\n").startswith("code 12")
    assert serve_fuzz.judge(check, b"SPAMD/1.5 76 Bad\r\nmore\r\n") == "an error reply of more than its one line"
    assert serve_fuzz.judge(check, b"HTTP/1.1 400 Bad Request\r\n") == "not a spamd reply"
    assert serve_fuzz.judge(check, b"SPAMD/1.5 0 WHAT\r\n").startswith("a reply with code 0")


def test_cases_are_replayable_and_cover_every_kind():
    assert serve_fuzz.generate(7, 123) == serve_fuzz.generate(7, 123)
    kinds = {serve_fuzz.generate(1, number).kind for number in range(3000)}
    assert kinds == {"valid", "bad method", "bad Content-length", "bad headers", "no blank line", "no Content-length",
                     "mutated", "truncated", "garbage", "slow sender", "silent"}


def test_a_short_fuzz_run_finds_no_crash_and_no_bad_reply():
    figures = serve_fuzz.run(requests=1500, concurrency=32, seed=1, ping_every=300)
    assert figures["failures"] == []
    assert not figures["crashed"], figures
    assert figures["pings"] == {"asked": 5, "failed": 0} and figures["final_ping"]
    assert set(figures["codes"]) >= {"0", "65", "76", "79"}  # served, too big, malformed, too slow
