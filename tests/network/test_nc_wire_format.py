#!/usr/bin/env python3
"""docs/elements/nc-wire-format.md is enough to read ncencoder's stream: a
decoder written from that page alone (tests/tools/nc_wire_decoder.py) gives
back exactly what went into the encoder, from the packets ncencoder really
sends: byte streams (systematic or not, seeded or explicit vectors, a partial
last generation), with packets lost, through a relay, framed video and live
audio (buffers, timestamps and caps), over RTP, and it drops corrupted
packets by their CRC."""

import os
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

if __name__ == "__main__":
    Gst.init(None)
    unittest.main(verbosity=2)
