#!/usr/bin/env python3
"""The installed tree: libgstgpustream is internal to the project (no headers,
no pkg-config file, in a directory of its own that is not on the linker's
path), every installed plugin finds it through its run path, and all plugins
loaded in one process share one instance of it (one coder pool, one
scheduler worker per device).

    installed.py MESON BUILD_DIR

installs the build into a temporary directory (meson install --destdir) and
loads every installed plugin from there, with nothing of the build tree on
any search path."""

import os
import subprocess
import sys
import tempfile
import unittest

MESON, BUILD = sys.argv[1], sys.argv[2]
LIB = "libgstgpustream-1.0.so"

# Run in a child process: loads the plugins given, then prints the file of
# every mapping of the library (one line each, deduplicated).
LOADER = r"""
import sys
import gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst
Gst.init(None)
for path in sys.argv[1:]:
    plugin = Gst.Plugin.load_file(path)
    for f in Gst.Registry.get().get_feature_list_by_plugin(plugin.get_name()):
        if isinstance(f, Gst.ElementFactory):
            e = f.create(None)
            assert e is not None, "could not create " + f.get_name()
maps = set()
for line in open("/proc/self/maps"):
    if "%s" in line:
        maps.add(line.split()[-1])
print("\n".join(sorted(maps)))
""" % LIB


class Installed(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dest = cls.tmp.name
        subprocess.run([MESON, "install", "-C", BUILD, "--no-rebuild", "--quiet",
                        "--destdir", cls.dest], check=True, stdout=subprocess.DEVNULL)
        cls.files = []
        for root, _, names in os.walk(cls.dest):
            cls.files += [os.path.join(root, n) for n in names]
        cls.plugins = sorted(f for f in cls.files
                             if os.path.basename(os.path.dirname(f)) == "gstreamer-1.0"
                             and os.path.basename(f).startswith("libgstgpustream"))
        cls.libs = [f for f in cls.files if os.path.basename(f).startswith(LIB)]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_library_is_private(self):
        self.assertTrue(self.libs, "no %s installed" % LIB)
        for f in self.libs:
            self.assertEqual(os.path.basename(os.path.dirname(f)), "gst-gpustream",
                             "%s is not in its private directory" % f)
        self.assertEqual([f for f in self.files if f.endswith(".h") or f.endswith(".pc")], [],
                         "headers or pkg-config files installed")

    def test_plugins_find_it_relative_to_themselves(self):
        self.assertTrue(self.plugins, "no plugin installed")
        for p in self.plugins:
            out = subprocess.run(["readelf", "-d", p], check=True, capture_output=True,
                                 text=True).stdout
            self.assertIn("[$ORIGIN/../gst-gpustream]", out, p)
            self.assertNotIn(os.path.abspath(BUILD), out, p + " still points into the build")

    def load(self, plugins):
        """Loads plugins in a child with nothing of the build on its paths;
        returns the files the library was mapped from."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GST_PLUGIN") and k != "LD_LIBRARY_PATH"}
        env["GST_REGISTRY_1_0"] = os.path.join(self.dest, "registry.bin")
        # only GStreamer's own core elements besides ours
        env["GST_PLUGIN_SYSTEM_PATH_1_0"] = ""
        r = subprocess.run([sys.executable, "-c", LOADER] + plugins, env=env,
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, "loading %s: %s" % (plugins, r.stderr))
        return r.stdout.split()

    def test_each_plugin_loads_alone(self):
        self.assertTrue(self.plugins, "no plugin installed")
        for p in self.plugins:
            maps = self.load([p])
            self.assertEqual(len(maps), 1, "%s: library mapped from %s" % (p, maps))
            self.assertTrue(maps[0].startswith(self.dest), maps[0])

    def test_one_instance_for_all_plugins(self):
        maps = self.load(self.plugins)
        self.assertEqual(len(maps), 1, "library mapped from %s" % maps)
        self.assertTrue(maps[0].startswith(self.dest), maps[0])

if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
