"""Long audits run in a worker thread, so leaving the page does not drop them.

A Streamlit script run ends as soon as the user interacts with the app,
including a click on another page: Streamlit interrupts it at the next
``st.*`` call. An audit computed inside the script run was therefore lost
silently when the user navigated away. Here the audit runs
in a :class:`Job` (a daemon thread that calls the library only and saves its
own registry run), and the page *follows* it: :func:`follow` shows its
progress until it ends, and an interruption of the page stops following, not
the job. On return the page follows again, or adopts the finished result; the
sidebar lists jobs in progress on every page (:func:`sidebar_status`).

Jobs belong to the workspace they were started in (:mod:`components.workspaces`):
a Fragility audit started on your data keeps running, and is adopted by your
workspace, while you look at the demo's. A *shared* job (the guided demo
itself) belongs to the session as a whole.

The worker never calls ``st.*`` (it has no script context): it reports
progress into the job, polls :meth:`Job.stop_requested`, and returns the
result and its saved run id. A declared refusal is kept as its message; an
unexpected error is logged with its traceback and kept as one sentence.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import streamlit as st

from audit_core.errors import AuditInputError
from components.feedback import md_escape
from components.state import Provenance, ResultSlot, workspace_key

__all__ = ["Job", "start", "current", "follow", "follow_and_adopt", "sidebar_status"]

log = logging.getLogger("reliability_audit")
_JOBS = workspace_key("jobs")  # session key: {name: Job} of the active workspace
_SHARED = "jobs_shared"  # session key: {name: Job} of the session as a whole (the guided demo)
_POLL_S = 0.25


@dataclass(eq=False)
class Job:
    """One audit running (or finished) in a worker thread.

    Attributes
    ----------
    name, title : str
        Session-unique name (one job per name) and what the sidebar calls it.
    provenance : Provenance
        What the audit is computed from (stored with the result).
    status : {"running", "done", "stopped", "failed"}
    fraction, message : float, str
        Last progress report.
    result, run_id : Any, str or None
        What the worker returned (``done``; also a partial result when stopped).
    error : str or None
        The refusal or error text (``failed``, or ``stopped`` by a declared cancel).
    adopted : bool
        Set by the page once it has taken the result into its result slot.
    """

    name: str
    title: str
    provenance: Provenance
    status: str = "running"
    fraction: float = 0.0
    message: str = "Starting…"
    result: Any = None
    run_id: str | None = None
    error: str | None = None
    adopted: bool = False
    started: float = field(default_factory=time.time)
    finished: float | None = None
    followers_lost: int = 0  # page runs that stopped following before the end (navigated away, interacted)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        return self.status == "running"

    def progress(self, fraction: float, message: str) -> None:
        """The worker's progress callback."""
        self.fraction = min(max(float(fraction), 0.0), 1.0)
        self.message = str(message)

    def request_stop(self) -> None:
        self._stop.set()

    def stop_requested(self) -> bool:
        return self._stop.is_set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def launch(self, work: Callable[["Job"], tuple[Any, str | None]]) -> None:
        """Run ``work(self)`` in a daemon thread (:func:`start`)."""
        self._thread = threading.Thread(target=self._run, args=(work,), name=f"audit-job-{self.name}", daemon=True)
        self._thread.start()

    def _run(self, work: Callable[["Job"], tuple[Any, str | None]]) -> None:
        try:
            self.result, self.run_id = work(self)
            self.status = "stopped" if self._stop.is_set() else "done"
        except AuditInputError as err:
            self.error = err.message
            self.status = "stopped" if self._stop.is_set() else "failed"
        except Exception as err:  # noqa: BLE001 - the worker boundary: never a traceback in the UI
            log.exception("unexpected error in job %s", self.name)
            self.error = f"Unexpected problem in the {self.title}: {type(err).__name__}: {str(err)[:300]}."
            self.status = "failed"
        finally:
            self.finished = time.time()


def _jobs(shared: bool = False) -> dict[str, Job]:
    return st.session_state.setdefault(_SHARED if shared else _JOBS, {})


def current(name: str, *, shared: bool = False) -> Job | None:
    """The job of that name (running or finished) in the active workspace, or the session's (``shared``)."""
    return _jobs(shared).get(name)


def start(name: str, title: str, work: Callable[[Job], tuple[Any, str | None]], *, provenance: Provenance,
          shared: bool = False) -> Job:
    """Start ``work(job) -> (result, run_id)`` in a daemon thread; refuse a second job of the same name.

    The job belongs to the active workspace, or to the session as a whole when ``shared``.
    """
    running = current(name, shared=shared)
    if running is not None and running.running:
        return running
    job = Job(name=name, title=title, provenance=provenance)
    _jobs(shared)[name] = job
    job.launch(work)
    return job


def follow(job: Job) -> None:
    """Show the job's progress until it ends; the bar always disappears at the end.

    If the page run is interrupted (the user clicked elsewhere), Streamlit
    raises its rerun exception from the progress update: the job keeps
    running and the next page run follows it again.
    """
    bar = st.progress(job.fraction, text=md_escape(job.message))
    finished = False
    try:
        while job.running:
            time.sleep(_POLL_S)
            bar.progress(job.fraction, text=md_escape(job.message))
        finished = True
    finally:
        if not finished:
            job.followers_lost += 1
        bar.empty()


def _clock(t: float | None) -> str:
    return time.strftime("%H:%M:%S", time.localtime(t if t is not None else time.time()))


def follow_and_adopt(job: Job | None, slot: ResultSlot, *, stopped: str) -> bool:
    """Follow a running job; put a finished job's result into ``slot`` (once); say how the job ended.

    A result that finished while the user was away from the page carries a
    note saying so (shown with the result). A failed job shows its error and a
    stopped one ``stopped`` (or its own cancel message) on every page run
    until another job of that name starts. Returns True when a result was
    adopted by this call.
    """
    if job is None:
        return False
    if job.running:
        follow(job)
        # the page above (Run disabled, Cancel shown) and the sidebar were drawn while the job ran: draw them again
        st.rerun()
    adopted = False
    if not job.adopted:
        job.adopted = True
        if job.result is not None:
            note = None
            if job.followers_lost:
                note = (f"This {job.title.lower()} (started {_clock(job.started)}) kept running while you were away "
                        f"from the page or used other widgets, and finished at {_clock(job.finished)}.")
            slot.put(job.result, job.provenance, run_id=job.run_id, note=note)
            adopted = True
    if job.status == "failed" and job.error:
        st.error(md_escape(job.error), icon=":material/error:")
    elif job.status == "stopped":
        st.warning(md_escape(job.error or stopped), icon=":material/stop_circle:")
    return adopted


def sidebar_status(aside: dict[str, dict] | None = None) -> None:
    """On every page: the jobs of this session still running, with their progress.

    ``aside``: workspace label -> that workspace kept aside (its session keys), whose running jobs are listed
    with the label.
    """
    groups = [("", _jobs(shared=True)), ("", _jobs())]
    groups += [(f" in {label.lower()}", state.get(_JOBS) or {}) for label, state in (aside or {}).items()]
    for where, jobs in groups:
        for job in (j for j in jobs.values() if j.running):
            st.sidebar.caption(f"{md_escape(job.title)} running{md_escape(where)} · {job.fraction:.0%} · "
                               f"{md_escape(job.message)}")
