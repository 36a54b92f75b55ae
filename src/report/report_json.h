/* report_json.h - building JSON documents with one failure count: every
 * helper takes ownership of v (released on failure) and bumps *bad instead
 * of returning, so a report builds its whole tree and checks once. */
#ifndef TOPSIM_REPORT_JSON_H
#define TOPSIM_REPORT_JSON_H

#include <jansson.h>

/* Sets o[k] = v (stealing v); counts a failure in *bad. */
void report_jset(json_t *o, const char *k, json_t *v, int *bad);
/* Appends v to array a (stealing v); counts a failure in *bad. */
void report_japp(json_t *a, json_t *v, int *bad);

#endif
