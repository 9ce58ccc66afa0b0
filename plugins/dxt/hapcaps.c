/* hapcaps.c: see hapcaps.h. */
#include <string.h>

#include "hapcaps.h"
#include "hap.h"

static const struct
{
  const gchar *fourcc;
  gint tex_format;
} hap_fourccs[] = {
  {"Hap1", GS_HAP_TEX_DXT1},
  {"Hap5", GS_HAP_TEX_DXT5},
  {"HapY", GS_HAP_TEX_YCOCG},
};

static gint
tex_format_of (const gchar * fourcc)
{
  guint i;

  for (i = 0; fourcc && i < G_N_ELEMENTS (hap_fourccs); i++)
    if (g_str_equal (fourcc, hap_fourccs[i].fourcc))
      return hap_fourccs[i].tex_format;
  return 0;
}

gint
gs_hap_caps_tex_format (const GstStructure * s)
{
  const gchar *name = gst_structure_get_name (s);

  if (g_str_equal (name, "video/x-hap"))
    return tex_format_of (gst_structure_get_string (s, "format"));
  if (g_str_has_prefix (name, "video/x-gst-fourcc-"))
    return tex_format_of (name + strlen ("video/x-gst-fourcc-"));
  return 0;
}

const gchar *
gs_hap_fourcc_name (gint tex_format)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (hap_fourccs); i++)
    if (hap_fourccs[i].tex_format == tex_format)
      return hap_fourccs[i].fourcc;
  return NULL;
}
