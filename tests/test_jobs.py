"""Audits run as jobs (``components.jobs``): leaving the page stops following a job, never the job.

Before, a Fragility or Transport audit ran inside the page's script run, which
Streamlit interrupts at the next progress update when the user clicks another
page: the audit was dropped with no notice
(``tests/test_browser_state.py`` checks the whole journey in Chromium).
"""
from __future__ import annotations

import threading

import pytest

from audit_core.errors import AuditInputError
from components import jobs
from components.state import Provenance


class _Interrupted(BaseException):
    """Stands in for Streamlit's rerun exception, which is a BaseException raised from an st.* call."""


class _Bar:
    def __init__(self, interrupt_after: int | None) -> None:
        self.calls, self.interrupt_after, self.emptied = 0, interrupt_after, False

    def progress(self, *_a, **_k) -> None:
        self.calls += 1
        if self.interrupt_after is not None and self.calls >= self.interrupt_after:
            raise _Interrupted

    def empty(self) -> None:
        self.emptied = True


@pytest.fixture
def bars(monkeypatch):
    """Replace ``st.progress``; ``plan`` lists, per bar, the update at which the page run is interrupted."""
    made: list[_Bar] = []
    plan: list[int | None] = []

    def progress(*_a, **_k) -> _Bar:
        made.append(_Bar(plan.pop(0) if plan else None))
        return made[-1]

    monkeypatch.setattr(jobs.st, "progress", progress)
    return made, plan


def _slow_work(release: threading.Event):
    def work(job: jobs.Job):
        for i in range(5):
            job.progress(i / 5, f"step {i}")
            release.wait(5)
        return {"answer": 42}, "run-1"
    return work


def test_an_interrupted_follower_leaves_the_job_running(bars):
    made, interrupt = bars
    interrupt.append(2)  # the user clicks another page during the second progress update
    release = threading.Event()
    job = jobs.Job(name="t", title="Test audit", provenance=Provenance(table="a"))
    job.launch(_slow_work(release))
    with pytest.raises(_Interrupted):
        jobs.follow(job)
    assert job.running and job.followers_lost == 1 and made[0].emptied
    release.set()
    job.join(10)
    assert job.status == "done" and job.result == {"answer": 42} and job.run_id == "run-1"
    jobs.follow(job)  # on return: nothing to wait for, and the bar still ends
    assert made[1].emptied


def test_refusal_error_and_stop_are_kept_as_text():
    def refuse(job):
        raise AuditInputError("X", "Column 'a' is constant.")

    def crash(job):
        raise KeyError("k_star")

    def stoppable(job):
        job.request_stop()
        raise AuditInputError("TRANSPORT_CANCELLED", "cancelled at step 'fit'; nothing was saved.")

    out = {}
    for name, work in (("refuse", refuse), ("crash", crash), ("stop", stoppable)):
        job = jobs.Job(name=name, title="Test audit", provenance=Provenance())
        job._run(work)
        out[name] = (job.status, job.error)
    assert out["refuse"] == ("failed", "Column 'a' is constant.")
    assert out["crash"][0] == "failed" and "KeyError" in out["crash"][1]
    assert out["stop"] == ("stopped", "cancelled at step 'fit'; nothing was saved.")
