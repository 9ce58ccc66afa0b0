/* gpsprocessor.h: the processors of the real-time scheduler (gpsscheduler.h)
 * that any element can run, registered by name: one implementation per job,
 * in the library module that owns the job ("srtp-protect" in gpssrtp.c,
 * "nc-encode" in gpsnc.c).
 *
 * A registered processor works on GstBuffer items: every item flagged
 * GST_GPUSTREAM_SCHED_ITEM_PACKET holds a GstBuffer, which the processor
 * replaces with its output buffer (the input unreffed), or with NULL when
 * it drops the packet (counted in its stats; the element forwards
 * nothing for it). Items without the flag (events) are left alone.
 *
 * Its configuration is one GstStructure given at setup (the fields each
 * processor takes are documented beside its registration), not properties
 * copied into every element that runs it: an element offers a
 * `processor-config` property (rtgpuqueue) or builds the structure from
 * what it knows. setup checks the configuration and refuses it with an
 * error that names the field. */
#ifndef GPS_PROCESSOR_H
#define GPS_PROCESSOR_H

#include <gst/gst.h>
#include "gpsscheduler.h"

G_BEGIN_DECLS

#define GST_GPUSTREAM_PROCESSOR_ERROR (gst_gpustream_processor_error_quark ())
GQuark gst_gpustream_processor_error_quark (void);

typedef enum {
  GST_GPUSTREAM_PROCESSOR_ERROR_UNKNOWN,   /* no processor of that name */
  GST_GPUSTREAM_PROCESSOR_ERROR_EXISTS,    /* the name is taken */
  GST_GPUSTREAM_PROCESSOR_ERROR_CONFIG,    /* the configuration is wrong */
} GstGpuStreamProcessorError;

typedef struct _GstGpuStreamProcessorInfo GstGpuStreamProcessorInfo;

struct _GstGpuStreamProcessorInfo {
  const gchar *name;
  const gchar *description;
  /* the batch functions; proc_data is what setup returned */
  GstGpuStreamProcessor processor;
  /* An instance from config (NULL: the defaults). owner (may be NULL, no
   * reference) receives the warnings of the instance (dropped packets, at
   * most one a second). NULL and error set when config is refused. */
  gpointer (*setup) (const GstStructure * config, GstElement * owner,
      GError ** error);
  void (*teardown) (gpointer proc_data);
  /* Optional: the instance's counters into stats. */
  void (*get_stats) (gpointer proc_data, GstStructure * stats);
  /* Optional: the caps of a stream's output for its input caps (NULL:
   * unchanged). */
  GstCaps *(*transform_caps) (gpointer proc_data, const GstCaps * sink_caps);
};

/* Registers info (kept, not copied: static storage). FALSE and error set
 * when the name is taken. The library's own processors are registered
 * before the first lookup. */
gboolean gst_gpustream_processor_register (const GstGpuStreamProcessorInfo *
    info, GError ** error);
/* The processor registered under name; NULL and an error naming it and the
 * names there are when there is none. */
const GstGpuStreamProcessorInfo *gst_gpustream_processor_lookup (const
    gchar * name, GError ** error);
/* The registered names, sorted (free with g_strfreev). */
gchar **gst_gpustream_processor_list_names (void);

G_END_DECLS

#endif /* GPS_PROCESSOR_H */
