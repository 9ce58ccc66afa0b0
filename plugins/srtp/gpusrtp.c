/* Shared by gpusrtpenc and gpusrtpdec (see gpusrtp.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "gpusrtp.h"

GType
gst_gpu_srtp_cipher_type_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_GPU_SRTP_CIPHER_NULL, "GST_GPU_SRTP_CIPHER_NULL", "null"},
    {GST_GPU_SRTP_CIPHER_AES_128_ICM, "GST_GPU_SRTP_CIPHER_AES_128_ICM",
        "aes-128-icm"},
    {GST_GPU_SRTP_CIPHER_AES_256_ICM, "GST_GPU_SRTP_CIPHER_AES_256_ICM",
        "aes-256-icm"},
    {GST_GPU_SRTP_CIPHER_AES_128_GCM, "GST_GPU_SRTP_CIPHER_AES_128_GCM",
        "aes-128-gcm"},
    {GST_GPU_SRTP_CIPHER_AES_256_GCM, "GST_GPU_SRTP_CIPHER_AES_256_GCM",
        "aes-256-gcm"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstGpuSrtpCipherType", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_gpu_srtp_auth_type_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_GPU_SRTP_AUTH_NULL, "GST_GPU_SRTP_AUTH_NULL", "null"},
    {GST_GPU_SRTP_AUTH_HMAC_SHA1_32, "GST_GPU_SRTP_AUTH_HMAC_SHA1_32",
        "hmac-sha1-32"},
    {GST_GPU_SRTP_AUTH_HMAC_SHA1_80, "GST_GPU_SRTP_AUTH_HMAC_SHA1_80",
        "hmac-sha1-80"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstGpuSrtpAuthType", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

void
gst_gpu_srtp_mark_plugin_api (void)
{
  gst_type_mark_as_plugin_api (GST_TYPE_GPU_SRTP_CIPHER_TYPE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_GPU_SRTP_AUTH_TYPE, 0);
}

GsSrtpPolicy
gst_gpu_srtp_policy (GstGpuSrtpCipherType cipher, GstGpuSrtpAuthType auth)
{
  GsSrtpPolicy p;

  /* the enums share their values with the kernel's */
  p.cipher = (GsSrtpCipher) cipher;
  p.auth = (GsSrtpAuth) auth;
  /* GCM authenticates by itself; the auth setting does not apply */
  if (cipher == GST_GPU_SRTP_CIPHER_AES_128_GCM ||
      cipher == GST_GPU_SRTP_CIPHER_AES_256_GCM)
    p.auth = GSRTP_AUTH_NULL;
  return p;
}

static const gchar *
enum_nick (GType type, gint value)
{
  GEnumClass *klass = g_type_class_ref (type);
  GEnumValue *v = g_enum_get_value (klass, value);
  const gchar *nick = v ? v->value_nick : NULL;

  g_type_class_unref (klass);
  return nick;
}

static gboolean
enum_from_nick (GType type, const gchar * nick, gint * value)
{
  GEnumClass *klass;
  GEnumValue *v;

  if (!nick)
    return FALSE;
  klass = g_type_class_ref (type);
  v = g_enum_get_value_by_nick (klass, nick);
  if (v)
    *value = v->value;
  g_type_class_unref (klass);
  return v != NULL;
}

const gchar *
gst_gpu_srtp_cipher_nick (GstGpuSrtpCipherType cipher)
{
  return enum_nick (GST_TYPE_GPU_SRTP_CIPHER_TYPE, cipher);
}

const gchar *
gst_gpu_srtp_auth_nick (GstGpuSrtpAuthType auth)
{
  return enum_nick (GST_TYPE_GPU_SRTP_AUTH_TYPE, auth);
}

gboolean
gst_gpu_srtp_cipher_from_nick (const gchar * nick,
    GstGpuSrtpCipherType * cipher)
{
  gint v;

  if (!enum_from_nick (GST_TYPE_GPU_SRTP_CIPHER_TYPE, nick, &v))
    return FALSE;
  *cipher = v;
  return TRUE;
}

gboolean
gst_gpu_srtp_auth_from_nick (const gchar * nick, GstGpuSrtpAuthType * auth)
{
  gint v;

  if (!enum_from_nick (GST_TYPE_GPU_SRTP_AUTH_TYPE, nick, &v))
    return FALSE;
  *auth = v;
  return TRUE;
}

gsize
gst_gpu_srtp_key_length (GstGpuSrtpCipherType cipher)
{
  return gsrtp_master_key_len ((GsSrtpCipher) cipher) +
      gsrtp_master_salt_len ((GsSrtpCipher) cipher);
}

GstCaps *
gst_gpu_srtp_caps_for_log (const GstCaps * caps)
{
  GstCaps *copy;
  guint i;

  if (!caps)
    return NULL;
  copy = gst_caps_copy (caps);
  for (i = 0; i < gst_caps_get_size (copy); i++)
    gst_structure_remove_fields (gst_caps_get_structure (copy, i),
        "srtp-key", "mki", NULL);
  return copy;
}

gboolean
gst_gpu_srtp_random_bytes (guint8 * out, gsize len)
{
  gsize got = 0;

  while (got < len) {
    ssize_t r = getrandom (out + got, len - got, 0);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return FALSE;
    }
    got += (gsize) r;
  }
  return TRUE;
}

gboolean
gst_gpu_srtp_key_info_from_structure (const GstStructure * s,
    GstGpuSrtpKeyInfo * info, const gchar ** why)
{
  const GValue *kv;
  GstBuffer *key;
  GstGpuSrtpCipherType rtp_c, rtcp_c;
  GstGpuSrtpAuthType rtp_a, rtcp_a;
  gsize klen;

  memset (info, 0, sizeof *info);
  *why = NULL;
  kv = gst_structure_get_value (s, "srtp-key");
  if (!kv || !GST_VALUE_HOLDS_BUFFER (kv)) {
    *why = "no srtp-key";
    return FALSE;
  }
  if (!gst_gpu_srtp_cipher_from_nick (gst_structure_get_string (s,
              "srtp-cipher"), &rtp_c)
      || !gst_gpu_srtp_auth_from_nick (gst_structure_get_string (s,
              "srtp-auth"), &rtp_a)
      || !gst_gpu_srtp_cipher_from_nick (gst_structure_get_string (s,
              "srtcp-cipher"), &rtcp_c)
      || !gst_gpu_srtp_auth_from_nick (gst_structure_get_string (s,
              "srtcp-auth"), &rtcp_a)) {
    *why = "missing or unknown srtp-cipher / srtp-auth / srtcp-cipher / "
        "srtcp-auth";
    return FALSE;
  }
  if (gst_structure_has_field (s, "mki")) {
    *why = "MKI is not supported";
    return FALSE;
  }
  key = gst_value_get_buffer (kv);
  klen = key ? gst_buffer_get_size (key) : 0;
  if (klen != gst_gpu_srtp_key_length (rtp_c) || klen > sizeof info->key) {
    *why = "srtp-key has the wrong length for srtp-cipher";
    return FALSE;
  }
  info->rtp = gst_gpu_srtp_policy (rtp_c, rtp_a);
  info->rtcp = gst_gpu_srtp_policy (rtcp_c, rtcp_a);
  info->key_len = gst_buffer_extract (key, 0, info->key, klen);
  info->have_roc = gst_structure_get_uint (s, "roc", &info->roc);
  return TRUE;
}

void
gst_gpu_srtp_key_info_clear (GstGpuSrtpKeyInfo * info)
{
  /* volatile so the compiler keeps the wipe */
  volatile guint8 *p = (volatile guint8 *) info->key;
  gsize i;

  for (i = 0; i < sizeof info->key; i++)
    p[i] = 0;
  info->key_len = 0;
}

gboolean
gst_gpu_srtp_warn_ok (gint64 * last)
{
  gint64 now = g_get_monotonic_time ();

  if (*last != 0 && now - *last < G_USEC_PER_SEC)
    return FALSE;
  *last = now;
  return TRUE;
}

void
gst_gpu_srtp_stats_add_stream (GValue * streams, guint32 ssrc, guint32 roc)
{
  GValue v = G_VALUE_INIT;

  g_value_init (&v, GST_TYPE_STRUCTURE);
  g_value_take_boxed (&v, gst_structure_new ("application/x-srtp-stream",
          "ssrc", G_TYPE_UINT, ssrc, "roc", G_TYPE_UINT, roc, NULL));
  gst_value_array_append_and_take_value (streams, &v);
}
