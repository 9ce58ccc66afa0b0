/* Element tests: whether an element of this factory can run backend=gpu
 * here (a CUDA build with a device), by starting one so. */
#ifndef GPS_TESTS_ELEMENT_BACKEND_H
#define GPS_TESTS_ELEMENT_BACKEND_H

#include <gst/check/gstcheck.h>
#include "check/gpu_expected.h"

static inline gboolean
element_gpu_usable (const gchar * factory)
{
  GstElement *e = gst_element_factory_make (factory, NULL);
  GstStateChangeReturn r;

  fail_unless (e != NULL, "no %s", factory);
  gst_util_set_object_arg (G_OBJECT (e), "backend", "gpu");
  r = gst_element_set_state (e, GST_STATE_READY);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_object_unref (e);
  fail_if (r == GST_STATE_CHANGE_FAILURE && gpu_expected (),
      "%s backend=gpu does not start on the simulated device", factory);
  return r != GST_STATE_CHANGE_FAILURE;
}

#endif
