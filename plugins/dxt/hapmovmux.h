/* hapmovmux: HAP frames into a QuickTime .mov. */
#ifndef GST_HAP_MOV_MUX_H
#define GST_HAP_MOV_MUX_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_HAP_MOV_MUX (gst_hap_mov_mux_get_type ())
G_DECLARE_FINAL_TYPE (GstHapMovMux, gst_hap_mov_mux, GST, HAP_MOV_MUX,
    GstElement)

GST_ELEMENT_REGISTER_DECLARE (hapmovmux);

G_END_DECLS

#endif /* GST_HAP_MOV_MUX_H */
