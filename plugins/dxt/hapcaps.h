/* hapcaps.h: the caps HAP frames travel under, shared by dxtdec and
 * hapmovmux. dxtenc writes `video/x-hap, format=Hap1|Hap5|HapY`; qtdemux
 * gives the HAP track of a .mov (FFmpeg's, ours) as
 * `video/x-gst-fourcc-Hap1` (and -Hap5, -HapY), GStreamer 1.22 having no
 * caps of its own for HAP. */
#ifndef GS_HAP_CAPS_H
#define GS_HAP_CAPS_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GS_HAP_CAPS_SIZE "width = (int) [ 1, MAX ], height = (int) [ 1, MAX ]"
#define GS_HAP_CAPS \
    "video/x-hap, format = (string) { Hap1, Hap5, HapY }, " GS_HAP_CAPS_SIZE "; " \
    "video/x-gst-fourcc-Hap1, " GS_HAP_CAPS_SIZE "; " \
    "video/x-gst-fourcc-Hap5, " GS_HAP_CAPS_SIZE "; " \
    "video/x-gst-fourcc-HapY, " GS_HAP_CAPS_SIZE

/* GS_HAP_TEX_* of HAP caps (either form), 0 when s is not HAP. */
gint gs_hap_caps_tex_format (const GstStructure * s);

/* "Hap1", "Hap5" or "HapY" for a GS_HAP_TEX_*, NULL for anything else. */
const gchar *gs_hap_fourcc_name (gint tex_format);

G_END_DECLS

#endif /* GS_HAP_CAPS_H */
