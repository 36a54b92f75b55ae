/* topo_error.c - the shared diagnostic type (see ts_error.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "topsim/ts_error.h"

void ts_diag_clear(ts_diag *d) {
  if (d) memset(d, 0, sizeof *d);
}

int ts_diag_set(ts_diag *d, int code, const char *file, int line, int col,
                const char *fmt, ...) {
  if (!d) return code;
  snprintf(d->file, sizeof d->file, "%s", file ? file : "");
  d->line = line;
  d->col = col;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->msg, sizeof d->msg, fmt, ap);
  va_end(ap);
  return code;
}

void ts_diag_format(const ts_diag *d, char *buf, size_t len) {
  if (d->file[0] && d->line > 0 && d->col <= 0) /* XML: libxml2 gives lines */
    snprintf(buf, len, "%s:%d: error: %s", d->file, d->line, d->msg);
  else if (d->file[0] && d->line > 0)
    snprintf(buf, len, "%s:%d:%d: error: %s", d->file, d->line, d->col, d->msg);
  else if (d->file[0])
    snprintf(buf, len, "%s: error: %s", d->file, d->msg);
  else
    snprintf(buf, len, "error: %s", d->msg);
}

const char *ts_strerror(int code) {
  switch (code) {
  case TS_OK: return "ok";
  case TS_ENOMEM: return "out of memory";
  case TS_ENOINPUT: return "no input";
  case TS_ESYNTAX: return "syntax error";
  case TS_ESCHEMA: return "schema error";
  case TS_EINVALID: return "invalid topology";
  case TS_ELIMIT: return "input limit exceeded";
  case TS_EUSAGE: return "usage error";
  case TS_EIO: return "I/O error";
  default: return "internal error";
  }
}

int ts_exit_status(int code) {
  switch (code) {
  case TS_OK: return 0;
  case TS_ENOINPUT: return EX_NOINPUT;
  case TS_ESYNTAX:
  case TS_ESCHEMA:
  case TS_EINVALID:
  case TS_ELIMIT: return EX_DATAERR;
  case TS_EUSAGE: return EX_USAGE;
  case TS_ENOMEM: return EX_OSERR;
  case TS_EIO: return EX_IOERR;
  default: return EX_SOFTWARE;
  }
}
