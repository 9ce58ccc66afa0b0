#!/usr/bin/env python3
"""The forwarding node of pipelines/dxt-forward.sh, with per-frame latency:

  udpsrc :RAW_PORT ! rtpvrawdepay ! dxtenc PROPS ! rtpgstpay ! udpsink :DXT_PORT

Latency of a frame = from its first RTP packet leaving udpsrc (udpsrc's
timestamp: the pipeline clock when it read the packet) to its last RTP
packet reaching udpsink (handed over for sending), through pad probes that
run once a frame, not once a packet (a Python call per packet, ~1300 a
frame, slows the forwarder's one streaming thread enough to lose packets):

  rtpvrawdepay src  a frame out of the depayloader (while its marker packet
                    is being processed); installs a one-shot probe on
                    udpsrc's src pad, which so catches the first packet of
                    the next frame (its RTP timestamp and udpsrc's PTS)
  udpsink sink      the payloader's packet list of a frame; its PTS (the
                    depayloader's, kept by dxtenc and rtpgstpay) names the
                    frame; the clock then is the frame's end
Also printed: the part of it spent receiving the frame (first packet in ->
frame out of the depayloader), the rest being dxtenc, payloading, sending.

Prints p50/p99/max over the frames that came out, once FRAMES frames are out,
IDLE seconds pass without a frame after the first, or on SIGINT/SIGTERM.

  pipelines/dxt_forwarder.py --raw-port 5510 --dxt-port 5512 --frames 100 \\
      --caps 'application/x-rtp,...' format=dxt1 hap=true"""

import argparse
import signal
import struct
import sys
import time

import gi
gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402


def percentile(sorted_v, q):
    """Nearest rank."""
    if not sorted_v:
        return float("nan")
    k = max(0, min(len(sorted_v) - 1, int(round(q / 100.0 * len(sorted_v) + 0.5)) - 1))
    return sorted_v[k]


class Forwarder:
    def __init__(self, a):
        desc = ("udpsrc name=src port=%d buffer-size=33554432 caps=\"%s\" ! "
                "rtpvrawdepay name=depay ! dxtenc %s ! "
                "rtpgstpay config-interval=1 mtu=1400 ! "
                "udpsink name=sink host=%s port=%d sync=false"
                % (a.raw_port, a.caps, " ".join(a.props), a.host, a.dxt_port))
        self.desc = desc
        self.pipeline = Gst.parse_launch(desc)
        self.frames_wanted = a.frames
        self.idle = a.idle
        self.first_in = None      # (rtp ts, running time) of the latest frame's first packet
        self.frame_in = {}        # PTS out of the depayloader -> (rtp ts, first packet in)
        self.lat = {}             # rtp ts -> (ns first packet in -> last out, -> depayloaded)
        self.frames_in = 0
        self.last_frame = None
        self.loop = GLib.MainLoop()
        p = self.pipeline
        self.src_pad = p.get_by_name("src").get_static_pad("src")
        self.src_pad.add_probe(Gst.PadProbeType.BUFFER, self.on_first_packet)
        p.get_by_name("depay").get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, self.on_frame)
        p.get_by_name("sink").get_static_pad("sink").add_probe(
            Gst.PadProbeType.BUFFER | Gst.PadProbeType.BUFFER_LIST, self.on_out)

    def running_time(self):
        return self.pipeline.get_clock().get_time() - self.pipeline.get_base_time()

    def on_first_packet(self, pad, info):
        buf = info.get_buffer()
        hdr = buf.extract_dup(0, 8)
        t = buf.pts if buf.pts != Gst.CLOCK_TIME_NONE else self.running_time()
        if len(hdr) == 8:
            self.first_in = (struct.unpack_from("!I", hdr, 4)[0], t)
        return Gst.PadProbeReturn.REMOVE

    def on_frame(self, pad, info):
        # runs inside the push of the frame's last packet: the next packet
        # through udpsrc is the next frame's first
        if self.first_in is not None:
            self.frame_in[info.get_buffer().pts] = self.first_in + (self.running_time(),)
        self.first_in = None
        self.frames_in += 1
        self.last_frame = time.monotonic()
        self.src_pad.add_probe(Gst.PadProbeType.BUFFER, self.on_first_packet)
        return Gst.PadProbeReturn.OK

    def on_out(self, pad, info):
        now = self.running_time()
        if info.type & Gst.PadProbeType.BUFFER_LIST:
            lst = info.get_buffer_list()
            if lst is None or lst.length() == 0:
                return Gst.PadProbeReturn.OK
            buf = lst.get(lst.length() - 1)
        else:
            buf = info.get_buffer()
        fi = self.frame_in.get(buf.pts)
        if fi is not None:
            ts, t_in, t_depay = fi
            if ts not in self.lat and self.frames_wanted and len(self.lat) + 1 >= self.frames_wanted:
                GLib.timeout_add(200, self.stop)    # the last frame is out: stop
            self.lat[ts] = (now - t_in, t_depay - t_in)
        return Gst.PadProbeReturn.OK

    def watchdog(self):
        if self.last_frame is not None and time.monotonic() - self.last_frame > self.idle:
            self.stop()
            return False
        return True

    def stop(self, *_):
        self.loop.quit()
        return False

    def on_message(self, bus, msg):
        if msg.type == Gst.MessageType.ERROR:
            err, dbg = msg.parse_error()
            print("dxt-forwarder: ERROR %s (%s)" % (err.message, dbg), file=sys.stderr)
            self.error = True
            self.loop.quit()
        elif msg.type == Gst.MessageType.EOS:
            self.loop.quit()

    def run(self):
        self.error = False
        bus = self.pipeline.get_bus()
        bus.add_signal_watch()
        bus.connect("message", self.on_message)
        for s in (signal.SIGINT, signal.SIGTERM):
            GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, s, self.stop)
        GLib.timeout_add(250, self.watchdog)
        self.pipeline.set_state(Gst.State.PLAYING)
        print("dxt-forwarder: ready", flush=True)
        self.loop.run()
        self.pipeline.set_state(Gst.State.NULL)
        return 1 if self.error else 0

    def report(self):
        lat = sorted(v[0] / 1e6 for v in self.lat.values())
        rx = sorted(v[1] / 1e6 for v in self.lat.values())
        print("dxt-forwarder: %d frames out of the depayloader, %d sent on" %
              (self.frames_in, len(lat)))
        for what, v in (("first packet in -> last packet out", lat),
                        ("of which first packet in -> frame depayloaded", rx)):
            if v:
                print("dxt-forwarder: per-frame latency, %s: p50 %.2f ms, p99 %.2f ms, "
                      "max %.2f ms (min %.2f ms, %d frames)"
                      % (what, percentile(v, 50), percentile(v, 99), v[-1], v[0], len(v)))
        return lat


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--raw-port", type=int, default=5510)
    p.add_argument("--dxt-port", type=int, default=5512)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--caps", required=True, help="the raw RTP caps of udpsrc")
    p.add_argument("--frames", type=int, default=0, help="stop once this many frames are out")
    p.add_argument("--idle", type=float, default=3.0,
                   help="stop after this many seconds without a frame (after the first)")
    p.add_argument("props", nargs="*", help="dxtenc properties, NAME=VALUE")
    a = p.parse_args()
    Gst.init(None)
    f = Forwarder(a)
    rc = f.run()
    f.report()
    return rc


if __name__ == "__main__":
    sys.exit(main())
