#!/usr/bin/env python3
"""ncencoder / ncdecoder as a GStreamer user chains them: what comes out of the
decoder is what went into the encoder (buffer for buffer, timestamps and caps
included), a decoder plays it, a live pipeline renders on time, a partial
generation costs what it carries, and losses are said on the bus."""

import os
import struct
import sys
import unittest

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
from gi.repository import GLib, Gst, GstApp  # noqa: E402,F401

NC_HEADER = 24
FLAG_FRAMED = 0x08


def nc_header(data):
    """The fields of a coded packet's header (docs/elements/nc-wire-format.md)."""
    version, flags, m, gen, k, length, seed = struct.unpack(">BBHIIII", data[:20])
    return {"flags": flags, "m": m, "generation": gen, "k": k,
            "length": length, "seed": seed}


def fields(structure):
    """A GstStructure as a dict."""
    out = {}
    structure.foreach(lambda f, v: out.__setitem__(GLib.quark_to_string(f), v)
                      or True)
    return out


def buffer_bytes(buf):
    ok, info = buf.map(Gst.MapFlags.READ)
    assert ok
    try:
        return bytes(info.data)
    finally:
        buf.unmap(info)


class Run:
    """Runs a pipeline to EOS (or error), keeping what its appsinks got and
    every message of interest."""

    def __init__(self, desc, timeout_s=60, probes=None, on_playing=None):
        """on_playing(pipeline): called once the pipeline is set to PLAYING
        (an appsrc's buffers pushed there)"""
        self.pipeline = Gst.parse_launch(desc)
        self.samples = {}
        self.errors, self.warnings, self.elements = [], [], []
        for name, fn in (probes or {}).items():
            el, pad = name.split(".")
            self.pipeline.get_by_name(el).get_static_pad(pad).add_probe(
                Gst.PadProbeType.BUFFER, fn)
        it = self.pipeline.iterate_sinks()
        sinks = []
        while True:
            res, el = it.next()
            if res != Gst.IteratorResult.OK:
                break
            sinks.append(el)
        for el in sinks:
            if isinstance(el, GstApp.AppSink):
                self.samples[el.get_name()] = []
                el.set_property("emit-signals", True)
                el.connect("new-sample", self._on_sample)
        self.pipeline.set_state(Gst.State.PLAYING)
        if on_playing:
            on_playing(self.pipeline)
        bus = self.pipeline.get_bus()
        while True:
            msg = bus.timed_pop(int(timeout_s * Gst.SECOND))
            if msg is None:
                self.pipeline.set_state(Gst.State.NULL)
                raise RuntimeError("no EOS within %d s: %s" % (timeout_s, desc))
            if msg.type == Gst.MessageType.ERROR:
                self.errors.append(msg.parse_error()[0].message)
                break
            if msg.type == Gst.MessageType.WARNING:
                self.warnings.append(msg.parse_warning()[0].message)
            if msg.type == Gst.MessageType.ELEMENT:
                s = msg.get_structure()
                self.elements.append((s.get_name(), fields(s)))
            if msg.type == Gst.MessageType.EOS:
                break

    def _on_sample(self, sink):
        sample = sink.emit("pull-sample")
        self.samples[sink.get_name()].append(sample)
        return Gst.FlowReturn.OK

    def buffers(self, sink="out"):
        return [s.get_buffer() for s in self.samples[sink]]

    def stats(self, name):
        return fields(self.pipeline.get_by_name(name).get_property("stats"))

    def stop(self):
        self.pipeline.set_state(Gst.State.NULL)


def drop_generations(gens):
    """A probe that drops every packet of the given generations."""
    def probe(_pad, info):
        data = buffer_bytes(info.get_buffer())
        if nc_header(data)["generation"] in gens:
            return Gst.PadProbeReturn.DROP
        return Gst.PadProbeReturn.OK
    return probe


RAW = ("videotestsrc num-buffers=12 pattern=ball ! "
       "video/x-raw,format=RGBA,width=160,height=120,framerate=30/1")


class FramedStreams(unittest.TestCase):
    def test_raw_video_comes_back_frame_for_frame(self):
        ref = Run(RAW + " ! appsink name=out sync=false")
        got = Run(RAW + " ! ncencoder generation-size=16 block-size=1000 "
                  "! ncdecoder name=dec ! appsink name=out sync=false")
        a, b = ref.buffers(), got.buffers()
        self.assertEqual(len(b), 12)
        for x, y in zip(a, b):
            self.assertEqual(buffer_bytes(x), buffer_bytes(y))
            self.assertEqual((x.pts, x.duration), (y.pts, y.duration))
        self.assertTrue(ref.samples["out"][0].get_caps().is_equal(
            got.samples["out"][0].get_caps()))
        self.assertEqual(got.stats("dec")["buffers-out"], 12)
        ref.stop()
        got.stop()

    def test_through_a_relay(self):
        ref = Run(RAW + " ! appsink name=out sync=false")
        got = Run(RAW + " ! ncencoder generation-size=16 block-size=1000 "
                  "! ncencoder name=relay redundancy=2 ! ncdecoder "
                  "! appsink name=out sync=false")
        a, b = ref.buffers(), got.buffers()
        self.assertEqual([(buffer_bytes(x), x.pts) for x in a],
                         [(buffer_bytes(y), y.pts) for y in b])
        self.assertGreater(got.stats("relay")["packets-innovative"], 0)
        ref.stop()
        got.stop()

    def test_buffers_of_a_file_are_typefound(self):
        # framing=buffers on input without caps: the buffers come back, and
        # what they are is found by typefinding, as for a byte stream
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                            "nc-tf-%d.ts" % os.getpid())
        sys.path.insert(0, os.path.join(os.path.dirname(
            os.path.abspath(__file__)), "..", "..", "tools"))
        import nc_loopback
        nc_loopback.make_test_ts(path, frames=30)
        try:
            got = Run("filesrc location=%s blocksize=4096 ! ncencoder "
                      "framing=buffers ! ncdecoder ! appsink name=out "
                      "sync=false" % path)
            caps = got.samples["out"][0].get_caps().get_structure(0)
            self.assertEqual(caps.get_name(), "video/mpegts")
            with open(path, "rb") as f:
                data = f.read()
            self.assertEqual([b.get_size() for b in got.buffers()],
                             [min(4096, len(data) - i)
                              for i in range(0, len(data), 4096)])
            got.stop()
        finally:
            os.unlink(path)

    def test_loss_drops_only_the_frames_it_touches(self):
        # a frame is 76800 bytes, a generation 16000: generation 7 holds
        # bytes of frame 1 only; frames 0 and 2.. come back intact
        ref = Run(RAW + " ! appsink name=out sync=false")
        got = Run(RAW + " ! ncencoder name=enc generation-size=16 "
                  "block-size=1000 ! identity name=loss ! ncdecoder "
                  "name=dec ! appsink name=out sync=false",
                  probes={"loss.sink": drop_generations({7})})
        a = {x.pts: buffer_bytes(x) for x in ref.buffers()}
        b = got.buffers()
        self.assertEqual(len(b), 11)
        self.assertNotIn(a and sorted(a)[1], [x.pts for x in b])
        for x in b:
            self.assertEqual(buffer_bytes(x), a[x.pts])
        after = [x for x in b if x.pts > sorted(a)[1]][0]
        self.assertTrue(after.has_flags(Gst.BufferFlags.DISCONT))
        lost = [s for n, s in got.elements if n == "nc-generations-lost"]
        self.assertEqual(sum(s["count"] for s in lost), 1)
        self.assertEqual(lost[0]["first-generation"], 7)
        self.assertTrue(any("generation(s) of data lost" in w
                            for w in got.warnings), got.warnings)
        ref.stop()
        got.stop()

    def test_h264_every_frame_decoded(self):
        # one encoder, teed: the frames decoded through ncencoder/ncdecoder
        # are those decoded straight (two x264 runs need not give the same
        # bytes)
        got = Run("videotestsrc num-buffers=30 ! video/x-raw,width=320,height=240 "
                  "! x264enc key-int-max=10 ! tee name=t "
                  "t. ! queue ! avdec_h264 ! appsink name=ref sync=false "
                  "t. ! queue ! ncencoder generation-size=32 block-size=1316 "
                  "redundancy-percent=20 ! ncdecoder ! avdec_h264 "
                  "! appsink name=out sync=false")
        self.assertEqual(got.errors, [])
        a, b = got.buffers("ref"), got.buffers("out")
        self.assertEqual(len(a), 30)
        self.assertEqual(len(b), 30)
        for x, y in zip(a, b):
            self.assertEqual(buffer_bytes(x), buffer_bytes(y))
            self.assertEqual(x.pts, y.pts)
        got.stop()

    def test_live_sync_renders_every_buffer(self):
        got = Run("audiotestsrc is-live=true num-buffers=50 samplesperbuffer=160 "
                  "! audio/x-raw,rate=8000,channels=1 ! ncencoder name=enc "
                  "max-latency=20000000 ! ncdecoder ! fakesink name=sink "
                  "sync=true qos=true max-lateness=5000000")
        stats = got.stats("sink")
        self.assertEqual(got.errors, [])
        self.assertEqual(stats["rendered"], 50)
        self.assertEqual(stats["dropped"], 0)
        q = Gst.Query.new_latency()
        got.pipeline.get_by_name("enc").get_static_pad("src").query(q)
        live, lmin, _ = q.parse_latency()
        self.assertTrue(live)
        self.assertGreaterEqual(lmin, 20 * Gst.MSECOND)
        got.stop()


class PartialGenerations(unittest.TestCase):
    def run_live(self, framing, k, probes=None):
        return Run("audiotestsrc is-live=true num-buffers=100 "
                   "samplesperbuffer=160 wave=white-noise ! "
                   "audio/x-raw,rate=8000,channels=1 ! tee name=t "
                   "t. ! queue ! appsink name=in sync=false "
                   "t. ! queue ! ncencoder name=enc max-latency=20000000 "
                   "redundancy-percent=25 block-size=%d framing=%s ! "
                   "tee name=p p. ! queue ! appsink name=pkts sync=false "
                   "p. ! queue ! identity name=loss ! ncdecoder name=dec "
                   "! appsink name=out sync=false" % (k, framing),
                   probes=probes)

    def test_cost_of_a_live_low_rate_stream(self):
        # 20 ms of 8 kHz S16 mono is 320 bytes; 64 padded blocks of 1024
        # bytes used to go out for each of them (36.8x the input)
        for framing, k, extra in (("bytes", 80, 0), ("buffers", 92, 16 + 32)):
            r = self.run_live(framing, k)
            inp = sum(b.get_size() for b in r.buffers("in"))
            pkts = r.buffers("pkts")
            out = sum(b.get_size() for b in pkts)
            gens = len({nc_header(buffer_bytes(b))["generation"] for b in pkts})
            caps_records = sum(1 for b in pkts
                               if nc_header(buffer_bytes(b))["flags"] & FLAG_FRAMED)
            self.assertEqual(inp, 100 * 320)
            # each generation: its data (+ framing) in whole blocks, a
            # quarter more coded, a 24-byte header per packet; caps records
            # (framed) come every 16 generations
            bound = 1.25 * (inp + gens * extra) + len(pkts) * NC_HEADER
            if framing == "buffers":
                caps_len = len(r.samples["in"][0].get_caps().to_string())
                # and cost their blocks, with one packet more when the
                # quarter of their blocks rounds up
                bound += ((gens + 15) // 16) * (1.25 * (32 + caps_len + k)
                                                + k + NC_HEADER)
                self.assertGreater(caps_records, 0)
            self.assertLessEqual(out, bound, (framing, out, inp))
            self.assertEqual(b"".join(buffer_bytes(b) for b in r.buffers("out")),
                             b"".join(buffer_bytes(b) for b in r.buffers("in")))
            r.stop()

    def test_partial_generations_decode_after_loss(self):
        # the first packet of every generation lost: one coded packet repairs
        dropped = set()

        def probe(_pad, info):
            h = nc_header(buffer_bytes(info.get_buffer()))
            if h["generation"] not in dropped:
                dropped.add(h["generation"])
                return Gst.PadProbeReturn.DROP
            return Gst.PadProbeReturn.OK

        r = self.run_live("bytes", 80, probes={"loss.sink": probe})
        self.assertGreater(len(dropped), 50)
        self.assertEqual(b"".join(buffer_bytes(b) for b in r.buffers("out")),
                         b"".join(buffer_bytes(b) for b in r.buffers("in")))
        self.assertEqual(r.stats("dec")["generations-lost"], 0)
        r.stop()


class LossIsSaid(unittest.TestCase):
    def setUp(self):
        self.path = "/tmp/nc-pipelines-%d.bin" % os.getpid()
        with open(self.path, "wb") as f:
            f.write(os.urandom(64 * 32 * 1024))

    def tearDown(self):
        os.unlink(self.path)

    def test_total_loss_is_an_error(self):
        # 40 % of the packets lost at the default redundancy (8 of 64):
        # no generation can be decoded
        count = {"n": 0}

        def probe(_pad, _info):
            count["n"] += 1
            return (Gst.PadProbeReturn.DROP if count["n"] % 5 < 2
                    else Gst.PadProbeReturn.OK)

        r = Run("filesrc location=%s ! ncencoder block-size=1024 ! "
                "identity name=loss ! ncdecoder name=dec ! fakesink"
                % self.path, probes={"loss.sink": probe})
        self.assertEqual(len(r.errors), 1, r.errors)
        self.assertIn("nothing could be decoded", r.errors[0])
        self.assertIn("32 generation(s) lost", r.errors[0])
        lost = [s for n, s in r.elements if n == "nc-generations-lost"]
        self.assertEqual(sum(s["count"] for s in lost), 32)
        self.assertTrue(r.warnings)
        r.stop()

    def test_totals_at_the_end_of_stream(self):
        # generations 20-31 lose half their packets and are still pending at
        # EOS, where all twelve are declared lost at once: the warnings,
        # one a second, say one of them; the totals say all
        seen = {"n": 0}

        def probe(_pad, info):
            seen["n"] += 1
            gen = nc_header(buffer_bytes(info.get_buffer()))["generation"]
            return (Gst.PadProbeReturn.DROP if gen >= 20 and seen["n"] % 2
                    else Gst.PadProbeReturn.OK)

        r = Run("filesrc location=%s ! ncencoder block-size=1024 ! "
                "identity name=loss ! ncdecoder name=dec "
                "generation-timeout=0 max-generations-in-flight=64 ! fakesink"
                % self.path, probes={"loss.sink": probe})
        self.assertEqual(r.errors, [])
        totals = [s for n, s in r.elements if n == "nc-decoder-totals"]
        self.assertEqual(len(totals), 1, r.elements)
        self.assertEqual(
            {f: totals[0][f] for f in ("generations-decoded",
                                       "generations-lost", "first-generation",
                                       "last-generation")},
            {"generations-decoded": 20, "generations-lost": 12,
             "first-generation": 0, "last-generation": 31})
        self.assertEqual(totals[0]["packets-received"], r.stats("dec")[
            "packets-received"])
        self.assertIn("end of stream: 12 generation(s) of data lost in all, "
                      "20 decoded (packets of generations 0 to 31 arrived)",
                      r.warnings)
        r.stop()
        # a stream without loss: the totals, and no warning
        r = Run("filesrc location=%s ! ncencoder block-size=1024 ! "
                "ncdecoder name=dec ! fakesink" % self.path)
        totals = [s for n, s in r.elements if n == "nc-decoder-totals"]
        self.assertEqual([(t["generations-decoded"], t["generations-lost"])
                          for t in totals], [(32, 0)])
        self.assertEqual((r.errors, r.warnings), ([], []))
        r.stop()

    def test_garbage_is_an_error(self):
        r = Run("filesrc location=%s blocksize=1072 num-buffers=200 ! "
                "application/x-rlnc ! ncdecoder name=dec ! fakesink" % self.path)
        self.assertEqual(len(r.errors), 1, r.errors)
        self.assertIn("nothing could be decoded from 200 packets", r.errors[0])
        self.assertEqual(r.stats("dec")["packets-bad"], 200)
        r.stop()


class Relay(unittest.TestCase):
    def test_relay_with_caps_from_a_depayloader_without_sprop(self):
        path = "/tmp/nc-relay-%d.bin" % os.getpid()
        data = os.urandom(300007)
        with open(path, "wb") as f:
            f.write(data)
        try:
            r = Run("filesrc location=%s ! ncencoder generation-size=32 "
                    "block-size=1316 ! rtpncpay ! capssetter replace=true "
                    "caps=\"application/x-rtp,media=application,clock-rate=90000,"
                    "encoding-name=X-RLNC,payload=96\" ! rtpncdepay ! ncencoder "
                    "name=relay redundancy=4 ! ncdecoder ! appsink name=out "
                    "sync=false" % path)
            self.assertEqual(r.errors, [])
            self.assertEqual(b"".join(buffer_bytes(b) for b in r.buffers()), data)
            self.assertGreater(r.stats("relay")["packets-innovative"], 0)
            r.stop()
        finally:
            os.unlink(path)


class Pacing(unittest.TestCase):
    def test_max_bitrate_timestamps_untimed_packets(self):
        path = "/tmp/nc-pace-%d.bin" % os.getpid()
        with open(path, "wb") as f:
            f.write(os.urandom(500000))
        try:
            r = Run("filesrc location=%s ! ncencoder max-bitrate=40000000 "
                    "block-size=1316 generation-size=32 ! appsink name=out "
                    "sync=false" % path)
            pkts = r.buffers()
            total = sum(b.get_size() for b in pkts)
            self.assertEqual(pkts[0].pts, 0)
            for a, b in zip(pkts, pkts[1:]):
                self.assertEqual(b.pts, a.pts + a.duration)
            span = pkts[-1].pts + pkts[-1].duration
            self.assertAlmostEqual(span / Gst.SECOND, total * 8 / 40e6, places=4)
            r.stop()
        finally:
            os.unlink(path)


if __name__ == "__main__":
    Gst.init(None)
    unittest.main(verbosity=2)
