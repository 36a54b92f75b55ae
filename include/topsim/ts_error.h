/* ts_error.h - the one error convention of topsim.
 *
 * Every fallible function returns int: 0 on success, a negative TS_E* code on
 * failure, and fills a caller-owned ts_diag with a human message. Input errors
 * carry the file, 1-based line and column of the offending token. The CLI maps
 * codes to sysexits.h exit statuses with ts_exit_status(). */
#ifndef TOPSIM_TS_ERROR_H
#define TOPSIM_TS_ERROR_H

#include <stddef.h>

enum {
  TS_OK = 0,
  TS_ENOMEM = -1,   /* allocation failed */
  TS_ENOINPUT = -2, /* file missing, unreadable or empty */
  TS_ESYNTAX = -3,  /* YAML (or other input) syntax error */
  TS_ESCHEMA = -4,  /* well-formed input that breaks the schema */
  TS_EINVALID = -5, /* topology fails validation (radix, connectivity...) */
  TS_ELIMIT = -6,   /* input exceeds a safety limit (size, depth, aliases) */
  TS_EUSAGE = -7,   /* bad command-line usage */
  TS_EIO = -8,      /* write failed */
  TS_EINTERNAL = -9 /* invariant broken: a bug in topsim */
};

/* A diagnostic: message plus source position (line/col 0 when unknown). */
typedef struct ts_diag {
  char file[256];
  int line;
  int col;
  char msg[768];
} ts_diag;

/* Clears d (safe on NULL). */
void ts_diag_clear(ts_diag *d);

/* Formats a message into d with a position; returns code unchanged so callers
 * can write `return ts_diag_set(d, TS_ESCHEMA, ...)`. d may be NULL. */
int ts_diag_set(ts_diag *d, int code, const char *file, int line, int col,
                const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Writes "file:line:col: error: msg" (or without position) into buf. */
void ts_diag_format(const ts_diag *d, char *buf, size_t len);

/* Static name of an error code, e.g. "schema error". */
const char *ts_strerror(int code);

/* Maps a TS_E* code to a sysexits.h status (EX_DATAERR, EX_NOINPUT, ...). */
int ts_exit_status(int code);

#endif
