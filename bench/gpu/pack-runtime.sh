#!/usr/bin/env bash
# ./run gpu-check pack, on a build machine with the CUDA toolkit, for a GPU
# machine that has CUDA but no GStreamer (./run gpu-check runs it itself on a
# GPU machine with GStreamer's development files): builds the plugins with
# native sm_90 code (build-gpu/) and copies into .gpurt/ (git ignores it;
# copy it to the GPU machine's checkout) the test programs, our plugins and
# library, the GStreamer plugins the tests use and every shared library they
# load, less glibc and the C++ runtime, which the GPU machine has in newer
# versions. elements.sh runs them there. GS_GPU_ARCHS (default 90) picks the
# native code.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build="$here/build-gpu"
rt="$here/.gpurt"
sysgst=/usr/lib/x86_64-linux-gnu/gstreamer-1.0
# what the element tests and pipelines link: core, app, srtpenc/srtpdec,
# sources, payloaders, conversion, and nvcodec for cudaupload/cudadownload
gst_plugins="coreelements app srtp videotestsrc audiotestsrc rtp rtpmanager
  videoconvertscale udp audioconvert nvcodec imagefreeze"

[ -f "$build/build.ninja" ] ||
  meson setup "$build" "$here" -Dcuda=enabled -Dcuda-archs="${GS_GPU_ARCHS:-90}" \
    --buildtype=release >/dev/null
ninja -C "$build" >/dev/null

rm -rf "$rt"
mkdir -p "$rt/lib" "$rt/gst" "$rt/plugins" "$rt/bin"
cp "$build"/plugins/*/*.so "$rt/plugins/"
cp -L "$build"/gst/gpustream/libgstgpustream-1.0.so.0 "$rt/lib/"
for t in elements-srtp elements-dxt elements-pools elements-nc elements-rtpnc elements-rtgpuqueue \
    elements-cstp; do
  cp "$build/tests/check/elements/$t" "$rt/bin/"
done
for t in gpssrtp gpustream scheduler; do
  cp "$build/tests/check/libs/$t" "$rt/bin/libs-$t"
done
cp "$build/bench/bench_rtgpu" "$build/kernels/bench/bench_dxt_gpu" "$rt/bin/"
for p in $gst_plugins; do cp "$sysgst/libgst$p.so" "$rt/gst/"; done
cp /usr/bin/gst-launch-1.0 /usr/bin/gst-inspect-1.0 "$rt/bin/"
cp /usr/lib/x86_64-linux-gnu/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner "$rt/bin/"

# the closure of shared libraries, minus what every Linux has newer
skip='^(libc|libm|libdl|librt|libpthread|libresolv|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda)\.so'
for f in "$rt"/bin/* "$rt"/plugins/*.so "$rt"/gst/*.so "$rt"/lib/*.so*; do
  ldd "$f" 2>/dev/null | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
  name=$(basename "$lib")
  [[ "$name" =~ $skip ]] && continue
  [ -e "$rt/lib/$name" ] || cp -L "$lib" "$rt/lib/$name"
done
# NSS (libsrtp2's crypto) opens its soft token by name at run time
for l in libsoftokn3 libfreebl3 libfreeblpriv3 libnssdbm3; do
  cp -L /usr/lib/x86_64-linux-gnu/$l.so /usr/lib/x86_64-linux-gnu/$l.chk "$rt/lib/"
done
du -sh "$rt"
