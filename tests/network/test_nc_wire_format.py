#!/usr/bin/env python3
"""docs/elements/nc-wire-format.md is enough to read ncencoder's stream: a
decoder written from that page alone (tests/tools/nc_wire_decoder.py) gives
back exactly what went into the encoder, from the packets ncencoder really
sends: byte streams (systematic or not, seeded or explicit vectors, a partial
last generation), with packets lost, through a relay, framed video and live
audio (buffers, timestamps and caps), over RTP, and it drops corrupted
packets by their CRC. The page's rules that our pipelines do not reach by
themselves (an empty BUFFER record, a corrupt record header after complete
records, a data_length that leaves blocks of padding, the prefix pts of
spanning and paced buffers, RTP's marker and timestamp, what a relay sends)
are checked against both that decoder and ncdecoder."""

import os
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.path.insert(0, HERE)

import gi  # noqa: E402

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
from gi.repository import Gst  # noqa: E402

import nc_wire_decoder as wire  # noqa: E402
from test_nc_pipelines import Run, buffer_bytes  # noqa: E402

DECODER = os.path.join(HERE, "..", "tools", "nc_wire_decoder.py")
M, K = 16, 512
# 12 full generations of 16 x 512 bytes and a partial one of 4 blocks, the
# last of them 160 bytes
FILE_SIZE = 12 * M * K + 3 * K + 160


def packets_of(desc, sink="out"):
    r = Run(desc)
    try:
        if r.errors:
            raise AssertionError("%s: %s" % (desc, r.errors))
        return [buffer_bytes(b) for b in r.buffers(sink)]
    finally:
        r.stop()


def decode(packets):
    dec = wire.StreamDecoder()
    for p in packets:
        dec.feed(p)
    return dec


def by_generation(packets):
    """{generation: [packet, ...]} in the order sent."""
    out = {}
    for p in packets:
        out.setdefault(wire.Packet.parse(p).generation, []).append(p)
    return out


def check_payloads(test, dec, packets):
    """Every packet carries its vector times the decoded blocks (section 2)."""
    for raw in packets:
        p = wire.Packet.parse(raw)
        g = dec.generations[p.generation]
        blocks = [g.rows[j][1] for j in range(g.m)]
        test.assertEqual(wire.encode_block(p.coefficients, blocks), p.payload)


class DocExamples(unittest.TestCase):
    def test_seed_expansion_examples(self):
        self.assertEqual(wire.seed_coefficients(0x12345678, 4).hex(" "),
                         "89 3f f1 82")
        self.assertEqual(wire.seed_coefficients(1, 10).hex(" "),
                         "38 01 82 a3 1a 5a 2c c4 6f 95")

    def test_dissected_packet_is_what_ncencoder_sends(self):
        with tempfile.NamedTemporaryFile(suffix=".txt") as f:
            f.write(b"hello")
            f.flush()
            pkts = packets_of("filesrc location=%s ! ncencoder generation-size=4 "
                              "block-size=8 ! appsink name=out sync=false" % f.name)
        self.assertEqual(pkts[0], bytes.fromhex(
            "01020001 00000000 00000008 00000005 00000000 dd75d70f "
            "68656c6c 6f000000".replace(" ", "")))
        dec = decode(pkts)
        self.assertEqual(dec.byte_stream(), [(b"hello", False)])

    def test_invalid_packets_are_dropped_by_rule(self):
        payload = bytes(range(8))
        good = wire.build_packet(wire.FLAG_SOURCE, 1, 0, 8, 5, 0, b"", payload)
        self.assertEqual(wire.Packet.parse(good).payload, payload)
        cases = {
            "version": b"\x02" + good[1:],
            "flags": wire.build_packet(0x10 | wire.FLAG_SOURCE, 1, 0, 8, 5, 0,
                                       b"", payload),
            "length": good + b"\0",
            "range": wire.build_packet(wire.FLAG_SOURCE, 2, 0, 8, 5, 2, b"",
                                       payload),
            "seed": wire.build_packet(0, 1, 0, 8, 5, 7, b"\x01", payload),
            "crc": good[:-1] + b"\xff",
        }
        both = wire.build_packet(wire.FLAG_SEED | wire.FLAG_SOURCE, 1, 0, 8, 5,
                                 0, b"", payload)
        cases["flags+"] = both
        for reason, pkt in cases.items():
            with self.assertRaises(wire.BadPacket) as cm:
                wire.Packet.parse(pkt)
            self.assertEqual(cm.exception.reason, reason.rstrip("+"))


class ByteStreams(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        fd, cls.path = tempfile.mkstemp(suffix=".bin")
        cls.data = os.urandom(FILE_SIZE)
        os.write(fd, cls.data)
        os.close(fd)

    @classmethod
    def tearDownClass(cls):
        os.unlink(cls.path)

    def encode(self, options="", after=""):
        return packets_of("filesrc location=%s ! ncencoder generation-size=%d "
                          "block-size=%d %s %s ! appsink name=out sync=false"
                          % (self.path, M, K, options, after))

    def test_every_mode_decodes_to_the_file(self):
        for systematic in ("true", "false"):
            for coefficients in ("seed", "vector"):
                with self.subTest(systematic=systematic, coefficients=coefficients):
                    pkts = self.encode("systematic=%s coefficients=%s"
                                       % (systematic, coefficients))
                    heads = [wire.Packet.parse(p) for p in pkts]
                    flags = {h.flags for h in heads}
                    coded = wire.FLAG_SEED if coefficients == "seed" else 0
                    self.assertEqual(flags, {coded, wire.FLAG_SOURCE}
                                     if systematic == "true" else {coded})
                    # the last generation is partial: 4 blocks, 1696 bytes
                    last = max(h.generation for h in heads)
                    self.assertEqual(last, 12)
                    self.assertEqual({(h.m, h.data_length) for h in heads
                                      if h.generation == last}, {(4, 3 * K + 160)})
                    dec = decode(pkts)
                    self.assertEqual(dec.byte_stream(), [(self.data, False)])
                    self.assertEqual(dec.counts["bad"], 0)
                    self.assertEqual(dec.counts["innovative"], 12 * M + 4)
                    self.assertEqual(dec.counts["generations-decoded"], 13)
                    check_payloads(self, dec, pkts)

    def test_loss_below_redundancy_is_repaired_by_coded_packets(self):
        for options in ("", "coefficients=vector"):
            with self.subTest(options=options):
                gens = by_generation(self.encode(options))
                kept, dropped = [], 0
                for gid, pkts in sorted(gens.items()):
                    m = wire.Packet.parse(pkts[0]).m
                    spare = len(pkts) - m
                    self.assertGreater(spare, 1)
                    # source blocks (sent first), one fewer than the spare
                    # packets: coded ones must stand in for them
                    lose = {(2 * i + gid) % m for i in range(spare - 1)}
                    self.assertTrue(all(wire.Packet.parse(pkts[i]).flags
                                        & wire.FLAG_SOURCE for i in lose))
                    dropped += len(lose)
                    kept += [p for i, p in enumerate(pkts) if i not in lose]
                self.assertEqual(dropped, 12 * 7 + 1)
                dec = decode(kept)
                self.assertEqual(dec.byte_stream(), [(self.data, False)])
                self.assertEqual(dec.counts["innovative"], 12 * M + 4)
                self.assertEqual(dec.counts["generations-lost"], 0)

    def test_a_lost_generation_is_a_gap_then_discont(self):
        gens = by_generation(self.encode())
        kept = []
        for gid, pkts in sorted(gens.items()):
            # generation 5 keeps m - 1 packets: it cannot be decoded
            kept += pkts[:M - 1] if gid == 5 else pkts
        dec = decode(kept)
        runs = dec.byte_stream()
        self.assertEqual(runs, [(self.data[:5 * M * K], False),
                                (self.data[6 * M * K:], True)])
        self.assertEqual(dec.counts["generations-lost"], 1)

    def test_corrupted_packets_are_dropped_and_counted(self):
        gens = by_generation(self.encode())
        pkts, corrupted = [], 0
        for gid, gpkts in sorted(gens.items()):
            spare = len(gpkts) - wire.Packet.parse(gpkts[0]).m
            for i, p in enumerate(gpkts):
                # one byte of every third packet (the generation id, the CRC,
                # the payload), one fewer than the spare packets: 6 source
                # blocks and a coded packet of a full generation, a source
                # block of the partial one
                if i % 3 == 0 and i // 3 < spare - 1:
                    at = (5, 21, 30, len(p) - 1)[(i // 3) % 4]
                    p = p[:at] + bytes([p[at] ^ 0x5A]) + p[at + 1:]
                    corrupted += 1
                pkts.append(p)
        self.assertEqual(corrupted, 12 * 7 + 1)
        dec = decode(pkts)
        self.assertEqual(dec.counts["bad"], corrupted)
        self.assertEqual(dec.counts["bad-crc"], corrupted)
        self.assertEqual(dec.byte_stream(), [(self.data, False)])

    def test_a_relay_recodes_without_decoding(self):
        pkts = self.encode(after="! ncencoder name=relay redundancy=4")
        heads = [wire.Packet.parse(p) for p in pkts]
        self.assertEqual({h.flags for h in heads}, {wire.FLAG_RECODED})
        gens = by_generation(pkts)
        # one packet per innovative packet received (m of each generation),
        # then redundancy=4 more; ceil(4 x 4 / 16) = 1 for the partial one
        self.assertEqual([len(g) for _, g in sorted(gens.items())],
                         [M + 4] * 12 + [4 + 1])
        kept = []
        for gid, gpkts in sorted(gens.items()):
            # two of the relay's four spare packets lost in every full
            # generation: m random vectors are independent only with
            # probability about 1 - 1/255, two spare ones make it certain
            # in practice
            lose = 2 if len(gpkts) == M + 4 else 0
            kept += gpkts[lose:]
        dec = decode(kept)
        self.assertEqual(dec.byte_stream(), [(self.data, False)])
        check_payloads(self, dec, kept)

    def test_rtp_payloads_are_the_packets(self):
        direct = self.encode("systematic=false")
        r = Run("filesrc location=%s ! ncencoder generation-size=%d "
                "block-size=%d systematic=false ! rtpncpay ! appsink name=out "
                "sync=false" % (self.path, M, K))
        try:
            caps = r.samples["out"][0].get_caps().get_structure(0)
            rtp = [buffer_bytes(b) for b in r.buffers()]
        finally:
            r.stop()
        self.assertEqual(caps.get_string("encoding-name"), "X-RLNC")
        self.assertEqual(caps.get_int("clock-rate"), (True, 90000))
        self.assertEqual(caps.get_int("payload"), (True, 96))
        self.assertEqual({p[0] for p in rtp}, {0x80})  # no CSRC, no extension
        self.assertEqual({p[1] & 0x7F for p in rtp}, {96})
        payloads = [p[12:] for p in rtp]
        self.assertEqual([wire.rtp_payload(p) for p in rtp], payloads)
        # seeds come from a random session number: compare what they decode to
        self.assertEqual(len(payloads), len(direct))
        dec = decode(payloads)
        self.assertEqual(dec.byte_stream(), [(self.data, False)])
        with tempfile.TemporaryDirectory() as tmp:
            dump = os.path.join(tmp, "rtp")
            wire.write_dump(dump, rtp)
            res = subprocess.run([sys.executable, DECODER, "--rtp", dump],
                                 capture_output=True, check=True)
            self.assertEqual(res.stdout, self.data)

    def test_the_command_line_decodes_a_dump(self):
        with tempfile.TemporaryDirectory() as tmp:
            dump, out = os.path.join(tmp, "pkts"), os.path.join(tmp, "out")
            wire.write_dump(dump, self.encode("coefficients=vector"))
            res = subprocess.run([sys.executable, DECODER, "--stats", dump, out],
                                 capture_output=True, text=True, check=True)
            with open(out, "rb") as f:
                self.assertEqual(f.read(), self.data)
            self.assertIn("generations-decoded: 13", res.stderr)


def reference_and_packets(source, encoder):
    """What an appsink gets from source (bytes, pts, duration, caps), and
    the packets ncencoder makes of the same buffers with their timestamps
    (one run: a live source is not repeatable)."""
    r = Run(source + " ! tee name=t t. ! queue ! appsink name=in sync=false "
            "t. ! queue ! " + encoder + " ! appsink name=pkts sync=false")
    try:
        if r.errors:
            raise AssertionError(r.errors)
        ref = [(buffer_bytes(s.get_buffer()), s.get_buffer().pts,
                s.get_buffer().duration, s.get_caps().to_string())
               for s in r.samples["in"]]
        packets = [(buffer_bytes(b), b.pts) for b in r.buffers("pkts")]
        return ref, [p for p, _ in packets], packets, r.buffers("in")
    finally:
        r.stop()


def as_tuples(bufs):
    none = Gst.CLOCK_TIME_NONE
    return [(b.data, none if b.pts is None else b.pts,
             none if b.duration is None else b.duration, b.caps) for b in bufs]


class FramedStreams(unittest.TestCase):
    VIDEO = ("videotestsrc num-buffers=5 pattern=ball ! "
             "video/x-raw,format=RGBA,width=64,height=48")

    def test_video_frames_come_back_with_timestamps_and_caps(self):
        ref, pkts, _, _ = reference_and_packets(
            self.VIDEO, "ncencoder generation-size=8 block-size=700")
        self.assertTrue(all(wire.Packet.parse(p).flags & wire.FLAG_FRAMED
                            for p in pkts))
        dec = decode(pkts)
        bufs = dec.buffers()
        self.assertEqual(len(ref), 5)
        self.assertEqual(as_tuples(bufs), ref)
        self.assertFalse(any(b.discont for b in bufs))
        self.assertEqual(dec.counts["records-corrupt"], 0)

    def test_a_lost_generation_costs_the_frames_it_touches(self):
        ref, pkts, _, _ = reference_and_packets(
            self.VIDEO, "ncencoder generation-size=8 block-size=700")
        gens = by_generation(pkts)
        # records: a CAPS record, then frames of 32 + 12288 bytes from about
        # byte 220; a generation carries 5584 of them, so generation 5
        # (27920..33504) lies inside frame 2, and frame 3 starts in
        # generation 6
        lost = 5
        dec = decode([p for gid, g in sorted(gens.items()) if gid != lost
                      for p in g])
        bufs = dec.buffers()
        self.assertEqual(dec.counts["generations-lost"], 1)
        got = as_tuples(bufs)
        self.assertEqual(got, ref[:2] + ref[3:])
        self.assertEqual([b.discont for b in bufs], [False, False, True, False])

    def test_live_audio_in_partial_generations(self):
        ref, pkts, stamped, _ = reference_and_packets(
            "audiotestsrc is-live=true num-buffers=40 samplesperbuffer=160 "
            "wave=white-noise ! audio/x-raw,rate=8000,channels=1",
            "ncencoder max-latency=20000000 block-size=92 redundancy-percent=25")
        heads = [wire.Packet.parse(p) for p in pkts]
        self.assertTrue(all(h.m < 64 for h in heads))
        dec = decode(pkts)
        self.assertEqual(len(ref), 40)
        self.assertEqual(as_tuples(dec.buffers()), ref)
        # a generation's prefix pts is the pts its packets went out with
        sent = {}
        for raw, pts in stamped:
            sent.setdefault(wire.Packet.parse(raw).generation, set()).add(pts)
        for gid, data in dec.generation_data():
            self.assertEqual({int.from_bytes(data[8:16], "big")}, sent[gid])

    def test_h264_buffer_flags_and_dts(self):
        ref, pkts, _, inbufs = reference_and_packets(
            "videotestsrc num-buffers=12 ! video/x-raw,width=160,height=120 ! "
            "x264enc key-int-max=5", "ncencoder generation-size=8 block-size=700")
        bufs = decode(pkts).buffers()
        self.assertEqual(as_tuples(bufs), ref)
        self.assertEqual([b.dts for b in bufs], [b.dts for b in inbufs])
        # record flag bits: DELTA_UNIT, HEADER, GAP, DROPPABLE
        carried = (Gst.BufferFlags.DELTA_UNIT, Gst.BufferFlags.HEADER,
                   Gst.BufferFlags.GAP, Gst.BufferFlags.DROPPABLE)
        want = [sum(1 << i for i, f in enumerate(carried) if b.has_flags(f))
                for b in inbufs]
        self.assertEqual([b.flags for b in bufs], want)
        self.assertEqual(want.count(0), 3)  # key frames 0, 5 and 10

    def test_late_join_learns_caps_from_the_repeated_record(self):
        # 160x120 RGBA: records of 32 + 76800 bytes, about 13.8 generations
        # of 8 x 700 each; frames start in generations 0, 13, 27, 41, ...
        # A receiver joining at generation 16 reads from the first record
        # that starts after it (generation 27), where the encoder repeats
        # the CAPS record: frames 2.. come back, typed
        ref, pkts, _, _ = reference_and_packets(
            "videotestsrc num-buffers=6 ! video/x-raw,format=RGBA,width=160,"
            "height=120", "ncencoder generation-size=8 block-size=700")
        dec = decode([p for p in pkts if wire.Packet.parse(p).generation >= 16])
        self.assertEqual(as_tuples(dec.buffers()), ref[2:])
        self.assertEqual(dec.counts["buffers-untyped"], 0)


def prefix_pts(data):
    pts = int.from_bytes(data[8:16], "big")
    return None if pts == 0xFFFFFFFFFFFFFFFF else pts


def record_header(rtype, length, pts=None, flags=0):
    none = 0xFFFFFFFFFFFFFFFF
    return struct.pack(">BBHIQQQ", rtype, flags, 0, length,
                       none if pts is None else pts, none, none)


def source_packets(generation, k, data, framed=False):
    """The SOURCE packets of one generation of data (section 1), the last
    block zero-padded"""
    m = -(-len(data) // k)
    padded = data + bytes(m * k - len(data))
    flags = wire.FLAG_SOURCE | (wire.FLAG_FRAMED if framed else 0)
    return [wire.build_packet(flags, m, generation, k, len(data), j, b"",
                              padded[j * k:(j + 1) * k]) for j in range(m)]


def push_through(element, caps, buffers):
    """appsrc (caps; buffers as (bytes, pts)) ! element ! appsink name=out:
    the Run, to EOS or an error"""
    def push(pipeline):
        src = pipeline.get_by_name("src")
        for data, pts in buffers:
            buf = Gst.Buffer.new_wrapped(bytes(data)) if data else Gst.Buffer.new()
            buf.pts = Gst.CLOCK_TIME_NONE if pts is None else pts
            src.emit("push-buffer", buf)
        src.emit("end-of-stream")

    return Run('appsrc name=src format=time caps="%s" ! %s ! appsink name=out '
               'sync=false' % (caps, element), timeout_s=30, on_playing=push)


class WireRules(unittest.TestCase):
    """The rules of the page that no pipeline of ours reaches by itself:
    empty records, a corrupt record header after complete records, a
    data_length that leaves blocks of padding, a prefix pts of a buffer
    spanning generations and of paced packets, RTP's marker and timestamp."""

    def decoded(self, packets, error=None):
        """ncdecoder's buffers, samples and stats for packets; error: the
        error it must end with, else none"""
        r = push_through("ncdecoder name=dec", "application/x-rlnc",
                         [(p, None) for p in packets])
        try:
            self.assertEqual(r.errors, [error] if error else [])
            return r.buffers(), r.samples["out"], r.stats("dec")
        finally:
            r.stop()

    def test_an_empty_buffer_record(self):
        ms = Gst.MSECOND
        r = push_through(
            "ncencoder framing=buffers generation-size=4 block-size=64",
            "application/x-test", [(b"abc", 0), (b"", 10 * ms),
                                   (b"defg", 20 * ms)])
        r.stop()
        self.assertEqual(r.errors, [])
        packets = [buffer_bytes(b) for b in r.buffers()]
        bufs = decode(packets).buffers()
        self.assertEqual([(b.data, b.pts) for b in bufs],
                         [(b"abc", 0), (b"", 10 * ms), (b"defg", 20 * ms)])
        out, _, _ = self.decoded(packets)
        self.assertEqual([(buffer_bytes(b), b.pts) for b in out],
                         [(b"abc", 0), (b"", 10 * ms), (b"defg", 20 * ms)])

    def test_records_before_a_corrupt_header_stay_out(self):
        k = 128
        caps = b"application/x-test"
        gen0 = (struct.pack(">IIQ", 16, 0, 0) + record_header(2, len(caps))
                + caps + record_header(1, 3, 0) + b"one"
                + bytes([9]) + bytes(31) + b"lost bytes")
        gen1 = (struct.pack(">IIQ", 16, 0, Gst.SECOND)
                + record_header(1, 3, Gst.SECOND) + b"two")
        packets = (source_packets(0, k, gen0, framed=True)
                   + source_packets(1, k, gen1, framed=True))
        dec = decode(packets)
        self.assertEqual([(b.data, b.discont) for b in dec.buffers()],
                         [(b"one", False), (b"two", True)])
        self.assertEqual(dec.counts["records-corrupt"], 1)
        out, samples, stats = self.decoded(packets)
        self.assertEqual([(buffer_bytes(b),
                           b.has_flags(Gst.BufferFlags.DISCONT)) for b in out],
                         [(b"one", False), (b"two", True)])
        self.assertEqual(samples[0].get_caps().to_string(),
                         "application/x-test")
        self.assertEqual(stats["records-bad"], 1)

    def test_a_data_length_that_leaves_blocks_of_padding(self):
        # m = 4 blocks of 8 bytes for 5 bytes of data: no encoder of ours
        # writes it, every decoder accepts it and needs all 4 packets
        padded = b"hello" + bytes(27)
        packets = [wire.build_packet(wire.FLAG_SOURCE, 4, 0, 8, 5, j, b"",
                                     padded[j * 8:(j + 1) * 8])
                   for j in range(4)]
        self.assertEqual(decode(packets).byte_stream(), [(b"hello", False)])
        out, _, stats = self.decoded(packets)
        self.assertEqual(b"".join(buffer_bytes(b) for b in out), b"hello")
        self.assertEqual(stats["generations-decoded"], 1)
        out, _, stats = self.decoded(
            packets[:3], "nothing could be decoded from 3 packets: 1 "
            "generation(s) lost, 0 packets bad, 0 of another stream")
        self.assertEqual((out, stats["generations-lost"]), ([], 1))

    def test_prefix_pts_of_buffers_spanning_generations(self):
        # 160x120 RGBA frames of 76800 bytes span about 14 generations of
        # 8 x 700 bytes: each generation's prefix has the pts of the record
        # its first byte after the prefix belongs to (a CAPS record: of the
        # buffer after it)
        ref, pkts, stamped, _ = reference_and_packets(
            "videotestsrc num-buffers=4 ! video/x-raw,format=RGBA,width=160,"
            "height=120", "ncencoder generation-size=8 block-size=700")
        gens = decode(pkts).generation_data()
        self.assertEqual(int.from_bytes(gens[0][1][0:4], "big"), 16)
        stream, starts = b"", []
        for _gid, data in gens:
            starts.append(len(stream))
            stream += data[16:]
        records, at = [], 0
        while at < len(stream):
            rtype, _, _, length, pts = struct.unpack(">BBHIQ",
                                                     stream[at:at + 16])
            records.append((at, at + 32 + length, rtype, pts))
            at += 32 + length
        self.assertEqual(at, len(stream))
        buffer_pts = [r[3] for r in records if r[2] == wire.RECORD_BUFFER]
        self.assertEqual(buffer_pts, [r[1] for r in ref])
        sent = {}
        for raw, pts in stamped:
            sent.setdefault(wire.Packet.parse(raw).generation, set()).add(pts)
        spanned = 0
        for (gid, data), start in zip(gens, starts):
            i = next(n for n, r in enumerate(records) if r[0] <= start < r[1])
            while records[i][2] != wire.RECORD_BUFFER:
                i += 1
            self.assertEqual(prefix_pts(data), records[i][3], gid)
            self.assertEqual(sent[gid], {records[i][3]})
            spanned += int.from_bytes(data[0:4], "big") == wire.NO_RECORD
        self.assertGreater(spanned, 30)

    def test_paced_packets_of_an_untimed_file(self):
        with tempfile.NamedTemporaryFile(suffix=".bin") as f:
            f.write(os.urandom(200000))
            f.flush()
            r = Run("filesrc location=%s ! ncencoder framing=buffers "
                    "generation-size=16 block-size=1000 max-bitrate=80000000 "
                    "! appsink name=out sync=false" % f.name)
            try:
                self.assertEqual(r.errors, [])
                stamped = [(buffer_bytes(b), b.pts) for b in r.buffers()]
            finally:
                r.stop()
        pts = [t for _, t in stamped]
        self.assertTrue(all(t != Gst.CLOCK_TIME_NONE for t in pts))
        self.assertEqual(pts, sorted(pts))
        self.assertLess(pts[0], pts[-1])
        gens = decode([p for p, _ in stamped]).generation_data()
        self.assertGreater(len(gens), 10)
        self.assertEqual({prefix_pts(d) for _, d in gens}, {None})

    def test_rtp_marker_and_timestamps(self):
        r = Run("videotestsrc num-buffers=4 ! video/x-raw,format=RGBA,"
                "width=160,height=120 ! ncencoder generation-size=8 "
                "block-size=700 ! tee name=t t. ! queue ! appsink name=pkts "
                "sync=false t. ! queue ! rtpncpay ! appsink name=rtp "
                "sync=false")
        try:
            self.assertEqual(r.errors, [])
            pkts = [buffer_bytes(b) for b in r.buffers("pkts")]
            rtp = [buffer_bytes(b) for b in r.buffers("rtp")]
        finally:
            r.stop()
        self.assertEqual([p[12:] for p in rtp], pkts)
        self.assertEqual({p[1] & 0x80 for p in rtp}, {0})
        prefix = {gid: prefix_pts(d)
                  for gid, d in decode(pkts).generation_data()}
        stamps = {}
        for p in rtp:
            gid = wire.Packet.parse(p[12:]).generation
            stamps.setdefault(gid, set()).add(struct.unpack(">I", p[4:8])[0])
        self.assertEqual({len(v) for v in stamps.values()}, {1})
        base = stamps[0].pop()
        for gid, v in stamps.items():
            if gid == 0:
                continue
            self.assertEqual((v.pop() - base) % (1 << 32),
                             prefix[gid] * 90000 // Gst.SECOND
                             - prefix[0] * 90000 // Gst.SECOND, gid)


if __name__ == "__main__":
    Gst.init(None)
    unittest.main(verbosity=2)
