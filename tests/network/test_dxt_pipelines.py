#!/usr/bin/env python3
"""pipelines/dxt-forward.sh run as a user would, from a shell without the
build's environment (the script loads it): the receiver decodes frames, and
the exit status says whether every frame sent was decoded; a forwarder that
cannot start (a dxtenc property it does not have) decodes nothing and fails."""

import os
import re
import socket
import subprocess
import time
import unittest

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(root, "pipelines", "dxt-forward.sh")


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run_script(*args):
    env = {k: v for k, v in os.environ.items()
           if k not in ("GST_PLUGIN_PATH_1_0", "GST_PLUGIN_PATH")}
    env.update(RAW_PORT=str(free_udp_port()), DXT_PORT=str(free_udp_port()))
    t0 = time.monotonic()
    p = subprocess.run(["sh", SCRIPT] + list(args), capture_output=True,
                       text=True, timeout=170, env=env)
    print("\n%s%s(%.1f s)" % (p.stdout, p.stderr, time.monotonic() - t0))
    m = re.search(r"receiver decoded (\d+) of (\d+) frames", p.stdout)
    return p, m


class DxtForward(unittest.TestCase):
    def test_without_environment(self):
        p, m = run_script("10")
        self.assertIsNotNone(m, p.stdout + p.stderr)
        decoded, sent = int(m.group(1)), int(m.group(2))
        self.assertEqual(sent, 10)
        self.assertNotIn('no element "dxtenc"', p.stdout + p.stderr)
        # UDP on a loaded machine may lose a frame: the status says so
        self.assertGreater(decoded, 0, p.stdout + p.stderr)
        self.assertEqual(p.returncode == 0, decoded == sent,
                         "exit %d with %d of %d decoded"
                         % (p.returncode, decoded, sent))

    def test_nothing_decoded_fails(self):
        p, m = run_script("5", "no-such-property=1")
        self.assertIsNotNone(m, p.stdout + p.stderr)
        self.assertEqual(int(m.group(1)), 0)
        self.assertNotEqual(p.returncode, 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
