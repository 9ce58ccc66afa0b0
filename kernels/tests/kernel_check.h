/* kernel_check.h: the kernel tests' one assertion: a line per check ("ok - ..." or
 * "FAIL - ..."), counted, and the closing "N passed, N failed" that the test
 * runners read. Each test program includes it once. */
#ifndef KERNELS_TESTS_CHECK_H
#define KERNELS_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int n_pass, n_fail;

static void
check (int ok, const char *fmt, ...)
{
  va_list ap;

  printf ("%s - ", ok ? "ok" : "FAIL");
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  printf ("\n");
  if (ok)
    n_pass++;
  else
    n_fail++;
}

#endif /* KERNELS_TESTS_CHECK_H */
