"""How the jail's signal watch (streams/sandbox/watch.py) decides whether a held call is aimed at the
program, read from this very process's /proc: the test process stands for the jail's pid 1 and one of
its threads for a thread of the program. The kernel takes any thread id as its whole process when it
sets a SIGIO owner, and a pidfd may name a single thread: each must count as the program."""

from __future__ import annotations

import ctypes
import os
import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest

from streams.sandbox.seccomp import F_SETOWN_EX, FIOSETOWN, SIOCSPGRP, host_arch
from streams.sandbox.watch import SignalWatch, _pidfd_target

F_OWNER_TID, F_OWNER_PID, F_OWNER_PGRP = 0, 1, 2
PIDFD_THREAD = os.O_EXCL


@pytest.fixture
def watch() -> Iterator[SignalWatch]:
    a, b = socket.socketpair()
    b.close()
    w = SignalWatch(a, os.getpid(), host_arch(), time.perf_counter() + 5)
    yield w
    a.close()


@pytest.fixture
def thread_id() -> Iterator[int]:
    """The id of a live thread of this process other than its main one."""
    started, stop, ids = threading.Event(), threading.Event(), []

    def run() -> None:
        ids.append(threading.get_native_id())
        started.set()
        stop.wait(10)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    started.wait(5)
    yield ids[0]
    stop.set()
    t.join()


def test_an_owner_naming_a_thread_of_the_program_counts_as_the_program(
    watch: SignalWatch, thread_id: int
) -> None:
    # outside a pid namespace NSpid's last field is the host id: the thread's id is "one of pid 1's"
    assert thread_id in watch._init_threads()
    for kind in (F_OWNER_TID, F_OWNER_PID):
        owner = ctypes.create_string_buffer(struct.pack("=ii", kind, thread_id), 8)
        assert watch._owner_is_init(os.getpid(), F_SETOWN_EX, ctypes.addressof(owner)), kind
    for request in (FIOSETOWN, SIOCSPGRP):
        owner = ctypes.create_string_buffer(struct.pack("=i", thread_id), 4)
        assert watch._owner_is_init(os.getpid(), request, ctypes.addressof(owner)), request
    assert watch._owner_names_init(thread_id)
    # a group is named by its leader's id: minus a thread id names no group of the program
    group = ctypes.create_string_buffer(struct.pack("=ii", F_OWNER_PGRP, thread_id), 8)
    assert not watch._owner_is_init(os.getpid(), F_SETOWN_EX, ctypes.addressof(group))
    assert not watch._owner_names_init(-thread_id)


def test_an_owner_naming_another_process_passes(watch: SignalWatch) -> None:
    other = os.getppid()
    owner = ctypes.create_string_buffer(struct.pack("=ii", F_OWNER_PID, other), 8)
    assert not watch._owner_is_init(os.getpid(), F_SETOWN_EX, ctypes.addressof(owner))
    assert not watch._owner_names_init(other)


def test_a_pidfd_of_one_thread_of_the_program_is_the_program(watch: SignalWatch, thread_id: int) -> None:
    try:
        fd = os.pidfd_open(thread_id, PIDFD_THREAD)
    except OSError as exc:  # kernels before 6.9 have no thread pidfds: nothing to decide
        pytest.skip(f"no thread pidfds here ({exc})")
    try:
        assert _pidfd_target(os.getpid(), fd) in watch._init_host_threads()
    finally:
        os.close(fd)


@pytest.mark.parametrize("late", ["stopped", "past_deadline"])
def test_a_listener_sent_before_the_watch_ran_is_still_taken(late: str) -> None:
    """On a loaded machine the watch's thread may first run after the jail sent its listener and ended
    (and the host stopped the watch): the listener waits in the socket, and the watch is installed."""
    host, jail = socket.socketpair()
    listener = os.open(os.devnull, os.O_RDONLY)
    socket.send_fds(jail, [b"w"], [listener])
    os.close(listener)
    jail.close()
    deadline = time.perf_counter() + (5 if late == "stopped" else -1)
    w = SignalWatch(host, os.getpid(), host_arch(), deadline)
    if late == "stopped":
        w.stop()
    w.start()
    assert w.installed.wait(timeout=10)
    w.stop()
    w.join(timeout=10)
    assert not w.is_alive()


def test_a_watch_stopped_with_nothing_sent_ends_uninstalled() -> None:
    host, jail = socket.socketpair()
    w = SignalWatch(host, os.getpid(), host_arch(), time.perf_counter() + 5)
    w.stop()
    w.start()
    w.join(timeout=10)
    jail.close()
    assert not w.is_alive() and not w.installed.is_set()


def test_the_channel_is_where_the_senders_table_holds_one_of_its_pipes(
    watch: SignalWatch,
) -> None:
    r, w = os.pipe()
    other_r, other_w = os.pipe()
    watch.channel = frozenset({f"pipe:[{os.fstat(r).st_ino}]"})
    try:
        assert watch._holds_channel(os.getpid(), w) and watch._holds_channel(os.getpid(), r)
        assert not watch._holds_channel(os.getpid(), other_w)
        free = os.dup(other_w)
        os.close(free)
        assert not watch._holds_channel(os.getpid(), free)  # not open: nothing of the channel to move
    finally:
        for fd in (r, w, other_r, other_w):
            os.close(fd)


def test_threads_and_forked_copies_are_no_spawning_child(watch: SignalWatch, thread_id: int) -> None:
    assert not watch._spawning_child(os.getpid()) and not watch._spawning_child(thread_id)
    pid = os.fork()
    if pid == 0:
        time.sleep(5)
        os._exit(0)
    try:
        assert not watch._spawning_child(pid)  # memory of its own: it holds the stub as well
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
