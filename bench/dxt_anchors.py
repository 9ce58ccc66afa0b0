#!/usr/bin/env python3
"""The DXT anchors that are not built with the project, built or installed at
bench time and cached under BUILD/anchors/ (never at test time, nothing of
theirs is in the repository):

  libsquish, SSE2 build  Debian's libsquish has no SIMD. The same source
                         (Debian's source package of the installed version,
                         fetched with apt-get source through an apt
                         configuration private to BUILD/anchors/apt, so the
                         system's apt sources are left alone) is compiled with
                         -O2 -msse2 -DSQUISH_USE_SSE=2 into a static library,
                         and bench_dxt's objects (as meson compiled them) are
                         linked again against it: bench_dxt_squish_sse2, run
                         with --squish-only sse2 (libsquish and our high mode,
                         measured in that one process).
  quicktex (PyPI)        a fast BC1 encoder (rgbcx), installed into a venv
                         under BUILD/anchors/, run on one core on the frame
                         bench_dxt encodes (--dump-rgba), its blocks decoded
                         by our decoder for the PSNR (bench_dxt --psnr) and,
                         as a check that they are plain BC1, by its own.

bench.py's dxt area calls bench(); run alone:
  bench/dxt_anchors.py --build BUILD [--bench-dxt PATH]"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

QUICKTEX = "quicktex==0.3.1"
QUICKTEX_LEVELS = (0, 5, 10, 18)      # fastest, default, two slower presets
W, H = 1920, 1080
ROW = "%-22s %-6s %10.2f %9.3f"
ROW_VS = "%-22s %-6s %10.2f %9.3f %-20s %7.2f %+8.3f"


def log(msg):
    print("dxt anchors: " + msg, flush=True)


def newer(target, *sources):
    """make's rule: target is missing or older than one of the sources."""
    if not os.path.exists(target):
        return True
    t = os.path.getmtime(target)
    return any(os.path.getmtime(s) > t for s in sources if os.path.exists(s))


def sh(cmd, cwd=None, env=None):
    """Runs cmd (a list); returns (ok, combined output)."""
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return r.returncode == 0, (r.stdout + r.stderr).strip()


# ---------------------------------------------------------------- libsquish SSE2

def fetch_squish_source(anchors):
    """Debian's source package of the installed libsquish, unpacked under
    anchors/src. Returns the source directory or None (reason printed)."""
    src = os.path.join(anchors, "src")
    if os.path.isdir(src):
        for d in sorted(os.listdir(src)):
            if d.startswith("libsquish-") and os.path.isfile(os.path.join(src, d, "squish.cpp")):
                return os.path.join(src, d)
    if shutil.which("dpkg-source") is None:
        log("no dpkg-source (Debian package dpkg-dev) to unpack the source package; skipped")
        return None
    apt = os.path.join(anchors, "apt")
    for d in ("lists/partial", "cache/archives/partial"):
        os.makedirs(os.path.join(apt, d), exist_ok=True)
    release = "bookworm"
    try:
        for line in open("/etc/os-release"):
            if line.startswith("VERSION_CODENAME="):
                release = line.split("=", 1)[1].strip().strip('"') or release
    except OSError:
        pass
    with open(os.path.join(apt, "sources.list"), "w") as f:
        f.write("deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
                "http://deb.debian.org/debian %s main\n" % release)
    opts = ["-o", "Dir::Etc::SourceList=" + os.path.join(apt, "sources.list"),
            "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", "Dir::State::Lists=" + os.path.join(apt, "lists"),
            "-o", "Dir::Cache=" + os.path.join(apt, "cache")]
    if os.getuid() == 0:      # _apt cannot write into the build directory
        opts += ["-o", "APT::Sandbox::User=root"]
    cmd = ["apt-get", "-q"] + opts + ["update"]
    ok, out = sh(cmd)
    if not ok:
        log("cannot reach deb-src: `%s` failed:\n%s" % (" ".join(cmd), out))
        return None
    ok, ver = sh(["dpkg-query", "-W", "-f=${source:Version}", "libsquish-dev"])
    pkg = "libsquish=" + ver if ok and ver else "libsquish"
    os.makedirs(src, exist_ok=True)
    cmd = ["apt-get", "-q"] + opts + ["source", pkg]
    ok, out = sh(cmd, cwd=src)
    if not ok:
        log("`%s` failed:\n%s" % (" ".join(cmd), out))
        return None
    for d in sorted(os.listdir(src)):
        if d.startswith("libsquish-") and os.path.isfile(os.path.join(src, d, "squish.cpp")):
            log("fetched Debian's source package %s into %s" % (pkg, os.path.join(src, d)))
            return os.path.join(src, d)
    log("apt-get source %s left no libsquish-*/squish.cpp in %s" % (pkg, src))
    return None


def meson_link_command(build, target="kernels/bench/bench_dxt"):
    """bench_dxt's link command as ninja runs it (cwd: build)."""
    ok, out = sh(["ninja", "-C", build, "-t", "commands", target])
    if not ok:
        return None
    for line in reversed(out.splitlines()):
        args = shlex.split(line)
        if "-o" in args and args[args.index("-o") + 1] == target:
            return args
    return None


def build_squish_sse2(build):
    """BUILD/anchors/bench_dxt_squish_sse2, rebuilt when bench_dxt or the
    library changed. Returns its path or None (reason printed)."""
    anchors = os.path.join(build, "anchors")
    os.makedirs(anchors, exist_ok=True)
    link = meson_link_command(build)
    if link is None or not any("libsquish" in a for a in link):
        log("bench_dxt is not linked with libsquish here (libsquish-dev missing?); SSE2 anchor skipped")
        return None
    srcdir = fetch_squish_source(anchors)
    if srcdir is None:
        return None
    lib = os.path.join(anchors, "libsquish-sse2.a")
    sources = sorted(f for f in os.listdir(srcdir) if f.endswith(".cpp"))
    if newer(lib, *[os.path.join(srcdir, f) for f in sources]):
        objdir = os.path.join(anchors, "squish-sse2-obj")
        os.makedirs(objdir, exist_ok=True)
        objs = []
        for f in sources:
            o = os.path.join(objdir, f[:-4] + ".o")
            cmd = ["c++", "-O2", "-msse2", "-DSQUISH_USE_SSE=2", "-I", srcdir, "-c",
                   os.path.join(srcdir, f), "-o", o]
            ok, out = sh(cmd)
            if not ok:
                log("`%s` failed:\n%s" % (" ".join(cmd), out))
                return None
            objs.append(o)
        if os.path.exists(lib):
            os.remove(lib)
        ok, out = sh(["ar", "rcs", lib] + objs)
        if not ok:
            log("ar failed: " + out)
            return None
        log("built %s (%s, -O2 -msse2 -DSQUISH_USE_SSE=2)" % (lib, os.path.basename(srcdir)))
    exe = os.path.join(anchors, "bench_dxt_squish_sse2")
    # meson's objects of bench_dxt (bench_dxt.c and the libsquish wrapper) and
    # its link line, the shared libsquish swapped for the SSE2 archive
    inputs = [os.path.join(build, a) for a in link if a.endswith((".o", ".a"))]
    if newer(exe, lib, *inputs):
        args = list(link)
        args[args.index("-o") + 1] = exe
        args = [lib if ("libsquish" in a and ".so" in a) or a == "-lsquish" else a for a in args]
        ok, out = sh(args, cwd=build)
        if not ok:
            log("linking the SSE2 bench failed: `%s`:\n%s" % (" ".join(args), out))
            return None
    ok, out = sh(["ldd", exe])
    if "libsquish" in out:
        log("%s still loads a shared libsquish; SSE2 anchor skipped" % exe)
        return None
    return exe


# ---------------------------------------------------------------- quicktex

def quicktex_python(build):
    """The venv's python with quicktex importable, or None (reason printed)."""
    venv = os.path.join(build, "anchors", "venv-quicktex")
    py = os.path.join(venv, "bin", "python")
    if os.path.exists(py) and sh([py, "-c", "import quicktex"])[0]:
        return py
    ok, out = sh([sys.executable, "-m", "venv", venv])
    if not ok:
        log("`%s -m venv %s` failed (python3-venv missing?):\n%s" % (sys.executable, venv, out))
        return None
    cmd = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check", QUICKTEX]
    ok, out = sh(cmd)
    if not ok:
        log("`%s` failed:\n%s" % (" ".join(cmd), out))
        return None
    log("installed %s into %s" % (QUICKTEX, venv))
    return py


def quicktex_child(rgba_path, outdir, levels, min_s):
    """In the venv: encode the frame at each level on one core, best time of
    runs over min_s seconds (at least one); blocks to outdir/quicktex-L.bc1;
    PSNR of quicktex's own decode for the check. JSON lines to stdout."""
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from quicktex import RawTexture
    from quicktex.s3tc.bc1 import BC1Decoder, BC1Encoder, BC1Texture
    import math
    data = open(rgba_path, "rb").read()
    tex = RawTexture.frombytes(data, W, H)
    for level in levels:
        enc = BC1Encoder(level)
        best, t0 = 1e9, time.perf_counter()
        while True:
            t = time.perf_counter()
            out = enc.encode(tex)
            t = time.perf_counter() - t
            best = min(best, t)
            if time.perf_counter() - t0 >= min_s:
                break
        blocks = out.tobytes()
        path = os.path.join(outdir, "quicktex-%d.bc1" % level)
        open(path, "wb").write(blocks)
        back = BC1Decoder().decode(BC1Texture.from_bytes(blocks, W, H)).tobytes()
        se = 0
        for c in range(3):
            se += sum((a - b) * (a - b) for a, b in zip(data[c::4], back[c::4]))
        mse = se / (W * H * 3.0)
        print(json.dumps({"level": level, "mpix_s": W * H / best / 1e6, "blocks": path,
                          "psnr_own_decoder": 99.0 if mse == 0 else
                          10 * math.log10(255.0 * 255.0 / mse)}), flush=True)


def run_quicktex(build, bench_dxt):
    """Rows for quicktex at each level, or [] (reason printed)."""
    py = quicktex_python(build)
    if py is None:
        return []
    anchors = os.path.join(build, "anchors")
    rgba = os.path.join(anchors, "coffee-1920x1080.rgba")
    ok, out = sh([bench_dxt, "--dump-rgba", rgba])
    if not ok:
        log("bench_dxt --dump-rgba failed: " + out)
        return []
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.run([py, os.path.abspath(__file__), "--quicktex-child", rgba, anchors,
                        ",".join(str(lv) for lv in QUICKTEX_LEVELS)],
                       env=env, capture_output=True, text=True)
    if p.returncode != 0:
        log("quicktex run failed:\n" + (p.stdout + p.stderr).strip())
        return []
    ok, ver = sh([py, "-c", "import quicktex; print(quicktex.__version__)"])
    rows = []
    for line in p.stdout.splitlines():
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        ok, out = sh([bench_dxt, "--psnr", "bc1", r["blocks"]])
        if not ok:
            log("bench_dxt --psnr failed: " + out)
            return []
        rows.append({"bench": "dxt", "encoder": "quicktex-l%d" % r["level"], "format": "bc1",
                     "mpix_s": round(r["mpix_s"], 2), "psnr": round(float(out), 3),
                     "psnr_quicktex_decoder": round(r["psnr_own_decoder"], 3),
                     "anchor": None, "ratio": None, "device": "cpu",
                     "version": ver if ok else None})
    return rows


# ---------------------------------------------------------------- the area

def find(rows, enc, fmt):
    for r in rows:
        if r.get("bench") == "dxt" and r.get("encoder") == enc and r.get("format") == fmt \
                and r.get("mpix_s") and r.get("device", "cpu") == "cpu":
            return r
    return None


def versus(enc_row, anchor_row):
    ratio = enc_row["mpix_s"] / anchor_row["mpix_s"]
    dp = enc_row["psnr"] - anchor_row["psnr"]
    return dict(enc_row, anchor=anchor_row["encoder"], ratio=round(ratio, 2),
                psnr_delta=round(dp, 3))


def bench(build, results, krows, bench_dxt=None):
    """bench.py's dxt area after bench_dxt ran (krows: its JSON rows):
    the SSE2 libsquish and quicktex anchors, our figures against them.
    Returns the new rows (also added to results when given)."""
    bench_dxt = bench_dxt or os.path.join(build, "kernels", "bench", "bench_dxt")
    new = []

    def add(r):
        new.append(r)
        if results is not None:
            results.add(r)

    print("\nDXT anchors built at bench time (same frame, one core)", flush=True)
    exe = build_squish_sse2(build)
    if exe is not None:
        # libsquish SSE2 and our high mode measured again beside it, one process
        jpath = os.path.join(build, "bench", "bench_dxt_squish_sse2.jsonl")
        os.makedirs(os.path.dirname(jpath), exist_ok=True)
        print("$ %s --squish-only sse2 --json %s" % (exe, jpath), flush=True)
        p = subprocess.run([exe, "--squish-only", "sse2", "--json", jpath],
                           capture_output=True, text=True)
        if p.returncode != 0:
            log("%s failed (%d): %s" % (exe, p.returncode, p.stderr.strip()))
        else:
            print(p.stdout, end="")
            for line in open(jpath):
                if line.startswith("{"):
                    r = json.loads(line)
                    add(r)
                    deb = find(krows, r["encoder"].replace("squish-sse2-", "squish-"), r["format"])
                    if r["encoder"].startswith("squish-sse2-") and deb:
                        print("%s %s: %.2fx the speed of Debian's build (%s)"
                              % (r["encoder"], r["format"], r["mpix_s"] / deb["mpix_s"],
                                 deb["encoder"]))
    qt = run_quicktex(build, bench_dxt)
    if qt:
        print("%-22s %-6s %10s %9s %-20s %7s %8s" % ("encoder", "format", "Mpix/s", "PSNR",
                                                   "anchor", "ratio", "dPSNR"))
        # each of our BC1 modes against the quicktex preset nearest in PSNR
        for mode in ("fast", "high"):
            ours = find(krows, "gpustream-" + mode, "bc1")
            if ours:
                q = min(qt, key=lambda x: abs(x["psnr"] - ours["psnr"]))
                r = versus(ours, q)
                print(ROW_VS % (r["encoder"], "bc1", r["mpix_s"], r["psnr"], r["anchor"],
                                r["ratio"], r["psnr_delta"]))
                add(r)
        for r in qt:
            print(ROW % (r["encoder"], r["format"], r["mpix_s"], r["psnr"]) +
                  "   (its own decoder: %.3f dB)" % r["psnr_quicktex_decoder"])
            add(r)
    if results is not None:
        import dxt_plot
        svg = os.path.join(build, "bench", "dxt-psnr-speed.svg")
        if dxt_plot.write_svg(results.rows, svg):
            print("PSNR against speed: " + svg)
    return new


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--quicktex-child":
        quicktex_child(sys.argv[2], sys.argv[3], [int(x) for x in sys.argv[4].split(",")], 1.0)
        return 0
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", required=True)
    p.add_argument("--bench-dxt", help="bench_dxt (default: found under BUILD/kernels)")
    p.add_argument("--rows", help="bench_dxt's JSON lines for the comparisons "
                   "(default: BUILD/bench/bench_dxt.jsonl)")
    a = p.parse_args()
    rows_path = a.rows or os.path.join(a.build, "bench", "bench_dxt.jsonl")
    krows = [json.loads(x) for x in open(rows_path) if x.startswith("{")] \
        if os.path.exists(rows_path) else []
    for r in bench(a.build, None, krows, a.bench_dxt):
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
