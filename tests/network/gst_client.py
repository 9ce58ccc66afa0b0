#!/usr/bin/env python3
"""Client pipelines of the server tests (rtspsrc and the like), each played
in a process of its own: what a test asserts on is what reached the
pipeline's sink, and a client that hangs in its own teardown after EOS (stock
rtspsrc does, rarely, under load) is killed and reported instead of stalling
the whole suite.

    start(description, timeout_s, sink="frames", pause_s=0, seek=None)
        -> Client
    Client.result() -> (error or None, [MD5 of each buffer at the sink])
    Client.seek_at: how many buffers had reached the sink when the seek was
        sent
    play(...) = start(...).result(), played once more when the client
                deadlocked in itself (said on stderr, with its stacks)

The sink is the element of that name (a fakesink): every buffer it gets is
hashed; with sink=None nothing is. pause_s holds the pipeline in PAUSED that long before PLAYING (for
rtspsrc: DESCRIBE and SETUP, then PLAY later). seek=(after, seconds): once
after buffers reached the sink, a flushing key-unit seek to that time, as
an application (a player's seek bar) sends it."""

import faulthandler
import hashlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time

# seconds a client may take to stop once it reached EOS or an error
TEARDOWN_S = 15


class Client:
    def __init__(self, description, timeout_s, sink, pause_s, seek=None):
        self.deadlocked = False
        self.seek_at = None
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), json.dumps({
                "description": description, "timeout": timeout_s,
                "sink": sink, "pause": pause_s, "seek": seek})],
            stdout=subprocess.PIPE)
        self.deadline = time.monotonic() + pause_s + timeout_s + 30

    def result(self):
        digests, end, text = [], None, ""
        out = self.proc.stdout
        while end is None and time.monotonic() < self.deadline:
            ready, _, _ = select.select([out], [], [],
                                       max(0, self.deadline - time.monotonic()))
            chunk = os.read(out.fileno(), 65536) if ready else b""
            if not chunk:
                break
            text += chunk.decode()
            *lines, text = text.split("\n")
            for line in lines:
                kind, _, value = line.partition(" ")
                if kind == "buffer":
                    digests.append(value)
                elif kind == "seek":
                    self.seek_at = len(digests)
                elif kind == "end":
                    end = value
        try:
            self.proc.wait(TEARDOWN_S)
        except subprocess.TimeoutExpired:
            # its Python stack, and its threads' native stacks where gdb is
            # at hand, to our stderr; then gone
            self.proc.send_signal(signal.SIGUSR1)
            time.sleep(0.5)
            if shutil.which("gdb"):
                subprocess.run(["gdb", "-p", str(self.proc.pid), "-batch",
                                "-ex", "thread apply all bt 20"],
                               stdout=sys.stderr, stderr=subprocess.DEVNULL,
                               timeout=60)
            self.deadlocked = end != "eos"
            self.proc.kill()
            self.proc.wait()
            print("gst_client: the client %s; killed" % (
                "hung in its teardown after: " + end if end is not None
                else "never ended"), file=sys.stderr)
        out.close()
        if end is None:
            return "the client process ended without a verdict", digests
        return (None if end == "eos" else end), digests


def start(description, timeout_s, sink="frames", pause_s=0, seek=None):
    return Client(description, timeout_s, sink, pause_s, seek)


def play(description, timeout_s, sink="frames", pause_s=0):
    """As start(...).result(); a client that neither reached EOS nor could
    be stopped (rtspsrc deadlocked in itself: no teardown of ours, which
    has a 100 ms timeout, waits 15 s) is played once more, and says so"""
    client = start(description, timeout_s, sink, pause_s)
    result = client.result()
    if client.deadlocked:
        print("gst_client: the client deadlocked (stacks above); playing "
              "once more: %s" % description, file=sys.stderr)
        result = start(description, timeout_s, sink, pause_s).result()
    return result


def child(args):
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    Gst.init(None)

    def say(line):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    pipeline = Gst.parse_launch(args["description"])
    sink = pipeline.get_by_name(args["sink"]) if args["sink"] else None
    if args["sink"] and sink is None:
        say("end no element named %s" % args["sink"])
        return
    seek_after, seek_to = args["seek"] or (None, None)
    seen = threading.Event()
    count = [0]

    def handoff(_sink, buf, _pad):
        say("buffer " + hashlib.md5(buf.extract_dup(
            0, buf.get_size())).hexdigest())
        count[0] += 1
        if count[0] == seek_after:
            seen.set()

    if sink is not None:
        sink.set_property("signal-handoffs", True)
        sink.connect("handoff", handoff)
    if args["pause"]:
        pipeline.set_state(Gst.State.PAUSED)
        time.sleep(args["pause"])
    pipeline.set_state(Gst.State.PLAYING)
    bus = pipeline.get_bus()
    ends = Gst.MessageType.EOS | Gst.MessageType.ERROR
    deadline = time.monotonic() + args["timeout"]
    msg = None
    while msg is None and time.monotonic() < deadline:
        if seen.is_set():
            # from the application's thread, never a streaming thread
            seen.clear()
            say("seek")
            if not pipeline.seek_simple(
                    Gst.Format.TIME,
                    Gst.SeekFlags.FLUSH | Gst.SeekFlags.KEY_UNIT,
                    int(seek_to * Gst.SECOND)):
                say("end the seek was refused")
                break
        msg = bus.timed_pop_filtered(
            int(min(0.05, max(0, deadline - time.monotonic())) * Gst.SECOND),
            ends)
    if msg is None:
        if time.monotonic() >= deadline:
            say("end no EOS within %d s" % args["timeout"])
    elif msg.type == Gst.MessageType.ERROR:
        say("end " + msg.parse_error()[0].message.replace("\n", " "))
    else:
        say("end eos")
    pipeline.set_state(Gst.State.NULL)


if __name__ == "__main__":
    child(json.loads(sys.argv[1]))
