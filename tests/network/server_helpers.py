"""What the gpustream-server tests share: the server started on a free
loopback port (also under an open-file limit) and stopped, raw RTSP
requests on an open connection, a bare SETUP over UDP, the lines the
server prints read with a timeout, documented client commands run, and
curl's environment."""

import os
import select
import socket
import subprocess
import sys
import time

SERVER = os.environ.get("GPUSTREAM_SERVER")


def curl_env():
    """The environment for curl: the sanitizer build preloads its runtimes
    (LD_PRELOAD) for the programs that load our plugins; curl loads none of
    our code and, with them preloaded, never completes a transfer"""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def make_clip(path, frames, mux):
    """A file of H.264 video muxed by mux, frames at 30 frames/s (320x240)"""
    subprocess.run(
        ["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=%d" % frames, "!",
         "video/x-raw,width=320,height=240,framerate=30/1", "!", "x264enc",
         "speed-preset=ultrafast", "key-int-max=30", "!", mux, "!",
         "filesink", "location=" + path], check=True, timeout=60)


def make_ts_clip(path, frames):
    make_clip(path, frames, "mpegtsmux")


def make_mp4_clip(path, frames):
    make_clip(path, frames, "mp4mux")


def start_server(directory, *options, stderr=None):
    """The server on a free loopback port, serving directory (None: the
    options say what, e.g. --proxy); returns (process, its URL, its port)"""
    server = subprocess.Popen(
        [SERVER, "--port", "0", "--address", "127.0.0.1", *options]
        + ([directory] if directory is not None else []),
        stdout=subprocess.PIPE, stderr=stderr, text=True)
    url = server.stdout.readline().strip()
    assert url.startswith("rtsp://127.0.0.1:"), url
    return server, url, int(url.rsplit(":", 1)[1].strip("/"))


def rtsp_request(sock, method, url, cseq, extra=""):
    """Sends one request on an open connection; returns (status line, headers)"""
    return rtsp_exchange(sock, method, url, cseq, extra)[:2]


def rtsp_exchange(sock, method, url, cseq, extra=""):
    """Sends one request on an open connection; returns (status line,
    headers, body)"""
    sock.sendall(("%s %s RTSP/1.0\r\nCSeq: %d\r\n%s\r\n"
                  % (method, url, cseq, extra)).encode())
    # only the reply is taken off the socket: after a PLAY over TCP the first
    # interleaved frames may follow it in the same segment, and belong to the
    # caller
    reply = b""
    while True:
        chunk = sock.recv(65536, socket.MSG_PEEK)
        if not chunk:
            break
        end = (reply + chunk).find(b"\r\n\r\n", max(0, len(reply) - 3))
        if end >= 0:
            want = end + 4 - len(reply)
            while want > 0:
                got = sock.recv(want)
                if not got:
                    break
                reply += got
                want -= len(got)
            break
        reply += sock.recv(len(chunk))
    head = reply[:-4] if reply.endswith(b"\r\n\r\n") else reply
    lines = head.decode().split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    # read the body (an SDP) too, so that the next reply starts clean
    body = b""
    length = int(headers.get("content-length", 0))
    while len(body) < length:
        got = sock.recv(length - len(body))
        if not got:
            break
        body += got
    return lines[0], headers, body.decode()


def setup_udp(port, path):
    """A raw SETUP (no DESCRIBE before it) on a new connection, left open;
    no PLAY follows, so nothing is sent to the client port (any free one)"""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.bind(("127.0.0.1", 0))
        client_port = udp.getsockname()[1]
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    status, headers = rtsp_request(
        sock, "SETUP", "rtsp://127.0.0.1:%d%s/stream=0" % (port, path), 1,
        "Transport: RTP/AVP;unicast;client_port=%d-%d\r\n"
        % (client_port, client_port + 1))
    return sock, status, headers


def read_lines(stream, enough, timeout_s):
    """Reads lines from the server's stdout or stderr until enough(lines)
    holds or the timeout passes; returns the lines"""
    lines = []
    text = ""
    deadline = time.monotonic() + timeout_s
    # from the descriptor: select() does not see lines a buffered reader holds
    while not enough(lines) and time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [],
                                   max(0, deadline - time.monotonic()))
        chunk = os.read(stream.fileno(), 65536) if ready else b""
        if not chunk:
            break
        text += chunk.decode()
        *complete, text = text.split("\n")
        lines += complete
    return lines


def server_lines(stream, wanted, timeout_s):
    """Reads the server's stdout or stderr until, for each of the prefixes
    wanted, a line starts with it; returns {prefix: its first line}, without
    those that did not come within the timeout"""
    def first_lines(lines):
        found = {}
        for line in lines:
            for prefix in wanted:
                if line.startswith(prefix) and prefix not in found:
                    found[prefix] = line.strip()
        return found
    return first_lines(read_lines(
        stream, lambda lines: len(first_lines(lines)) == len(wanted), timeout_s))


def start_server_with_file_limit(directory, limit, *options):
    """The server under an open-file limit (soft and hard) of limit, its
    stderr a pipe of text; returns (process, URL, port)"""
    import resource

    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    server = subprocess.Popen(
        [SERVER, "--port", "0", "--address", "127.0.0.1", *options, directory],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=low_limit)
    url = server.stdout.readline().strip()
    return server, url, int(url.rsplit(":", 1)[1].strip("/"))


def stop(server):
    server.terminate()
    server.wait(10)
    server.stdout.close()


def rtspsrc_pause_race(stderr):
    """True when a gst-launch client failed only because rtspsrc (1.22)
    interrupted its own PAUSE at shutdown: after EOS, the state change to
    NULL queues PAUSE and then CLOSE, and CLOSE flushes the connection under
    a PAUSE still in flight, which then reports "Received end-of-file" though
    the server answers the TEARDOWN that follows on the same connection
    (seen with rtspsrc debug logs, under load). Everything had been received
    by then."""
    errors = [line for line in stderr.splitlines() if line.startswith("ERROR:")]
    return (bool(errors) and "gst_rtspsrc_pause ()" in stderr and
            "Could not send message. (Received end-of-file)" in stderr and
            all("GstRTSPSrc" in line and "Could not write to resource" in line
                for line in errors))


def run_client(command, **kwargs):
    """subprocess.run of a documented gst-launch client command (shell), run
    once more when it failed only by rtspsrc_pause_race"""
    run = subprocess.run(command, shell=True, capture_output=True, text=True,
                         **kwargs)
    if run.returncode != 0 and rtspsrc_pause_race(run.stderr):
        print("rtspsrc interrupted its own PAUSE at shutdown; running the "
              "client again: %s" % command, file=sys.stderr)
        run = subprocess.run(command, shell=True, capture_output=True,
                             text=True, **kwargs)
    return run
