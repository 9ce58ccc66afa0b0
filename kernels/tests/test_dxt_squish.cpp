// test_dxt_squish.cpp: C entry point to libsquish (C++) for the DXT test and
// bench, which are C. Block by block on the calling thread, so the figures
// are single-core even though libsquish's CompressImage may use OpenMP.
#include <squish.h>
#include <stdint.h>

extern "C" void
dxt_squish_block (const uint8_t *rgba64, uint8_t *out, int bc3, int cluster)
{
  int flags = (bc3 ? squish::kDxt5 : squish::kDxt1)
      | (cluster ? squish::kColourClusterFit : squish::kColourRangeFit);
  squish::Compress (rgba64, out, flags);
}
