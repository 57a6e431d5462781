"""Who owns a running run: process identity (host, pid, start time, boot), and whether that process is gone.

A run created with status ``running`` records its owner. When the registry
is opened again, a ``running`` run whose owner is provably gone is marked
``interrupted``:

* same host (and same boot): the pid no longer exists, or it now belongs to
  a process that started at another time (the pid was reused);
* same host, another boot: the machine restarted since;
* another host (or another pid namespace), or no owner recorded (a run from schema version 1): only by
  age, when it has been running longer than ``AUDIT_STALE_RUN_HOURS``
  (default 72 hours), because another machine's processes cannot be seen.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from audit_core.errors import fail
from audit_core.limits import setting


__all__: list[str] = []

#: Environment variable: hours after which a run of an unseen owner counts as interrupted.
STALE_ENV = "AUDIT_STALE_RUN_HOURS"
_STALE_DEFAULT_HOURS = 72.0


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None


def _boot_id() -> str | None:
    return _read("/proc/sys/kernel/random/boot_id")


def _pid_namespace() -> str | None:
    """The pid namespace (containers on one host share its hostname only by accident)."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def _start_ticks(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot (Linux ``/proc``), or None if unknown."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat or ")" not in stat:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    try:
        return int(fields[19])  # field 22 of stat; fields[0] is field 3 (state)
    except (IndexError, ValueError):
        return None


def current_owner() -> str:
    """JSON identity of this process, stored with a run while it is ``running``."""
    pid = os.getpid()
    return json.dumps({"host": socket.gethostname(), "pid": pid, "start": _start_ticks(pid), "boot": _boot_id(),
                       "ns": _pid_namespace()}, sort_keys=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists, owned by someone else
    return True


def stale_after_hours(env: dict[str, str] | None = None) -> float:
    """``AUDIT_STALE_RUN_HOURS`` (default 72): age at which an unseen owner's run counts as interrupted."""
    raw = setting(STALE_ENV, env)
    if not raw:
        return _STALE_DEFAULT_HOURS
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 100_000:
        raise fail("LIMIT_BAD_VALUE", var=STALE_ENV, value=raw[:40], low=0.001, high=100_000,
                   default=_STALE_DEFAULT_HOURS)
    return value


def abandoned_reason(owner: str | None, created_at: str, *, now: Callable[[], _dt.datetime],
                     max_age_hours: float) -> str | None:
    """Why a ``running`` run's owner is gone (the text stored as its error), or None if it may be alive.

    ``now`` is called only when the age decides (another host, or no owner recorded).
    """
    info: dict[str, Any] = {}
    if owner:
        try:
            info = json.loads(owner)
        except ValueError:
            info = {}
    host, pid = info.get("host"), info.get("pid")
    who = f"process {pid} on {host}" if host and isinstance(pid, int) else "the process that started it"
    if host == socket.gethostname() and isinstance(pid, int) and info.get("ns") == _pid_namespace():
        boot = _boot_id()
        if info.get("boot") and boot and info["boot"] != boot:
            return f"interrupted: {who} did not finish it before the machine restarted"
        if not _pid_alive(pid):
            return f"interrupted: {who} ended without finishing it (killed or crashed)"
        start = info.get("start")
        if start is not None and _start_ticks(pid) not in (None, start):
            return f"interrupted: {who} ended without finishing it (the pid now belongs to another process)"
        return None
    try:
        age = now() - _dt.datetime.fromisoformat(created_at)
    except (TypeError, ValueError):
        return None
    if age > _dt.timedelta(hours=max_age_hours):
        return (f"interrupted: {who} has not finished it in {age.total_seconds() / 3600:,.0f} hours "
                f"(more than {STALE_ENV}={max_age_hours:g})")
    return None
