/* Tests with a GPU half: whether this run must have a GPU. The -gpusim
 * variants of the tests (tests/meson.build) run on the simulated device and
 * set GS_TEST_GPU, so there a GPU half that finds no device fails instead of
 * skipping: a broken GPU path cannot hide behind a skip. */
#ifndef GPS_TESTS_GPU_EXPECTED_H
#define GPS_TESTS_GPU_EXPECTED_H

#include <gst/check/gstcheck.h>

static inline gboolean
gpu_expected (void)
{
  return g_getenv ("GS_TEST_GPU") != NULL;
}

/* In a GPU half's skip branch: fails where a GPU was expected. */
#define gpu_skip_allowed(what) \
  fail_if (gpu_expected (), "%s: skipped on the simulated device, which " \
      "every GPU half must run on", what)

#endif
