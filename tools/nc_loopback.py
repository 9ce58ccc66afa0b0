#!/usr/bin/env python3
"""Network-coded RTP over real UDP on loopback, through the impairment relay.

    sender:   filesrc ! ncencoder ! rtpncpay [! gpusrtpenc] ! udpsink  -> relay (loss, ...)
    receiver: udpsrc [! gpusrtpdec] ! rtpncdepay ! ncdecoder ! filesink <-

Used by `./run demo` (pipelines/nc-demo.py) and by the network tests, so the
demo shows exactly what the tests check. Needs the build's plugins on
GST_PLUGIN_PATH (./run sets it)."""

import os
import sys
import time

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from udp_impair import Impairment, Relay  # noqa: E402

RTP_CAPS = ("application/x-rtp,media=(string)application,clock-rate=(int)90000,"
            "encoding-name=(string)X-RLNC,payload=(int)96")


def _props(d):
    return " ".join("%s=%s" % (k, v) for k, v in d.items())


def _wait(pipeline, timeout_s, what):
    bus = pipeline.get_bus()
    msg = bus.timed_pop_filtered(int(timeout_s * Gst.SECOND),
                                 Gst.MessageType.EOS | Gst.MessageType.ERROR)
    if msg is None:
        raise RuntimeError("%s: no EOS within %d s" % (what, timeout_s))
    if msg.type == Gst.MessageType.ERROR:
        err, dbg = msg.parse_error()
        raise RuntimeError("%s: %s (%s)" % (what, err.message, dbg))


def make_test_ts(path, frames=300, width=640, height=360, pattern="ball"):
    """A test video as MPEG-TS (H.264), the demo's built-in input (snow: as
    many bytes as the bitrate allows, for multi-megabyte files)."""
    p = Gst.parse_launch(
        "videotestsrc num-buffers=%d pattern=%s ! "
        "video/x-raw,width=%d,height=%d,framerate=30/1 ! "
        "x264enc speed-preset=ultrafast tune=zerolatency bitrate=2000 "
        "key-int-max=30 ! h264parse ! mpegtsmux ! filesink location=%s"
        % (frames, pattern, width, height, path))
    p.set_state(Gst.State.PLAYING)
    try:
        _wait(p, 120, "making the test MPEG-TS")
    finally:
        p.set_state(Gst.State.NULL)


def run(input_path, output_path, encoder=None, impairment=None,
        rate_bps=0.0, send_bitrate=40_000_000, decoder=None, timeout_s=120,
        srtp_key=None):
    """Sends input_path through ncencoder/RTP/UDP/relay/ncdecoder into
    output_path. With srtp_key (30 bytes: AES-128 master key || salt) the RTP
    is protected by gpusrtpenc (AES-CM + HMAC-SHA1-80) and checked and
    decrypted by gpusrtpdec. Returns a dict of what happened."""
    Gst.init(None)
    encoder = encoder or {}
    decoder = decoder or {}
    impairment = impairment or Impairment()

    ssrc = 0x4e43504b
    if srtp_key is not None:
        crypto = ("srtp-key=(buffer)%s,srtp-cipher=(string)aes-128-icm,"
                  "srtp-auth=(string)hmac-sha1-80,srtcp-cipher=(string)aes-128-icm,"
                  "srtcp-auth=(string)hmac-sha1-80" % srtp_key.hex())
        rx_caps = RTP_CAPS.replace("application/x-rtp", "application/x-srtp") + \
            ",ssrc=(uint)%d," % ssrc + crypto
        rx_srtp = "gpusrtpdec name=srtpdec ! "
        tx_srtp = ("gpusrtpenc name=srtpenc key=%s rtp-cipher=aes-128-icm "
                   "rtp-auth=hmac-sha1-80 ! " % srtp_key.hex())
    else:
        rx_caps, rx_srtp, tx_srtp = RTP_CAPS, "", ""
    rx = Gst.parse_launch(
        "udpsrc name=src port=0 address=127.0.0.1 buffer-size=4194304 caps=\"%s\" ! "
        "%srtpncdepay ! ncdecoder name=dec %s ! filesink name=out location=%s"
        % (rx_caps, rx_srtp, _props(decoder), output_path))
    # udpsrc binds going to READY, inside set_state; waiting for the state
    # would wait for the first packet (the sinks preroll on it), which only
    # comes once the sender runs
    if rx.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
        raise RuntimeError("receiver pipeline did not start")
    rx_port = rx.get_by_name("src").get_property("port")
    if rx_port == 0:
        # udpsrc reads the bound port back into "port" once it is bound
        raise RuntimeError("receiver did not bind")

    relay = Relay(("127.0.0.1", 0), ("127.0.0.1", rx_port), impairment,
                  rate_bps=rate_bps).start()

    # The sender is paced to send_bitrate, as a user paces it: ncencoder's
    # max-bitrate timestamps the packets of the untimed file and udpsink
    # (sync=true) sends them on time. Unpaced, the whole file would burst onto
    # loopback at close to 1 Gb/s into the receiver's socket buffer.
    tx = Gst.parse_launch(
        "filesrc location=%s blocksize=65536 ! ncencoder name=enc "
        "max-bitrate=%d %s ! rtpncpay name=pay ssrc=%d ! %sudpsink name=sink "
        "host=127.0.0.1 port=%d sync=%s"
        % (input_path, send_bitrate, _props(encoder), ssrc, tx_srtp,
           relay.port, "true" if send_bitrate else "false"))
    t0 = time.monotonic()
    tx.set_state(Gst.State.PLAYING)
    try:
        _wait(tx, timeout_s, "sender")
    finally:
        tx.set_state(Gst.State.NULL)

    # let the relay drain (delay, rate, reordered packets), then end the
    # receiver: UDP has no end of stream, so we send it EOS
    last = -1
    while True:
        time.sleep(0.3)
        fwd = impairment.stats["forwarded"] + impairment.stats["dropped"]
        if fwd == last:
            break
        last = fwd
    relay_stats = relay.stop()
    # EOS makes udpsrc drop what is still in its socket, so first let the
    # receiver take in every forwarded datagram (a loaded machine lags)
    dec = rx.get_by_name("dec")
    seen, since = -1, time.monotonic()
    while time.monotonic() - since < 3.0:
        st = dec.get_property("stats")
        got = st.get_value("packets-received")
        if got >= relay_stats["forwarded"]:
            break
        if got != seen:
            seen, since = got, time.monotonic()
        time.sleep(0.05)
    rx.send_event(Gst.Event.new_eos())
    srtp_stats = None
    try:
        _wait(rx, 30, "receiver")
        dec_stats = rx.get_by_name("dec").get_property("stats")
        if srtp_key is not None:
            st = rx.get_by_name("srtpdec").get_property("stats")
            srtp_stats = {k: st.get_value(k) for k in
                          ("recv-count", "recv-drop-count", "auth-fail-count",
                           "replay-count", "backend") if st.has_field(k)}
    finally:
        rx.set_state(Gst.State.NULL)
    elapsed = time.monotonic() - t0

    stats = {}
    for i in range(dec_stats.n_fields()):
        name = dec_stats.nth_field_name(i)
        stats[name] = dec_stats.get_value(name)
    with open(input_path, "rb") as f:
        original = f.read()
    with open(output_path, "rb") as f:
        decoded = f.read()
    matching = sum(1 for a, b in zip(original, decoded) if a == b) \
        if len(original) < 64 << 20 else None
    return {
        "input_bytes": len(original),
        "output_bytes": len(decoded),
        "identical": original == decoded,
        "matching_bytes": matching,
        "relay": relay_stats,
        "decoder": stats,
        "srtp": srtp_stats,
        "seconds": elapsed,
    }
