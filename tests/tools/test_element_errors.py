#!/usr/bin/env python3
"""Every error, warning and info message our elements post names a proper
domain and code and carries its reason in the first line: a user reads
gst-launch-1.0's "ERROR: from element ...: <text>", and a (NULL) text there
reads as the domain's generic sentence (for TOO_LAZY: "GStreamer developers
were too lazy to assign an error code to this error"). The sources are
grepped for GST_ELEMENT_ERROR / WARNING / INFO calls (and their
_WITH_DETAILS forms) whose text is (NULL) or whose code is TOO_LAZY."""

import os
import re
import subprocess
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CALL = re.compile(r"\bGST_ELEMENT_(ERROR|WARNING|INFO)(_WITH_DETAILS)?\s*\(")
CODES = {
    "CORE": {"FAILED", "NOT_IMPLEMENTED", "STATE_CHANGE", "PAD", "THREAD",
             "NEGOTIATION", "EVENT", "SEEK", "CAPS", "TAG", "MISSING_PLUGIN",
             "CLOCK", "DISABLED"},
    "LIBRARY": {"FAILED", "INIT", "SHUTDOWN", "SETTINGS", "ENCODE"},
    "RESOURCE": {"FAILED", "NOT_FOUND", "BUSY", "OPEN_READ", "OPEN_WRITE",
                 "OPEN_READ_WRITE", "CLOSE", "READ", "WRITE", "SEEK", "SYNC",
                 "SETTINGS", "NO_SPACE_LEFT", "NOT_AUTHORIZED"},
    "STREAM": {"FAILED", "NOT_IMPLEMENTED", "TYPE_NOT_FOUND", "WRONG_TYPE",
               "CODEC_NOT_FOUND", "DECODE", "ENCODE", "DEMUX", "MUX", "FORMAT",
               "DECRYPT", "DECRYPT_NOKEY"},
}


def arguments(text, start):
    """the top-level arguments of the call whose '(' ends at start"""
    args, depth, begin, i, quoted = [], 0, start, start, False
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                args.append(text[begin:i].strip())
                return args
            depth -= 1
        elif c == "," and depth == 0:
            args.append(text[begin:i].strip())
            begin = i + 1
        i += 1
    return args


def faults(path, text):
    found = []
    for m in CALL.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if text[line_start:m.start()].lstrip().startswith("#define"):
            continue
        line = text.count("\n", 0, m.start()) + 1
        args = arguments(text, m.end())
        where = "%s:%d" % (path, line)
        if len(args) < 5:
            found.append("%s: cannot read the call's arguments" % where)
            continue
        domain, code, message = args[1], args[2], args[3]
        if code not in CODES.get(domain, ()):
            found.append("%s: %s, %s is not a domain and code of GStreamer's "
                         "(or TOO_LAZY)" % (where, domain, code))
        if message.replace(" ", "") == "(NULL)":
            found.append("%s: the text is (NULL): the reason belongs in the "
                         "first line" % where)
    return found


def our_sources():
    files = subprocess.run(["git", "ls-files", "*.c", "*.h", "*.cu"],
                           cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    return [f for f in files if not f.startswith("tests/")]


class ElementErrors(unittest.TestCase):
    def test_checker_finds_faults(self):
        bad = ('  GST_ELEMENT_ERROR (self, STREAM, TOO_LAZY, (NULL),\n'
               '      ("a frame of %u bytes (too big)", n));\n'
               '  GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS, ("ok, (fine)"),'
               ' (NULL));\n')
        found = faults("x.c", bad)
        self.assertEqual(len(found), 2, found)
        self.assertIn("x.c:1: STREAM, TOO_LAZY", found[0])
        self.assertIn("x.c:1: the text is (NULL)", found[1])

    def test_our_messages(self):
        files = our_sources()
        self.assertGreater(len(files), 20)
        found, calls = [], 0
        for f in files:
            with open(os.path.join(ROOT, f), errors="replace") as fh:
                text = fh.read()
            calls += len(CALL.findall(text))
            found += faults(f, text)
        self.assertGreater(calls, 40)
        self.assertEqual(found, [], "\n".join(found))


if __name__ == "__main__":
    unittest.main(verbosity=2)
